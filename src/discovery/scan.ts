import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
  type Dirent,
} from "node:fs";
import { basename, join, resolve } from "node:path";
import { diagnostic, hasErrors, HermesError, type Diagnostic } from "../core/errors.js";
import { isContainedRelativePath } from "../core/contain.js";
import { findManifestFile, inferKind, readManifestText } from "../manifest/files.js";
import type { PluginManifest } from "../manifest/parse.js";
import type { ManifestCache } from "../manifest/parse-cache.js";
import { EXCLUSIVE_CATEGORIES } from "./exclusive.js";
import {
  NIX_LINK_PREFIX,
  withoutNixPrefix,
  PYTHON_ENTRY,
  type PluginOrigin,
  type PluginRecord,
  type PluginSource,
} from "../contracts/plugin-record.js";

export type CandidateStatus = "ok" | "invalid" | "dangling" | "unreadable" | "portable";

/** A plugin folder as discovery found it, before precedence and gating decide whether it loads. */
export interface Candidate extends PluginRecord {
  dirName: string;
  category?: string;
  /** The folder after resolving links; absent for dangling links. */
  realPath?: string;
  /** readlink() of `path` when it is a symlink. */
  linkTarget?: string;
  manifestFile?: string;
  manifestSha256?: string;
  manifest?: PluginManifest;
  /** Entry module relative to the plugin folder, when one exists. */
  entry?: string;
  status: CandidateStatus;
  diagnostics: Diagnostic[];
  /** Unknown fields of a version-1 manifest: ignored at load (as the original), reported by `plugins validate`. */
  ignoredFields?: Diagnostic[];
}

export interface ScanOptions {
  /** Top-level names skipped in this root (bundled subsystems with their own discovery). */
  skipTop?: ReadonlySet<string>;
  /** Parses kept by content hash (manifest/parse-cache.ts); without it every manifest is parsed. */
  manifests?: ManifestCache;
  /** Told the real path of each folder with a manifest as soon as it is found (compile starts hashing it). */
  onPluginFolder?: (realPath: string) => void;
}

/**
 * Bundled subsystems with their own discovery; `memory/`, `context_engine/` (exclusive plugins) and
 * `model-providers/` are scanned.
 */
export const BUNDLED_SKIP = new Set(["cron_providers", "computer_use"]);

const ENTRY_CANDIDATES = ["index.js", "index.mjs"];

/**
 * Discovery makes many tiny filesystem calls per plugin; their synchronous forms cost a fraction
 * of a thread-pool round trip each (bench/compile.bench.mjs), and a CLI has nothing to overlap.
 */
function exists(p: string): boolean {
  return existsSync(p);
}

function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/** Skip private folders: dunder names, and dot names (install staging, metadata). */
function skipName(name: string): boolean {
  return name.startsWith(".") || (name.startsWith("__") && name.endsWith("__"));
}

/** One buffer for every sniff: discovery reads the head of up to thousands of entry files. */
const SNIFF = Buffer.allocUnsafe(8192);

function readEntrySource(dir: string, entry: string): string {
  try {
    const fd = openSync(join(dir, entry), "r");
    try {
      const n = readSync(fd, SNIFF, 0, SNIFF.length, 0);
      return SNIFF.toString("utf8", 0, n);
    } finally {
      closeSync(fd);
    }
  } catch {
    return "";
  }
}

function originFor(source: PluginSource, dirName: string, isGit: boolean): PluginOrigin {
  if (source === "bundled") return "bundled";
  if (source === "npm") return "npm";
  if (source === "project") return "project";
  if (dirName.startsWith(NIX_LINK_PREFIX)) return "nix";
  return isGit ? "git" : "local";
}

type FolderOptions = {
  category?: string;
  dirName?: string;
  linkTarget?: string;
  keyOverride?: string;
  manifests?: ManifestCache;
  onPluginFolder?: (realPath: string) => void;
};

type CandidateBase = Pick<Candidate, "dirName" | "category" | "source" | "path" | "linkTarget">;

function keyFor(opts: FolderOptions, dirName: string, name: string): string {
  return opts.keyOverride ?? (opts.category ? `${opts.category}/${dirName}` : name);
}

