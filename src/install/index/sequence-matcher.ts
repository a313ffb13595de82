/**
 * A faithful port of Python's `difflib.SequenceMatcher` ratio (Ratcliff/Obershelp "gestalt
 * pattern matching"), as the original's index search uses it:
 *
 * - `ratio = 2·M / (len(a) + len(b))`, 1.0 when both are empty;
 * - M = total size of the matching blocks, found by taking the longest common contiguous block
 *   (earliest in `a`, then earliest in `b`), then recursing on the pieces left and right of it;
 * - no junk function; the "autojunk" rule applies only when `len(b) ≥ 200`: an element that
 *   occurs more than `len(b)/100 + 1` times in `b` is "popular" and is not used to *start* a
 *   match (it can still extend one, exactly as in CPython, where popular elements are removed
 *   from `b2j` but are not junk).
 *
 * Strings are compared by Unicode code points, as Python iterates a `str`.
 *
 * The algorithm is CPython's, including its sparse `b2j` index (element → positions in `b`), so
 * the work per row is the number of positions of `a[i]` in `b`, not `len(b)`. The `j2len` dicts
 * become two typed rows whose entries are valid only when stamped with the previous row's index
 * (no clearing between rows). A `Prepared` `b` keeps its index, so searching one term against
 * thousands of names builds each name's index once (see search.ts).
 *
 * `quickRatio` and `realQuickRatio` are the usual cheap upper bounds; callers use them to skip
 * the full computation when the bound is already below their threshold (difflib's
 * `get_close_matches` does the same), which never changes a result.
 */

export type CodePoints = readonly number[];

export function codePoints(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.codePointAt(i)!;
    out.push(c);
    if (c > 0xffff) i++;
  }
  return out;
}

/** `b` with its `b2j` index (popular elements already removed, as `__chain_b` does). */
export interface PreparedSeq {
  cps: CodePoints;
  b2j: Map<number, Int32Array>;
}

export function prepareSeq(b: string | CodePoints): PreparedSeq {
  const cps = typeof b === "string" ? codePoints(b) : b;
  const lists = new Map<number, number[]>();
  for (let j = 0; j < cps.length; j++) {
    const l = lists.get(cps[j]!);
    if (l) l.push(j);
    else lists.set(cps[j]!, [j]);
  }
  const n = cps.length;
  const ntest = Math.floor(n / 100) + 1;
  const b2j = new Map<number, Int32Array>();
  for (const [c, l] of lists) if (n < 200 || l.length <= ntest) b2j.set(c, Int32Array.from(l));
  return { cps, b2j };
}

/** Scratch rows shared by all calls (single-threaded); grown on demand. */
let lenA = new Int32Array(64);
let lenB = new Int32Array(64);
let stampA = new Int32Array(64).fill(-2);
let stampB = new Int32Array(64).fill(-2);

function ensureRows(n: number): void {
  if (lenA.length >= n) return;
  let size = lenA.length;
  while (size < n) size *= 2;
  lenA = new Int32Array(size);
  lenB = new Int32Array(size);
  stampA = new Int32Array(size).fill(-2);
  stampB = new Int32Array(size).fill(-2);
}

/** Stamps must never repeat across calls: a global, ever-increasing row counter. */
let rowClock = 0;
/** Work stack of (alo, ahi, blo, bhi) ranges. */
let stack = new Int32Array(256);
/** For each i of `a`: the positions of a[i] in `b` are flat[posStart[i] .. posEnd[i]), ascending. */
let posStart = new Int32Array(64);
let posEnd = new Int32Array(64);
let flat = new Int32Array(256);

function grow(la: number, flatLen: number): void {
  if (posStart.length < la) {
    posStart = new Int32Array(la * 2);
    posEnd = new Int32Array(la * 2);
  }
  if (flat.length < flatLen) flat = new Int32Array(flatLen * 2);
  if (stack.length < 4 * (la + 2)) stack = new Int32Array(8 * (la + 2));
}

/**
 * get_matching_blocks' total, given the positions of every a[i] in b (popular elements already
 * left out). CPython's loops: i ascending, then j ascending; a strictly longer block replaces
 * the best, so ties go to the earliest block in a, then in b.
 */
