import { Command } from "commander";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HermesError } from "../core/errors.js";
import { assertProfile, PACKAGE_ROOT } from "../core/paths.js";
import { chatCommand, demoCommand } from "./commands/chat.js";
import { serveCommand } from "./commands/serve.js";
import { compileCommand, lockCommand } from "./commands/compile.js";
import { completionCommand } from "./commands/completion.js";
import { configCommand } from "./commands/config.js";
import { pluginsCommand } from "./commands/plugins.js";
import { openUrlCommand } from "./commands/open-url.js";
import { hooksCommand } from "./commands/hooks.js";

/** --verbose / --quiet win over HERMES_LOG_LEVEL; an unknown HERMES_LOG_LEVEL is refused, not ignored. */
export async function applyLogLevel(o: { verbose?: boolean; quiet?: boolean }): Promise<void> {
  const { envLogLevel, LOG_LEVELS, setLogLevel } = await import("../core/log.js");
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

function version(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;
}

export function buildProgram(): Command {
  const program = new Command("hermes")
    .description("hermes-kit: declarative deployment and runtime for Hermes agent plugins")
    .version(version(), "-V, --version")
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
  program.hook(
    "preAction",
    () => void assertProfile(program.opts<{ home?: string; profile?: string; create?: boolean }>()),
  );
  program.addCommand(pluginsCommand());
  program.addCommand(configCommand());
  program.addCommand(compileCommand());
  program.addCommand(lockCommand());
  program.addCommand(chatCommand());
  program.addCommand(demoCommand());
  program.addCommand(serveCommand());
  program.addCommand(hooksCommand());
  program.addCommand(openUrlCommand());
  program.addCommand(completionCommand(program));
  return program;
}
