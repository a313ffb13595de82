import { Option, type Command } from "./commander.js";
import { formatDiagnostic, formatGithub, type Diagnostic } from "../core/errors.js";

const useColor = (stream: NodeJS.WriteStream) =>
  Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== "dumb";

function paint(code: string, s: string, stream: NodeJS.WriteStream = process.stdout): string {
  return useColor(stream) ? `\u001b[${code}m${s}\u001b[0m` : s;
}

export const style = {
  bold: (s: string) => paint("1", s),
  dim: (s: string) => paint("2", s),
  green: (s: string) => paint("32", s),
  red: (s: string) => paint("31", s),
  yellow: (s: string) => paint("33", s),
};

export function out(line = ""): void {
  process.stdout.write(`${line}\n`);
}

export function err(line = ""): void {
  process.stderr.write(`${line}\n`);
}

export function json(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A command's own result object as machine output: snake_case field names (one convention for
 * every command), and the compile it ran summarized as `generation` (the plan has its own command).
 * Only the top level is renamed: nested values may hold user data whose keys must stay as written.
 */
export function resultJson(
  r: object & { compile?: { applied: boolean; generation?: number } },
): Record<string, unknown> {
  const { compile, ...rest } = r;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) out[snake(k)] = v;
  if ("compile" in r) out.generation = compile?.generation ?? null;
  return out;
}

/** Strip ANSI codes to measure what a terminal shows. */
const visible = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, "");

export function table(headers: string[], rows: string[][], maxWidth = 60): string {
  const clip = (s: string) => (visible(s).length > maxWidth ? `${visible(s).slice(0, maxWidth - 1)}…` : s);
  const cells = rows.map((r) => r.map(clip));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => visible(r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + " ".repeat(widths[i]! - visible(c).length)))
      .join("  ")
      .trimEnd();
  return [style.bold(line(headers)), ...cells.map(line)].join("\n");
}

export type DiagnosticFormat = "text" | "json" | "github";

export interface ValidatorOptions {
  format: DiagnosticFormat;
  json?: boolean;
  strict?: boolean;
}

/** The options every validator shares: `--json` (alias of `--format json`), `--format`, `--strict`. */
export function validatorOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--format <format>", "output format (github: workflow annotations)")
        .choices(["text", "json", "github"])
        .default("text"),
    )
    .option("--json", "same as --format json")
    .option("--strict", "warnings fail too (exit 1), for CI");
}

/** Print a validator's findings and set the exit code: 1 on an error, or on a warning with --strict. */
export function finishValidation(label: string, ds: readonly Diagnostic[], o: ValidatorOptions, okLabel = label): void {
  const format: DiagnosticFormat = o.json ? "json" : o.format;
  printDiagnostics(ds, format);
  const errors = ds.filter((d) => d.severity === "error").length;
  const warnings = ds.length - errors;
  const failed = errors > 0 || (o.strict === true && warnings > 0);
  if (format === "text") {
    if (!failed) out(`${okLabel}: ok${warnings ? ` (${warnings} warning(s))` : ""}`);
    else if (errors) err(`${label}: ${errors} error(s)${warnings ? `, ${warnings} warning(s)` : ""}`);
    else err(`${label}: ${warnings} warning(s) (--strict)`);
  }
  if (failed) process.exitCode = 1;
}

export function printDiagnostics(ds: readonly Diagnostic[], format: DiagnosticFormat = "text"): void {
  if (format === "json") return json(ds);
  for (const d of ds) {
    if (format === "github") out(formatGithub(d));
    else err(formatDiagnostic(d));
  }
}
