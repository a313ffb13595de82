/**
 * `String(v)` for parsed input that may be anything: an object whose `toString`/`valueOf` is not a
 * function (`{toString: 1}` in YAML) makes String() throw a TypeError, so fall back to the tag.
 */
export function safeString(v: unknown): string {
  try {
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}
