import { formatDiagnostic, formatGithub, type Diagnostic } from "../core/errors.js";

const useColor = (stream: NodeJS.WriteStream) => Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== "dumb";

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

export function printDiagnostics(ds: readonly Diagnostic[], format: DiagnosticFormat = "text"): void {
  if (format === "json") return json(ds);
  for (const d of ds) {
    if (format === "github") out(formatGithub(d));
    else err(formatDiagnostic(d));
  }
}
