import type { ErrorCode } from "../core/errors.js";

/** Split a key into lowercase words: `apiKey` → [api, key], `DB_PASSWORD` → [db, password]. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

const SECRET_WORDS = new Set([
  "token",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "credential",
  "credentials",
  "apikey",
  "privatekey",
  "auth",
  "authorization",
  "cookie",
]);
const SECRET_PAIRS = [
  ["api", "key"],
  ["private", "key"],
  ["access", "key"],
  ["secret", "key"],
  ["client", "secret"],
  ["signing", "key"],
];

/**
 * Secret-shaped by whole words, not substrings (DESIGN.md deviation 6): `api_key`, `apiKey`,
 * `db_password`, `client_secret`, `token` are secrets; `author`, `max_tokens`, `keyboard` are not.
 */
export function isSecretKey(key: string): boolean {
  const words = keyWords(key);
  if (words.some((w) => SECRET_WORDS.has(w))) return true;
  for (let i = 1; i < words.length; i++) {
    if (SECRET_PAIRS.some(([a, b]) => words[i - 1] === a && words[i] === b)) return true;
  }
  return false;
}

export function isReservedKey(key: string): boolean {
  return key === "granted_capabilities" || key === "capabilities_consent" || key.startsWith("allow_");
}

export interface SeedFinding {
  code: Extract<ErrorCode, "E_PACK_SEED_RESERVED" | "E_PACK_SEED_SECRET">;
  /** Path inside the seed, e.g. `settings.api_key` or `profiles[0].allow_tool_override`. */
  path: Array<string | number>;
  key: string;
}

/** Every reserved or secret-shaped key at any depth, lists of mappings included. */
export function findSeedProblems(seed: unknown, base: Array<string | number> = []): SeedFinding[] {
  const out: SeedFinding[] = [];
  if (Array.isArray(seed)) {
    seed.forEach((v, i) => out.push(...findSeedProblems(v, [...base, i])));
  } else if (seed && typeof seed === "object") {
    for (const [k, v] of Object.entries(seed as Record<string, unknown>)) {
      const path = [...base, k];
      if (isReservedKey(k)) out.push({ code: "E_PACK_SEED_RESERVED", path, key: k });
      else if (isSecretKey(k)) out.push({ code: "E_PACK_SEED_SECRET", path, key: k });
      else out.push(...findSeedProblems(v, path));
    }
  }
  return out;
}

/** A copy of the seed without the findings (export sanitises instead of refusing). */
export function sanitizeSeed(seed: unknown): unknown {
  if (Array.isArray(seed)) return seed.map(sanitizeSeed);
  if (seed && typeof seed === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(seed as Record<string, unknown>)) {
      if (isReservedKey(k) || isSecretKey(k)) continue;
      out[k] = sanitizeSeed(v);
    }
    return out;
  }
  return seed;
}
