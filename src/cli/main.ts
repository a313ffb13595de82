#!/usr/bin/env node
import { CommanderError, type Command } from "commander";
import { formatDiagnostic, HermesError, isHermesError } from "../core/errors.js";
import { addPluginCliCommands } from "./plugin-commands.js";
import { buildProgram } from "./program.js";

function wantsJson(argv: readonly string[]): boolean {
  return argv.includes("--json") || argv.includes("--format=json") || argv.join(" ").includes("--format json");
}

/** Every command's subcommands exit through this boundary: one place prints and picks the exit code. */
function configureTree(cmd: Command): void {
  cmd.exitOverride();
  cmd.showHelpAfterError("(run with --help for usage)");
  cmd.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  for (const sub of cmd.commands) configureTree(sub);
}

/** The last filter before a refusal is printed: no secret-shaped value leaves through an error. */
async function report(e: HermesError, json: boolean): Promise<void> {
  const { redactText, redactValue } = await import("../core/redact.js");
  if (json) {
    process.stdout.write(`${JSON.stringify({ error: redactValue(e.toJSON(), { pairs: false }) }, null, 2)}\n`);
    return;
  }
  process.stderr.write(`${redactText(formatDiagnostic(e.toDiagnostic()), { pairs: false })}\n`);
  for (const d of e.diagnostics) process.stderr.write(`${redactText(formatDiagnostic(d), { pairs: false })}\n`);
}

export async function main(argv: string[] = process.argv): Promise<number> {
  const program = buildProgram();
  await addPluginCliCommands(program, argv.slice(2));
  configureTree(program);
  const json = wantsJson(argv.slice(2));
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return 0;
      // Help shown because a subcommand is missing is a usage error; asked-for help is not.
      if (e.code === "commander.help") return e.exitCode === 0 ? 0 : 2;
      // commander already printed its message; usage errors exit 2.
      return e.exitCode === 0 ? 0 : 2;
    }
    if (isHermesError(e)) {
      await report(e, json);
      return e.exitCode;
    }
    const internal = new HermesError("E_INTERNAL", {
      message: `unexpected error: ${(e as Error)?.message ?? String(e)}`,
    });
    await report(internal, json);
    if (process.env.HERMES_LOG_LEVEL === "debug") process.stderr.write(`${(e as Error)?.stack ?? ""}\n`);
    return 1;
  }
}

const code = await main();
process.exitCode = code;
// A plugin whose register() timed out may still hold a timer or socket; the command is done, so
// leave once everything written has been flushed instead of waiting for it.
const streams = [process.stdout, process.stderr];
let pending = streams.length;
for (const s of streams) s.write("", () => --pending === 0 && process.exit(code));
