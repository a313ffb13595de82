import { isContainedRelativePath } from "../core/contain.js";
import { diagnostic, type Diagnostic } from "../core/errors.js";
import { safeString } from "../core/safe-string.js";
import { validateSchema } from "../core/schema.js";
import { didYouMean } from "../core/suggest.js";
import { SourceDoc } from "../core/yaml-source.js";
import { requiresHermesProblem } from "./requires-hermes.js";
import { CAPABILITY_IDS, isCapabilityId, type CapabilityId } from "../contracts/capabilities.js";
import { PLUGIN_KINDS, type PluginKind } from "../contracts/plugin-record.js";
import { logQuietFields, manifestSha256, vcsFolderOf } from "./files.js";

export {
  findManifestFile,
  inferKind,
  isPluginFolder,
  logQuietFields,
  MANIFEST_FILES,
  manifestSha256,
  PLUGIN_FOLDER_FILES,
  readManifestFile,
  readManifestText,
  vcsFolderOf,
  VCS_DIRS,
} from "./files.js";

/** One constant for the whole code base (issues theme: several disagreeing copies). */
export const SUPPORTED_MANIFEST_VERSION = 2;

export interface RequiresEnv {
  name: string;
  description?: string;
  url?: string;
  secret?: boolean;
}

export interface RequiredPlugin {
  id: string;
  version_range: string | null;
}

export interface ConfigSchemaEntry {
  type?: string;
  description?: string;
  default?: unknown;
  required?: boolean;
  [k: string]: unknown;
}

export interface PluginManifest {
  name: string;
  version: string;
  description: string;
  author: string;
  kind: PluginKind;
  /** Whether `kind` was written in the manifest (absent kinds may be inferred from the entry). */
  kindDeclared: boolean;
  label: string;
  requires_env: RequiresEnv[];
  optional_env: RequiresEnv[];
  provides_tools: string[];
  provides_hooks: string[];
  /** hermes-kit: middleware kinds this plugin registers (gives each an order slot in the lock). */
  provides_middleware: string[];
  hooks: string[];
  manifest_version: number;
  api_version: number | null;
  requires_plugins: RequiredPlugin[];
  python_dependencies: string[];
  /** pip requirement strings a Python plugin's virtual environment is built from (app/python-envs.ts). */
  pip_dependencies: string[];
  config_schema: Record<string, ConfigSchemaEntry>;
  license: string;
  homepage: string;
  tags: string[];
  capabilities: CapabilityId[];
  emits: string[];
  listens: string[];
  requires_hermes: string;
  /** Our own: the ES module entry, relative to the plugin folder. */
  main: string | undefined;
  /** Our own: fail-closed plugin (the runtime will not start without it). */
  required: boolean;
}

export interface ManifestParse {
  file: string;
  /** sha256 of the manifest bytes, recorded in the lock. */
  sha256: string;
  manifest?: PluginManifest;
  diagnostics: Diagnostic[];
  /** Unknown fields of a version-1 manifest: not problems at load time, shown by `plugins validate`. */
  ignoredFields: Diagnostic[];
}

/** config_schema type names and their aliases, lowercased. */
const CONFIG_SCHEMA_TYPES = new Set([
  "str",
  "string",
  "int",
  "integer",
  "float",
  "number",
  "bool",
  "boolean",
  "list",
  "array",
  "dict",
  "object",
]);

/** Fields the original's own plugins ship that its loader ignores (memory plugins' `profile_clone`). */
const ORIGINAL_EXTRA_FIELDS = new Set(["profile_clone"]);

/** Fields whose schema errors make the manifest unusable; every other field is coerced with a warning. */
const FATAL_FIELDS = new Set(["name", "main"]);

function str(v: unknown): string {
  if (v === null || v === undefined) return "";
  return typeof v === "string" ? v : safeString(v);
}

function strList(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  return v.filter((x) => x !== null && x !== undefined && typeof x !== "object").map((x) => safeString(x));
}

