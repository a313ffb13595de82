import { dirname, isAbsolute, resolve } from "node:path";
import { readTextCappedIfExists, SIZE_LIMITS } from "../core/size-limit.js";
import { diagnostic, HermesError, type Diagnostic } from "../core/errors.js";
import { validateSchema } from "../core/schema.js";
import { sortKeys } from "../core/canonical-json.js";
import { SourceDoc } from "../core/yaml-source.js";

export type ListPolicy = "union" | "replace";

export interface SpecPlugin {
  /** Absolute folder path. */
  path: string;
  enable: boolean;
  grants: string[];
  settings: Record<string, unknown>;
  required: boolean;
  /** The key the entry expects, checked against the manifest. */
  key?: string;
  /** JSON path of the entry in the spec, for positioned errors. */
  at: Array<string | number>;
}

export interface DeploySpec {
  file: string;
  text: string;
  source: SourceDoc;
  home?: string;
  plugins: SpecPlugin[];
  npmPackages: SpecPlugin[];
  settings: Record<string, unknown>;
  listPolicy: ListPolicy;
  /** Gateway event hook folders (absolute), loaded from where they are. */
  eventHooks: string[];
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function entries(raw: unknown, base: string, field: "plugins" | "npmPackages"): SpecPlugin[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((e, i) => {
    if (!e || typeof e !== "object" || typeof (e as { path?: unknown }).path !== "string") return [];
    const o = e as Record<string, unknown>;
    const p = String(o.path);
    return [
      {
        path: isAbsolute(p) ? p : resolve(base, p),
        enable: o.enable !== false,
        grants: Array.isArray(o.grants) ? o.grants.filter((g): g is string => typeof g === "string") : [],
        // Declaration order never reaches config.yaml or the lock: settings keys are kept sorted.
        settings: isMapping(o.settings) ? (sortKeys(o.settings) as Record<string, unknown>) : {},
        required: o.required === true,
        key: typeof o.key === "string" ? o.key : undefined,
        at: [field, i],
      },
    ];
  });
}

/** Parse a deploy spec (YAML or JSON). Problems come back together; nothing is thrown for content. */
export function parseDeploySpec(text: string, file: string): { spec?: DeploySpec; diagnostics: Diagnostic[] } {
  const source = new SourceDoc(text, file);
  const diagnostics: Diagnostic[] = [...source.errors];
  if (!source.ok) return { diagnostics };
  const raw = source.value;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    return {
      diagnostics: [diagnostic("E_SPEC_INVALID", "the deploy spec must be a mapping", { file, line: 1, col: 1 })],
    };
  }
  for (const d of validateSchema("deploy-spec", raw, { source, unknownFields: "error" })) {
    diagnostics.push(d.severity === "error" ? { ...d, code: "E_SPEC_INVALID" } : d);
  }
  const o = raw as Record<string, unknown>;
  const base = dirname(resolve(file));
  const spec: DeploySpec = {
    file: resolve(file),
    text,
    source,
    home: typeof o.home === "string" ? (isAbsolute(o.home) ? o.home : resolve(base, o.home)) : undefined,
    plugins: entries(o.plugins, base, "plugins"),
    npmPackages: entries(o.npmPackages, base, "npmPackages"),
    settings: isMapping(o.settings) ? (sortKeys(o.settings) as Record<string, unknown>) : {},
    listPolicy: o.listPolicy === "replace" ? "replace" : "union",
    eventHooks: Array.isArray(o.eventHooks)
      ? o.eventHooks
          .filter((p): p is string => typeof p === "string")
          .map((p) => (isAbsolute(p) ? p : resolve(base, p)))
      : [],
  };
  return { spec, diagnostics };
}

export async function loadDeploySpec(file: string): Promise<{ spec?: DeploySpec; diagnostics: Diagnostic[] }> {
  const text = await readTextCappedIfExists(resolve(file), SIZE_LIMITS.spec, "E_SPEC_TOO_LARGE");
  if (text === undefined) throw new HermesError("E_FS_READ", { message: `deploy spec ${file} does not exist`, file });
  return parseDeploySpec(text, file);
}
