import type { IndexEntry } from "./parse.js";
import { codePoints, matchingSize, type CodePoints } from "./sequence-matcher.js";

/**
 * Community index search (install spec §7.4, improved). Documented in docs/index-and-packs.md.
 *
 * Every entry gets the best score of the rules below (the max, never a sum); entries scoring 0
 * are dropped; the rest sort by score (high first), then by name (code-unit order, as the
 * original), then by repo. Text is compared lowercased; "normalized" text also treats runs of
 * `-`, `_`, `.`, `/` and blanks as one space, so `media studio` and `media-studio` are the same.
 *
 * | score | rule (name = the entry's name) |
 * | ---: | --- |
 * | 100 | exact name |
 * | 98 | exact name, normalized (`media studio` = `media-studio`) |
 * | 90 | name prefix |
 * | 86 | whole word, or run of whole words, of the name (`telegram`, `chrome profiles`) |
 * | 82 | prefix of a word of the name (`tele` → `hermes-telegram-business`) |
 * | 76 | anywhere in the name |
 * | 70 | exact tag (normalized) |
 * | 60 | prefix of a tag |
 * | 55 | anywhere in a tag |
 * | 50 | whole word(s) of the description |
 * | 45 | anywhere in the description |
 * | 40 | anywhere in the author |
 * | r·60 | typo: Ratcliff/Obershelp ratio r of term and name ≥ 0.6 (the original's rule) |
 * | r·58 | typo in one word of a multi-word name: ratio with that word ≥ 0.75 |
 * | r·50 | typo in a tag: ratio with the tag ≥ 0.75 |
 *
 * So an exact name beats a prefix, a prefix beats a word match, a word match beats a substring,
 * and any name match beats tags, description, author and typos. A term of several words that
 * matches nowhere as a phrase scores 0.9 × the mean of its words' scores when every word matches
 * something (`telegram business bot`).
 *
 * Differences from the original, on purpose: the prefix and word tiers (the original had one
 * "substring of the name" tier, so `studio` ranked `hermes-media-studio` and `studio-tools`
 * alike); separator-insensitive matching; typo tolerance per name word and per tag (the
 * original's whole-name ratio misses a typo in one word of a long name: `telgram` vs
 * `hermes-telegram-business` is 0.45); multi-word terms.
 */

export type MatchKind = "exact" | "prefix" | "word" | "name" | "tag" | "description" | "author" | "typo";

export interface SearchHit {
  entry: IndexEntry;
  score: number;
  match: MatchKind;
}

interface Fuzzy {
  cps: CodePoints;
  /** Distinct code points with their counts: the quick_ratio upper bound in O(distinct). */
  hist: Array<[number, number]>;
}

export interface PreparedEntry {
  entry: IndexEntry;
  name: string;
  nameNorm: string;
  /** ` ${nameNorm} `, for whole-word tests. */
  namePadded: string;
  name$: Fuzzy;
  /** Words of multi-word names (empty for one-word names: the whole-name ratio covers them). */
  words: Fuzzy[];
  tags: string[];
  tagsNorm: string[];
  tags$: Fuzzy[];
  description: string;
  descPadded: string;
  author: string;
  capabilities: string[];
}

export interface PreparedIndex {
  readonly entries: readonly PreparedEntry[];
}

const SEP = /[\s\-_./]+/g;

export function normalizeText(s: string): string {
  return s.toLowerCase().replace(SEP, " ").trim();
}

function fuzzy(s: string): Fuzzy {
  const cps = codePoints(s);
  const m = new Map<number, number>();
  for (const c of cps) m.set(c, (m.get(c) ?? 0) + 1);
  return { cps, hist: [...m] };
}

function prepareEntry(entry: IndexEntry): PreparedEntry {
  const name = entry.name.toLowerCase();
  const nameNorm = normalizeText(entry.name);
  const words = nameNorm.split(" ").filter(Boolean);
  const tags = entry.tags.map((t) => t.toLowerCase());
  return {
    entry,
    name,
    nameNorm,
    namePadded: ` ${nameNorm} `,
    name$: fuzzy(name),
    words: words.length > 1 ? words.map(fuzzy) : [],
    tags,
    tagsNorm: entry.tags.map(normalizeText),
    tags$: tags.map(fuzzy),
    description: entry.description.toLowerCase(),
    descPadded: ` ${normalizeText(entry.description)} `,
    author: entry.author.toLowerCase(),
    capabilities: entry.capabilities.map((c) => c.toLowerCase()),
  };
}

/** Lowercase, normalize and index every entry once; search many times. */
export function prepareIndex(entries: readonly IndexEntry[]): PreparedIndex {
  return { entries: entries.map(prepareEntry) };
}

interface Query {
  text: string;
  norm: string;
  fz: Fuzzy;
  counts: Map<number, number>;
}

function query(text: string): Query {
  const fz = fuzzy(text);
  return { text, norm: normalizeText(text), fz, counts: new Map(fz.hist) };
}

