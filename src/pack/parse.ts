import { diagnostic, type Diagnostic } from "../core/errors.js";
import { validateSchema } from "../core/schema.js";
import { formatJsonPath, SourceDoc } from "../core/yaml-source.js";
import { findSeedProblems } from "./seed-hygiene.js";
import { safeString } from "../core/safe-string.js";

export const FULL_SHA = /^[0-9a-f]{40}$/;

export interface PackEntry {
  /** 0-based position in `plugins`. */
  index: number;
  /** How errors name the entry: `'name or repo'`, else `#n` (1-based). */
  label: string;
  name?: string;
  repo?: string;
  ref: string;
  subdir?: string;
  /** name or repo, plus `/subdir` when both repo and subdir are set. */
  display: string;
  /** `repo[/subdir]` when a repo is given; bare names resolve through the index. */
  installIdentifier?: string;
}

export interface Pack {
  name: string;
  description: string;
  author: string;
  version: string;
  plugins: PackEntry[];
  config: Record<string, Record<string, unknown>>;
  skills: string[];
}

export interface PackParse {
  file: string;
  pack?: Pack;
  diagnostics: Diagnostic[];
}

function s(v: unknown): string {
  return v === undefined || v === null ? "" : safeString(v);
}

function trimSlashes(v: string): string {
  return v.replace(/^\/+|\/+$/g, "");
}

/** How errors name entry i: its name or repo, else its 1-based position. */
function entryLabel(rawPlugins: unknown[], i: number): string {
  const e = rawPlugins[i] as Record<string, unknown> | undefined;
  const n = e && typeof e === "object" ? (e.name ?? e.repo ?? e.source) : undefined;
  return typeof n === "string" && n.trim() ? `'${n.trim()}'` : `#${i + 1}`;
}

/** Schema findings as pack codes; entry errors name the entry, a bad ref gets its own code. */
function schemaDiagnostics(data: Record<string, unknown>, src: SourceDoc, rawPlugins: unknown[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const d of validateSchema("pack", data, { source: src, unknownFields: "warn" })) {
    const m = /^plugins\[(\d+)\](.*)$/.exec(d.path ?? "");
    if (m && d.severity === "error") {
      const i = Number(m[1]);
      const isRef = /^\.(ref|version)$/.test(m[2] ?? "");
      if (isRef) {
        const e = rawPlugins[i] as Record<string, unknown>;
        const ref = e.ref ?? e.version;
        out.push(
          diagnostic(
            "E_PACK_REF_NOT_SHA",
            `pack plugin entry ${entryLabel(rawPlugins, i)} has ref ${JSON.stringify(ref)}: refs must be ` +
              "exact 40-character commit SHAs (tags and branch names are rejected)",
            { file: d.file, line: d.line, col: d.col, path: d.path },
          ),
        );
        continue;
      }
      out.push({
        ...d,
        code: "E_PACK_INVALID",
        message: `pack plugin entry ${entryLabel(rawPlugins, i)}: ${d.message}`,
      });
      continue;
    }
    out.push(d.severity === "error" ? { ...d, code: "E_PACK_INVALID" } : d);
  }
  return out;
}

/** Per-plugin config seeds; reserved or secret-shaped keys are reported. */
function readConfigSeeds(
  data: Record<string, unknown>,
  src: SourceDoc,
  diagnostics: Diagnostic[],
): Record<string, Record<string, unknown>> {
  const config: Record<string, Record<string, unknown>> = {};
  if (!data.config || typeof data.config !== "object" || Array.isArray(data.config)) return config;
  for (const [id, seed] of Object.entries(data.config as Record<string, unknown>)) {
    if (!seed || typeof seed !== "object" || Array.isArray(seed)) continue;
    for (const f of findSeedProblems(seed)) {
      const msg =
        f.code === "E_PACK_SEED_RESERVED"
          ? `pack config for plugin '${id}' sets reserved key '${formatJsonPath(f.path)}': packs cannot ` +
            "pre-grant capabilities or trust gates"
          : `pack config for plugin '${id}' sets secret-shaped key '${formatJsonPath(f.path)}': secrets never ` +
            "travel in packs";
      diagnostics.push(diagnostic(f.code, msg, src.locate(["config", id, ...f.path], { key: true })));
    }
    config[id] = seed as Record<string, unknown>;
  }
  return config;
}

function readEntries(rawPlugins: unknown[]): PackEntry[] {
  const plugins: PackEntry[] = [];
  rawPlugins.forEach((e, index) => {
    if (!e || typeof e !== "object" || Array.isArray(e)) return;
    const o = e as Record<string, unknown>;
    const name = typeof o.name === "string" && o.name.trim() ? o.name.trim() : undefined;
    const repoRaw = typeof o.repo === "string" ? o.repo : typeof o.source === "string" ? o.source : undefined;
    const repo = repoRaw?.trim().replace(/^github:/, "") || undefined;
    const subdir =
      typeof o.subdir === "string" && trimSlashes(o.subdir.trim()) ? trimSlashes(o.subdir.trim()) : undefined;
    const ref = s(o.ref ?? o.version)
      .trim()
      .toLowerCase();
    // A name is shown as is; a repo is shown with its subdirectory (several plugins of one monorepo).
    const display = name ?? (repo ? `${repo}${subdir ? `/${subdir}` : ""}` : `#${index + 1}`);
    plugins.push({
      index,
      label: entryLabel(rawPlugins, index),
      name,
      repo,
      ref,
      subdir,
      display,
      installIdentifier: repo ? `${repo}${subdir ? `/${subdir}` : ""}` : undefined,
    });
  });
  return plugins;
}

/**
 * Parse and check a hermes-pack.yaml: schema errors positioned, then
 * the named rules (40-hex refs per entry, seed hygiene at any depth), all reported together.
 */
export function parsePackText(text: string, file: string): PackParse {
  const src = new SourceDoc(text, file);
  const diagnostics: Diagnostic[] = [...src.errors];
  if (!src.ok) return { file, diagnostics };
  const raw = src.value;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    diagnostics.push(diagnostic("E_PACK_INVALID", `pack ${file} must be a YAML mapping`, { file, line: 1, col: 1 }));
    return { file, diagnostics };
  }
  const data = raw as Record<string, unknown>;
  const sugar =
    data.pack && typeof data.pack === "object" && !Array.isArray(data.pack)
      ? (data.pack as Record<string, unknown>)
      : undefined;
  const head = sugar ?? data;
  const rawPlugins = Array.isArray(data.plugins) ? data.plugins : [];
  diagnostics.push(...schemaDiagnostics(data, src, rawPlugins));
  const config = readConfigSeeds(data, src, diagnostics);
  const plugins = readEntries(rawPlugins);
  const skills = Array.isArray(data.skills)
    ? data.skills
        .map(s)
        .map((x) => x.trim())
        .filter(Boolean)
    : [];
  const pack: Pack = {
    name: s(head.name).trim(),
    description: s(head.description),
    author: s(head.author),
    version: s(head.version),
    plugins,
    config,
    skills,
  };
  return { file, pack, diagnostics };
}
