import { Command } from "commander";
import { logger } from "../core/log.js";
import { homePaths, resolveHome } from "../core/paths.js";
import { startRuntime } from "../app/start-runtime.js";
import { recoverPluginsDir } from "./context.js";

/** The command word of an argv, skipping the global options (and their values). */
function commandWord(args: readonly string[]): { word?: string; home?: string; profile?: string } {
  let home: string | undefined;
  let profile: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--home") home = args[++i];
    else if (a.startsWith("--home=")) home = a.slice(7);
    else if (a === "-p" || a === "--profile") profile = args[++i];
    else if (a.startsWith("--profile=")) profile = a.slice(10);
    else if (a.startsWith("-")) continue;
    else return { word: a, home, profile };
  }
  return { home, profile };
}

/**
 * `hermes <name>` for commands that plugins register with ctx.register_cli_command. The runtime
 * is started only when the word is not one of hermes' own commands, so built-in commands never
 * pay for loading plugins.
 */
export async function addPluginCliCommands(program: Command, args: readonly string[]): Promise<void> {
  const { word, home, profile } = commandWord(args);
  if (!word || program.commands.some((c) => c.name() === word || c.aliases().includes(word)) || word === "help") return;
  let runtime;
  try {
    const dir = resolveHome({ home, profile });
    await recoverPluginsDir(homePaths(dir));
    runtime = await startRuntime({ home: dir });
  } catch (e) {
    logger().debug({ err: (e as Error).message }, "runtime not started for plugin CLI commands");
    return;
  }
  const entry = runtime.cliCommands.get(word);
  if (!entry) return;
  const cmd = new Command(entry.name).description(entry.description || entry.help || `from plugin ${entry.plugin_key}`);
  cmd.allowUnknownOption(!entry.setup_fn);
  if (entry.setup_fn) entry.setup_fn(cmd);
  cmd.action(async (...actionArgs: unknown[]) => {
    const self = actionArgs[actionArgs.length - 1] as Command;
    const r = await entry.handler_fn?.({ ...self.opts(), args: self.args, runtime });
    if (typeof r === "string") process.stdout.write(r.endsWith("\n") ? r : `${r}\n`);
    await runtime.settle();
  });
  program.addCommand(cmd);
}
