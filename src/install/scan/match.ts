/**
 * Content matching: run the applicable catalog rows over one file, line by line, one finding per
 * row per line, then let the row's adjustment rule and the general rules (docs, test trees, quoted
 * mentions) drop or re-grade each hit.
 */
import { basename } from "node:path";
import { applyRule, describeCodePoint, invisibleExcused, lowerSeverity, type HitContext } from "./adjust.js";
import type { FileClass } from "./files.js";
import { analyzeLines, codeSpans, quotedSpans, type LineInfo } from "./lines.js";
import { CONTENT_PATTERNS, type PatternSpec } from "./patterns.js";
import type { Finding } from "./types.js";

/** Longest piece of a line a regex sees at once; longer lines (minified code) are scanned in overlapping windows. */
const WINDOW = 4096;
const OVERLAP = 512;
/** How far a call's arguments are followed for `args` rows. */
const CALL_MAX_LINES = 8;
const CALL_MAX_CHARS = 2000;

export const MATCH_MAX = 120;
const SNIPPET_MAX = 160;

const INVISIBLE_G = /[\u200B-\u200D\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}]/gu;

/** Make matched text printable: invisible characters spelled out, whitespace collapsed, clipped. */
export function clip(s: string, max = MATCH_MAX): string {
  const t = s
    .replace(INVISIBLE_G, (c) => describeCodePoint(c))
    .replace(/\s+/g, " ")
    .trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

function snippetOf(line: string, index: number): string {
  const t = line.replace(/\t/g, " ");
  if (t.trim().length <= SNIPPET_MAX) return clip(t, SNIPPET_MAX);
  const start = Math.max(0, index - 40);
  return clip(`${start > 0 ? "…" : ""}${t.slice(start, start + SNIPPET_MAX - 2)}`, SNIPPET_MAX);
}

export interface MatchContext {
  declaredEnv: ReadonlySet<string>;
  /** Skip the needle and whole-file prefilters (tests use it to prove they never change a result). */
  exhaustive?: boolean;
}

export interface FileHit extends Finding {
  snippet: string;
}

/** `\s` without the line feed: the body for inside a character class. */
const WS_NO_LF = "\\t\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";
const prefilters = new WeakMap<RegExp, RegExp>();

/**
 * A whole-file test that is true whenever some line matches `re`: the same pattern in multiline
 * mode with \s kept from crossing a line feed (so lookarounds see a line end as a line end).
 * It may also match across lines (negated classes): that only costs a per-line pass, never a miss.
 */
export function prefilterOf(re: RegExp): RegExp {
  let pf = prefilters.get(re);
  if (pf) return pf;
  const src = re.source;
  let out = "";
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "\\") {
      const n = src[i + 1] ?? "";
      if (n === "s") out += inClass ? WS_NO_LF : `[^\\S\\n]`;
      else out += c + n;
      i++;
      continue;
    }
    if (inClass && c === "]") inClass = false;
    else if (!inClass && c === "[") inClass = true;
    out += c;
  }
  pf = new RegExp(out, re.flags.includes("m") ? re.flags : `${re.flags}m`);
  prefilters.set(re, pf);
  return pf;
}

/**
 * A multi-needle matcher (Aho-Corasick over ASCII, compiled to a full transition table): which
 * needles occur in a text, in one pass, case-insensitively (the needles are lowercase ASCII).
 */
export class NeedleSet {
  private readonly delta: Int32Array;
  private readonly out: number[][];
  constructor(readonly needles: readonly string[]) {
    const goto: number[][] = [new Array(128).fill(-1)];
    const out: number[][] = [[]];
    needles.forEach((n, id) => {
      let s = 0;
      for (const ch of n) {
        const c = ch.charCodeAt(0) & 127;
        if (goto[s]![c] === -1) {
          goto.push(new Array(128).fill(-1));
          out.push([]);
          goto[s]![c] = goto.length - 1;
        }
        s = goto[s]![c]!;
      }
      out[s]!.push(id);
    });
    const fail = new Array<number>(goto.length).fill(0);
    const delta = new Int32Array(goto.length * 128);
    const queue: number[] = [];
    for (let c = 0; c < 128; c++) {
      const t = goto[0]![c]!;
      delta[c] = t === -1 ? 0 : t;
      if (t !== -1) queue.push(t);
    }
    while (queue.length) {
      const s = queue.shift()!;
      out[s] = [...out[s]!, ...out[fail[s]!]!];
      for (let c = 0; c < 128; c++) {
        const t = goto[s]![c]!;
        if (t === -1) delta[s * 128 + c] = delta[fail[s]! * 128 + c]!;
        else {
          fail[t] = delta[fail[s]! * 128 + c]!;
          delta[s * 128 + c] = t;
          queue.push(t);
        }
      }
    }
    this.delta = delta;
    this.out = out;
  }

