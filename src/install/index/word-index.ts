/**
 * The text fields of a prepared index (search.ts): each field of every entry as one delimited
 * string (a "corpus"), and for the normalized fields a word index, so a term is looked up in the
 * distinct words of the field instead of in every entry's text.
 *
 * A normalized segment is words joined by single spaces. A term without a space can only occur
 * inside one word, so its hits in a field are its hits in the field's distinct words (a far
 * shorter string to search), handed to the entries that use each word; whether a word was the
 * first or last of an entry's segment supplies the characters around a hit at a word's edge.
 * The hits, and so the scores, are the same as searching every entry's segment.
 */

export const OPEN = 1;
export const CLOSE = 2;
export const SPACE = 32;

/** One field of every entry as one string: entry i's segment starts at `starts[i]`. */
export interface Corpus {
  text: string;
  starts: Int32Array;
}

export function corpus(segments: readonly string[]): Corpus {
  const starts = new Int32Array(segments.length);
  let at = 0;
  for (let i = 0; i < segments.length; i++) {
    starts[i] = at;
    at += segments[i]!.length;
  }
  return { text: segments.join(""), starts };
}

/** The segment holding position `pos`, searching from segment `from` on (hits come in order). */
export function segmentAt(c: Corpus, pos: number, from: number): number {
  const starts = c.starts;
  let lo = from;
  let hi = starts.length - 1;
  if (lo >= hi || starts[lo + 1]! > pos) return lo;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Where an occurrence of a word sits in its segment: bit FIRST, bit LAST (both: the whole segment). */
const FIRST = 1;
const LAST = 2;

export interface WordIndex {
  /** The distinct words, as a corpus of segments `\x01<word>\x02`. */
  vocab: Corpus;
  /** Word k's entries (ascending) are postEntry[postStart[k] .. postStart[k + 1]). */
  postStart: Int32Array;
  postEntry: Int32Array;
  /** Per posting, bit (1 << position) for each position (0..3, FIRST | LAST) the word has in the entry. */
  postWhere: Uint8Array;
}

/** Collects the normalized segments of one field, entry by entry (ascending), into a WordIndex. */
export class WordIndexBuilder {
  private readonly ids = new Map<string, number>();
  /** Every occurrence as (word id, entry, position bit), in the order added. */
  private occ = new Int32Array(4096);
  private count = 0;

  /** `segment`: words joined by single spaces; `edges`: false when the segment is padded with spaces. */
  add(entry: number, segment: string, edges: boolean): void {
    const n = segment.length;
    if (!n) return;
    let start = 0;
    for (;;) {
      const space = segment.indexOf(" ", start);
      const end = space < 0 ? n : space;
      const pos = edges ? (start === 0 ? FIRST : 0) | (space < 0 ? LAST : 0) : 0;
      this.note(segment.slice(start, end), entry, 1 << pos);
      if (space < 0) return;
      start = space + 1;
    }
  }

  private note(word: string, entry: number, bit: number): void {
    let id = this.ids.get(word);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(word, id);
    }
    if (this.occ.length < 3 * (this.count + 1)) {
      const grown = new Int32Array(this.occ.length * 2);
      grown.set(this.occ);
      this.occ = grown;
    }
    const o = 3 * this.count++;
    this.occ[o] = id;
    this.occ[o + 1] = entry;
    this.occ[o + 2] = bit;
  }

  build(): WordIndex {
    const words = [...this.ids.keys()];
    const occ = this.occ;
    // Counting sort by word; entries stay ascending within a word, so repeats are adjacent.
    const first = new Int32Array(words.length + 1);
    for (let k = 0; k < this.count; k++) first[occ[3 * k]! + 1]!++;
    for (let w = 0; w < words.length; w++) first[w + 1]! += first[w]!;
    const next = first.slice(0, words.length);
    const entry = new Int32Array(this.count);
    const where = new Uint8Array(this.count);
    for (let k = 0; k < this.count; k++) {
      const at = next[occ[3 * k]!]!++;
      entry[at] = occ[3 * k + 1]!;
      where[at] = occ[3 * k + 2]!;
    }
    // Merge an entry's repeats of a word into one posting.
    const postStart = new Int32Array(words.length + 1);
    let out = 0;
    for (let w = 0; w < words.length; w++) {
      postStart[w] = out;
      for (let k = first[w]!; k < first[w + 1]!; k++) {
        if (out > postStart[w]! && entry[out - 1] === entry[k]) where[out - 1]! |= where[k]!;
        else {
          entry[out] = entry[k]!;
          where[out++] = where[k]!;
        }
      }
    }
    postStart[words.length] = out;
    return {
      vocab: corpus(words.map((w) => `\u0001${w}\u0002`)),
      postStart,
      postEntry: entry.slice(0, out),
      postWhere: where.slice(0, out),
    };
  }
}

/** Scores a hit from the characters before and after it in the entry's segment. */
export type Classify = (before: number, after: number) => number;

/**
 * Every hit of `needle` (no space, no delimiter) in the field: an entry's `score` rises to the
 * best of its hits (and its `kinds` to `kind`). Same hits as searching each entry's segment.
 */
export function wordHits(
  ix: WordIndex,
  needle: string,
  classify: Classify,
  kind: number,
  score: Float32Array,
  kinds: Uint8Array,
): void {
  const { vocab, postStart, postEntry, postWhere } = ix;
  const text = vocab.text;
  const len = needle.length;
  // Score of the hit for each position the word can have (bit FIRST | LAST).
  const byWhere = [0, 0, 0, 0];
  let k = 0;
  let at = text.indexOf(needle);
  while (at >= 0) {
    k = segmentAt(vocab, at, k);
    const b = text.charCodeAt(at - 1);
    const a = text.charCodeAt(at + len);
    for (let w = 0; w < 4; w++)
      byWhere[w] = classify(b === OPEN ? (w & FIRST ? OPEN : SPACE) : b, a === CLOSE ? (w & LAST ? CLOSE : SPACE) : a);
    for (let p = postStart[k]!; p < postStart[k + 1]!; p++) {
      const m = postWhere[p]!;
      let s = 0;
      for (let w = 0; w < 4; w++) if (m & (1 << w) && byWhere[w]! > s) s = byWhere[w]!;
      const e = postEntry[p]!;
      if (s > score[e]!) {
        score[e] = s;
        kinds[e] = kind;
      }
    }
    at = text.indexOf(needle, at + 1);
  }
}

/** The entries (ascending, no repeats) of every word containing `part`: a superset of a phrase's hits. */
export function entriesWith(ix: WordIndex, part: string, n: number): Int32Array {
  const { vocab, postStart, postEntry } = ix;
  const mark = new Uint8Array(n);
  let count = 0;
  let k = 0;
  let at = vocab.text.indexOf(part);
  while (at >= 0) {
    k = segmentAt(vocab, at, k);
    for (let p = postStart[k]!; p < postStart[k + 1]!; p++) {
      const e = postEntry[p]!;
      if (!mark[e]) {
        mark[e] = 1;
        count++;
      }
    }
    // The next word: one word's postings are enough, whatever else in it matches.
    at = k + 1 < vocab.starts.length ? vocab.text.indexOf(part, vocab.starts[k + 1]!) : -1;
  }
  const out = new Int32Array(count);
  let j = 0;
  for (let e = 0; e < n && j < count; e++) if (mark[e]) out[j++] = e;
  return out;
}
