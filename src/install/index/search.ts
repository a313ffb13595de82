import type { IndexEntry } from "./parse.js";
import {
  codePoints,
  lcsLength,
  matchingSizeQ,
  prepareQuery,
  type CodePoints,
  type PreparedQuery,
} from "./sequence-matcher.js";

/**
 * Community index search. Documented in docs/index-and-packs.md.
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
 *
 * Speed (bench/search.bench.mjs: 10,000 entries, target < 20 ms per query after load): the
 * index is prepared once per load. Names, tags, descriptions and authors are each kept as one
 * long string (one delimited segment per entry), so a term's substring hits in a field are
 * found with a few `indexOf` scans over one string, and the character around each hit says
 * which rule it is (prefix, whole word, word start, anywhere). The typo ratios of name words and
 * tags are computed once per distinct word of the whole index (a vocabulary far smaller than
 * entries × words), then handed to the entries that use the word. The whole-name ratio is bounded
 * first by lengths, then by character counts kept in one flat table (one row per name, one column
 * per character seen in names), then by the longest common subsequence (bit-parallel), so the
 * real Ratcliff/Obershelp work runs only where it can matter. All the bounds are exact: the
 * results are the same as computing every ratio.
 */

export type MatchKind = "exact" | "prefix" | "word" | "name" | "tag" | "description" | "author" | "typo";

export interface SearchHit {
  entry: IndexEntry;
  score: number;
  match: MatchKind;
}

export interface PreparedEntry {
  entry: IndexEntry;
  name: string;
  nameNorm: string;
  nameCps: CodePoints;
  capabilities: string[];
}

interface VocabWord {
  cps: CodePoints;
  /** Entries (by position) with this word in a multi-word name. */
  nameOf: number[];
  /** Entries (by position) with this tag. */
  tagOf: number[];
}

/** One field of every entry as one string: entry i's segment starts at `starts[i]`. */
interface Corpus {
  text: string;
  starts: Int32Array;
}

export interface PreparedIndex {
  readonly entries: readonly PreparedEntry[];
  /** Lowercased name → entries; normalized name → entries. */
  readonly byName: ReadonlyMap<string, readonly number[]>;
  readonly byNorm: ReadonlyMap<string, readonly number[]>;
  /** Segments `\x01<normalized name>\x02`. */
  readonly names: Corpus;
  /** Segments `\x01<normalized tag>\x02` per tag. */
  readonly tags: Corpus;
  /** Segments `\x01 <normalized description> \x02`. */
  readonly descriptions: Corpus;
  /** Segments `\x01<lowercased author>\x02`. */
  readonly authors: Corpus;
  /** Distinct name words (of multi-word names) and tags. */
  readonly vocab: readonly VocabWord[];
  /** Code point → column of `nameCounts`; the last column counts every other code point. */
  readonly columns: ReadonlyMap<number, number>;
  readonly width: number;
  /** Row i = character counts of entry i's lowercased name (saturating at 255). */
  readonly nameCounts: Uint8Array;
  /** Position of entry i when all are sorted by name, then repo (the tie order of results). */
  readonly rank: Int32Array;
}

const SEP = /[\s\-_./]+/g;
const OPEN = "\u0001";
const CLOSE = "\u0002";
const DELIMS = /[\u0001\u0002]/g;
const HAS_DELIM = /[\u0001\u0002]/;

export function normalizeText(s: string): string {
  return s.toLowerCase().replace(SEP, " ").trim();
}

function corpus(segments: readonly string[]): Corpus {
  const starts = new Int32Array(segments.length);
  let at = 0;
  segments.forEach((s, i) => {
    starts[i] = at;
    at += s.length;
  });
  return { text: segments.join(""), starts };
}