  /** The needles that occur in `text` (ASCII letters compared case-insensitively). */
  find(text: string): Set<string> {
    const found = new Set<string>();
    const { delta, out } = this;
    let s = 0;
    for (let i = 0; i < text.length; i++) {
      let c = text.charCodeAt(i);
      if (c >= 65 && c <= 90) c += 32;
      else if (c > 127) c = 0;
      s = delta[s * 128 + c]!;
      const o = out[s]!;
      if (o.length) for (const id of o) found.add(this.needles[id]!);
    }
    return found;
  }
}

let needles: NeedleSet | undefined;

/** The needle table of every content row, built on the first scan: loading the scanner stays cheap. */
function needleSet(): NeedleSet {
  return (needles ??= new NeedleSet([...new Set(CONTENT_PATTERNS.flatMap((p) => p.needles ?? []))]));
}

/** Which rows apply to this file at all. */
export function applicablePatterns(cls: FileClass, rel: string, text: string, exhaustive = false): PatternSpec[] {
  const name = basename(rel);
  const present = exhaustive ? new Set<string>() : needleSet().find(text);
  return CONTENT_PATTERNS.filter((p) => {
    if (p.scope === "code" && (cls.kind === "doc" || cls.nonRuntime)) return false;
    if (p.scope === "prose" && (cls.nonRuntime || (p.notInCode && cls.kind === "code"))) return false;
    if (p.langs && !p.langs.includes(cls.lang)) return false;
    if (p.files && !p.files.test(name)) return false;
    if (p.fileGuard && !p.fileGuard.test(text)) return false;
    if (exhaustive) return true;
    if (p.needles && !p.needles.some((n) => present.has(n))) return false;
    return prefilterOf(p.re!).test(text);
  });
}

/** First match of `re` in `line`, scanning long lines in windows. */
function execLine(re: RegExp, line: string): { m: RegExpExecArray; index: number } | undefined {
  if (line.length <= WINDOW) {
    const m = re.exec(line);
    return m ? { m, index: m.index } : undefined;
  }
  const anchored = re.source.includes("^");
  for (let start = 0; start < line.length; start += WINDOW - OVERLAP) {
    const m = re.exec(line.slice(start, start + WINDOW));
    if (m && !(anchored && start > 0 && m.index === 0)) return { m, index: start + m.index };
    if (start + WINDOW >= line.length) break;
  }
  return undefined;
}

const globals = new WeakMap<RegExp, RegExp>();
function globalOf(re: RegExp): RegExp {
  let g = globals.get(re);
  if (!g) globals.set(re, (g = new RegExp(re.source, re.flags.includes("g") ? re.flags : `${re.flags}g`)));
  g.lastIndex = 0;
  return g;
}

/** The argument text of the call whose `(` ends at `open` (exclusive), balanced, across a few lines. */
function callArgs(lines: readonly LineInfo[], i: number, open: number): string {
  let depth = 1;
  let out = "";
  let quote: string | undefined;
  for (let li = i; li < Math.min(lines.length, i + CALL_MAX_LINES); li++) {
    const text = li === i ? lines[li]!.text.slice(open) : lines[li]!.text;
    for (let k = 0; k < text.length; k++) {
      const c = text[k]!;
      if (quote) {
        if (c === "\\") {
          out += c + (text[k + 1] ?? "");
          k++;
          continue;
        }
        if (c === quote) quote = undefined;
      } else if (c === '"' || c === "'" || c === "`") quote = c;
      else if (c === "(" || c === "[" || c === "{") depth++;
      else if (c === ")" || c === "]" || c === "}") {
        depth--;
        if (depth === 0) return out;
      }
      out += c;
      if (out.length >= CALL_MAX_CHARS) return out;
    }
    out += "\n";
    // Template literals and other strings may span lines; plain quotes may not.
    if (quote === '"' || quote === "'") quote = undefined;
  }
  return out;
}

