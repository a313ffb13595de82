import { lcsOfAll, type NameWalk, nameWalk } from "./name-walk.js";
import type { IndexEntry } from "./parse.js";
import {
  codePoints,
  lcsLength,
  matchingSizeMasks,
  matchingSizeQ,
  popcount,
  prepareQuery,
  type CodePoints,
  type PreparedQuery,
} from "./sequence-matcher.js";
import {
  CLOSE as C,
  corpus,
  type Corpus,
  entriesWith,
  OPEN as O,
  SPACE as SP,
  segmentAt,
  type WordIndex,
  WordIndexBuilder,
  wordHits,
} from "./word-index.js";

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
 * Speed (bench/search.bench.mjs: 10,000 entries, goal < 5 ms CPU per query kind after load): the
 * index is prepared once per load. Names, tags, descriptions and authors are each kept as one
 * long string (one delimited segment per entry), and the character around a hit says which rule
 * it is (prefix, whole word, word start, anywhere). Names, tags and descriptions also get a word
 * index (word-index.ts): a term without a blank is searched in the field's distinct words, not in
 * every entry's text, and a phrase only in the entries that have its longest word; authors are
 * scanned whole. The typo ratios of name words and tags are computed once per distinct word of
 * the whole index, then handed to the entries that use the word. The whole-name ratio is bounded
 * first by lengths, then by which characters the name has (two words of bits), then by the longest
 * common subsequence: for a long term, of every name in one walk over the names in sorted order
 * that steps through a shared prefix once (name-walk.ts); for a term that rules most names out
 * before, one name at a time over per-name position masks. A typo ratio that cannot beat the
 * entry's word or tag typo is not computed, and the Ratcliff/Obershelp work itself reads positions
 * from the masks and stops once the blocks left cannot reach the cutoff. All the bounds are upper
 * bounds: the results are the same as computing every ratio.
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
  /** The words of the names, tags and descriptions; null when a field held a delimiter character. */
  readonly words: { names: WordIndex; tags: WordIndex; descriptions: WordIndex } | null;
  /** Distinct name words (of multi-word names) and tags. */
  readonly vocab: readonly VocabWord[];
  /** Code point → column of `nameMasks`; the last column stands for every other code point. */
  readonly columns: ReadonlyMap<number, number>;
  readonly width: number;
  /**
   * Names of at most 64 code points: row i, column c = bit mask of the positions of c's code point
   * in entry i's lowercased name, positions 0–31 here and 32–63 in `nameMasksHi` (the "other"
   * column merges code points, which keeps the LCS an upper bound).
   */
  readonly nameMasks: Int32Array;
  readonly nameMasksHi: Int32Array;
  /** Row i (two words) = bit (column mod 64) set for each column in entry i's name. */
  readonly nameBits: Int32Array;
  /** Code points in entry i's name (a typed array: the per-entry loops read no entry objects). */
  readonly nameLengths: Int32Array;
  /** The names in sorted order with their shared prefixes, for the LCS bound of every name at once. */
  readonly walk: NameWalk;
  /** Position of entry i when all are sorted by name, then repo (the tie order of results). */
  readonly rank: Int32Array;
  /** The inverse of `rank`: the entry at each position of that order. */
  readonly order: Int32Array;
}

const SEP = /[\s\-_./]+/g;
const OPEN = "\u0001";
const CLOSE = "\u0002";
const DELIMS = /[\u0001\u0002]/g;
const HAS_DELIM = /[\u0001\u0002]/;

export function normalizeText(s: string): string {
  return s.toLowerCase().replace(SEP, " ").trim();
}

const MAX_COLUMNS = 255;

function byNameOrder(a: IndexEntry, b: IndexEntry): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.repo < b.repo ? -1 : a.repo > b.repo ? 1 : 0;
}

/** The per-name character tables of the whole-name ratio: its first bound and its exact value (see PreparedIndex). */
function nameTables(prepared: readonly PreparedEntry[], columns: ReadonlyMap<number, number>) {
  const width = columns.size + 1;
  const nameMasks = new Int32Array(prepared.length * width);
  const nameMasksHi = new Int32Array(prepared.length * width);
  const nameBits = new Int32Array(prepared.length * 2);
  prepared.forEach((p, i) => {
    const masked = p.nameCps.length <= 64;
    p.nameCps.forEach((c, j) => {
      const col = columns.get(c) ?? width - 1;
      nameBits[2 * i + ((col >> 5) & 1)]! |= 1 << (col & 31);
      const k = i * width + col;
      if (masked && j < 32) nameMasks[k]! |= 1 << j;
      else if (masked) nameMasksHi[k]! |= 1 << (j - 32);
    });
  });
  return { width, nameMasks, nameMasksHi, nameBits };
}

