/**
 * Shared shapes of the install-time security scanner ("plugin-guard").
 *
 * The contract other code relies on: pattern ids, severities, categories, the verdict mapping
 * and the report below. Everything else (regexes, heuristics) may evolve.
 */

/** Engine version, recorded in every report: bump when a pattern change can change a verdict. */
export const SCANNER_VERSION = "plugin-guard-1";

export const SEVERITIES = ["critical", "high", "medium", "low"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Higher is worse; used for sorting and for "the worst finding decides". */
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { critical: 3, high: 2, medium: 1, low: 0 };

/** Threat categories, with a short title for reports. */
export const CATEGORIES = {
  exfiltration: "credential access and exfiltration",
  network: "reverse shells, tunnels and listeners",
  destructive: "destructive commands",
  persistence: "persistence",
  obfuscation: "obfuscated execution",
  execution: "process execution",
  supply_chain: "supply chain",
  privilege_escalation: "privilege escalation",
  traversal: "path traversal and escapes",
  mining: "crypto mining",
  credential_exposure: "hardcoded secrets",
  injection: "prompt injection",
  structural: "structure of the file tree",
} as const;
export type Category = keyof typeof CATEGORIES;

export const VERDICTS = ["safe", "caution", "dangerous"] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface Waived {
  /** The operator's reason, copied from the waiver. */
  reason: string;
  /** Where the waiver was read from (the home's config.yaml). */
  source?: string;
}

export interface Finding {
  /** Pattern id from the catalog (stable: reports, waivers and SARIF rules key on it). */
  id: string;
  severity: Severity;
  category: Category;
  /** Path relative to the scanned folder, `/`-separated; `.` for findings about the whole tree. */
  file: string;
  /** 1-based; 0 when the finding is about the whole file (binary, size, symlink). */
  line: number;
  /** 1-based column in UTF-16 code units (SARIF's default column kind); 0 with line 0. */
  col: number;
  /** The matched text (invisible characters spelled out), at most ~120 characters. */
  match: string;
  /** The line around the match, for reviewers (at most ~160 characters). */
  snippet?: string;
  description: string;
  /** Set when a plugin adjustment lowered the catalog severity: what it was and why. */
  adjusted?: { from: Severity; why: string };
  /** Set when an operator waiver matched: the finding is reported but does not count. */
  waived?: Waived;
}

export type SkipReason =
  | "vcs"
  | "cache"
  | "binary"
  | "too-large"
  | "symlink"
  | "symlink-outside"
  | "broken-symlink"
  | "unreadable"
  | "special"
  | "generated"
  | "cap";

export interface Skipped {
  /** Relative path; a folder ends with `/`. */
  path: string;
  reason: SkipReason;
  detail?: string;
}

export interface ScanWaiver {
  plugin: string;
  /** 40-hex commit SHA (lowercase) or `local`. */
  revision: string;
  finding: string;
  file?: string;
  reason: string;
}

export interface ScanReport {
  scanner: "hermes-kit plugin-guard";
  /** Engine version: bump when patterns change in a way that changes verdicts. */
  version: string;
  /** Absolute path of the folder that was scanned (symlinks resolved). */
  dir: string;
  /** Display name: the folder's base name. */
  name: string;
  /** Where the plugin came from (an install identifier, a name at update); display only. */
  source?: string;
  pluginKey?: string;
  revision?: string;
  verdict: Verdict;
  /** Every finding, waived ones included, worst first (severity, then file, line, col, id). */
  findings: Finding[];
  /** The findings that decide the verdict: every unwaived critical (dangerous) or high (caution). */
  deciding: Finding[];
  /** Relative paths whose content was scanned, sorted. */
  scannedFiles: string[];
  /** What was not scanned and why, sorted by path. */
  skipped: Skipped[];
  /** Waivers that matched at least one finding. */
  waiversApplied: ScanWaiver[];
  /** Waivers for this plugin and revision that matched nothing (stale: worth removing). */
  waiversUnused: ScanWaiver[];
  /** Counts by severity of the findings that count (unwaived). */
  counts: Record<Severity, number>;
  /** One line: `<name>: clean scan, no threats detected` or `<name>: <verdict> — <n> finding(s) in <categories>`. */
  summary: string;
}
