/**
 * Verdict and policy.
 *
 * - safe: no unwaived critical or high finding (medium and low are informational);
 * - caution: at least one unwaived high, no critical;
 * - dangerous: at least one unwaived critical.
 *
 * Install: safe proceeds; caution asks on a TTY, `--force` accepts it, without a TTY it blocks;
 * dangerous always blocks (`--force` does not override it; an operator waiver for the exact
 * revision does). Update: caution warns; dangerous blocks the update and keeps the previous
 * revision in place (never silently disables an already-consented plugin).
 */
import { HermesError } from "../../core/errors.js";
import { SEVERITY_RANK, type Finding, type ScanReport, type Severity, type Verdict } from "./types.js";
import { waiverSnippet } from "./waivers.js";

export function countsOf(findings: readonly Finding[]): Record<Severity, number> {
  const c: Record<Severity, number> = { critical: 0, high: 0, medium: 0, low: 0 };
  for (const f of findings) if (!f.waived) c[f.severity]++;
  return c;
}

export function verdictOf(findings: readonly Finding[]): Verdict {
  const c = countsOf(findings);
  return c.critical > 0 ? "dangerous" : c.high > 0 ? "caution" : "safe";
}

/** The findings that decide the verdict: unwaived criticals for dangerous, unwaived highs for caution. */
export function decidingOf(findings: readonly Finding[], verdict: Verdict): Finding[] {
  if (verdict === "safe") return [];
  const sev: Severity = verdict === "dangerous" ? "critical" : "high";
  return findings.filter((f) => !f.waived && f.severity === sev);
}

export function compareFindings(a: Finding, b: Finding): number {
  return (
    SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
    (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
    a.line - b.line ||
    a.col - b.col ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

export function summaryOf(name: string, verdict: Verdict, findings: readonly Finding[]): string {
  const counted = findings.filter((f) => !f.waived);
  if (counted.length === 0) return `${name}: clean scan, no threats detected`;
  const cats = [...new Set(counted.map((f) => f.category))].sort();
  return `${name}: ${verdict} — ${counted.length} finding(s) in ${cats.join(", ")}`;
}

// ── policy ───────────────────────────────────────────────────────────────────────────────────

export type DecisionAction = "allow" | "confirm" | "block";

export interface Decision {
  action: DecisionAction;
  /** One line, suitable for logs and the `Decision:` line of the text report. */
  reason: string;
}

export interface InstallPolicyOptions {
  /** `--force`: accepts a caution verdict, never a dangerous one. */
  force?: boolean;
  /** A person can answer a prompt (stdin and stdout are TTYs). Without one, caution blocks. */
  interactive?: boolean;
  /** Pack installs never prompt: caution fails the plugin unless forced. */
  pack?: boolean;
}

function findingRef(f: Finding): string {
  return `${f.id} at ${f.file}${f.line ? `:${f.line}` : ""}`;
}

function decidingList(r: ScanReport, max = 3): string {
  const refs = r.deciding.slice(0, max).map(findingRef);
  return refs.join(", ") + (r.deciding.length > max ? `, and ${r.deciding.length - max} more` : "");
}

/** What an install does with this report. */
export function installDecision(r: ScanReport, o: InstallPolicyOptions = {}): Decision {
  const n = r.findings.filter((f) => !f.waived).length;
  switch (r.verdict) {
    case "safe":
      return { action: "allow", reason: n ? `Safe verdict (${n} informational finding(s))` : "Clean scan" };
    case "caution":
      if (o.force) return { action: "allow", reason: `Force-installed despite caution verdict (${n} findings)` };
      if (o.interactive && !o.pack)
        return { action: "confirm", reason: `Caution verdict (${n} findings): decided by ${decidingList(r)}` };
      return {
        action: "block",
        reason:
          `Caution verdict (${n} findings) needs confirmation: decided by ${decidingList(r)}. ` +
          `${o.pack ? "Pack installs do not prompt; use --force" : "No terminal to ask on; use --force"} to ` +
          "accept",
      };
    case "dangerous":
      return {
        action: "block",
        reason:
          `Blocked (dangerous verdict, ${n} findings): decided by ${decidingList(r)}. --force does not ` +
          "override a dangerous verdict.",
      };
  }
}

/** What an update does with the rescan of the pulled tree. */
export function updateDecision(r: ScanReport): Decision {
  switch (r.verdict) {
    case "safe":
      return { action: "allow", reason: "Clean rescan" };
    case "caution":
      return {
        action: "allow",
        reason: `Caution verdict on update (${r.deciding.length} high finding(s)): decided by ${decidingList(r)}`,
      };
    case "dangerous":
      return {
        action: "block",
        reason:
          `Update blocked (dangerous verdict): decided by ${decidingList(r)}. The previous revision stays ` +
          "installed and enabled.",
      };
  }
}

/** The hint that goes with a block: how to review, and how an operator waives after review. */
export function blockHint(r: ScanReport): string {
  const base = "Review the findings above. Install only plugins from sources you trust.";
  if (!r.pluginKey || !r.revision || r.deciding.length === 0) {
    return (
      `${base} After review, an operator can waive a finding for this exact revision in config.yaml ` +
      "(plugins.scan_waivers); scanning can be turned off with plugins.scan_on_install: false."
    );
  }
  return (
    `${base} After review, an operator can waive the deciding finding(s) for this exact revision in ` +
    `config.yaml:\n${waiverSnippet(r.deciding, r.pluginKey, r.revision)}`
  );
}

/**
 * The error an install (or update) throws when the decision is `block`: E_SCAN_BLOCKED for a
 * dangerous verdict, E_SCAN_NEEDS_CONFIRMATION for an unconfirmed caution. The message carries
 * the text report so the CLI boundary prints everything in one place.
 */
export function scanBlockedError(r: ScanReport, decision: Decision, report: string): HermesError {
  const code = r.verdict === "dangerous" ? "E_SCAN_BLOCKED" : "E_SCAN_NEEDS_CONFIRMATION";
  const top = r.deciding[0];
  return new HermesError(code, {
    message: `Security scan blocked plugin install: ${decision.reason}${report ? `\n\n${report}` : ""}`,
    hint: blockHint(r),
    file: top && top.file !== "." ? `${r.dir}/${top.file}` : r.dir,
    line: top?.line || undefined,
    col: top?.col || undefined,
  });
}
