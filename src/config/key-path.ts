import { HermesError } from "../core/errors.js";
import { schemaId, schemaSources } from "../core/schema.js";
import { nearest } from "../core/suggest.js";
import { formatJsonPath } from "../core/yaml-source.js";
import { ORIGINAL_TOP_LEVEL_KEYS } from "./validate.js";

/** A JSON-Schema node as far as key lookup needs it. */
interface SchemaNode {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  default?: unknown;
  $defs?: Record<string, SchemaNode>;
}

/** What the config schema says about a dotted key. */
export type KeyInfo =
  /** Described by the schema; `node` is its schema (its default, if any, is `node.default`). */
  | { kind: "described"; node: SchemaNode }
  /** Below a free-form map (`plugins.entries.<key>`, `mcp_servers.<name>`, plugin `settings`) or a section the
   * original Hermes reads and the schema accepts as it is (`display.*`, `agent.<not described>`). */
  | { kind: "free" }
  /** Not a key anything reads: `at` is the index of the first unknown part, `suggestion` the nearest valid key. */
  | { kind: "unknown"; at: number; suggestion?: string; reason: string };

/** `a.b["c.d"]` → ["a", "b", "c.d"]: dotted names, `["..."]` for a name that holds a dot (as errors print them). */
export function parseKeyPath(key: string): string[] {
  const out: string[] = [];
  const bare = /[^.[\]]+/y;
  const quoted = /\[("(?:[^"\\]|\\.)*")\]/y;
  let i = 0;
  let ok = true;
  while (ok && i < key.length) {
    // After the first part: `.name`, `.["x"]` or `["x"]`.
    if (out.length && key[i] === ".") i++;
    else if (out.length && key[i] !== "[") ok = false;
    quoted.lastIndex = bare.lastIndex = i;
    const q = quoted.exec(key);
    const b = q ? null : bare.exec(key);
    if (!ok || (!q && !b)) ok = false;
    else {
      out.push(q ? (JSON.parse(q[1]!) as string) : b![0]);
      i = q ? quoted.lastIndex : bare.lastIndex;
    }
  }
  if (!ok || !out.length || out.some((s) => s === "")) {
    throw new HermesError("E_CONFIG_KEY_INVALID", { message: `'${key}' is not a dotted config key` });
  }
  return out;
}

function rootSchema(): SchemaNode {
  const doc = schemaSources().docs.find((d) => (d as { $id?: string }).$id === schemaId("config"));
  return (doc ?? {}) as SchemaNode;
}

/** A node with its local `$ref` followed and, for `anyOf`/`oneOf`, the branch that is a mapping. */
function mappingView(root: SchemaNode, node: SchemaNode): SchemaNode {
  let n = node;
  for (let i = 0; i < 8 && n.$ref?.startsWith("#/$defs/"); i++) n = root.$defs?.[n.$ref.slice(8)] ?? {};
  const branches = n.anyOf ?? n.oneOf;
  if (!branches) return n;
  const obj = branches.map((b) => mappingView(root, b)).find(isMapping);
  return obj ? { ...obj, default: n.default ?? obj.default } : n;
}

function isMapping(n: SchemaNode): boolean {
  const t = Array.isArray(n.type) ? n.type : n.type ? [n.type] : [];
  return t.includes("object") || n.properties !== undefined || typeof n.additionalProperties === "object";
}

function unknownAt(path: string[], at: number, known: string[], why: string): KeyInfo {
  const near = nearest(path[at]!, known);
  const suggestion = near ? formatJsonPath([...path.slice(0, at), near]) : undefined;
  return { kind: "unknown", at, reason: why, ...(suggestion ? { suggestion } : {}) };
}

/** One step of the walk: the next node, a verdict, or (for the root) the original's sections. */
function step(node: SchemaNode, path: string[], i: number): { next: SchemaNode } | KeyInfo {
  const seg = path[i]!;
  const props = node.properties ?? {};
  if (Object.hasOwn(props, seg)) return { next: props[seg]! };
  const extra = node.additionalProperties;
  if (typeof extra === "object") return { next: extra };
  const known = Object.keys(props);
  if (i === 0) {
    if (ORIGINAL_TOP_LEVEL_KEYS.includes(seg)) return { kind: "free" };
    return unknownAt(path, i, [...known, ...ORIGINAL_TOP_LEVEL_KEYS], "read neither by hermes-kit nor by Hermes");
  }
  if (extra === false) return unknownAt(path, i, known, `not a field of ${formatJsonPath(path.slice(0, i))}`);
  // An open section: a near miss of a described key is a typo; any other name is the original's key, kept as is.
  const near = nearest(seg, known);
  if (near) return unknownAt(path, i, known, `not a field of ${formatJsonPath(path.slice(0, i))}`);
  return { kind: "free" };
}

/** Look a key up in the config schema (the root also knows the original's top-level sections). */
export function describeKey(path: string[]): KeyInfo {
  const root = rootSchema();
  let node = mappingView(root, root);
  for (let i = 0; i < path.length; i++) {
    if (!isMapping(node)) {
      const what = node.type ? String(node.type).replace(/,/g, " or ") : "a value";
      return {
        kind: "unknown",
        at: i,
        reason: `${formatJsonPath(path.slice(0, i))} is ${what}, not a mapping (set it whole)`,
      };
    }
    if (!node.properties && node.additionalProperties === undefined) return { kind: "free" };
    const r = step(node, path, i);
    if (!("next" in r)) return r;
    node = mappingView(root, r.next);
  }
  return { kind: "described", node };
}
