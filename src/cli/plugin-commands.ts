import { Command } from "./commander.js";

/** The command word of an argv, skipping the global options (and their values). */
export function commandWord(args: readonly string[]): { word?: string; home?: string; profile?: string } {
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
  const [{ findPluginCliCommand, runPluginCliCommand }, { err }] = await Promise.all([
    import("../app/plugin-cli-command.js"),
    import("./output.js"),
  ]);
  const found = await findPluginCliCommand({ home, profile, word, warn: err });
  if (!found) return;
  const { entry } = found;
  const cmd = new Command(entry.name).description(entry.description || entry.help || `from plugin ${entry.plugin_key}`);
  cmd.allowUnknownOption(!entry.setup_fn).allowExcessArguments(!entry.setup_fn);
  if (entry.setup_fn) entry.setup_fn(cmd);
  cmd.action(async (...actionArgs: unknown[]) => {
    const self = actionArgs[actionArgs.length - 1] as Command;
    await runPluginCliCommand(found, self.opts(), self.args, (r) =>
      process.stdout.write(r.endsWith("\n") ? r : `${r}\n`),
    );
  });
  program.addCommand(cmd);
}
