import { ERROR_CATALOG, type ErrorSpec } from "./errors.js";

/** docs/errors.md, generated from the catalog so the two can never disagree. */
export function renderErrorsDoc(): string {
  const lines = [
    "# Error and warning codes",
    "",
    "<!-- Generated from src/core/errors.ts by `npm run docs`; a test fails when this file is stale. -->",
    "",
    "Every refusal hermes-kit prints has a stable code, the place it applies (`file:line:col` and the JSON path",
    "where known) and a hint. Codes starting with `E_` are errors (exit code 1, or 2 for usage errors);",
    "codes starting with `W_` are warnings and never fail a command on their own. `--json` and",
    "`--format json` print the same fields as data: `code`, `message`, `hint`, `file`, `line`, `col`, `path`.",
    "",
    "| Code | Kind | Exit | Meaning | What to do |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const [code, spec] of Object.entries(ERROR_CATALOG) as [string, ErrorSpec][]) {
    const kind = code.startsWith("W_") ? "warning" : "error";
    const exit = kind === "warning" ? "–" : String(spec.exit ?? 1);
    lines.push(`| \`${code}\` | ${kind} | ${exit} | ${spec.title} | ${spec.hint.replace(/\|/g, "\\|")} |`);
  }
  return `${lines.join("\n")}\n`;
}