/** A folder without plugin.yaml: a portable plugin.json package is listed, anything else is no plugin. */
function portableCandidate(
  folder: string,
  source: PluginSource,
  opts: FolderOptions,
  base: CandidateBase,
  realPath: string | undefined,
): Candidate | undefined {
  if (!exists(join(folder, "plugin.json"))) return undefined;
  const { dirName } = base;
  // A flat package is keyed by the name in its plugin.json, not by its folder name.
  let jsonName: string | undefined;
  try {
    const pj = JSON.parse(readFileSync(join(folder, "plugin.json"), "utf8")) as { name?: unknown };
    if (typeof pj.name === "string" && pj.name.trim()) jsonName = pj.name.trim();
  } catch {
    // unreadable plugin.json: keyed by folder, reported below
  }
  const name = jsonName ?? dirName;
  return {
    ...base,
    key: keyFor(opts, dirName, name),
    name,
    origin: originFor(source, dirName, false),
    realPath,
    status: "portable",
    diagnostics: [
      diagnostic(
        "W_DISCOVERY_PORTABLE_PLUGIN",
        "portable plugin.json packages are listed but not loaded by this runtime",
        {
          file: join(folder, "plugin.json"),
        },
      ),
    ],
  };
}

/** A manifest that cannot be read: too large is invalid, any other failure unreadable. */
function unreadableCandidate(
  e: unknown,
  manifestFile: string,
  source: PluginSource,
  opts: FolderOptions,
  base: CandidateBase,
  realPath: string | undefined,
): Candidate {
  const { dirName } = base;
  const tooLarge = e instanceof HermesError && e.code === "E_MANIFEST_TOO_LARGE";
  return {
    ...base,
    key: keyFor(opts, dirName, dirName),
    name: dirName,
    origin: originFor(source, dirName, false),
    realPath,
    manifestFile,
    status: tooLarge ? "invalid" : "unreadable",
    diagnostics: [
      tooLarge
        ? e.toDiagnostic()
        : diagnostic("E_DISCOVERY_UNREADABLE", `cannot read ${manifestFile}: ${(e as Error).message}`, {
            file: manifestFile,
          }),
    ],
  };
}

/** Find the entry module (a Python plugin or a missing entry changes the status) and infer an undeclared kind. */
function resolveEntry(
  folder: string,
  manifestFile: string,
  manifest: PluginManifest,
  status: CandidateStatus,
  diagnostics: Diagnostic[],
): { entry: string | undefined; status: CandidateStatus } {
  let entry: string | undefined;
  const choices = manifest.main ? [manifest.main] : ENTRY_CANDIDATES;
  for (const c of choices) {
    if (isContainedRelativePath(c) && exists(join(folder, c))) {
      entry = c;
      break;
    }
  }
  if (!entry && status === "ok") {
    // A plugin of the original (Python): it runs through the Python bridge (src/runtime/python).
    if (exists(join(folder, PYTHON_ENTRY))) {
      entry = PYTHON_ENTRY;
    } else {
      status = "invalid";
      diagnostics.push(
        diagnostic(
          "E_PLUGIN_NO_ENTRY",
          manifest.main
            ? `entry module '${manifest.main}' does not exist`
            : "no entry module: add index.js (or set main: in plugin.yaml)",
          { file: manifestFile, path: manifest.main ? "main" : undefined },
        ),
      );
    }
  }
  if (!manifest.kindDeclared) {
    const sniff = entry ? readEntrySource(folder, entry) : "";
    const inferred = inferKind(sniff);
    if (inferred) manifest.kind = inferred;
  }
  return { entry, status };
}

/**
 * The fields of a folder's candidate that discovery knows without reading it (a dangling link, an unreadable
 * folder).
 */
function unloadable(
  source: PluginSource,
  path: string,
  dirName: string,
  category: string | undefined,
  linkTarget: string | undefined,
) {
  return { dirName, category, source, origin: originFor(source, dirName, false), path, linkTarget };
}

