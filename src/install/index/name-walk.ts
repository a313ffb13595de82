import { type CodePoints, popcount } from "./sequence-matcher.js";

/**
 * The longest common subsequence of one search term and every indexed name, in one pass (the
 * whole-name ratio's last bound before the exact ratio, see search.ts). With the term as the
 * bit-parallel pattern (Hyyrö's LCS, as lcsLength in sequence-matcher.ts), the state after a
 * name's first d code points depends on those d code points only. So the names are walked in
 * sorted order and each one resumes from the state the name before it had at their common prefix:
 * a prefix that thousands of names share (`hermes-plugin-`) is stepped through once, not once per
 * name.
 */
export interface NameWalk {
  /** The entry at each step (names in sorted order). */
  readonly order: Int32Array;
  /** How many code points the name of step k shares with the name of step k − 1 (0 for the first). */
  readonly shared: Int32Array;
  /** The columns of each name's code points after its shared prefix: step k's are cols[from[k] .. from[k + 1]). */
  readonly cols: Uint8Array;
  readonly from: Int32Array;
  /** The longest name, in code points. */
  readonly longest: number;
}

/** The walk over `names` (code points) in `order`; `column` maps a code point to its column (< 256). */
export function nameWalk(names: readonly CodePoints[], order: Int32Array, column: (cp: number) => number): NameWalk {
  const n = order.length;
  const shared = new Int32Array(n);
  const from = new Int32Array(n + 1);
  let size = 0;
  for (const name of names) size += name.length;
  const cols = new Uint8Array(size);
  let at = 0;
  let longest = 0;
  let prev: CodePoints = [];
  for (let k = 0; k < n; k++) {
    const name = names[order[k]!]!;
    let s = 0;
    while (s < name.length && s < prev.length && name[s] === prev[s]) s++;
    shared[k] = s;
    from[k] = at;
    for (let j = s; j < name.length; j++) cols[at++] = column(name[j]!);
    if (name.length > longest) longest = name.length;
    prev = name;
  }
  from[n] = at;
  return { order, shared, cols: cols.slice(0, at), from, longest };
}

/** LCS bits per word: sums of two words and a carry stay below 2^31, so int arithmetic never wraps. */
const BITS = 30;
const MASK = (1 << BITS) - 1;

/**
 * out[i] = LCS of the term and entry i's name, for a term given as the column of each of its code
 * points (`termCols`; columns merging code points only lengthen the LCS, so it stays an upper
 * bound of the matching size). `width` is the number of columns.
 */
export function lcsOfAll(walk: NameWalk, termCols: Int32Array, width: number, out: Int32Array): void {
  const la = termCols.length;
  const words = Math.max(1, Math.ceil(la / BITS));
  const pattern = new Int32Array(width * words);
  termCols.forEach((c, i) => {
    pattern[c * words + ((i / BITS) | 0)]! |= 1 << (i % BITS);
  });
  const topBits = la - (words - 1) * BITS;
  const topMask = topBits === BITS ? MASK : (1 << topBits) - 1;
  const states = new Int32Array((walk.longest + 1) * words);
  for (let w = 0; w < words; w++) states[w] = w === words - 1 ? topMask : MASK;
  if (words === 1) return walkOneWord(walk, pattern, states, la, out);
  if (words === 2) return walkTwoWords(walk, pattern, states, la, out);
  const { order, shared, cols, from } = walk;
  for (let k = 0; k < order.length; k++) {
    let at = shared[k]! * words;
    const end = from[k + 1]!;
    for (let x = from[k]!; x < end; x++) {
      const base = cols[x]! * words;
      let carry = 0;
      for (let w = 0; w < words; w++) {
        const v = states[at + w]!;
        const u = v & pattern[base + w]!;
        const sum = v + u + carry;
        carry = sum >>> BITS;
        states[at + words + w] = ((sum & MASK) | (v & ~u)) & (w === words - 1 ? topMask : MASK);
      }
      at += words;
    }
    let ones = 0;
    for (let w = 0; w < words; w++) ones += popcount(states[at + w]!);
    out[order[k]!] = la - ones;
  }
}

/** lcsOfAll for terms of at most 30 code points: one word per state. */
function walkOneWord(walk: NameWalk, pattern: Int32Array, states: Int32Array, la: number, out: Int32Array): void {
  const { order, shared, cols, from } = walk;
  const top = states[0]!;
  for (let k = 0; k < order.length; k++) {
    let d = shared[k]!;
    let v = states[d]!;
    const end = from[k + 1]!;
    for (let x = from[k]!; x < end; x++) {
      const u = v & pattern[cols[x]!]!;
      v = ((v + u) | (v & ~u)) & top;
      states[++d] = v;
    }
    out[order[k]!] = la - popcount(v);
  }
}

/** lcsOfAll for terms of 31–60 code points: two words per state, kept in locals. */
function walkTwoWords(walk: NameWalk, pattern: Int32Array, states: Int32Array, la: number, out: Int32Array): void {
  const { order, shared, cols, from } = walk;
  const top = states[1]!;
  for (let k = 0; k < order.length; k++) {
    let at = 2 * shared[k]!;
    let v0 = states[at]!;
    let v1 = states[at + 1]!;
    const end = from[k + 1]!;
    for (let x = from[k]!; x < end; x++) {
      const c = 2 * cols[x]!;
      const u0 = v0 & pattern[c]!;
      const u1 = v1 & pattern[c + 1]!;
      const s0 = v0 + u0;
      v0 = (s0 & MASK) | (v0 & ~u0);
      v1 = ((v1 + u1 + (s0 >>> BITS)) | (v1 & ~u1)) & top;
      at += 2;
      states[at] = v0;
      states[at + 1] = v1;
    }
    out[order[k]!] = la - popcount(v0) - popcount(v1);
  }
}
