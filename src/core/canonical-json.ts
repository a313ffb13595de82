/** A copy of `v` whose object keys are sorted at every depth (undefined values dropped, as JSON does). */
export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as Record<string, unknown>).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sortKeys(x);
    }
    return out;
  }
  return v;
}

/** Sorted keys, no spaces: the same value always gives the same text, whatever order it was built in. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(sortKeys(v) ?? null);
}