function inRanges(ranges: ReadonlyArray<[number, number]>, start: number, end: number): boolean {
  return ranges.some(([a, b]) => start >= a && end <= b);
}

/** Scan one text file. `rel` is plugin-relative; the findings are not yet waived or sorted. */
export function matchFile(text: string, rel: string, cls: FileClass, ctx: MatchContext): FileHit[] {
  // Lines end in \n only, as splitLines sees them (the prefilter relies on it).
  const patterns = applicablePatterns(cls, rel, text.replace(/\r\n?/g, "\n"), ctx.exhaustive);
  if (patterns.length === 0) return [];
  const lines = analyzeLines(text, cls);
  const hits: FileHit[] = [];

  lines.forEach((info, i) => {
    const line = info.text;
    if (line.trim() === "") return;
    for (const p of patterns) {
      if (p.scope === "code" && info.comment) continue;
      const found = findOnLine(p, lines, i);
      if (!found) continue;
      const { m, index, span } = found;
      const raw: FileHit = {
        id: p.id,
        severity: p.severity,
        category: p.category,
        file: rel,
        line: i + 1,
        col: index + 1,
        match: clip(span !== undefined ? `${m[0]}${span})` : m[0]),
        description: p.description,
        snippet: snippetOf(line, index),
      };
      const hctx: HitContext = { cls, rel, line, lineNo: i + 1, index, match: m, span, declaredEnv: ctx.declaredEnv };
      const adjusted = applyRule(p, raw, hctx);
      if (!adjusted) continue;
      const f = generalRules(p, { ...adjusted, snippet: raw.snippet }, cls, info, index, m[0].length);
      hits.push(f);
    }
  });
  return hits;
}

function findOnLine(
  p: PatternSpec,
  lines: readonly LineInfo[],
  i: number,
): { m: RegExpExecArray; index: number; span?: string } | undefined {
  const line = lines[i]!.text;
  if (p.args) {
    for (const m of line.matchAll(globalOf(p.re!))) {
      const span = callArgs(lines, i, m.index! + m[0].length);
      if (p.args.test(span)) return { m: m as RegExpExecArray, index: m.index!, span };
    }
    return undefined;
  }
  if (p.adjust === "invisible") {
    // Several invisible characters may share a line; the first one ordinary text does not need counts.
    for (const m of line.matchAll(globalOf(p.re!))) {
      if (!invisibleExcused(line, m.index!, i + 1)) return { m: m as RegExpExecArray, index: m.index! };
    }
    return undefined;
  }
  return execLine(p.re!, line);
}

/** Docs severity, quoted mentions in docs, and the test-tree demotion. */
function generalRules(
  p: PatternSpec,
  f: FileHit,
  cls: FileClass,
  info: LineInfo,
  index: number,
  length: number,
): FileHit {
  let out = f;
  if (cls.nonRuntime) {
    out = lowerSeverity(
      out,
      "low",
      `${cls.nonRuntime.why} (${cls.nonRuntime.root}): shipped but never loaded by the runtime`,
    ) as FileHit;
  } else if (cls.kind === "doc") {
    if (p.docSeverity) out = lowerSeverity(out, p.docSeverity, "documentation prose") as FileHit;
    if (out.severity === "critical" && p.scope === "prose") {
      const quoted =
        (cls.markdown && (info.fence || inRanges(codeSpans(info.text), index, index + length))) ||
        inRanges(quotedSpans(info.text), index, index + length);
      if (quoted)
        out = lowerSeverity(
          out,
          "high",
          "quoted in the docs (code block, code span or quotation): a mention, still worth a look",
        ) as FileHit;
    }
  }
  return out;
}
