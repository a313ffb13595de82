import { Command } from "./commander.js";
import { kitVersion } from "../core/kit-version.js";
import { chatCommand, demoCommand } from "./commands/chat.js";
import { serveCommand } from "./commands/serve.js";
import { compileCommand, lockCommand } from "./commands/compile.js";
import { completionCommand } from "./commands/completion.js";
import { openUrlCommand } from "./commands/open-url.js";
import { commandWord } from "./plugin-commands.js";

/** --verbose / --quiet win over HERMES_LOG_LEVEL; an unknown HERMES_LOG_LEVEL is refused, not ignored. */
export async function applyLogLevel(o: { verbose?: boolean; quiet?: boolean }): Promise<void> {
  const [{ envLogLevel, LOG_LEVELS, setLogLevel }, { HermesError }] = await Promise.all([
    import("../core/log.js"),
    import("../core/errors.js"),
  ]);
  if (o.verbose && o.quiet)
    throw new HermesError("E_USAGE", { message: "--verbose and --quiet contradict each other; give one" });
  if (o.verbose) return setLogLevel("debug");
  if (o.quiet) return setLogLevel("error");
  if (envLogLevel() === false) {
    throw new HermesError("E_LOG_LEVEL", {
      message:
        `HERMES_LOG_LEVEL=${JSON.stringify(process.env.HERMES_LOG_LEVEL)} is not a log level ` +
        `(use ${LOG_LEVELS.join(", ")})`,
    });
  }
}

/**
 * Commands with subcommands that are declared from their module only when the command line names
 * them: `hermes --help` and every other command skip loading and building those trees.
 */
const GROUPS: ReadonlyArray<{ name: string; description: string; fill: (cmd: Command) => Promise<void> }> = [
  {
    name: "plugins",
    description: "open the interactive plugins screen (on a terminal; else as `list`), or run a subcommand",
    fill: async (cmd) => (await import("./commands/plugins.js")).addPluginsCommands(cmd),
  },
  {
    name: "config",
    description: "inspect, validate and edit config.yaml",
    fill: async (cmd) => (await import("./commands/config.js")).addConfigCommands(cmd),
  },
  {
    name: "hooks",
    description: "shell hooks (config.yaml hooks:) and gateway event hooks",
    fill: async (cmd) => (await import("./commands/hooks.js")).addHooksCommands(cmd),
  },
];

const filled = new WeakSet<Command>();
const configured = new WeakSet<Command>();

/** Declare a group's subcommands once, and give them the exit and output settings of the rest of the tree. */
async function fillGroup(cmd: Command): Promise<void> {
  const group = GROUPS.find((g) => g.name === cmd.name());
  if (!group || filled.has(cmd)) return;
  filled.add(cmd);
  await group.fill(cmd);
  if (configured.has(cmd)) configureTree(cmd);
}

/** Every command's subcommands exit through this boundary: one place prints and picks the exit code. */
export function configureTree(cmd: Command): void {
  configured.add(cmd);
  cmd.exitOverride();
  cmd.showHelpAfterError("(run with --help for usage)");
  cmd.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  for (const sub of cmd.commands) configureTree(sub);
}

/** The whole tree, as `completion` and `help <command>` read it. */
async function fillAll(program: Command): Promise<void> {
  await Promise.all(program.commands.map(fillGroup));
}

/** Declare the subcommands the command line can reach: its command's group, or all for `help` and `completion`. */
export async function prepareCommand(program: Command, args: readonly string[]): Promise<void> {
  const { word } = commandWord(args);
  if (word === "help" || word === "completion") return fillAll(program);
  const cmd = program.commands.find((c) => c.name() === word || c.aliases().includes(word ?? ""));
  if (cmd) await fillGroup(cmd);
}

export function buildProgram(): Command {
  const program = new Command("hermes")
    .description("hermes-kit: declarative deployment and runtime for Hermes agent plugins")
    .version(kitVersion(), "-V, --version")
    .option("--home <dir>", "Hermes home (default: $HERMES_HOME or ~/.hermes)")
    .option("-p, --profile <name>", "use the profile <home>/profiles/<name> (it must exist, unless --create)")
    .option("--create", "create the --profile folder when it does not exist")
    .option("--verbose", "log more: debug level (overrides HERMES_LOG_LEVEL)")
    .option(
      "--quiet",
      "log errors only (overrides HERMES_LOG_LEVEL); no -q: `chat -q` is the query, as in the original",
    )
    .showHelpAfterError("(run with --help for usage)")
    .enablePositionalOptions(false);
  // Every command, plugin commands included, starts here: the log level is settled before it runs.
  program.hook("preAction", () => applyLogLevel(program.opts<{ verbose?: boolean; quiet?: boolean }>()));
  // A mistyped profile is an error before any command reads or creates anything.
  program.hook("preAction", async () => {
    const { assertProfile } = await import("../core/paths.js");
    assertProfile(program.opts<{ home?: string; profile?: string; create?: boolean }>());
  });
  // prepareCommand fills the group the command line names; this covers any parse that reaches another.
  program.hook("preSubcommand", (_program, sub) => fillGroup(sub));
  const group = (name: string) => new Command(name).description(GROUPS.find((g) => g.name === name)!.description);
  program.addCommand(group("plugins"));
  program.addCommand(group("config"));
  program.addCommand(compileCommand());
  program.addCommand(lockCommand());
  program.addCommand(chatCommand());
  program.addCommand(demoCommand());
  program.addCommand(serveCommand());
  program.addCommand(group("hooks"));
  program.addCommand(openUrlCommand());
  program.addCommand(completionCommand(program, () => fillAll(program)));
  return program;
}