/** ratio(q, b) when it can reach `min`, else 0; the length and multiset bounds skip the real work. */
function ratioAtLeast(q: Query, b: Fuzzy, min: number): number {
  const la = q.fz.cps.length;
  const lb = b.cps.length;
  const total = la + lb;
  if (!total) return 1;
  if ((2 * Math.min(la, lb)) / total < min) return 0;
  let inter = 0;
  for (const [c, n] of b.hist) {
    const m = q.counts.get(c);
    if (m) inter += m < n ? m : n;
  }
  if ((2 * inter) / total < min) return 0;
  const r = (2 * matchingSize(q.fz.cps, b.cps)) / total;
  return r >= min ? r : 0;
}

function scoreOne(p: PreparedEntry, q: Query): { score: number; match: MatchKind } {
  const t = q.text;
  const n = q.norm;
  if (p.name === t) return { score: 100, match: "exact" };
  if (n && p.nameNorm === n) return { score: 98, match: "exact" };
  let score = 0;
  let match: MatchKind = "typo";
  const take = (s: number, m: MatchKind) => {
    if (s > score) {
      score = s;
      match = m;
    }
  };
  if (p.name.startsWith(t) || (n && p.nameNorm.startsWith(n))) take(90, "prefix");
  else if (n && p.namePadded.includes(` ${n} `)) take(86, "word");
  else if (n && p.namePadded.includes(` ${n}`)) take(82, "word");
  else if (p.name.includes(t) || (n && p.nameNorm.includes(n))) take(76, "name");
  if (score >= 70) return { score, match };
  for (let i = 0; i < p.tags.length; i++) {
    const tag = p.tags[i]!;
    const tn = p.tagsNorm[i]!;
    if (tag === t || (n && tn === n)) {
      take(70, "tag");
      break;
    }
    if (tag.startsWith(t) || (n && tn.startsWith(n))) take(60, "tag");
    else if (tag.includes(t)) take(55, "tag");
  }
  if (score >= 60) return { score, match };
  if (n && p.descPadded.includes(` ${n} `)) take(50, "description");
  else if (p.description.includes(t)) take(45, "description");
  if (p.author.includes(t)) take(40, "author");
  // Typos: each rule's best possible score is r_max × weight ≤ 60, so stop when it cannot win.
  const r = ratioAtLeast(q, p.name$, Math.max(0.6, score / 60));
  if (r) take(r * 60, "typo");
  for (const w of p.words) {
    if (score >= 58) break;
    const rw = ratioAtLeast(q, w, Math.max(0.75, score / 58));
    if (rw) take(rw * 58, "typo");
  }
  for (const tg of p.tags$) {
    if (score >= 50) break;
    const rt = ratioAtLeast(q, tg, Math.max(0.75, score / 50));
    if (rt) take(rt * 50, "tag");
  }
  return { score, match };
}

function scoreEntry(p: PreparedEntry, whole: Query, parts: Query[]): { score: number; match: MatchKind } {
  const best = scoreOne(p, whole);
  if (parts.length < 2 || best.score >= 70) return best;
  let sum = 0;
  let kind: MatchKind = "typo";
  let top = -1;
  for (const part of parts) {
    const s = scoreOne(p, part);
    if (!s.score) return best;
    sum += s.score;
    if (s.score > top) {
      top = s.score;
      kind = s.match;
    }
  }
  const combined = (0.9 * sum) / parts.length;
  return combined > best.score ? { score: combined, match: kind } : best;
}

function byName(a: IndexEntry, b: IndexEntry): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.repo < b.repo ? -1 : a.repo > b.repo ? 1 : 0;
}

export interface SearchOptions {
  /** Keep entries with this index capability label (exact, case-insensitive). */
  capability?: string;
}

function isPrepared(x: PreparedIndex | readonly IndexEntry[]): x is PreparedIndex {
  return !Array.isArray(x);
}

/**
 * Search (see the module comment for the scoring). An empty term browses: every entry that
 * passes the capability filter, sorted by name.
 */
export function searchIndex(index: PreparedIndex | readonly IndexEntry[], term: string, opts: SearchOptions = {}): SearchHit[] {
  const prepared = isPrepared(index) ? index : prepareIndex(index);
  const cap = opts.capability?.trim().toLowerCase();
  const pool = cap ? prepared.entries.filter((p) => p.capabilities.includes(cap)) : prepared.entries;
  const text = term.trim().toLowerCase();
  if (!text) return pool.map((p) => ({ entry: p.entry, score: 0, match: "name" as MatchKind })).sort((a, b) => byName(a.entry, b.entry));
  const whole = query(text);
  const parts = text.split(/\s+/).filter(Boolean).length > 1 ? text.split(/\s+/).filter(Boolean).map(query) : [];
  const hits: SearchHit[] = [];
  for (const p of pool) {
    const s = scoreEntry(p, whole, parts);
    if (s.score > 0) hits.push({ entry: p.entry, score: Math.round(s.score * 100) / 100, match: s.match });
  }
  return hits.sort((a, b) => b.score - a.score || byName(a.entry, b.entry));
}

/**
 * The closest names to `name` for "did you mean" lists: the search's own ranking, keeping only
 * hits that match the name itself (name tiers or a name typo), at most `limit`.
 */
export function closestNames(index: PreparedIndex | readonly IndexEntry[], name: string, limit = 5): IndexEntry[] {
  return searchIndex(index, name)
    .filter((h) => h.match === "prefix" || h.match === "word" || h.match === "name" || h.match === "exact" || (h.match === "typo" && h.score >= 36))
    .slice(0, limit)
    .map((h) => h.entry);
}