/** The entries in name order, the walk over their names in that order, and each entry's rank in it. */
function sortedNames(
  entries: readonly IndexEntry[],
  prepared: readonly PreparedEntry[],
  columns: ReadonlyMap<number, number>,
  width: number,
) {
  const order = Int32Array.from(prepared.map((_, i) => i).sort((x, y) => byNameOrder(entries[x]!, entries[y]!)));
  const walk = nameWalk(
    prepared.map((p) => p.nameCps),
    order,
    (c) => columns.get(c) ?? width - 1,
  );
  const rank = new Int32Array(prepared.length);
  order.forEach((i, k) => (rank[i] = k));
  return { order, walk, rank };
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
  const nameWords = new WordIndexBuilder();
  const tagWords = new WordIndexBuilder();
  const descWords = new WordIndexBuilder();
  let delims = false;
  entries.forEach((entry, i) => {
    const name = entry.name.toLowerCase();
    const nameNorm = normalizeText(entry.name);
    const nameCps = codePoints(name);
    prepared.push({ entry, name, nameNorm, nameCps, capabilities: entry.capabilities.map((c) => c.toLowerCase()) });
    (byName.get(name) ?? byName.set(name, []).get(name)!).push(i);
    if (nameNorm) (byNorm.get(nameNorm) ?? byNorm.set(nameNorm, []).get(nameNorm)!).push(i);
    nameSegs.push(`${OPEN}${clean(nameNorm)}${CLOSE}`);
    nameWords.add(i, nameNorm, true);
    const tagsLower = entry.tags.map((t) => t.toLowerCase());
    let tagSeg = "";
    for (const t of entry.tags) {
      const norm = normalizeText(t);
      delims ||= HAS_DELIM.test(norm);
      tagWords.add(i, norm, true);
      tagSeg += `${OPEN}${clean(norm)}${CLOSE}`;
    }
    tagSegs.push(tagSeg);
    const descNorm = normalizeText(entry.description);
    delims ||= HAS_DELIM.test(nameNorm) || HAS_DELIM.test(descNorm);
    descWords.add(i, descNorm, false);
    descSegs.push(`${OPEN} ${clean(descNorm)} ${CLOSE}`);
    authorSegs.push(`${OPEN}${clean(entry.author.toLowerCase())}${CLOSE}`);
    const words = nameNorm.split(" ").filter(Boolean);
    if (words.length > 1) for (const w of new Set(words)) word(w).nameOf.push(i);
    for (const t of new Set(tagsLower)) word(t).tagOf.push(i);
    for (const c of nameCps) if (!columns.has(c) && columns.size < MAX_COLUMNS) columns.set(c, columns.size);
  });
  const { width, nameMasks, nameMasksHi, nameBits } = nameTables(prepared, columns);
  const { order, walk, rank } = sortedNames(entries, prepared, columns, width);
  return {
    entries: prepared,
    byName,
    byNorm,
    names: corpus(nameSegs),
    tags: corpus(tagSegs),
    descriptions: corpus(descSegs),
    authors: corpus(authorSegs),
    words: delims ? null : { names: nameWords.build(), tags: tagWords.build(), descriptions: descWords.build() },
    vocab: [...vocabMap.values()],
    columns,
    width,
    nameMasks,
    nameMasksHi,
    nameBits,
    nameLengths: Int32Array.from(prepared, (p) => p.nameCps.length),
    walk,
    rank,
    order,
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

/** Per-entry arrays of one query term, reused from search to search (see `buffers`). */
interface QueryBuffers {
  /** Best score per entry from the name, tag, description and author rules, and its kind. */
  strScore: Float32Array;
  strKind: Uint8Array;
  /** Best typo score per entry from name words (r·58, r ≥ 0.75) and from tags (r·50, r ≥ 0.75). */
  wordTypo: Float32Array;
  tagTypo: Float32Array;
  /** LCS of the term and each entry's name (filled on first use: see `lcsReady`). */
  lcs: Int32Array;
}

interface Query extends QueryBuffers {
  text: string;
  cps: CodePoints;
  pq: PreparedQuery;
  /** The column of each of the query's code points, in order (for `nameMasks` and the name walk). */
  colSeq: Int32Array;
  /** The query's columns as `nameBits` sets them, and how many code points repeat an earlier bit. */
  bits0: number;
  bits1: number;
  repeats: number;
  /**
   * How the LCS bound is taken: 0 = not decided yet (a term whose names all fail the length bound
   * never decides), 1 = `lcs` holds it for every name (one walk), 2 = one name at a time.
   */
  lcsMode: number;
}

/** One set of buffers per term of a search (searches are synchronous, so they can be shared). */
const pool: QueryBuffers[] = [];

/** Zeroed buffers for term `k` of a search over `n` entries. */
function buffers(k: number, n: number): QueryBuffers {
  let b = pool[k];
  if (!b || b.strScore.length !== n) {
    b = {
      strScore: new Float32Array(n),
      strKind: new Uint8Array(n),
      wordTypo: new Float32Array(n),
      tagTypo: new Float32Array(n),
      lcs: new Int32Array(n),
    };
    pool[k] = b;
    return b;
  }
  b.strScore.fill(0);
  b.strKind.fill(0);
  b.wordTypo.fill(0);
  b.tagTypo.fill(0);
  return b;
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

/** The scores of one corpus' rules, from the characters before and after a hit. */
const RULES = {
  name: (b: number, a: number) => (b === O ? 90 : b === SP ? (a === SP || a === C ? 86 : 82) : 76),
  tag: (b: number, a: number) => (b === O ? (a === C ? 70 : 60) : 55),
  description: (b: number, a: number) => (b === SP && a === SP ? 50 : 45),
  author: () => 40,
} as const;
/** The best score of each corpus' rules: once an entry has it, its segment's other hits can be skipped. */
const BEST = { name: 90, tag: 70, description: 50, author: 40 } as const;

/**
 * Every hit of `needle` in a corpus, as (entry, score) by the corpus' rules: through the field's
 * word index when it has one (a phrase is searched only in the entries that have its longest word).
 */
function scan(
  c: Corpus,
  words: WordIndex | undefined,
  needle: string,
  rules: keyof typeof RULES,
  kind: number,
  q: QueryBuffers,
): void {
  if (!needle || HAS_DELIM.test(needle)) return;
  if (!words) return scanAll(c, needle, rules, kind, q);
  if (!needle.includes(" ")) return wordHits(words, needle, RULES[rules], kind, q.strScore, q.strKind);
  const longest = needle.split(" ").reduce((x, y) => (y.length > x.length ? y : x));
  const n = c.starts.length;
  for (const e of entriesWith(words, longest, n)) {
    const start = c.starts[e]!;
    scanText(c.text.slice(start, e + 1 < n ? c.starts[e + 1]! : c.text.length), 0, needle, rules, kind, q, e);
  }
}

/** Every hit of `needle` in the whole corpus text. */
function scanAll(c: Corpus, needle: string, rules: keyof typeof RULES, kind: number, q: QueryBuffers): void {
  if (!needle || HAS_DELIM.test(needle)) return;
  const { text, starts } = c;
  let e = 0;
  let at = text.indexOf(needle);
  while (at >= 0) {
    e = segmentAt(c, at, e);
    // Hits are found left to right, so the rest of this entry's segment cannot score higher.
    const top = record(text, at, needle.length, rules, kind, q, e);
    at = top && e + 1 < starts.length ? text.indexOf(needle, starts[e + 1]!) : text.indexOf(needle, at + 1);
  }
}

/** Every hit of `needle` in one entry's segment. */
function scanText(
  seg: string,
  from: number,
  needle: string,
  rules: keyof typeof RULES,
  kind: number,
  q: QueryBuffers,
  e: number,
): void {
  let at = seg.indexOf(needle, from);
  while (at >= 0 && !record(seg, at, needle.length, rules, kind, q, e)) at = seg.indexOf(needle, at + 1);
}

/** Scores the hit at `at` for entry `e`; true when it has the corpus' best score. */
function record(
  text: string,
  at: number,
  len: number,
  rules: keyof typeof RULES,
  kind: number,
  q: QueryBuffers,
  e: number,
): boolean {
  const s = RULES[rules](text.charCodeAt(at - 1), text.charCodeAt(at + len));
  if (s > q.strScore[e]!) {
    q.strScore[e] = s;
    q.strKind[e] = kind;
  }
  return s === BEST[rules];
}

function query(text: string, index: PreparedIndex, slot: number): Query {
  const cps = codePoints(text);
  const pq = prepareQuery(cps);
  const colSeq = Int32Array.from(cps, (c) => index.columns.get(c) ?? index.width - 1);
  let bits0 = 0;
  let bits1 = 0;
  for (const col of colSeq) {
    if (col & 32) bits1 |= 1 << (col & 31);
    else bits0 |= 1 << (col & 31);
  }
  const n = index.entries.length;
  const buf = buffers(slot, n);
  const { strScore, strKind, wordTypo, tagTypo, lcs } = buf;
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
  const words = index.words ?? undefined;
  scan(index.names, words?.names, norm, "name", K.name, buf);
  scan(index.tags, words?.tags, norm, "tag", K.tag, buf);
  scan(index.descriptions, words?.descriptions, norm, "description", K.description, buf);
  scanAll(index.authors, text, "author", K.author, buf);
  // Name scores 90/86/82/76 are prefix/word/word/name.
  for (let i = 0; i < n; i++) {
    if (strKind[i] !== K.name) continue;
    const s = strScore[i]!;
    strKind[i] = s === 90 ? K.prefix : s === 76 ? K.name : K.word;
  }
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
    colSeq,
    bits0,
    bits1,
    // Columns 64 apart share a bit: count repeats per bit, so the bound stays an upper bound.
    repeats: cps.length - popcount(bits0) - popcount(bits1),
    lcsMode: 0,
    // Named, not spread: a spread makes a slow-property object that the per-entry loops read.
    strScore,
    strKind,
    wordTypo,
    tagTypo,
    lcs,
  };
}

/** How many of the query's columns entry i's name has (columns 64 apart share a bit: only overcounts). */
function columnsShared(index: PreparedIndex, i: number, q: Query): number {
  const bits = index.nameBits;
  return popcount(bits[2 * i]! & q.bits0) + popcount(bits[2 * i + 1]! & q.bits1);
}

/**
 * How many names pass the length and column bounds at the lowest cutoff, 0.6. One LCS per such
 * name takes a step per query code point (maskLcs); one walk over every name (name-walk.ts) takes
 * `walk.cols.length` cheaper steps. A short or unusual term rules out most names before the LCS.
 */
function namesPassingColumns(index: PreparedIndex, q: Query): number {
  const la = q.cps.length;
  const lengths = index.nameLengths;
  let count = 0;
  for (let i = 0; i < lengths.length; i++) {
    const lb = lengths[i]!;
    const total = la + lb;
    // No branch on the bounds: a branch first taken after the loop was optimized would throw the
    // optimized loop away at every call.
    const byLength = (2 * (la < lb ? la : lb)) / total >= 0.6 ? 1 : 0;
    const byColumns = (2 * (columnsShared(index, i, q) + q.repeats)) / total >= 0.6 ? 1 : 0;
    count += byLength * byColumns;
  }
  return count;
}

/**
 * LCS of the query and a name of at most 32 code points, bit-parallel with the name's position
 * masks as the pattern (see lcsLength in sequence-matcher.ts): one step per query code point.
 */
function maskLcs(masks: Int32Array, row: number, colSeq: Int32Array, lb: number): number {
  const top = lb >= 32 ? -1 : (1 << lb) - 1;
  let v = top;
  for (let k = 0; k < colSeq.length; k++) {
    const pm = masks[row + colSeq[k]!]!;
    if (!pm) continue;
    const u = v & pm;
    v = ((v + u) | (v & ~u)) & top;
  }
  return lb - popcount(v);
}

/** maskLcs for names of 33–64 code points: two 32-bit words, the carry taken from a float sum. */
function maskLcs2(index: PreparedIndex, row: number, colSeq: Int32Array, lb: number): number {
  const lo = index.nameMasks;
  const hi = index.nameMasksHi;
  const top = lb >= 64 ? -1 : (1 << (lb - 32)) - 1;
  let v0 = -1;
  let v1 = top;
  for (let k = 0; k < colSeq.length; k++) {
    const at = row + colSeq[k]!;
    const m0 = lo[at]!;
    const m1 = hi[at]!;
    if (!(m0 | m1)) continue;
    const u0 = v0 & m0;
    const u1 = v1 & m1;
    const s0 = (v0 >>> 0) + (u0 >>> 0);
    const carry = s0 > 0xffffffff ? 1 : 0;
    v0 = s0 | (v0 & ~u0);
    v1 = (((v1 >>> 0) + (u1 >>> 0) + carry) | (v1 & ~u1)) & top;
  }
  return lb - popcount(v0) - popcount(v1);
}

/** LCS of the query and entry i's name: from the walk, or one name at a time (see `lcsMode`). */
function nameLcs(index: PreparedIndex, i: number, q: Query): number {
  if (!q.lcsMode) {
    // A walk step costs about a third of a maskLcs step (measured on the bench's index).
    q.lcsMode = 3 * namesPassingColumns(index, q) * q.cps.length > index.walk.cols.length ? 1 : 2;
    if (q.lcsMode === 1) lcsOfAll(index.walk, q.colSeq, index.width, q.lcs);
  }
  if (q.lcsMode === 1) return q.lcs[i]!;
  const lb = index.nameLengths[i]!;
  if (lb <= 32) return maskLcs(index.nameMasks, i * index.width, q.colSeq, lb);
  if (lb <= 64) return maskLcs2(index, i * index.width, q.colSeq, lb);
  return lcsLength(q.pq, index.entries[i]!.nameCps);
}

/** The least x with (2 * x) / total ≥ min, by the same float expression as the ratio's own check. */
function leastPassing(total: number, min: number): number {
  let x = Math.ceil((min * total) / 2);
  while ((2 * x) / total < min) x++;
  while (x > 0 && (2 * (x - 1)) / total >= min) x--;
  return x;
}

/**
 * Whole-name ratio of entry `i` when it is at least `min`, else 0. The bounds skip the exact ratio
 * when it is under `prune` (≥ min): the caller knows a ratio under it cannot change the result.
 */
function nameRatio(index: PreparedIndex, i: number, q: Query, min: number, prune: number): number {
  const la = q.cps.length;
  const lb = index.nameLengths[i]!;
  const total = la + lb;
  if (!total) return 1;
  if ((2 * (la < lb ? la : lb)) / total < prune) return 0;
  if ((2 * (columnsShared(index, i, q) + q.repeats)) / total < prune) return 0;
  if ((2 * nameLcs(index, i, q)) / total < prune) return 0;
  const row = i * index.width;
  // The masks give exact positions unless the columns ran out (then "other" merges code points).
  const exact = lb <= 64 && index.columns.size < MAX_COLUMNS;
  const m = exact
    ? matchingSizeMasks(q.colSeq, index.nameMasks, index.nameMasksHi, row, lb, leastPassing(total, min))
    : matchingSizeQ(q.pq, index.entries[i]!.nameCps);
  const r = (2 * m) / total;
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
    const w = q.wordTypo[i]!;
    const tg = q.tagTypo[i]!;
    const min = score / 60 > 0.6 ? score / 60 : 0.6;
    // A whole-name ratio under both typo scores (less a rounding margin) changes nothing below.
    const floor = (w > tg ? w : tg) / 60 - 1e-9;
    const r = nameRatio(index, i, q, min, floor > min ? floor : min);
    if (r && r * 60 > score) {
      score = r * 60;
      match = K.typo;
    }
    if (w > score) {
      score = w;
      match = K.typo;
    }
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

/** The sort keys of a search, reused (searches are synchronous; hits are built from them before returning). */
let keyPool = new Float64Array(0);

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
  const whole = query(text, prepared, 0);
  const words = text.split(/\s+/).filter(Boolean);
  const parts = words.length > 1 ? words.map((w, k) => query(w, prepared, k + 1)) : [];
  // One number per hit: score in hundredths (descending), then the precomputed name order. The
  // keys are distinct integers, so a plain numeric sort of a typed array orders the results.
  const n = all.length;
  const { rank, order } = prepared;
  if (keyPool.length < n) keyPool = new Float64Array(n);
  const keys = keyPool;
  const kinds = whole.strKind;
  let found = 0;
  for (let i = 0; i < n; i++) {
    if (cap && !all[i]!.capabilities.includes(cap)) continue;
    scoreEntry(prepared, i, whole, parts);
    if (outScore > 0) {
      keys[found++] = (10_000 - Math.round(outScore * 100)) * n + rank[i]!;
      // Entry i's own slot: it is not read again for this search.
      kinds[i] = outMatch;
    }
  }
  const sorted = keys.subarray(0, found).sort();
  const hits: SearchHit[] = new Array(found);
  for (let k = 0; k < found; k++) {
    const key = sorted[k]!;
    const r = key % n;
    const i = order[r]!;
    hits[k] = { entry: all[i]!.entry, score: (10_000 - (key - r) / n) / 100, match: KINDS[kinds[i]!]! };
  }
  return hits;
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
