/**
 * The human report (with what the original lacked: the column, the
 * deciding findings marked and named, waived findings shown as waived, what was skipped).
 *
 *   Scan: my-plugin (owner/repo)  Verdict: DANGEROUS
 *   * CRITICAL  exfiltration          index.js:12:5                   env_exfil_fetch  "fetch(…"
 *     MEDIUM    supply_chain          index.js:30:9                   remote_fetch  "fetch(\"https://…"
 *   (* decides the verdict)
 *
 *   Skipped: .git/ (vcs), logo.png (binary)
 *   Verdict: DANGEROUS — decided by env_exfil_fetch at index.js:12
 */
import type { Decision } from "./verdict.js";
import type { Finding, ScanReport } from "./types.js";

export interface TextReportOptions {
  /** Most findings listed (the worst come first); the rest are counted. Default 200. */
  limit?: number;
  /** A policy decision to print (install/update), as the `Decision:` line. */
  decision?: Decision;
  /** Colour function hooks (the CLI passes its own; default plain). */
  paint?: {
    bold?: (s: string) => string;
    red?: (s: string) => string;
    yellow?: (s: string) => string;
    dim?: (s: string) => string;
  };
}

const DECISION_WORD = { allow: "ALLOWED", confirm: "NEEDS CONFIRMATION", block: "BLOCKED" } as const;

export function locationOf(f: Pick<Finding, "file" | "line" | "col">): string {
  return f.line > 0 ? `${f.file}:${f.line}:${f.col}` : f.file;
}

function decidingRefs(r: ScanReport, max = 3): string {
  const refs = r.deciding.slice(0, max).map((f) => `${f.id} at ${f.file}${f.line ? `:${f.line}` : ""}`);
  return refs.join(", ") + (r.deciding.length > max ? ` and ${r.deciding.length - max} more` : "");
}

/** The final line: the verdict and what decides it. */
export function verdictLine(r: ScanReport): string {
  const v = r.verdict.toUpperCase();
  if (r.verdict === "safe") {
    const n = r.findings.filter((f) => !f.waived).length;
    return `Verdict: ${v} — ${n ? `${n} informational finding(s) (medium/low)` : "no findings"}`;
  }
  return `Verdict: ${v} — decided by ${decidingRefs(r)}`;
}

export function renderText(r: ScanReport, o: TextReportOptions = {}): string {
  const p = {
    bold: (s: string) => s,
    red: (s: string) => s,
    yellow: (s: string) => s,
    dim: (s: string) => s,
    ...o.paint,
  };
  const limit = o.limit ?? 200;
  const origin =
    r.source ??
    (r.pluginKey
      ? `${r.pluginKey}${r.revision ? `@${r.revision === "local" ? "local" : r.revision.slice(0, 12)}` : ""}`
      : r.dir);
  const verdictWord =
    r.verdict === "dangerous"
      ? p.red(r.verdict.toUpperCase())
      : r.verdict === "caution"
        ? p.yellow(r.verdict.toUpperCase())
        : r.verdict.toUpperCase();
  const out: string[] = [`Scan: ${r.name} (${origin})  Verdict: ${verdictWord}`];
  const deciding = new Set(r.deciding);
  const shown = r.findings.slice(0, limit);
  for (const f of shown) {
    const mark = deciding.has(f) ? "*" : " ";
    const sev = f.severity.toUpperCase().padEnd(8);
    const row = `  ${mark} ${sev}  ${f.category.padEnd(20)}  ${locationOf(f).padEnd(30)}  ${f.id}  "${f.match}"`;
    if (f.waived) out.push(p.dim(`${row}  [waived: ${f.waived.reason}]`));
    else if (deciding.has(f)) out.push(p.bold(row));
    else out.push(row);
  }
  if (r.findings.length > shown.length)
    out.push(`  … ${r.findings.length - shown.length} more finding(s) (use --format json for all)`);
  if (r.deciding.length) out.push(p.dim(`  (* decides the verdict)`));
  if (r.waiversApplied.length)
    out.push(
      `Waived by the operator: ${r.waiversApplied.length} ` +
        `waiver(s), ${r.findings.filter((f) => f.waived).length} finding(s)`,
    );
  if (r.waiversUnused.length) {
    out.push(
      "Unused waivers for this " +
        `revision: ${r.waiversUnused.map((w) => `${w.finding}${w.file ? ` (${w.file})` : ""}`).join(", ")}`,
    );
  }
  out.push("");
  if (r.skipped.length) {
    const listed = r.skipped.slice(0, 12).map((s) => `${s.path} (${s.reason})`);
    out.push(`Skipped: ${listed.join(", ")}${r.skipped.length > 12 ? `, and ${r.skipped.length - 12} more` : ""}`);
  }
  out.push(`Scanned ${r.scannedFiles.length} file(s).`);
  if (o.decision) out.push(`Decision: ${DECISION_WORD[o.decision.action]} — ${o.decision.reason}`);
  const vl = verdictLine(r);
  out.push(r.verdict === "dangerous" ? p.red(vl) : r.verdict === "caution" ? p.yellow(vl) : vl);
  return `${out.join("\n")}\n`;
}

/** The text report (the name the install flow uses). */
export const formatScanReport = renderText;

export function renderJson(r: ScanReport): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}
