/**
 * A faithful port of Python's `difflib.SequenceMatcher` ratio (Ratcliff/Obershelp "gestalt
 * pattern matching"), as the original's index search uses it (install spec §7.4):
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

/** Elements that may start a match: all of `b`'s, minus the popular ones when `len(b) ≥ 200` (autojunk). */
function startable(b: CodePoints): (c: number) => boolean {
  const n = b.length;
  if (n < 200) return () => true;
  const counts = new Map<number, number>();
  for (const c of b) counts.set(c, (counts.get(c) ?? 0) + 1);
  const ntest = Math.floor(n / 100) + 1;
  const popular = new Set<number>();
  for (const [c, k] of counts) if (k > ntest) popular.add(c);
  return popular.size ? (c) => !popular.has(c) : () => true;
}

interface Match {
  i: number;
  j: number;
  k: number;
}

/**
 * CPython's `find_longest_match` with its sparse `j2len` dict replaced by two dense rows (same
 * recurrence, same visiting order: i ascending, then j ascending, first strictly longer block
 * wins), so ties resolve to the earliest block in `a`, then in `b`, exactly as in Python.
 */
function findLongestMatch(a: CodePoints, b: CodePoints, ok: (c: number) => boolean, rows: Int32Array[], alo: number, ahi: number, blo: number, bhi: number): Match {
  let besti = alo;
  let bestj = blo;
  let bestsize = 0;
  let prev = rows[0]!;
  let cur = rows[1]!;
  // prev[j + 1] = length of the match ending at a[i-1], b[j]; zero outside [blo, bhi).
  prev.fill(0, blo, bhi + 1);
  for (let i = alo; i < ahi; i++) {
    const ai = a[i]!;
    const start = ok(ai);
    cur[blo] = 0;
    for (let j = blo; j < bhi; j++) {
      if (start && b[j] === ai) {
        const k = prev[j]! + 1;
        cur[j + 1] = k;
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      } else cur[j + 1] = 0;
    }
    const t = prev;
    prev = cur;
    cur = t;
  }
  // Extend with equal elements on both ends (there is no junk, so one pass each way suffices;
  // popular elements are not junk and may extend a match).
  while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
    besti--;
    bestj--;
    bestsize++;
  }
  while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
  return { i: besti, j: bestj, k: bestsize };
}

/** Total size of the matching blocks (what `sum(m.size for m in get_matching_blocks())` gives). */
export function matchingSize(a: CodePoints, b: CodePoints): number {
  const ok = startable(b);
  const rows = [new Int32Array(b.length + 1), new Int32Array(b.length + 1)];
  let total = 0;
  const queue: Array<[number, number, number, number]> = [[0, a.length, 0, b.length]];
  while (queue.length) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const { i, j, k } = findLongestMatch(a, b, ok, rows, alo, ahi, blo, bhi);
    if (k) {
      total += k;
      if (alo < i && blo < j) queue.push([alo, i, blo, j]);
      if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
    }
  }
  return total;
}

function calc(matches: number, length: number): number {
  return length ? (2 * matches) / length : 1;
}

/** `SequenceMatcher(None, a, b).ratio()`. */
export function ratio(a: string | CodePoints, b: string | CodePoints): number {
  const ca = typeof a === "string" ? codePoints(a) : a;
  const cb = typeof b === "string" ? codePoints(b) : b;
  return calc(matchingSize(ca, cb), ca.length + cb.length);
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
