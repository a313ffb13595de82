import { sha256 } from "./hash.js";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { diagnostic, type Diagnostic } from "./errors.js";
import { SCHEMAS_DIR } from "./paths.js";
import { didYouMean } from "./suggest.js";
import { formatJsonPath, parsePointer } from "./json-path.js";
import type { SourceDoc } from "./yaml-source.js";

export const SCHEMA_BASE = "https://hermes-kit.dev/schemas/";

export type SchemaName = "plugin-manifest" | "config" | "pack" | "index" | "deploy-spec" | "lock";

/** Shared by the runtime compiler and the build step that precompiles the schemas. */
export const AJV_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true, verbose: true } as const;

/** Schema ids the build precompiles (top-level documents and the fragments code validates against). */
export const PRECOMPILED_FRAGMENTS = [
  "index.schema.json#/$defs/entry",
  "index.schema.json#/$defs/catalogEntry",
] as const;

/** Where the build writes the precompiled validator of a schema id: one CommonJS file per id, so it loads synchronously
 * and a command loads only the schemas it validates against. */
export function precompiledFile(id: string): string {
  return `schema-validators/${id.slice(SCHEMA_BASE.length).replace(/[^A-Za-z0-9.-]+/g, "_")}.cjs`;
}

const require = createRequire(import.meta.url);
let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

let sources: { docs: object[]; digest: string } | undefined;

/** The schema documents in file-name order and a digest of their bytes (ties precompiled code to them); read once. */
export function schemaSources(): { docs: object[]; digest: string } {
  if (sources) return sources;
  const hash = sha256();
  const docs: object[] = [];
  for (const f of readdirSync(SCHEMAS_DIR).sort()) {
    if (!f.endsWith(".schema.json")) continue;
    const text = readFileSync(join(SCHEMAS_DIR, f), "utf8");
    hash.update(`${f}\0${text}\0`);
    docs.push(JSON.parse(text) as object);
  }
  return (sources = { docs, digest: hash.digest("hex") });
}

function instance(): Ajv2020 {
  if (ajv) return ajv;
  // Loaded on demand: with the precompiled validators current, no command needs Ajv's compiler.
  const { Ajv2020: AjvClass } = require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
  ajv = new AjvClass(AJV_OPTIONS);
  for (const doc of schemaSources().docs) ajv.addSchema(doc);
  return ajv;
}

/** What a generated file exports: the validator and the digest of the schemas it was made from. */
interface PrecompiledModule {
  digest?: string;
  validate?: ValidateFunction;
}

/** Ids validated by build-time code in this process. */
const precompiledUsed = new Set<string>();

/**
 * Compiling the schemas with Ajv costs 100-200 ms per process, most of a short command's
 * startup (bench/runtime.bench.mjs). The build writes the same validators as code (Ajv's
 * standalone mode); one is used only while its digest matches the schema files, so a schema
 * edited without a rebuild is still validated correctly, by compiling it here.
 */
function loadPrecompiled(id: string): ValidateFunction | undefined {
  if (process.env.HERMES_SCHEMA_PRECOMPILED === "0") return undefined;
  try {
    // Absent (running from src/, or not built yet) is one of the reasons to compile instead.
    const mod = require(fileURLToPath(new URL(precompiledFile(id), import.meta.url))) as PrecompiledModule;
    return mod.digest === schemaSources().digest && typeof mod.validate === "function" ? mod.validate : undefined;
  } catch {
    return undefined;
  }
}

/** Schema ids this process validates with build-time code (the tests show which path ran). */
export function precompiledIds(): string[] {
  return [...precompiledUsed].sort();
}

export function schemaId(name: SchemaName, fragment = ""): string {
  return `${SCHEMA_BASE}${name}.schema.json${fragment}`;
}

function validator(id: string): ValidateFunction {
  let v = compiled.get(id);
  if (!v) {
    const pre = loadPrecompiled(id);
    if (pre) precompiledUsed.add(id);
    v = pre ?? instance().getSchema(id);
    if (!v)
      throw new Error(`internal error: schema ${id} is not loaded (every schemas/ file is registered at startup)`);
    compiled.set(id, v);
  }
  return v;
}

export interface ValidateOptions {
  /** Where positions come from; without it diagnostics carry only the JSON path. */
  source?: SourceDoc;
  /** File name to report when there is no source document. */
  file?: string;
  /** Unknown fields: warnings (config, manifests) or errors (deploy specs, locks). */
  unknownFields?: "warn" | "error";
  /** Prefix added to every reported path (when validating a sub-document). */
  basePath?: ReadonlyArray<string | number>;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  if (s === undefined) return String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number" && Number.isInteger(v)) return "integer";
  return typeof v;
}

function valueAt(root: unknown, path: ReadonlyArray<string | number>): unknown {
  let cur = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[seg as string];
  }
  return cur;
}

/** JSON-pointer segments with array indexes as numbers, so positions resolve inside YAML lists. */
function pointerSegments(root: unknown, pointer: string): Array<string | number> {
  const out: Array<string | number> = [];
  let cur = root;
  for (const seg of parsePointer(pointer)) {
    const key: string | number = Array.isArray(cur) && /^\d+$/.test(seg) ? Number(seg) : seg;
    out.push(key);
    cur = cur !== null && typeof cur === "object" ? (cur as Record<string, unknown>)[key as string] : undefined;
  }
  return out;
}