function envList(v: unknown): RequiresEnv[] {
  // Real manifests use strings, {name: …} items, and occasionally a mapping NAME → description.
  if (v && typeof v === "object" && !Array.isArray(v)) {
    return Object.entries(v as Record<string, unknown>).map(([name, d]) =>
      d && typeof d === "object" ? { ...(d as object), name } : { name, description: d === null ? undefined : str(d) },
    );
  }
  if (!Array.isArray(v)) return [];
  const out: RequiresEnv[] = [];
  for (const item of v) {
    if (typeof item === "string" && item.trim()) out.push({ name: item.trim() });
    else if (item && typeof item === "object" && typeof (item as { name?: unknown }).name === "string") {
      const o = item as Record<string, unknown>;
      out.push({
        name: safeString(o.name),
        description: o.description === undefined ? undefined : str(o.description),
        url: o.url === undefined ? undefined : str(o.url),
        secret: o.secret === true,
      });
    }
  }
  return out;
}

function authorOf(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object" && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    return ["name", "email", "url"]
      .map((k) => o[k])
      .filter((x) => typeof x === "string" && x)
      .join(", ");
  }
  return safeString(v);
}

function intOrNull(v: unknown): number | null {
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "string" && /^\d+$/.test(v.trim())) return Number(v.trim());
  return null;
}

/**
 * Schema findings into `diagnostics`; returns the unknown fields a version-1 manifest may carry and
 * the fields ignored without a word (logged at debug by `logQuietFields`).
 */
