/** Levenshtein distance, small and allocation-light: names here are short. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (!a.length) return b.length;
  if (!b.length) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  let cur = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/** The closest candidate when it is close enough to be a plausible typo, else undefined. */
export function nearest(input: string, candidates: Iterable<string>): string | undefined {
  const needle = input.toLowerCase();
  const list = [...candidates];
  // A typed prefix or fragment ("hello" for "hello-world") is a stronger hint than edit distance.
  const partial = list.filter((c) => c.toLowerCase().startsWith(needle) || (needle.length >= 3 && c.toLowerCase().includes(needle)));
  if (needle.length >= 2 && partial.length) return partial.sort((a, b) => a.length - b.length || (a < b ? -1 : 1))[0];
  candidates = list;
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const d = editDistance(needle, c.toLowerCase());
    if (d < bestScore) {
      best = c;
      bestScore = d;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(2, Math.floor(Math.max(needle.length, best.length) / 3));
  return bestScore <= limit ? best : undefined;
}

export function didYouMean(input: string, candidates: Iterable<string>): string {
  const n = nearest(input, candidates);
  return n ? `; did you mean '${n}'?` : "";
}