/** Validate `data` against a schema id (`config`, or a full id with a `#/$defs/...` fragment). */
export function validateSchema(schema: SchemaName | string, data: unknown, opts: ValidateOptions = {}): Diagnostic[] {
  const id = schema.includes("://") ? schema : schemaId(schema as SchemaName);
  const v = validator(id);
  try {
    if (v(data)) return [];
  } catch (e) {
    // Ajv compares list items through their valueOf()/toString(): a mapping with such a key breaks it.
    const at = [...(opts.basePath ?? []), ...(hostileKeyPath(data) ?? [])];
    const where = opts.source ? opts.source.locate(at) : { file: opts.file, path: formatJsonPath(at) };
    return [
      diagnostic(
        "E_SCHEMA_INVALID",
        "a mapping here has a key named like a built-in method (valueOf, toString, …) and cannot be " +
          `checked: ${(e as Error).message}`,
        where,
      ),
    ];
  }
  return renderAjvErrors(v.errors ?? [], data, opts);
}

const HOSTILE_KEYS = new Set(["valueOf", "toString", "constructor", "hasOwnProperty", "toJSON"]);

/** Path of the first mapping that shadows a built-in method with a non-function value. */
function hostileKeyPath(v: unknown, at: Array<string | number> = []): Array<string | number> | undefined {
  if (!v || typeof v !== "object") return undefined;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (!Array.isArray(v) && HOSTILE_KEYS.has(k) && typeof x !== "function") return [...at, k];
    const inner = hostileKeyPath(x, [...at, Array.isArray(v) ? Number(k) : k]);
    if (inner) return inner;
  }
  return undefined;
}

/** Per alternative (anyOf/oneOf) path: the types its branches accept and the fields they require. */
function alternativeBranches(
  errors: ErrorObject[],
  altPaths: Set<string>,
): { altTypes: Map<string, Set<string>>; altMissing: Map<string, Set<string>> } {
  const altTypes = new Map<string, Set<string>>();
  const altMissing = new Map<string, Set<string>>();
  for (const e of errors) {
    if (e.keyword === "type" && altPaths.has(e.instancePath)) {
      const set = altTypes.get(e.instancePath) ?? new Set<string>();
      for (const t of String(e.params.type).split(",")) set.add(t);
      altTypes.set(e.instancePath, set);
    }
    if (e.keyword === "required" && altPaths.has(e.instancePath)) {
      const set = altMissing.get(e.instancePath) ?? new Set<string>();
      set.add(String(e.params.missingProperty));
      altMissing.set(e.instancePath, set);
    }
  }
  return { altTypes, altMissing };
}

export function renderAjvErrors(errors: ErrorObject[], data: unknown, opts: ValidateOptions): Diagnostic[] {
  const base = opts.basePath ?? [];
  // Alternatives (anyOf/oneOf) produce one error per failed branch; report the alternative once.
  const altPaths = new Set(
    errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf").map((e) => e.instancePath),
  );
  const { altTypes, altMissing } = alternativeBranches(errors, altPaths);
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const segs = pointerSegments(data, e.instancePath);
    const inAlt = [...altPaths].some((p) => e.instancePath === p && e.keyword !== "anyOf" && e.keyword !== "oneOf");
    if (inAlt && (e.keyword === "type" || e.keyword === "required" || e.keyword === "const" || e.keyword === "enum"))
      continue;
    const value = valueAt(data, segs);
    let path = [...base, ...segs];
    let message: string;
    let code: Diagnostic["code"] = "E_SCHEMA_INVALID";
    let atKey = false;
    switch (e.keyword) {
      case "additionalProperties": {
        const field = String(e.params.additionalProperty);
        const parentSchema = e.parentSchema as { properties?: Record<string, unknown> } | undefined;
        const known = Object.keys(parentSchema?.properties ?? {});
        message = `unknown field '${field}'${didYouMean(field, known)}`;
        path = [...path, field];
        atKey = true;
        if (opts.unknownFields !== "error") code = "W_SCHEMA_UNKNOWN_FIELD";
        break;
      }
      case "required":
        message = `missing required field '${String(e.params.missingProperty)}'`;
        break;
      case "enum": {
        const allowed = (e.params.allowedValues as unknown[]).map(String);
        message =
          `must be one of ${allowed.join(", ")} ` +
          `(got ${show(value)})${typeof value === "string" ? didYouMean(value, allowed) : ""}`;
        break;
      }
      case "const":
        message = `must be ${show(e.params.allowedValue)} (got ${show(value)})`;
        break;
      case "type":
        message = `must be ${String(e.params.type).replace(/,/g, " or ")} (got ${typeOf(value)} ${show(value)})`;
        break;
      case "anyOf":
      case "oneOf": {
        // A branch whose type fits failed deeper down: those errors say what is wrong; a
        // summary naming the other branches' types ("must be string") would only mislead.
        if (errors.some((x) => x.instancePath.startsWith(`${e.instancePath}/`))) continue;
        const types = altTypes.get(e.instancePath);
        const missing = altMissing.get(e.instancePath);
        message = missing?.size
          ? `missing required field ${[...missing].map((m) => `'${m}'`).join(" or ")}`
          : types?.size
            ? `must be ${[...types].join(" or ")} (got ${typeOf(value)} ${show(value)})`
            : `does not match any allowed form (got ${show(value)})`;
        break;
      }
      case "pattern":
        message = `${show(value)} does not match the pattern ${String(e.params.pattern)}`;
        break;
      default:
        message = `${e.message ?? "is invalid"} (got ${show(value)})`;
    }
    const loc = opts.source
      ? opts.source.locate(path, { key: atKey })
      : { file: opts.file, path: formatJsonPath(path) };
    const key = `${code}|${loc.path}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(diagnostic(code, message, loc));
  }
  return out;
}