/** Build the candidate for one folder that is known to hold a manifest file. */
export async function candidateFromFolder(
  folder: string,
  source: PluginSource,
  opts: FolderOptions = {},
): Promise<Candidate | undefined> {
  const dirName = opts.dirName ?? basename(folder);
  const manifestFile = findManifestFile(folder);
  const base = {
    dirName,
    category: opts.category,
    source,
    path: folder,
    linkTarget: opts.linkTarget,
  };
  let realPath: string | undefined;
  try {
    realPath = realpathSync.native(folder);
  } catch {
    realPath = undefined;
  }
  if (!manifestFile) return portableCandidate(folder, source, opts, base, realPath);
  if (realPath) opts.onPluginFolder?.(realPath);
  let text: string;
  try {
    text = readManifestText(manifestFile);
  } catch (e) {
    return unreadableCandidate(e, manifestFile, source, opts, base, realPath);
  }
  // The name a flat plugin falls back to is its folder name without the Nix prefix.
  const fallbackName = withoutNixPrefix(dirName);
  const parsed = opts.manifests
    ? await opts.manifests.parse(text, manifestFile, fallbackName)
    : (await import("../manifest/parse.js")).parseManifestText(text, manifestFile, fallbackName);
  const manifest = parsed.manifest;
  const name = manifest?.name ?? fallbackName;
  const key = keyFor(opts, dirName, name);
  const diagnostics = [...parsed.diagnostics];
  let status: CandidateStatus = hasErrors(diagnostics) || !manifest ? "invalid" : "ok";
  let entry: string | undefined;
  if (manifest) ({ entry, status } = resolveEntry(folder, manifestFile, manifest, status, diagnostics));
  // A plugin in memory/ or context_engine/ is selected by config, not enabled, unless it declares another kind.
  if (manifest && !manifest.kindDeclared && opts.category && EXCLUSIVE_CATEGORIES.has(opts.category))
    manifest.kind = "exclusive";
  // A plugin in model-providers/ registers a model provider profile, as the original's provider discovery loads it.
  if (manifest && !manifest.kindDeclared && opts.category === "model-providers") manifest.kind = "model-provider";
  const isGit = source === "user" && exists(join(folder, ".git"));
  return {
    ...base,
    key,
    name,
    origin: originFor(source, dirName, isGit),
    realPath,
    manifestFile,
    manifestSha256: parsed.sha256,
    manifest,
    entry,
    status,
    diagnostics,
    ...(parsed.ignoredFields.length ? { ignoredFields: parsed.ignoredFields } : {}),
  };
}

