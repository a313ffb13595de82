/**
 * What observers get of a request or response: a JSON copy with secret-shaped keys redacted
 * (whole words: `api_key`, `authorization`, `client_secret`, `token`; not `max_tokens`).
 */
const SECRET_WORDS = new Set([
  "token",
  "secret",
  "password",
  "passwd",
  "apikey",
  "authorization",
  "auth",
  "cookie",
  "credential",
  "credentials",
]);

function words(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

export function isSecretKeyName(key: string): boolean {
  const w = words(key);
  if (w.some((x) => SECRET_WORDS.has(x))) return true;
  for (let i = 1; i < w.length; i++)
    if (w[i] === "key" && ["api", "private", "access", "secret"].includes(w[i - 1]!)) return true;
  return false;
}

export function sanitize<T>(value: T, depth = 0): T {
  if (depth > 32) return "[too deep]" as unknown as T;
  if (Array.isArray(value)) return value.map((v) => sanitize(v, depth + 1)) as unknown as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (typeof v === "function") continue;
      out[k] =
        isSecretKeyName(k) && (typeof v === "string" || typeof v === "number") ? "[redacted]" : sanitize(v, depth + 1);
    }
    return out as T;
  }
  return value;
}

/** A short one-line JSON rendering for logs and the timeline. */
export function brief(value: unknown, max = 160): string {
  let s: string;
  try {
    s = typeof value === "string" ? value : JSON.stringify(value);
  } catch {
    s = String(value);
  }
  if (s === undefined) s = String(value);
  s = s.replace(/\s+/g, " ");
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
