import { stringify } from "yaml";
import { loadConfig } from "../config/config-file.js";
import { enableStateOf, pluginEntry, readPluginLists } from "../config/plugin-lists.js";
import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { formatJsonPath } from "../core/yaml-source.js";
import { NIX_LINK_PREFIX } from "../contracts/plugin-record.js";
import { scanRoot, type Candidate } from "../discovery/scan.js";
import { readMetadata } from "../install/metadata.js";
import { FULL_SHA, parsePackText } from "./parse.js";
import { findSeedProblems, sanitizeSeed } from "./seed-hygiene.js";

/**
 * `hermes plugins pack export`: the git-installed plugins of a home as a
 * hermes-pack.yaml that reinstalls them at the exact revisions they are at now.
 *
 * - Candidates: the plugins of `$HERMES_HOME/plugins` (top-level folders and `nix-managed-*`
 *   links; category folders' children too), in key order; `--enabled-only` keeps enabled ones.
 * - A plugin with a metadata record (source + 40-hex revision) becomes `{name, repo, subdir?,
 *   ref}`; the revision is exported even for unpinned installs, so the pack pins it.
 *   `https://github.com/<o>/<r>[.git]` is written as `<o>/<r>`; any other URL verbatim.
 * - Plugins without git provenance (local folders, Nix-managed links, category children) are
 *   listed as `# WARNING (not exported): …` lines, and the same warnings go to stderr.
 * - Config: a sanitized copy of `plugins.entries.<key>` (reserved keys — grants, consent,
 *   `allow_*` — dropped silently; secret-shaped keys dropped at any depth with a warning).
 * - Output is a function of the home's state only (no dates, no machine names): the same state
 *   gives the same bytes.
 */

export const DEFAULT_PACK_NAME = "my-hermes-pack";
export const EXPORT_DESCRIPTION = "Exported by `hermes plugins pack export`.";

export interface ExportedPlugin {
  key: string;
  name: string;
  /** Folder under the plugins dir (the metadata key). */
  folder: string;
  dir: string;
  source: string;
  /** The clone URL part of the source (before `#`). */
  url: string;
  repo: string;
  subdir?: string;
  revision: string;
  pinned: boolean;
  config?: Record<string, unknown>;
}

export interface PackExport {
  yaml: string;
  warnings: string[];
  plugins: ExportedPlugin[];
  /** The pack document as an object (what `yaml` serializes). */
  doc: Record<string, unknown>;
}

export interface ExportOptions {
  paths: HomePaths;
  enabledOnly?: boolean;
  name?: string;
}

/** `https://github.com/o/r(.git)` → `o/r`; other URLs unchanged. */
export function repoOfUrl(url: string): string {
  const m = /^https:\/\/github\.com\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/i.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
}

export function splitSource(source: string): { url: string; subdir?: string } {
  const i = source.indexOf("#");
  if (i < 0) return { url: source };
  const sub = source.slice(i + 1).replace(/^\/+|\/+$/g, "");
  return { url: source.slice(0, i), ...(sub ? { subdir: sub } : {}) };
}

function byKey(a: Candidate, b: Candidate): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

type InstallRecord = Awaited<ReturnType<typeof readMetadata>>[string];
type Config = Parameters<typeof pluginEntry>[0];

/** The git record a candidate reinstalls from, or the warning that says why it cannot be exported. */
function gitProvenance(c: Candidate, folder: string, rec: InstallRecord | undefined): InstallRecord | string {
  if (c.dirName.startsWith(NIX_LINK_PREFIX)) {
    return `${c.key}: managed by the deployment (${c.dirName} link) — declare it in the deployment, not in a pack.`;
  }
  if (c.status === "dangling" || c.status === "unreadable") {
    return `${c.key}: ${c.status === "dangling" ? "a dangling link" : "unreadable"} (${c.path}) — not exported.`;
  }
  if (!rec || !FULL_SHA.test(rec.revision) || !rec.source) {
    return (
      `${c.key}: no Git provenance (` +
      `${
        c.category
          ? `inside the category folder '${folder}'`
          : "local folder, or installed " + "before install metadata existed"
      }` +
      ") — listed as a comment, not installable from this pack."
    );
  }
  return rec;
}