/** The entry whose segment holds position `pos`. */
function entryAt(c: Corpus, pos: number): number {
  let lo = 0;
  let hi = c.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (c.starts[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const MAX_COLUMNS = 255;

function byNameOrder(a: IndexEntry, b: IndexEntry): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.repo < b.repo ? -1 : a.repo > b.repo ? 1 : 0;
}

/** Lowercase, normalize and index every entry once; search many times. */
export function prepareIndex(entries: readonly IndexEntry[]): PreparedIndex {
  const clean = (s: string) => s.replace(DELIMS, " ");
  const prepared: PreparedEntry[] = [];
  const byName = new Map<string, number[]>();
  const byNorm = new Map<string, number[]>();
  const nameSegs: string[] = [];
  const tagSegs: string[] = [];
  const descSegs: string[] = [];
  const authorSegs: string[] = [];
  const vocabMap = new Map<string, VocabWord>();
  const word = (w: string): VocabWord => {
    let v = vocabMap.get(w);
    if (!v) {
      v = { cps: codePoints(w), nameOf: [], tagOf: [] };
      vocabMap.set(w, v);
    }
    return v;
  };
  const columns = new Map<number, number>();
  entries.forEach((entry, i) => {
    const name = entry.name.toLowerCase();
    const nameNorm = normalizeText(entry.name);
    const nameCps = codePoints(name);
    prepared.push({ entry, name, nameNorm, nameCps, capabilities: entry.capabilities.map((c) => c.toLowerCase()) });
    (byName.get(name) ?? byName.set(name, []).get(name)!).push(i);
    if (nameNorm) (byNorm.get(nameNorm) ?? byNorm.set(nameNorm, []).get(nameNorm)!).push(i);
    nameSegs.push(`${OPEN}${clean(nameNorm)}${CLOSE}`);
    const tagsLower = entry.tags.map((t) => t.toLowerCase());
    tagSegs.push(entry.tags.map((t) => `${OPEN}${clean(normalizeText(t))}${CLOSE}`).join(""));
    descSegs.push(`${OPEN} ${clean(normalizeText(entry.description))} ${CLOSE}`);
    authorSegs.push(`${OPEN}${clean(entry.author.toLowerCase())}${CLOSE}`);
    const words = nameNorm.split(" ").filter(Boolean);
    if (words.length > 1) for (const w of new Set(words)) word(w).nameOf.push(i);
    for (const t of new Set(tagsLower)) word(t).tagOf.push(i);
    for (const c of nameCps) if (!columns.has(c) && columns.size < MAX_COLUMNS) columns.set(c, columns.size);
  });
  const width = columns.size + 1;
  const nameCounts = new Uint8Array(prepared.length * width);
  prepared.forEach((p, i) => {
    const row = i * width;
    for (const c of p.nameCps) {
      const k = row + (columns.get(c) ?? width - 1);
      if (nameCounts[k]! < 255) nameCounts[k]!++;
    }
  });
  const order = prepared.map((_, i) => i).sort((x, y) => byNameOrder(prepared[x]!.entry, prepared[y]!.entry));
  const rank = new Int32Array(prepared.length);
  order.forEach((i, k) => (rank[i] = k));
  return {
    entries: prepared,
    byName,
    byNorm,
    names: corpus(nameSegs),
    tags: corpus(tagSegs),
    descriptions: corpus(descSegs),
    authors: corpus(authorSegs),
    vocab: [...vocabMap.values()],
    columns,
    width,
    nameCounts,
    rank,
  };
}

const KINDS: MatchKind[] = ["typo", "exact", "prefix", "word", "name", "tag", "description", "author"];
const K: Record<MatchKind, number> = {
  typo: 0,
  exact: 1,
  prefix: 2,
  word: 3,
  name: 4,
  tag: 5,
  description: 6,
  author: 7,
};

interface Query {
  text: string;
  cps: CodePoints;
  pq: PreparedQuery;
  /** (column, count) pairs of the query's code points, for the name bound. */
  qcols: Int32Array;
  qcounts: Int32Array;
  /** Best score per entry from the name, tag, description and author rules, and its kind. */
  strScore: Float32Array;
  strKind: Uint8Array;
  /** Best typo score per entry from name words (r·58, r ≥ 0.75) and from tags (r·50, r ≥ 0.75). */
  wordTypo: Float32Array;
  tagTypo: Float32Array;
}

/** ratio(q, word) when it is at least `min`, else 0 (length and LCS bounds first). */
function vocabRatio(q: PreparedQuery, v: VocabWord, min: number): number {
  const total = q.cps.length + v.cps.length;
  if (!total) return 1;
  if ((2 * Math.min(q.cps.length, v.cps.length)) / total < min) return 0;
  if ((2 * lcsLength(q, v.cps)) / total < min) return 0;
  const r = (2 * matchingSizeQ(q, v.cps)) / total;
  return r >= min ? r : 0;
}

/**
 * Every hit of `needle` in a corpus, as (entry, score): `classify` gets the characters before
 * and after the hit and returns the rule's score.
 */
function scan(
  c: Corpus,
  needle: string,
  classify: (before: number, after: number) => number,
  kind: number,
  score: Float32Array,
  kinds: Uint8Array,
): void {
  if (!needle || HAS_DELIM.test(needle)) return;
  const text = c.text;
  const len = needle.length;
  let at = text.indexOf(needle);
  while (at >= 0) {
    const e = entryAt(c, at);
    const s = classify(text.charCodeAt(at - 1), text.charCodeAt(at + len));
    if (s > score[e]!) {
      score[e] = s;
      kinds[e] = kind;
    }
    at = text.indexOf(needle, at + 1);
  }
}

const O = 1;
const C = 2;
const SP = 32;

function query(text: string, index: PreparedIndex): Query {
  const cps = codePoints(text);
  const pq = prepareQuery(cps);
  const byCol = new Map<number, number>();
  for (const c of cps) {
    const col = index.columns.get(c) ?? index.width - 1;
    byCol.set(col, (byCol.get(col) ?? 0) + 1);
  }
  const n = index.entries.length;
  const strScore = new Float32Array(n);
  const strKind = new Uint8Array(n);
  const norm = normalizeText(text);
  // Exact names: raw (100), then normalized (98).
  for (const i of index.byNorm.get(norm) ?? []) {
    strScore[i] = 98;
    strKind[i] = K.exact;
  }
  for (const i of index.byName.get(text) ?? []) {
    strScore[i] = 100;
    strKind[i] = K.exact;
  }
  // Normalized comparisons (a raw hit is always a normalized hit too); a term that normalizes
  // to nothing ("--") matches no name, tag or description.
  scan(
    index.names,
    norm,
    (b, a) => (b === O ? 90 : b === SP ? (a === SP || a === C ? 86 : 82) : 76),
    K.name,
    strScore,
    strKind,
  );
  scan(index.tags, norm, (b, a) => (b === O ? (a === C ? 70 : 60) : 55), K.tag, strScore, strKind);
  scan(index.descriptions, norm, (b, a) => (b === SP && a === SP ? 50 : 45), K.description, strScore, strKind);
  scan(index.authors, text, () => 40, K.author, strScore, strKind);
  // Name scores 90/86/82/76 are prefix/word/word/name.
  for (let i = 0; i < n; i++) {
    if (strKind[i] !== K.name) continue;
    const s = strScore[i]!;
    strKind[i] = s === 90 ? K.prefix : s === 76 ? K.name : K.word;
  }
  const wordTypo = new Float32Array(n);
  const tagTypo = new Float32Array(n);
  for (const v of index.vocab) {
    const r = vocabRatio(pq, v, 0.75);
    if (!r) continue;
    for (const i of v.nameOf) if (r * 58 > wordTypo[i]!) wordTypo[i] = r * 58;
    for (const i of v.tagOf) if (r * 50 > tagTypo[i]!) tagTypo[i] = r * 50;
  }
  return {
    text,
    cps,
    pq,
    qcols: Int32Array.from(byCol.keys()),
    qcounts: Int32Array.from(byCol.values()),
    strScore,
    strKind,
    wordTypo,
    tagTypo,
  };
}

/** Whole-name ratio of entry `i` when it is at least `min`, else 0. */
function nameRatio(index: PreparedIndex, i: number, q: Query, min: number): number {
  const p = index.entries[i]!;
  const la = q.cps.length;
  const lb = p.nameCps.length;
  const total = la + lb;
  if (!total) return 1;
  if ((2 * (la < lb ? la : lb)) / total < min) return 0;
  // Multiset bound from the flat count table (merged "other" column keeps it an upper bound).
  const row = i * index.width;
  const counts = index.nameCounts;
  let inter = 0;
  for (let k = 0; k < q.qcols.length; k++) {
    const have = counts[row + q.qcols[k]!]!;
    const want = q.qcounts[k]!;
    inter += have < want ? have : want;
  }
  if ((2 * inter) / total < min) return 0;
  if ((2 * lcsLength(q.pq, p.nameCps)) / total < min) return 0;
  const r = (2 * matchingSizeQ(q.pq, p.nameCps)) / total;
  return r >= min ? r : 0;
}

// scoreOne reports through these two (no object per entry: the scan allocates nothing).
let outScore = 0;
let outMatch = 0;

/** Score entry `i` against one query term; the result is left in outScore/outMatch. */
function scoreOne(index: PreparedIndex, i: number, q: Query): void {
  let score = q.strScore[i]!;
  let match = q.strKind[i]!;
  if (score < 60) {
    // Typos: each rule's best possible score is r_max × weight ≤ 60, so skip it when it cannot win.
    const r = nameRatio(index, i, q, score / 60 > 0.6 ? score / 60 : 0.6);
    if (r && r * 60 > score) {
      score = r * 60;
      match = K.typo;
    }
    const w = q.wordTypo[i]!;
    if (w > score) {
      score = w;
      match = K.typo;
    }
    const tg = q.tagTypo[i]!;
    if (tg > score) {
      score = tg;
      match = K.tag;
    }
  }
  outScore = score;
  outMatch = match;
}

function scoreEntry(index: PreparedIndex, i: number, whole: Query, parts: Query[]): void {
  scoreOne(index, i, whole);
  if (parts.length < 2 || outScore >= 70) return;
  const best = outScore;
  const bestMatch = outMatch;
  let sum = 0;
  let kind = K.typo;
  let top = -1;
  for (const part of parts) {
    scoreOne(index, i, part);
    if (!outScore) {
      outScore = best;
      outMatch = bestMatch;
      return;
    }
    sum += outScore;
    if (outScore > top) {
      top = outScore;
      kind = outMatch;
    }
  }
  const combined = (0.9 * sum) / parts.length;
  if (combined > best) {
    outScore = combined;
    outMatch = kind;
  } else {
    outScore = best;
    outMatch = bestMatch;
  }
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
export function searchIndex(
  index: PreparedIndex | readonly IndexEntry[],
  term: string,
  opts: SearchOptions = {},
): SearchHit[] {
  const prepared = isPrepared(index) ? index : prepareIndex(index);
  const cap = opts.capability?.trim().toLowerCase();
  const all = prepared.entries;
  const text = term.trim().toLowerCase();
  if (!text) {
    return all
      .filter((p) => !cap || p.capabilities.includes(cap))
      .map((p) => ({ entry: p.entry, score: 0, match: "name" as MatchKind }))
      .sort((a, b) => byNameOrder(a.entry, b.entry));
  }
  const whole = query(text, prepared);
  const words = text.split(/\s+/).filter(Boolean);
  const parts = words.length > 1 ? words.map((w) => query(w, prepared)) : [];
  // Sort on numbers: score (2 decimals) descending, then the precomputed name order.
  const found: number[] = [];
  const scores: number[] = [];
  const kinds: number[] = [];
  for (let i = 0; i < all.length; i++) {
    if (cap && !all[i]!.capabilities.includes(cap)) continue;
    scoreEntry(prepared, i, whole, parts);
    if (outScore > 0) {
      found.push(i);
      scores.push(Math.round(outScore * 100) / 100);
      kinds.push(outMatch);
    }
  }
  const n = all.length;
  const keys = new Float64Array(found.length);
  for (let k = 0; k < found.length; k++)
    keys[k] = (10_000 - Math.round(scores[k]! * 100)) * n + prepared.rank[found[k]!]!;
  const idx = Array.from(found.keys()).sort((x, y) => keys[x]! - keys[y]!);
  return idx.map((k) => ({ entry: all[found[k]!]!.entry, score: scores[k]!, match: KINDS[kinds[k]!]! }));
}

/**
 * The closest names to `name` for "did you mean" lists: the search's own ranking, keeping only
 * hits that match the name itself (name tiers or a name typo), at most `limit`.
 */
export function closestNames(index: PreparedIndex | readonly IndexEntry[], name: string, limit = 5): IndexEntry[] {
  return searchIndex(index, name)
    .filter(
      (h) =>
        h.match === "prefix" ||
        h.match === "word" ||
        h.match === "name" ||
        h.match === "exact" ||
        (h.match === "typo" && h.score >= 36),
    )
    .slice(0, limit)
    .map((h) => h.entry);
}
