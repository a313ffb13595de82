/**
 * Edit distance counting an adjacent transposition as one edit (optimal string alignment), so the
 * commonest typo (`modle`, `alpah`) costs what a single slip costs.
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (!a.length) return b.length;
  if (!b.length) return a.length;
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i]!;
    const prev = rows[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row[j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/** Edits allowed for a name of this length: about one slip per four characters, at least one. */
export function typoBudget(length: number): number {
  return Math.max(1, Math.floor(length / 4));
}

export interface NearestOptions {
  /**
   * Also accept a typed prefix or fragment of a longer name (`langfuse` for `observability/langfuse`).
   * Right for names of things a person picks from a list; wrong for field names, where a shorter
   * word (`provides`, `config`) is a different field, not a fragment of `provides_hooks`.
   */
  fragments?: boolean;
}

/** The closest candidate when it is close enough to be a plausible typo, else undefined. */
export function nearest(input: string, candidates: Iterable<string>, opts: NearestOptions = {}): string | undefined {
  const needle = input.toLowerCase();
  const list = [...candidates];
  if (opts.fragments && needle.length >= 3) {
    const partial = list.filter((c) => c.toLowerCase().startsWith(needle) || c.toLowerCase().includes(needle));
    if (partial.length) return partial.sort((a, b) => a.length - b.length || (a < b ? -1 : 1))[0];
  }
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of list) {
    const d = editDistance(needle, c.toLowerCase());
    if (d < bestScore) {
      best = c;
      bestScore = d;
    }
  }
  if (best === undefined) return undefined;
  return bestScore <= typoBudget(Math.max(needle.length, best.length)) ? best : undefined;
}

export function didYouMean(input: string, candidates: Iterable<string>, opts: NearestOptions = {}): string {
  const n = nearest(input, candidates, opts);
  return n ? `; did you mean '${n}'?` : "";
}
