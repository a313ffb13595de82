/** Any runtime function a Python plugin may hold a reference to. */
export type AnyFn = (...args: never[]) => unknown;

/** Values from the runtime to Python: JSON, functions as `{$js: id}` (kept in `fns` until released). */
export function toWire(
  v: unknown,
  fns: Map<number, AnyFn>,
  next: () => number,
  depth = 0,
  seen?: WeakSet<object>,
): unknown {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v : null;
    case "bigint":
      return v.toString();
    case "function": {
      const id = next();
      fns.set(id, v as AnyFn);
      return { $js: id, name: v.name || "function" };
    }
    case "object":
      break;
    default:
      return null;
  }
  if (depth > 64) return null;
  const o = v as object;
  const visited = seen ?? new WeakSet<object>();
  if (visited.has(o)) return null;
  visited.add(o);
  try {
    if (Array.isArray(o)) return o.map((x) => toWire(x, fns, next, depth + 1, visited));
    if (o instanceof Uint8Array) return { $bytes: Buffer.from(o).toString("base64") };
    if (o instanceof Date) return o.toISOString();
    if (o instanceof Error) return { type: o.name, message: o.message };
    const proto = Object.getPrototypeOf(o);
    if (proto !== Object.prototype && proto !== null) {
      // A class instance (the runtime, a socket) has no JSON meaning for a plugin; toJSON when it has one.
      const toJSON = (o as { toJSON?: () => unknown }).toJSON;
      return typeof toJSON === "function" ? toWire(toJSON.call(o), fns, next, depth + 1, visited) : null;
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) if (x !== undefined) out[k] = toWire(x, fns, next, depth + 1, visited);
    return out;
  } finally {
    visited.delete(o);
  }
}

/** What Python sent, with its references turned into runtime values by `ref`. */
export function fromWire(v: unknown, ref: (tag: Record<string, unknown>) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => fromWire(x, ref));
  if (v === null || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  if ("$py" in o || "$pyobj" in o || "$check" in o || "$js" in o) return ref(o);
  if ("$bytes" in o && Object.keys(o).length === 1) return Buffer.from(String(o.$bytes), "base64");
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) out[k] = fromWire(x, ref);
  return out;
}