function schemaFindings(
  data: Record<string, unknown>,
  src: SourceDoc,
  manifestVersion: number,
  diagnostics: Diagnostic[],
): { ignoredFields: Diagnostic[]; quietFields: string[] } {
  const quietFields: string[] = [];
  const ignoredFields: Diagnostic[] = [];
  for (const d of validateSchema("plugin-manifest", data, { source: src })) {
    const field = d.path?.split(/[.[]/)[0] ?? "";
    // As the original: unknown top-level fields of a version-1 manifest, and fields the original's
    // own plugins carry, are not problems; they are logged at debug only.
    if (
      d.code === "W_SCHEMA_UNKNOWN_FIELD" &&
      d.path === field &&
      (manifestVersion < 2 || ORIGINAL_EXTRA_FIELDS.has(field))
    ) {
      quietFields.push(field);
      if (!ORIGINAL_EXTRA_FIELDS.has(field)) ignoredFields.push(d);
      continue;
    }
    // kind gets one sentence of its own below; the schema's pattern message says nothing useful.
    if (field === "kind" && d.severity === "error") continue;
    if (d.severity === "error" && !FATAL_FIELDS.has(field)) {
      diagnostics.push({
        ...d,
        code: "W_MANIFEST_COERCED",
        severity: "warning",
        message: `${d.message}; ignored or coerced`,
      });
    } else diagnostics.push(d);
  }
  return { ignoredFields, quietFields };
}

/** An unknown kind is coerced to standalone with a suggestion. */
function readKind(
  data: Record<string, unknown>,
  src: SourceDoc,
  diagnostics: Diagnostic[],
): { kind: PluginKind; rawKind: string } {
  const rawKind = typeof data.kind === "string" ? data.kind.trim().toLowerCase() : "";
  const knownKind = (PLUGIN_KINDS as readonly string[]).includes(rawKind);
  const kind: PluginKind = knownKind ? (rawKind as PluginKind) : "standalone";
  if (data.kind !== undefined && data.kind !== null && !knownKind) {
    diagnostics.push(
      diagnostic(
        "W_MANIFEST_COERCED",
        `unknown kind ${JSON.stringify(data.kind)}; treating as 'standalone' ` +
          `(known: ${PLUGIN_KINDS.join(", ")})${didYouMean(safeString(data.kind), PLUGIN_KINDS)}`,
        src.locate(["kind"]),
      ),
    );
  }
  return { kind, rawKind };
}

/** `main` must stay inside the plugin folder and out of version-control metadata. */
function readMain(data: Record<string, unknown>, src: SourceDoc, diagnostics: Diagnostic[]): string | undefined {
  if (typeof data.main !== "string") return undefined;
  const vcs = vcsFolderOf(data.main.trim());
  if (vcs) {
    diagnostics.push(
      diagnostic(
        "E_MANIFEST_ENTRY_IN_VCS",
        `main ${JSON.stringify(data.main)} is inside ${vcs}/, version-control metadata, not part of the plugin`,
        src.locate(["main"]),
      ),
    );
  } else if (isContainedRelativePath(data.main.trim())) return data.main.trim();
  else {
    diagnostics.push(
      diagnostic(
        "E_MANIFEST_PATH_ESCAPE",
        `main ${JSON.stringify(data.main)} must be a path inside the plugin folder`,
        src.locate(["main"]),
      ),
    );
  }
  return undefined;
}

function readRequiredPlugins(data: Record<string, unknown>): RequiredPlugin[] {
  const requiresPlugins: RequiredPlugin[] = [];
  if (!Array.isArray(data.requires_plugins)) return requiresPlugins;
  for (const item of data.requires_plugins) {
    if (typeof item === "string" && item.trim()) requiresPlugins.push({ id: item.trim(), version_range: null });
    else if (
      item &&
      typeof item === "object" &&
      typeof (item as { id?: unknown }).id === "string" &&
      (item as { id: string }).id.trim()
    ) {
      const vr = (item as { version_range?: unknown }).version_range;
      requiresPlugins.push({
        id: (item as { id: string }).id.trim(),
        version_range: vr === undefined || vr === null ? null : safeString(vr),
      });
    }
  }
  return requiresPlugins;
}

/** Known capabilities, deduplicated; an unknown one is dropped with a warning unless the schema already reported it. */
function readCapabilities(data: Record<string, unknown>, src: SourceDoc, diagnostics: Diagnostic[]): CapabilityId[] {
  const capabilities: CapabilityId[] = [];
  if (!Array.isArray(data.capabilities)) return capabilities;
  data.capabilities.forEach((c, i) => {
    const id = typeof c === "string" ? c.trim() : c;
    if (isCapabilityId(id)) {
      if (!capabilities.includes(id)) capabilities.push(id);
    } else if (!diagnostics.some((d) => d.path === `capabilities[${i}]`)) {
      diagnostics.push(
        diagnostic(
          "W_MANIFEST_COERCED",
          `unknown capability ${JSON.stringify(c)} dropped (known: ${CAPABILITY_IDS.join(", ")})`,
          src.locate(["capabilities", i]),
        ),
      );
    }
  });
  return capabilities;
}

function readConfigSchema(
  data: Record<string, unknown>,
  src: SourceDoc,
  diagnostics: Diagnostic[],
): Record<string, ConfigSchemaEntry> {
  const configSchema: Record<string, ConfigSchemaEntry> = {};
  if (!data.config_schema || typeof data.config_schema !== "object" || Array.isArray(data.config_schema))
    return configSchema;
  for (const [k, v] of Object.entries(data.config_schema as Record<string, unknown>)) {
    if (!v || typeof v !== "object" || Array.isArray(v)) continue;
    const entry = { ...(v as ConfigSchemaEntry) };
    configSchema[k] = entry;
    if (entry.type !== undefined && !CONFIG_SCHEMA_TYPES.has(safeString(entry.type).toLowerCase())) {
      diagnostics.push(
        diagnostic(
          "W_MANIFEST_COERCED",
          `config_schema.${k}: unknown type ${JSON.stringify(entry.type)}; its type check is skipped`,
          src.locate(["config_schema", k, "type"]),
        ),
      );
    }
  }
  return configSchema;
}

/** A manifest_version above what this runtime supports loads anyway, with a warning. */
function warnNewerVersion(data: Record<string, unknown>, src: SourceDoc, diagnostics: Diagnostic[]): void {
  if (data.manifest_version !== undefined) {
    const mv = intOrNull(data.manifest_version);
    if (mv !== null && mv > SUPPORTED_MANIFEST_VERSION) {
      diagnostics.push(
        diagnostic(
          "W_MANIFEST_VERSION_NEWER",
          `manifest_version ${mv} is newer than this runtime supports (${SUPPORTED_MANIFEST_VERSION}); loading anyway`,
          src.locate(["manifest_version"]),
        ),
      );
    }
  }
}

/** `python_dependencies`, `pip_dependencies`: the non-empty strings of the list, trimmed; anything else is ignored. */
function pythonDependencies(v: unknown): string[] {
  return (Array.isArray(v) ? v : [])
    .filter((x): x is string => typeof x === "string")
    .map((x) => x.trim())
    .filter(Boolean);
}

export function parseManifestText(text: string, file: string, dirName: string): ManifestParse {
  const { parse, quietFields } = parseManifestParts(text, file, dirName);
  logQuietFields(file, quietFields);
  return parse;
}

/** A parse and the fields it ignored quietly, kept apart so that the parse cache can store both. */
export function parseManifestParts(
  text: string,
  file: string,
  dirName: string,
): { parse: ManifestParse; quietFields: string[] } {
  const sha256 = manifestSha256(text);
  const src = new SourceDoc(text, file);
  const diagnostics: Diagnostic[] = [...src.errors];
  if (!src.ok) return { parse: { file, sha256, diagnostics, ignoredFields: [] }, quietFields: [] };
  const raw = src.value ?? {};
  if (typeof raw !== "object" || Array.isArray(raw)) {
    diagnostics.push(
      diagnostic(
        "E_MANIFEST_NOT_MAPPING",
        `plugin.yaml must be a mapping (got ${Array.isArray(raw) ? "a list" : typeof raw})`,
        {
          file,
          line: 1,
          col: 1,
        },
      ),
    );
    return { parse: { file, sha256, diagnostics, ignoredFields: [] }, quietFields: [] };
  }
  const data = raw as Record<string, unknown>;

  const manifestVersion = data.manifest_version === undefined ? 1 : (intOrNull(data.manifest_version) ?? 1);
  const { ignoredFields, quietFields } = schemaFindings(data, src, manifestVersion, diagnostics);
  warnNewerVersion(data, src, diagnostics);

  const { kind, rawKind } = readKind(data, src, diagnostics);
  const main = readMain(data, src, diagnostics);
  const requiresPlugins = readRequiredPlugins(data);
  const capabilities = readCapabilities(data, src, diagnostics);
  const configSchema = readConfigSchema(data, src, diagnostics);
  const manifest: PluginManifest = {
    name: typeof data.name === "string" && data.name.trim() ? data.name.trim() : dirName,
    version: str(data.version),
    description: str(data.description),
    author: authorOf(data.author),
    kind,
    kindDeclared: rawKind !== "",
    label: str(data.label),
    requires_env: envList(data.requires_env),
    optional_env: envList(data.optional_env),
    provides_tools: strList(data.provides_tools),
    provides_hooks: strList(data.provides_hooks),
    provides_middleware: strList(data.provides_middleware),
    hooks: strList(data.hooks),
    manifest_version: manifestVersion,
    api_version: intOrNull(data.api_version),
    requires_plugins: requiresPlugins,
    python_dependencies: pythonDependencies(data.python_dependencies),
    pip_dependencies: pythonDependencies(data.pip_dependencies),
    config_schema: configSchema,
    license: str(data.license),
    homepage: str(data.homepage),
    tags: strList(data.tags),
    capabilities,
    emits: strList(data.emits),
    listens: strList(data.listens),
    requires_hermes: str(data.requires_hermes).trim(),
    main,
    required: data.required === true,
  };
  const tooNew = requiresHermesProblem(manifest.requires_hermes);
  if (tooNew)
    diagnostics.push(
      diagnostic("W_PLUGIN_REQUIRES_HERMES", `${tooNew}; the plugin is not loaded`, src.locate(["requires_hermes"])),
    );
  return { parse: { file, sha256, manifest, diagnostics, ignoredFields }, quietFields };
}
