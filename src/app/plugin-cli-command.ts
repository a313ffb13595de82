import { logger } from "../core/log.js";
import { resolveHome } from "../core/paths.js";
import type { CliCommandEntry } from "../runtime/registries.js";
import type { Runtime } from "../runtime/runtime.js";
import { openRuntime } from "./open-runtime.js";

export interface PluginCliCommand {
  runtime: Runtime;
  entry: CliCommandEntry;
}

/**
 * The command a plugin registered with ctx.register_cli_command under `word`, with the runtime that
 * holds it. A home that cannot start means no plugin commands (not an error): undefined, as for a
 * word no plugin registered.
 */
export async function findPluginCliCommand(o: {
  home?: string;
  profile?: string;
  word: string;
  warn: (line: string) => void;
}): Promise<PluginCliCommand | undefined> {
  let runtime: Runtime;
  try {
    runtime = await openRuntime({ home: resolveHome({ home: o.home, profile: o.profile }), warn: o.warn });
  } catch (e) {
    logger().debug({ err: (e as Error).message }, "runtime not started for plugin CLI commands");
    return undefined;
  }
  const entry = runtime.cliCommands.get(o.word);
  return entry ? { runtime, entry } : undefined;
}

/** Run a plugin's command handler; its string result goes to `print` before the runtime settles. */
export async function runPluginCliCommand(
  c: PluginCliCommand,
  options: Record<string, unknown>,
  args: readonly string[],
  print: (text: string) => void,
): Promise<void> {
  const r = await c.entry.handler_fn?.({ ...options, args, runtime: c.runtime });
  if (typeof r === "string") print(r);
  await c.runtime.settle();
}