/** One exported plugin: its pinned source and its config seed with secret-shaped keys dropped (and warned). */
function exportedPlugin(
  c: Candidate,
  folder: string,
  rec: InstallRecord,
  config: Config,
  warnings: string[],
): ExportedPlugin {
  const { url, subdir } = splitSource(rec.source);
  const seedRaw = pluginEntry(config, c.key);
  for (const f of findSeedProblems(seedRaw)) {
    if (f.code === "E_PACK_SEED_SECRET")
      warnings.push(
        `${c.key}: config key '${formatJsonPath(f.path)}' looks like a secret — not exported (secrets ` +
          "never travel in packs).",
      );
  }
  const seed = sanitizeSeed(seedRaw) as Record<string, unknown>;
  return {
    key: c.key,
    name: c.name,
    folder,
    dir: c.path,
    source: rec.source,
    url,
    repo: repoOfUrl(url),
    ...(subdir ? { subdir } : {}),
    revision: rec.revision.toLowerCase(),
    pinned: rec.pinned,
    ...(Object.keys(seed).length ? { config: seed } : {}),
  };
}

/** The pack document: every exported plugin at its revision, and the config seeds that are not empty. */
function packDocument(name: string, plugins: readonly ExportedPlugin[]): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    name,
    description: EXPORT_DESCRIPTION,
    version: "1.0.0",
    plugins: plugins.map((p) => ({
      name: p.key,
      repo: p.repo,
      ...(p.subdir ? { subdir: p.subdir } : {}),
      ref: p.revision,
    })),
  };
  const cfg: Record<string, unknown> = {};
  for (const p of plugins) if (p.config) cfg[p.key] = p.config;
  if (Object.keys(cfg).length) doc.config = cfg;
  return doc;
}

export async function exportPack(o: ExportOptions): Promise<PackExport> {
  const name = (o.name ?? DEFAULT_PACK_NAME).trim();
  if (!name) throw new HermesError("E_USAGE", { message: "--name must not be empty" });
  const config = (await loadConfig(o.paths.config)).value;
  const lists = readPluginLists(config);
  const meta = await readMetadata(o.paths.installMetadata);
  const { candidates } = await scanRoot(o.paths.plugins, "user");
  const warnings: string[] = [];
  const plugins: ExportedPlugin[] = [];
  for (const c of [...candidates].sort(byKey)) {
    if (o.enabledOnly && enableStateOf([c.key, c.name], lists) !== "enabled") continue;
    const folder = c.category ?? c.dirName;
    const rec = c.category ? undefined : meta[c.dirName];
    const exportable = gitProvenance(c, folder, rec);
    if (typeof exportable === "string") {
      warnings.push(exportable);
      continue;
    }
    plugins.push(exportedPlugin(c, folder, exportable, config, warnings));
  }
  if (!plugins.length) {
    throw new HermesError("E_PACK_EXPORT_EMPTY", {
      message:
        `nothing to export from ${o.paths.plugins}: no${o.enabledOnly ? " enabled" : ""} plugin was installed ` +
        "from git" +
        `${
          warnings.length
            ? ` (${warnings.length} plugin(s) left ` + `out: ${warnings.map((w) => w.split(":")[0]).join(", ")})`
            : ""
        }`,
    });
  }
  const doc = packDocument(name, plugins);
  const head = warnings.map((w) => `# WARNING (not exported): ${w.replace(/\s+/g, " ")}`).join("\n");
  const body = stringify(doc, { lineWidth: 0, indentSeq: true });
  const yaml = `${head ? `${head}\n` : ""}${body}`;
  // The export must be a pack this version installs; a failure here is a bug, not a user error.
  const check = parsePackText(yaml, "exported pack").diagnostics.filter((d) => d.severity === "error");
  if (check.length)
    throw new HermesError("E_INTERNAL", {
      message: `the exported pack does not validate: ${check.map((d) => d.message).join("; ")}`,
    });
  return { yaml, warnings, plugins, doc };
}