function core(a: CodePoints, bc: CodePoints): number {
  const la = a.length;
  ensureRows(bc.length + 2);
  if (rowClock > 2_000_000_000) {
    rowClock = 0;
    stampA.fill(-2);
    stampB.fill(-2);
  }
  let sp = 0;
  stack[sp++] = 0;
  stack[sp++] = la;
  stack[sp++] = 0;
  stack[sp++] = bc.length;
  let total = 0;
  while (sp) {
    const bhi = stack[--sp]!;
    const blo = stack[--sp]!;
    const ahi = stack[--sp]!;
    const alo = stack[--sp]!;
    // find_longest_match(alo, ahi, blo, bhi)
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let prevLen = lenA;
    let prevStamp = stampA;
    let curLen = lenB;
    let curStamp = stampB;
    let prevRow = -1;
    for (let i = alo; i < ahi; i++) {
      const row = ++rowClock;
      const end = posEnd[i]!;
      for (let x = posStart[i]!; x < end; x++) {
        const j = flat[x]!;
        if (j < blo) continue;
        if (j >= bhi) break;
        // j2len[j-1] of the previous row lives at index j (positions shifted by one).
        const k = (prevStamp[j] === prevRow ? prevLen[j]! : 0) + 1;
        curLen[j + 1] = k;
        curStamp[j + 1] = row;
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      prevRow = row;
      const tl = prevLen;
      prevLen = curLen;
      curLen = tl;
      const ts = prevStamp;
      prevStamp = curStamp;
      curStamp = ts;
    }
    // Extend with equal elements on both ends (there is no junk, so one pass each way suffices;
    // popular elements are not junk and may extend a match).
    while (besti > alo && bestj > blo && a[besti - 1] === bc[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === bc[bestj + bestsize]) bestsize++;
    if (bestsize) {
      total += bestsize;
      if (alo < besti && blo < bestj) {
        stack[sp++] = alo;
        stack[sp++] = besti;
        stack[sp++] = blo;
        stack[sp++] = bestj;
      }
      if (besti + bestsize < ahi && bestj + bestsize < bhi) {
        stack[sp++] = besti + bestsize;
        stack[sp++] = ahi;
        stack[sp++] = bestj + bestsize;
        stack[sp++] = bhi;
      }
    }
  }
  return total;
}

/** Bits w..w+31 of the positions [lo, hi), as one 32-bit word. */
function rangeWord(lo: number, hi: number, w: number): number {
  const h = hi - w;
  if (h <= 0) return 0;
  const l = lo - w;
  const upto = h >= 32 ? -1 : (1 << h) - 1;
  return l <= 0 ? upto : l >= 32 ? 0 : upto & ~((1 << l) - 1);
}

/** Run length of the match ending at each position of `b` (matchingSizeMasks; runs of 2 or more). */
const runLen = new Int32Array(64);

/**
 * matchingSize for a `b` of at most 64 elements given as position masks: `lo[at + cols[i]]` and
 * `hi[at + cols[i]]` are the positions (0–31, 32–63) in b of the element a[i] (exactly: no two
 * elements may share a column). The same search as `core` (rows i ascending; a strictly longer
 * block replaces the best, so ties go to the earliest in a, then in b) with each row's matches
 * taken from the masks, already cut to the range. A match continues a run of the row before when
 * that row matched one position to the left (`mask & prev << 1`), so the run lengths need no
 * per-row stamps; there is no junk, so a longest block cannot be extended.
 *
 * With `need`, a caller that only wants totals of at least `need` gets, as soon as the blocks found
 * plus the smaller side of every range left are under it, that bound instead (it is under `need`).
 */
export function matchingSizeMasks(
  cols: Int32Array,
  lo: Int32Array,
  hi: Int32Array,
  at: number,
  lb: number,
  need = 0,
): number {
  const la = cols.length;
  if (stack.length < 4 * (la + 2)) stack = new Int32Array(8 * (la + 2));
  let sp = 0;
  stack[sp++] = 0;
  stack[sp++] = la;
  stack[sp++] = 0;
  stack[sp++] = lb;
  let total = 0;
  // The blocks found plus, for each range still on the stack, the smaller of its two sides.
  let cap = la < lb ? la : lb;
  while (sp) {
    const bhi = stack[--sp]!;
    const blo = stack[--sp]!;
    const ahi = stack[--sp]!;
    const alo = stack[--sp]!;
    cap -= Math.min(ahi - alo, bhi - blo);
    const size = longestInMasks(cols, lo, hi, at, alo, ahi, blo, bhi);
    total += size;
    cap += size;
    if (!size) {
      if (cap < need) return cap;
      continue;
    }
    const besti = bestI;
    const bestj = bestJ;
    if (alo < besti && blo < bestj) {
      stack[sp++] = alo;
      stack[sp++] = besti;
      stack[sp++] = blo;
      stack[sp++] = bestj;
      cap += Math.min(besti - alo, bestj - blo);
    }
    if (besti + size < ahi && bestj + size < bhi) {
      stack[sp++] = besti + size;
      stack[sp++] = ahi;
      stack[sp++] = bestj + size;
      stack[sp++] = bhi;
      cap += Math.min(ahi - besti - size, bhi - bestj - size);
    }
    if (cap < need) return cap;
  }
  return total;
}

/** Where longestInMasks' block starts (a and b); module state, so the hot loop allocates nothing. */
let bestI = 0;
let bestJ = 0;

/**
 * find_longest_match over a[alo, ahi) and b[blo, bhi): the block's size, its start in bestI/bestJ.
 * Only a match that continues a run of the row before can be longer than 1, so a row visits just
 * those, highest position first (runLen[j - 1] still holds the row before's run when j reads it;
 * a match there that started a run has length 1 and is not stored). The row's best is its lowest
 * position of the longest run, which is the one CPython's ascending loop keeps. The rows stop once
 * no block can be longer than the best: the longest run of the row before plus the rows left.
 */
function longestInMasks(
  cols: Int32Array,
  lo: Int32Array,
  hi: Int32Array,
  at: number,
  alo: number,
  ahi: number,
  blo: number,
  bhi: number,
): number {
  const r0 = rangeWord(blo, bhi, 0);
  const r1 = rangeWord(blo, bhi, 32);
  const widest = bhi - blo;
  let bestsize = 0;
  // The row before: its matches and which of them continued a run.
  let p0 = 0;
  let p1 = 0;
  let q0 = 0;
  let q1 = 0;
  let prevBest = 0;
  for (let i = alo; i < ahi; i++) {
    if (prevBest + ahi - i <= bestsize || bestsize === widest) break;
    const c = at + cols[i]!;
    const m0 = lo[c]! & r0;
    const m1 = r1 ? hi[c]! & r1 : 0;
    const c0 = m0 & (p0 << 1);
    const c1 = m1 & ((p1 << 1) | (p0 >>> 31));
    let rowBest = 0;
    let rowJ = 0;
    if (c0 | c1) {
      let x = c1;
      while (x) {
        const b = 31 - Math.clz32(x);
        x ^= 1 << b;
        const stored = b ? (q1 >>> (b - 1)) & 1 : q0 >>> 31;
        const k = (stored ? runLen[b + 31]! : 1) + 1;
        runLen[b + 32] = k;
        if (k >= rowBest) {
          rowBest = k;
          rowJ = b + 32;
        }
      }
      x = c0;
      while (x) {
        const j = 31 - Math.clz32(x);
        x ^= 1 << j;
        const k = ((q0 >>> (j - 1)) & 1 ? runLen[j - 1]! : 1) + 1;
        runLen[j] = k;
        if (k >= rowBest) {
          rowBest = k;
          rowJ = j;
        }
      }
    } else if (m0 | m1) {
      rowBest = 1;
      rowJ = m0 ? 31 - Math.clz32(m0 & -m0) : 63 - Math.clz32(m1 & -m1);
    }
    if (rowBest > bestsize) {
      bestsize = rowBest;
      bestI = i - rowBest + 1;
      bestJ = rowJ - rowBest + 1;
    }
    p0 = m0;
    p1 = m1;
    q0 = c0;
    q1 = c1;
    prevBest = rowBest;
  }
  return bestsize;
}

/** Total size of the matching blocks (what `sum(m.size for m in get_matching_blocks())` gives). */
export function matchingSize(a: CodePoints, b: PreparedSeq | CodePoints): number {
  const pb = Array.isArray(b) ? prepareSeq(b as CodePoints) : (b as PreparedSeq);
  const la = a.length;
  let n = 0;
  for (let i = 0; i < la; i++) n += pb.b2j.get(a[i]!)?.length ?? 0;
  grow(la, n);
  let at = 0;
  for (let i = 0; i < la; i++) {
    posStart[i] = at;
    const js = pb.b2j.get(a[i]!);
    if (js) {
      flat.set(js, at);
      at += js.length;
    }
    posEnd[i] = at;
  }
  return core(a, pb.cps);
}

/** A search term prepared once for matching against many strings (see matchingSizeQ). */
export interface PreparedQuery {
  cps: CodePoints;
  /** Bit-parallel LCS masks, built on first use (see lcsLength). */
  lcs?: {
    words: number;
    ascii: Array<Int32Array | undefined>;
    other: Map<number, Int32Array>;
    v: Int32Array;
    u: Int32Array;
  };
  /** Terms of at most 32 elements: each element's positions as one 32-bit mask, built on first use. */
  mask32?: { ascii: Int32Array; other: Map<number, number> };
  /** Small id of each position's element (equal elements share an id). */
  ids: Int32Array;
  distinct: number;
  asciiId: Int32Array;
  otherId: Map<number, number>;
}

export function prepareQuery(a: string | CodePoints): PreparedQuery {
  const cps = typeof a === "string" ? codePoints(a) : a;
  const asciiId = new Int32Array(128).fill(-1);
  const otherId = new Map<number, number>();
  const ids = new Int32Array(cps.length);
  let distinct = 0;
  cps.forEach((c, i) => {
    let id = c < 128 ? asciiId[c]! : (otherId.get(c) ?? -1);
    if (id < 0) {
      id = distinct++;
      if (c < 128) asciiId[c] = id;
      else otherId.set(c, id);
    }
    ids[i] = id;
  });
  return { cps, ids, distinct, asciiId, otherId };
}

const LCS_BITS = 30;
const LCS_MASK = (1 << LCS_BITS) - 1;

/** Bits set in a 32-bit word. */
export function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** The low `n` bits set (n ≤ 32; all 32 as -1, since the arithmetic below wraps at 32 bits). */
const lowBits = (n: number): number => (n >= 32 ? -1 : (1 << n) - 1);

/** Per-element bit masks of positions in the term, for terms of at most 32 elements. */
function termMasks(q: PreparedQuery): NonNullable<PreparedQuery["mask32"]> {
  if (q.mask32) return q.mask32;
  const ascii = new Int32Array(128);
  const other = new Map<number, number>();
  q.cps.forEach((c, i) => {
    if (c < 128) ascii[c]! |= 1 << i;
    else other.set(c, (other.get(c) ?? 0) | (1 << i));
  });
  q.mask32 = { ascii, other };
  return q.mask32;
}

/** Scratch masks of b's positions per distinct term element (b as the pattern). */
let bMasks = new Int32Array(64);

/**
 * Length of the longest common subsequence of the term and `b`, bit-parallel (Hyyrö's
 * formulation of Allison–Dix: V' = (V + U) | (V − U) with U = V & match(c)). The matching
 * blocks of the ratio form a common subsequence, so 2·LCS/(la + lb) is an upper bound of `ratio`,
 * and a much tighter one than `quick_ratio` for strings that share their letters but not their
 * order. LCS is symmetric: a term of at most 32 elements, else a `b` of at most 32, is the pattern
 * (one 32-bit word, wrapping arithmetic); longer pairs use 30-bit words with carries.
 */
export function lcsLength(q: PreparedQuery, b: CodePoints): number {
  const m = q.cps.length;
  const lb = b.length;
  if (!m || !lb) return 0;
  if (m <= 32) {
    const { ascii, other } = termMasks(q);
    const top = lowBits(m);
    let v = top;
    for (let j = 0; j < lb; j++) {
      const c = b[j]!;
      const pm = c < 128 ? ascii[c]! : (other.get(c) ?? 0);
      if (!pm) continue;
      const u = v & pm;
      v = ((v + u) | (v & ~u)) & top;
    }
    return m - popcount(v);
  }
  if (lb <= 32) return lcsByB(q, b);
  return lcsWords(q, b);
}

/** LCS with `b` (≤ 32 elements) as the bit pattern and the term as the text. */
function lcsByB(q: PreparedQuery, b: CodePoints): number {
  const lb = b.length;
  const d = q.distinct;
  if (bMasks.length < d) bMasks = new Int32Array(d * 2);
  bMasks.fill(0, 0, d);
  for (let j = 0; j < lb; j++) {
    const c = b[j]!;
    const id = c < 128 ? q.asciiId[c]! : (q.otherId.get(c) ?? -1);
    if (id >= 0) bMasks[id]! |= 1 << j;
  }
  const top = lowBits(lb);
  let v = top;
  const ids = q.ids;
  for (let i = 0; i < ids.length; i++) {
    const pm = bMasks[ids[i]!]!;
    if (!pm) continue;
    const u = v & pm;
    v = ((v + u) | (v & ~u)) & top;
  }
  return lb - popcount(v);
}

/** LCS for a term over 32 elements and a `b` over 32: 30-bit words with carries. */
function lcsWords(q: PreparedQuery, b: CodePoints): number {
  const m = q.cps.length;
  if (!q.lcs) {
    const words = Math.ceil(m / LCS_BITS);
    const ascii: Array<Int32Array | undefined> = new Array(128);
    const other = new Map<number, Int32Array>();
    q.cps.forEach((c, i) => {
      let mask = c < 128 ? ascii[c] : other.get(c);
      if (!mask) {
        mask = new Int32Array(words);
        if (c < 128) ascii[c] = mask;
        else other.set(c, mask);
      }
      mask[(i / LCS_BITS) | 0]! |= 1 << (i % LCS_BITS);
    });
    q.lcs = { words, ascii, other, v: new Int32Array(words), u: new Int32Array(words) };
  }
  const { words, ascii, other, v } = q.lcs;
  const topBits = m - (words - 1) * LCS_BITS;
  const topMask = topBits === LCS_BITS ? LCS_MASK : (1 << topBits) - 1;
  for (let k = 0; k < words; k++) v[k] = k === words - 1 ? topMask : LCS_MASK;
  for (let j = 0; j < b.length; j++) {
    const c = b[j]!;
    const pm = c < 128 ? ascii[c] : other.get(c);
    if (!pm) continue;
    let carry = 0;
    for (let k = 0; k < words; k++) {
      const vk = v[k]!;
      const uk = vk & pm[k]!;
      const sum = vk + uk + carry;
      carry = sum >>> LCS_BITS;
      v[k] = ((sum & LCS_MASK) | (vk & ~uk)) & (k === words - 1 ? topMask : LCS_MASK);
    }
  }
  let ones = 0;
  for (let k = 0; k < words; k++) ones += popcount(v[k]!);
  return m - ones;
}

let bucketCount = new Int32Array(64);
let bucketAt = new Int32Array(64);

/**
 * matchingSize(q, b) for a prepared term and a plain `b` shorter than 200 elements (no
 * autojunk): b's positions are bucketed by the term's element ids in one pass over b, with no
 * map lookups. Longer `b` takes the general path. Same result as matchingSize.
 */
export function matchingSizeQ(q: PreparedQuery, b: CodePoints): number {
  if (b.length >= 200) return matchingSize(q.cps, prepareSeq(b));
  const d = q.distinct;
  if (bucketCount.length < d + 1) {
    bucketCount = new Int32Array((d + 1) * 2);
    bucketAt = new Int32Array((d + 1) * 2);
  }
  bucketCount.fill(0, 0, d + 1);
  const lb = b.length;
  for (let j = 0; j < lb; j++) {
    const c = b[j]!;
    const id = c < 128 ? q.asciiId[c]! : (q.otherId.get(c) ?? -1);
    if (id >= 0) bucketCount[id]!++;
  }
  let sum = 0;
  for (let k = 0; k < d; k++) {
    bucketAt[k] = sum;
    sum += bucketCount[k]!;
  }
  const la = q.cps.length;
  grow(la, sum);
  // Fill (positions ascending); bucketAt[k] ends at the bucket's end, then rewinds per lookup.
  for (let j = 0; j < lb; j++) {
    const c = b[j]!;
    const id = c < 128 ? q.asciiId[c]! : (q.otherId.get(c) ?? -1);
    if (id >= 0) flat[bucketAt[id]!++] = j;
  }
  for (let i = 0; i < la; i++) {
    const id = q.ids[i]!;
    posEnd[i] = bucketAt[id]!;
    posStart[i] = bucketAt[id]! - bucketCount[id]!;
  }
  return core(q.cps, b);
}

function calc(matches: number, length: number): number {
  return length ? (2 * matches) / length : 1;
}

/** `SequenceMatcher(None, a, b).ratio()`. */
export function ratio(a: string | CodePoints, b: string | CodePoints | PreparedSeq): number {
  const ca = typeof a === "string" ? codePoints(a) : a;
  const pb =
    typeof b === "string" ? prepareSeq(b) : Array.isArray(b) ? prepareSeq(b as CodePoints) : (b as PreparedSeq);
  return calc(matchingSize(ca, pb), ca.length + pb.cps.length);
}

/** `real_quick_ratio()`: an upper bound from the lengths alone. */
export function realQuickRatio(la: number, lb: number): number {
  return calc(Math.min(la, lb), la + lb);
}

/** `quick_ratio()`: an upper bound from the multiset intersection of the elements. */
export function quickRatio(a: CodePoints, b: CodePoints): number {
  const avail = new Map<number, number>();
  for (const c of b) avail.set(c, (avail.get(c) ?? 0) + 1);
  let matches = 0;
  for (const c of a) {
    const n = avail.get(c) ?? 0;
    if (n > 0) {
      matches++;
      avail.set(c, n - 1);
    }
  }
  return calc(matches, a.length + b.length);
}
