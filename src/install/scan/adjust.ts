/**
 * Plugin adjustments: context rules that drop or re-grade a raw
 * pattern hit. Each rule is named in the catalog row (`adjust:`), so the table stays the one place
 * that says what applies where.
 *
 * The provider exemption, made precise: the original drops every env-read and env-carrying HTTP id
 * in code files. Here a read (or an HTTP call carrying it) is dropped only when the variable is one
 * the manifest declares (`requires_env` / `optional_env`): a provider reading its own API key is not
 * a finding; reading someone else's is reported. An HTTP call carrying the whole environment, or a
 * secret sent to a capture service or a bare IP, stays critical.
 */
import { resolveSpecifier, type FileClass } from "./files.js";
import { patternById, type PatternSpec } from "./patterns.js";
import type { Finding, Severity } from "./types.js";

export interface HitContext {
  cls: FileClass;
  /** Plugin-relative path of the file. */
  rel: string;
  /** The whole line the hit starts on. */
  line: string;
  /** 1-based line number. */
  lineNo: number;
  /** Index of the match in `line`. */
  index: number;
  /** The regex match (capture 1 is the secret value for secret rows). */
  match: RegExpExecArray;
  /** For call rows: the balanced argument text of the call (may span lines). */
  span?: string;
  /** Environment variables the manifest declares. */
  declaredEnv: ReadonlySet<string>;
}

// ── environment reads ─────────────────────────────────────────────────────────────────────────

