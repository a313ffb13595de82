export type ParsedArgs = { ok: true; args: Record<string, unknown>; coerced: string[] } | { ok: false; error: string };

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/** Coerce one value toward the JSON-schema type the tool declares, when that is unambiguous. */
function coerce(value: unknown, schema: unknown): { value: unknown; changed: boolean } {
  if (!isMapping(schema)) return { value, changed: false };
  const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
  if (types.includes(typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value))
    return { value, changed: false };
  if (typeof value === "string") {
    const t = value.trim();
    if (
      (types.includes("integer") && /^-?\d+$/.test(t)) ||
      (types.includes("number") && t !== "" && Number.isFinite(Number(t)))
    )
      return { value: Number(t), changed: true };
    if (types.includes("boolean") && /^(true|false)$/i.test(t))
      return { value: t.toLowerCase() === "true", changed: true };
    if ((types.includes("array") && t.startsWith("[")) || (types.includes("object") && t.startsWith("{"))) {
      try {
        const v = JSON.parse(t) as unknown;
        if ((types.includes("array") && Array.isArray(v)) || (types.includes("object") && isMapping(v)))
          return { value: v, changed: true };
      } catch {
        /* leave it */
      }
    }
  }
  if (types.includes("number") && typeof value === "number") return { value, changed: false };
  if (types.includes("string") && (typeof value === "number" || typeof value === "boolean"))
    return { value: String(value), changed: true };
  return { value, changed: false };
}

/**
 * Parse the arguments the model sent (a JSON text) and coerce them to the tool's schema
 * before anything runs: "" means {}, a double-encoded object is unwrapped, "5" becomes 5
 * for an integer parameter, "true" becomes true for a boolean. Anything that is not a JSON object
 * is an error the model is told about; the tool does not run.
 */
export function parseToolArgs(raw: unknown, parameters?: unknown): ParsedArgs {
  let value: unknown = raw;
  if (typeof raw === "string") {
    if (!raw.trim()) value = {};
    else {
      try {
        value = JSON.parse(raw);
      } catch (e) {
        return {
          ok: false,
          error:
            `the arguments are not valid JSON (${(e as Error).message}); ` +
            `got ${JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw)}`,
        };
      }
      if (typeof value === "string" && value.trim().startsWith("{")) {
        try {
          value = JSON.parse(value);
        } catch {
          /* reported below */
        }
      }
    }
  }
  if (value === null || value === undefined) value = {};
  if (!isMapping(value)) return { ok: false, error: `the arguments must be a JSON object, got ${kindOf(value)}` };
  const props = isMapping(parameters) && isMapping(parameters.properties) ? parameters.properties : {};
  const args: Record<string, unknown> = { ...value };
  const coerced: string[] = [];
  for (const [k, v] of Object.entries(args)) {
    const r = coerce(v, props[k]);
    if (r.changed) {
      args[k] = r.value;
      coerced.push(k);
    }
  }
  return { ok: true, args, coerced };
}
