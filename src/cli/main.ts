#!/usr/bin/env node
import { readFileSync } from "node:fs";
import type { HermesError } from "../core/errors.js";
import { kitVersion } from "../core/kit-version.js";

function wantsJson(argv: readonly string[]): boolean {
  return argv.includes("--json") || argv.includes("--format=json") || argv.join(" ").includes("--format json");
}

/** The last filter before a refusal is printed: no secret-shaped value leaves through an error. */
async function report(e: HermesError, json: boolean): Promise<void> {
  const [{ redactText, redactValue }, { formatDiagnostic }] = await Promise.all([
    import("../core/redact.js"),
    import("../core/errors.js"),
  ]);
  if (json) {
    process.stdout.write(`${JSON.stringify({ error: redactValue(e.toJSON(), { pairs: false }) }, null, 2)}\n`);
    return;
  }
  process.stderr.write(`${redactText(formatDiagnostic(e.toDiagnostic()), { pairs: false })}\n`);
  for (const d of e.diagnostics) process.stderr.write(`${redactText(formatDiagnostic(d), { pairs: false })}\n`);
}

function printVersion(): number {
  process.stdout.write(`${kitVersion()}\n`);
  return 0;
}

export async function main(argv: string[] = process.argv): Promise<number> {
  // Loaded here, not at the top: `hermes --version` below answers without them.
  const [{ CommanderError }, { buildProgram, configureTree, prepareCommand }, { addPluginCliCommands }] =
    await Promise.all([import("./commander.js"), import("./program.js"), import("./plugin-commands.js")]);
  const program = buildProgram();
  await prepareCommand(program, argv.slice(2));
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
    const { HermesError, isHermesError } = await import("../core/errors.js");
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

/**
 * `hermes --help` as the build wrote it (scripts/postbuild.mjs runs `hermes help`), or undefined.
 * Commander wraps at 80 columns unless stdout is a terminal, so the text holds only then or at 80.
 */
function builtRootHelp(): string | undefined {
  if (process.stdout.isTTY && process.stdout.columns !== 80) return undefined;
  try {
    return readFileSync(new URL("./root-help.txt", import.meta.url), "utf8");
  } catch {
    return undefined;
  }
}

function printText(text: string): number {
  process.stdout.write(text);
  return 0;
}

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : undefined;
// `--version` and `--help` alone print what commander would, before commander or any command module loads.
const help = only === "--help" || only === "-h" ? builtRootHelp() : undefined;
const code = only === "--version" || only === "-V" ? printVersion() : help ? printText(help) : await main();
process.exitCode = code;
// A plugin whose register() timed out may still hold a timer or socket; the command is done, so
// leave once everything written has been flushed instead of waiting for it.
const streams = [process.stdout, process.stderr];
let pending = streams.length;
for (const s of streams) s.write("", () => --pending === 0 && process.exit(code));
