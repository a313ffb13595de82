import type { ErrorCode } from "../core/errors.js";
import { isSecretKey } from "../core/redact.js";

// One word-based definition of a secret name for packs and for output redaction.
export { isSecretKey, keyWords } from "../core/redact.js";

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