const ENV_READ_RES: readonly RegExp[] = [
  /(?:process|Bun)\.env(?:\?\.|\.)([A-Za-z_]\w*)/g,
  /(?:process|Bun)\.env\[\s*["'`]([A-Za-z_]\w*)["'`]\s*\]/g,
  /Deno\.env\.get\(\s*["'`]([A-Za-z_]\w*)["'`]/g,
  /import\.meta\.env\.([A-Za-z_]\w*)/g,
  /os\.environ(?:\.get)?\s*[[(]\s*[rbuf]?["']([A-Za-z_]\w*)["']/g,
  /os\.getenv\(\s*[rbuf]?["']([A-Za-z_]\w*)["']/g,
  /\bENV(?:\.fetch)?\s*[[(]\s*["']([A-Za-z_]\w*)["']/g,
];
const SHELL_VAR_RE = /\$\{?([A-Za-z_]\w*)\}?/g;
const SECRET_NAME_RE = /(?:api_?key|key|token|secret|passw(?:or)?d|pwd|credentials?)s?$/i;
const BULK_ENV_RE = new RegExp(
  String.raw`JSON\.stringify\(\s*(?:\{\s*\.\.\.\s*)?process\.env\b|\.\.\.\s*process\.env\b|` +
    String.raw`Object\.(?:entries|keys|values)\(\s*process\.env\b|\bprocess\.env\s*[,)}\]]|` +
    String.raw`dict\(\s*os\.environ\s*\)|\*\*\s*os\.environ\b|\bos\.environ\s*[,)}\]]|os\.environ\.(?:items|` +
    String.raw`copy|keys|values)\(`,
);

/** Names of environment variables read in `text` (shell `$NAME` only for shell-like files). */
export function envNamesRead(text: string, shellVars: boolean): string[] {
  const names = new Set<string>();
  for (const re of ENV_READ_RES) {
    re.lastIndex = 0; // matchAll starts where the shared regex was left
    for (const m of text.matchAll(re)) names.add(m[1]!);
  }
  if (shellVars) for (const m of text.matchAll(SHELL_VAR_RE)) names.add(m[1]!);
  return [...names];
}

/** The first environment variable read at the start of `text` (where a match begins). */
export function firstEnvName(text: string): string | undefined {
  let best: { at: number; name: string } | undefined;
  for (const re of ENV_READ_RES) {
    re.lastIndex = 0;
    const m = re.exec(text);
    re.lastIndex = 0;
    if (m && (!best || m.index < best.at)) best = { at: m.index, name: m[1]! };
  }
  return best?.name;
}

function isShellLike(cls: FileClass): boolean {
  return cls.lang === "sh" || cls.lang === "config" || cls.lang === "other" || cls.lang === "win";
}

// ── URLs and destinations ─────────────────────────────────────────────────────────────────────

const URL_HOST_RE = /\b(?:https?|wss?):\/\/(\[[^\]\s]+\]|[^/\s"'`:?#)]+)/gi;
const LOOPBACK_RE = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)$/i;
const CAPTURE_HOST_RE = new RegExp(
  String.raw`(?:^|\.)(?:webhook\.site|requestbin\.(?:com|net)|pipedream\.net|hookbin\.com|beeceptor\.com|` +
    String.raw`interact\.sh|oast\.(?:pro|live|site|online|fun|me)|burpcollaborator\.net|requestcatcher\.com|` +
    String.raw`pastebin\.com|hastebin\.com|transfer\.sh|0x0\.st|file\.io|termbin\.com|ngrok(?:-free)?\.(?:io|` +
    String.raw`app|dev)|trycloudflare\.com|loca\.lt|serveo\.net)$`,
  "i",
);
const PRIVATE_IP_RE = /^(?:10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.)/;

export function urlHosts(text: string): string[] {
  return [...text.matchAll(URL_HOST_RE)].map((m) => m[1]!.toLowerCase());
}

function suspiciousHost(host: string): boolean {
  if (CAPTURE_HOST_RE.test(host)) return true;
  // A bare public IPv4 address: nobody's API lives there.
  return /^(?:\d{1,3}\.){3}\d{1,3}$/.test(host) && !LOOPBACK_RE.test(host) && !PRIVATE_IP_RE.test(host);
}

function loopbackOnly(hosts: readonly string[]): boolean {
  return hosts.length > 0 && hosts.every((h) => LOOPBACK_RE.test(h));
}

// ── secret values ─────────────────────────────────────────────────────────────────────────────

const PLACEHOLDER_RE = new RegExp(
  String.raw`example|sample|placeholder|your|xxxx|\*\*\*|<|>|\.\.\.|changeme|change[-_]?me|dummy|fake|` +
    String.raw`redacted|insert|replace|todo|fixme|test|demo|mock|foo|bar|abc(?:def)?|1234|0000|aaaa`,
  "i",
);

function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** A value that looks like a real secret rather than documentation of one. */
export function looksLikeRealSecret(value: string): boolean {
  if (PLACEHOLDER_RE.test(value)) return false;
  if (!/\d/.test(value) || !/[A-Za-z]/.test(value)) return false;
  return entropy(value) >= 3.2;
}

// ── invisible characters ──────────────────────────────────────────────────────────────────────

// Matches one code point at a time; skin tones and VS16 are listed alone on purpose.
// biome-ignore lint/suspicious/noMisleadingCharacterClass: see the line above
const EMOJI_NEAR_RE = /[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F\u20E3]/u;
const JOINING_SCRIPT_RE = new RegExp(
  String.raw`[\p{Script=Arabic}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}` +
    String.raw`\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}` +
    String.raw`\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Syriac}\p{Script=Hebrew}` +
    String.raw`\p{Script=Mongolian}]`,
  "u",
);

/** Whether the invisible character at `index` is one ordinary text needs (emoji ZWJ, script joiners, a leading BOM). */
export function invisibleExcused(line: string, index: number, lineNo: number): boolean {
  const ch = line.codePointAt(index)!;
  if (ch === 0xfeff && lineNo === 1 && index === 0) return true;
  if (ch === 0x200d || ch === 0x200c) {
    const before = [...line.slice(Math.max(0, index - 2), index)].pop() ?? "";
    const after = [...line.slice(index + 1, index + 3)][0] ?? "";
    if (ch === 0x200d && EMOJI_NEAR_RE.test(before) && EMOJI_NEAR_RE.test(after)) return true;
    if (JOINING_SCRIPT_RE.test(before) || JOINING_SCRIPT_RE.test(after)) return true;
  }
  return false;
}

export function describeCodePoint(ch: string): string {
  return `<U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`;
}

// ── the rules ────────────────────────────────────────────────────────────────────────────────

/** The finding at another severity, remembering the catalog's severity and why it changed. */
export function lowerSeverity(f: Finding, to: Severity, why: string): Finding {
  if (f.severity === to) return f;
  return { ...f, severity: to, adjusted: { from: f.adjusted?.from ?? f.severity, why } };
}

/** The rule named in the row; returns the finding (maybe re-graded or re-labelled) or null to drop it. */
export function applyRule(spec: PatternSpec, f: Finding, ctx: HitContext): Finding | null {
  switch (spec.adjust) {
    case undefined:
      return f;
    case "env-read": {
      const name = firstEnvName(ctx.line.slice(ctx.index));
      return name !== undefined && ctx.declaredEnv.has(name) ? null : f;
    }
    case "loopback":
      return loopbackOnly(urlHosts(ctx.line)) ? null : f;
    case "relative-import": {
      // Inside a quoted relative path that stays inside the plugin folder: a module path, not an escape.
      for (const m of ctx.line.matchAll(/(["'`])(\.{1,2}\/[^"'`\n]*)\1/g)) {
        const start = m.index!;
        if (ctx.index >= start && ctx.index < start + m[0].length) {
          return resolveSpecifier(ctx.rel, m[2]!) !== undefined ? null : f;
        }
      }
      return f;
    }
    case "secret-value": {
      const value = ctx.match[1] ?? ctx.match[0];
      return looksLikeRealSecret(value) ? f : null;
    }
    case "invisible":
      return invisibleExcused(ctx.line, ctx.index, ctx.lineNo) ? null : f;
    case "env-exfil":
      return envExfil(f, ctx);
    case "command-mention":
      // Reported, never deciding: a message naming a command may still be run from elsewhere.
      return commandMentioned(ctx) && f.severity !== "medium" && f.severity !== "low"
        ? lowerSeverity(f, "medium", "plugin adjustment: a string that only mentions the command")
        : f;
    case "joined-module":
      return joinedModule(ctx.match[0]) ? f : null;
  }
}

// ── commands named in prose strings ───────────────────────────────────────────────────────────

const EXEC_CALL_RE = new RegExp(
  String.raw`\b(?:exec|execSync|execFile|execFileSync|spawn|spawnSync|execa\w*|system|popen|Popen|run|call|` +
    String.raw`check_output|check_call|getoutput)\s*\(|(?<![\w$])\$` +
    "`",
);

/**
 * In JavaScript and Python a command word inside a string literal is a mention ("no sudo here")
 * unless the string starts with it, a shell separator precedes it, or the line runs a command.
 */
function commandMentioned(ctx: HitContext): boolean {
  if (ctx.cls.lang !== "js" && ctx.cls.lang !== "py") return false;
  if (EXEC_CALL_RE.test(ctx.line)) return false;
  const at = ctx.index + ctx.match[0].search(/[A-Za-z]/);
  const before = ctx.line.slice(0, at);
  const open = /(["'`])([^"'`]*)$/.exec(before);
  if (!open) return false;
  const inString = open[2]!;
  // The quote before is an opening one when the quotes before it pair up.
  const quotes = (before.slice(0, open.index).match(new RegExp(open[1]!, "g")) ?? []).length;
  if (quotes % 2 !== 0) return false;
  return /\w/.test(inString) && !/(?:[;&|]|\$\(|`)\s*$/.test(inString);
}

// ── module names spelled in pieces ────────────────────────────────────────────────────────────

/** Modules whose name is never built from pieces by honest code. */
const GUARDED_MODULES = new Set([
  "child_process",
  "vm",
  "net",
  "dgram",
  "worker_threads",
  "subprocess",
  "socket",
  "pty",
  "ctypes",
  "os",
]);

/** Whether the concatenated string literals of `text` spell a guarded module name. */
export function joinedModule(text: string): boolean {
  const parts = [...text.matchAll(/(["'`])((?:(?!\1)[^\\\n])*)\1/g)].map((m) => m[2]!);
  if (parts.length < 2) return false;
  return GUARDED_MODULES.has(parts.join("").replace(/^node:/, ""));
}

function envExfil(f: Finding, ctx: HitContext): Finding | null {
  const text = ctx.span ?? ctx.line;
  const hosts = urlHosts(ctx.span ? `${ctx.line}\n${ctx.span}` : ctx.line);
  if (loopbackOnly(hosts)) return null;
  // Docs never get here (code scope); config and other text keep the original's full severity.
  if (ctx.cls.kind !== "code") return f;
  if (BULK_ENV_RE.test(text)) return f;
  const names = envNamesRead(text, isShellLike(ctx.cls)).filter((n) => SECRET_NAME_RE.test(n));
  // Only an identifier is interpolated: where it comes from is unknown (the original drops these in code).
  if (names.length === 0) return null;
  if (hosts.some(suspiciousHost)) return f;
  const undeclared = names.filter((n) => !ctx.declaredEnv.has(n));
  if (undeclared.length === 0) return null;
  const sent = patternById("env_secret_sent")!;
  return {
    ...f,
    id: sent.id,
    severity: sent.severity,
    category: sent.category,
    description: `${sent.description}: ${undeclared.join(", ")}`,
    adjusted: {
      from: f.severity,
      why: `plugin adjustment: ${f.id} to a regular API with a secret the manifest does not declare`,
    },
  };
}
