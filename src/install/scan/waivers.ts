/**
 * Operator waivers: `plugins.scan_waivers` in the home's config.yaml, never anything inside the
 * plugin. A waiver silences one finding id for one plugin key at one exact revision (a 40-hex
 * commit, or `local` for a plugin without git origin), optionally in one file. Waived findings
 * stay in the report, marked, and do not count toward the verdict. A new revision needs a new
 * waiver: the review was of that code, not of whatever comes next.
 */
import { diagnostic, type Diagnostic } from "../../core/errors.js";
import type { SourceDoc } from "../../core/yaml-source.js";
import type { Finding, ScanWaiver } from "./types.js";

export const REVISION_RE = /^(?:[0-9a-fA-F]{40}|local)$/;
const FINDING_ID_RE = /^[a-z][a-z0-9_]*$/;

function normRevision(r: string): string {
  return r === "local" ? r : r.toLowerCase();
}

function normFile(f: string): string {
  return f
    .replace(/\\/g, "/")
    .replace(/^\.\/+/, "")
    .replace(/\/+$/, "");
}

export interface ParsedWaivers {
  waivers: ScanWaiver[];
  /** W_SCAN_WAIVER_INVALID for every entry that is ignored. */
  diagnostics: Diagnostic[];
}

/**
 * Read `plugins.scan_waivers` from a parsed config mapping. Malformed entries are ignored with a
 * warning (the config schema reports them too); nothing here throws.
 */
export function parseScanWaivers(config: unknown, where: { file?: string; source?: SourceDoc } = {}): ParsedWaivers {
  const out: ParsedWaivers = { waivers: [], diagnostics: [] };
  const plugins =
    config && typeof config === "object" && !Array.isArray(config)
      ? (config as Record<string, unknown>).plugins
      : undefined;
  const list =
    plugins && typeof plugins === "object" && !Array.isArray(plugins)
      ? (plugins as Record<string, unknown>).scan_waivers
      : undefined;
  if (list === undefined || list === null) return out;
  const at = (path: Array<string | number>) =>
    where.source
      ? where.source.locate(path)
      : { file: where.file, path: path.map((p, i) => (typeof p === "number" ? `[${p}]` : i ? `.${p}` : p)).join("") };
  if (!Array.isArray(list)) {
    out.diagnostics.push(
      diagnostic(
        "W_SCAN_WAIVER_INVALID",
        "plugins.scan_waivers must be a list; no waiver applies",
        at(["plugins", "scan_waivers"]),
      ),
    );
    return out;
  }
  list.forEach((item, i) => {
    const problems: string[] = [];
    const o = item && typeof item === "object" && !Array.isArray(item) ? (item as Record<string, unknown>) : undefined;
    if (!o) problems.push("must be a mapping with plugin, revision, finding and reason");
    else {
      if (typeof o.plugin !== "string" || !o.plugin.trim()) problems.push("plugin (the plugin key) is missing");
      if (typeof o.revision !== "string" || !REVISION_RE.test(o.revision.trim()))
        problems.push("revision must be a full 40-character commit SHA or 'local'");
      if (typeof o.finding !== "string" || !FINDING_ID_RE.test(o.finding.trim()))
        problems.push("finding must be a finding id such as env_exfil_fetch");
      if (o.file !== undefined && (typeof o.file !== "string" || !o.file.trim()))
        problems.push("file, when given, must be a path relative to the plugin folder");
      if (typeof o.reason !== "string" || !o.reason.trim())
        problems.push("reason is missing (say why the finding is acceptable)");
    }
    if (problems.length || !o) {
      out.diagnostics.push(
        diagnostic(
          "W_SCAN_WAIVER_INVALID",
          `scan waiver #${i + 1} is ignored: ${problems.join("; ")}`,
          at(["plugins", "scan_waivers", i]),
        ),
      );
      return;
    }
    const w: ScanWaiver = {
      plugin: (o.plugin as string).trim(),
      revision: normRevision((o.revision as string).trim()),
      finding: (o.finding as string).trim(),
      reason: (o.reason as string).trim(),
    };
    if (typeof o.file === "string") w.file = normFile(o.file.trim());
    out.waivers.push(w);
  });
  return out;
}

export function waiverMatches(w: ScanWaiver, f: Finding, pluginKey: string, revision: string): boolean {
  return (
    w.plugin === pluginKey &&
    normRevision(w.revision) === normRevision(revision) &&
    w.finding === f.id &&
    (w.file === undefined || normFile(w.file) === f.file)
  );
}

export interface WaiverOutcome {
  findings: Finding[];
  applied: ScanWaiver[];
  unused: ScanWaiver[];
}

/**
 * Mark the findings that a waiver covers. Without a plugin key and a revision nothing is waived:
 * a waiver is always pinned to both.
 */
export function applyWaivers(
  findings: readonly Finding[],
  waivers: readonly ScanWaiver[],
  target: { pluginKey?: string; revision?: string; source?: string },
): WaiverOutcome {
  const { pluginKey, revision } = target;
  if (!pluginKey || !revision || waivers.length === 0) return { findings: [...findings], applied: [], unused: [] };
  const mine = waivers.filter((w) => w.plugin === pluginKey && normRevision(w.revision) === normRevision(revision));
  const used = new Set<ScanWaiver>();
  const out = findings.map((f) => {
    const w = mine.find((x) => waiverMatches(x, f, pluginKey, revision));
    if (!w) return f;
    used.add(w);
    return { ...f, waived: target.source ? { reason: w.reason, source: target.source } : { reason: w.reason } };
  });
  return { findings: out, applied: mine.filter((w) => used.has(w)), unused: mine.filter((w) => !used.has(w)) };
}

/** YAML a reviewer can paste under `plugins.scan_waivers:` to waive these findings at this revision. */
export function waiverSnippet(findings: readonly Finding[], pluginKey: string, revision: string): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const f of findings) {
    const key = `${f.id}\0${f.file}`;
    if (seen.has(key)) continue;
    seen.add(key);
    lines.push(
      `  - plugin: ${JSON.stringify(pluginKey)}`,
      `    revision: ${JSON.stringify(revision)}`,
      `    finding: ${f.id}`,
      ...(f.file && f.file !== "." ? [`    file: ${JSON.stringify(f.file)}`] : []),
      `    reason: "<why this is acceptable, after reviewing ${f.file}${f.line ? `:${f.line}` : ""}>"`,
    );
  }
  return `plugins:\n  scan_waivers:\n${lines.map((l) => `  ${l}`).join("\n")}\n`;
}
