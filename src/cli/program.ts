import { Command } from "commander";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../core/paths.js";
import { chatCommand, demoCommand } from "./commands/chat.js";
import { compileCommand, lockCommand } from "./commands/compile.js";
import { configCommand } from "./commands/config.js";
import { pluginsCommand } from "./commands/plugins.js";

function version(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;
}

export function buildProgram(): Command {
  const program = new Command("hermes")
    .description("hermes-kit: declarative deployment and runtime for Hermes agent plugins")
    .version(version(), "-V, --version")
    .option("--home <dir>", "Hermes home (default: $HERMES_HOME or ~/.hermes)")
    .option("-p, --profile <name>", "use the profile <home>/profiles/<name>")
    .showHelpAfterError("(run with --help for usage)")
    .enablePositionalOptions(false);
  program.addCommand(pluginsCommand());
  program.addCommand(configCommand());
  program.addCommand(compileCommand());
  program.addCommand(lockCommand());
  program.addCommand(chatCommand());
  program.addCommand(demoCommand());
  return program;
}