async function readDirSorted(dir: string): Promise<Dirent[]> {
  const entries = readdirSync(dir, { withFileTypes: true });
  // Code-point order, independent of locale and of the order the filesystem lists entries in.
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Folders and files outside plugin trees whose content decided what discovery found: the folders it listed or
 * looked into without finding a plugin (a manifest added later changes them), the package.json files it read.
 */
export interface Looked {
  dirs: string[];
  files: string[];
}

export interface ScanResult {
  candidates: Candidate[];
  diagnostics: Diagnostic[];
  looked: Looked;
}

/**
 * Scan one plugin root: sorted children, one category level, symlinks
 * followed, a dangling link or unreadable folder reported as its own candidate, never fatal.
 * Reads manifests only; imports nothing.
 */
export async function scanRoot(root: string, source: PluginSource, opts: ScanOptions = {}): Promise<ScanResult> {
  const candidates: Candidate[] = [];
  const diagnostics: Diagnostic[] = [];
  const looked: Looked = { dirs: [], files: [] };
  const carry = { manifests: opts.manifests, onPluginFolder: opts.onPluginFolder };
  const walk = async (dir: string, depth: number, prefix: string | undefined): Promise<void> => {
    let children: Dirent[];
    try {
      children = await readDirSorted(dir);
    } catch (e) {
      if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return;
      diagnostics.push(
        diagnostic("E_DISCOVERY_UNREADABLE", `cannot read plugin folder ${dir}: ${(e as Error).message}`, {
          file: dir,
        }),
      );
      return;
    }
    looked.dirs.push(dir);
    for (const child of children) {
      if (skipName(child.name)) continue;
      if (depth === 0 && opts.skipTop?.has(child.name)) continue;
      const full = join(dir, child.name);
      let linkTarget: string | undefined;
      if (child.isSymbolicLink()) {
        try {
          linkTarget = readlinkSync(full);
        } catch {
          linkTarget = undefined;
        }
        try {
          const st = statSync(full);
          if (!st.isDirectory()) continue;
        } catch {
          const key = prefix ? `${prefix}/${child.name}` : withoutNixPrefix(child.name);
          candidates.push({
            ...unloadable(source, full, child.name, prefix, linkTarget),
            key,
            name: key,
            status: "dangling",
            diagnostics: [
              diagnostic("E_DISCOVERY_DANGLING_LINK", `${full} points to ${linkTarget ?? "?"}, which does not exist`, {
                file: full,
              }),
            ],
          });
          continue;
        }
      } else if (!child.isDirectory()) continue;
      let cand: Candidate | undefined;
      try {
        cand = await candidateFromFolder(full, source, { ...carry, category: prefix, dirName: child.name, linkTarget });
      } catch (e) {
        candidates.push({
          ...unloadable(source, full, child.name, prefix, linkTarget),
          key: prefix ? `${prefix}/${child.name}` : child.name,
          name: child.name,
          status: "unreadable",
          diagnostics: [
            diagnostic("E_DISCOVERY_UNREADABLE", `cannot read ${full}: ${(e as Error).message}`, { file: full }),
          ],
        });
        continue;
      }
      if (cand) candidates.push(cand);
      else if (depth === 0) await walk(full, 1, child.name);
      else looked.dirs.push(full);
    }
  };
  await walk(resolve(root), 0, undefined);
  return { candidates, diagnostics, looked };
}

/**
 * npm plugin packages: `<home>/node_modules/[@scope/]pkg` whose package.json has a
 * `hermes-plugin` field: `true` (plugin.yaml at the package root) or a relative folder.
 */
export async function scanNodeModules(dir: string, manifests?: ManifestCache): Promise<ScanResult> {
  const candidates: Candidate[] = [];
  const diagnostics: Diagnostic[] = [];
  const looked: Looked = { dirs: [], files: [] };
  const pkgDirs: string[] = [];
  let top: Dirent[];
  try {
    top = await readDirSorted(dir);
  } catch {
    return { candidates, diagnostics, looked };
  }
  looked.dirs.push(dir);
  for (const e of top) {
    if (e.name.startsWith(".")) continue;
    if (e.name.startsWith("@")) {
      const scope = join(dir, e.name);
      const scoped = await readDirSorted(scope).catch(() => undefined);
      if (scoped) looked.dirs.push(scope);
      for (const s of scoped ?? []) pkgDirs.push(join(scope, s.name));
    } else pkgDirs.push(join(dir, e.name));
  }
  for (const pkgDir of pkgDirs) {
    const r = await candidateFromPackage(pkgDir, manifests);
    if (r.candidate) candidates.push(r.candidate);
    diagnostics.push(...r.diagnostics);
    // Its package.json says whether and where it holds a plugin: an edit to it changes what is found.
    const pj = join(pkgDir, "package.json");
    if (r.packageName !== undefined || exists(pj)) looked.files.push(pj);
    looked.dirs.push(pkgDir);
  }
  return { candidates, diagnostics, looked };
}

/** One npm package folder: its `hermes-plugin` field names where the plugin folder is. */
export async function candidateFromPackage(
  pkgDir: string,
  manifests?: ManifestCache,
): Promise<{ candidate?: Candidate; packageName?: string; diagnostics: Diagnostic[] }> {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as Record<string, unknown>;
  } catch {
    return { diagnostics: [] };
  }
  const packageName = typeof pkg.name === "string" ? pkg.name : basename(pkgDir);
  const field = pkg["hermes-plugin"];
  if (field === undefined || field === false) return { packageName, diagnostics: [] };
  let folder = pkgDir;
  if (typeof field === "string") {
    if (!isContainedRelativePath(field)) {
      return {
        packageName,
        diagnostics: [
          diagnostic(
            "E_MANIFEST_PATH_ESCAPE",
            `package.json "hermes-plugin" ${JSON.stringify(field)} must be a folder inside the package`,
            {
              file: join(pkgDir, "package.json"),
              path: "hermes-plugin",
            },
          ),
        ],
      };
    }
    folder = join(pkgDir, field);
  }
  const candidate = await candidateFromFolder(folder, "npm", { dirName: basename(pkgDir), manifests });
  if (candidate) return { candidate, packageName, diagnostics: [] };
  return {
    packageName,
    diagnostics: [
      diagnostic(
        "E_DISCOVERY_NO_MANIFEST",
        `npm package ${packageName} declares hermes-plugin but ${folder} has no plugin.yaml`,
        { file: join(pkgDir, "package.json") },
      ),
    ],
  };
}
