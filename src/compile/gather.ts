import type { LoadedConfig } from "../config/config-file.js";
import { promises as fsp, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { readTextIfExists } from "../core/atomic-fs.js";
import { readTextCappedIfExists, SIZE_LIMITS } from "../core/size-limit.js";
import { diagnostic, HermesError, type Diagnostic } from "../core/errors.js";
import { envFlag } from "../core/env-flag.js";
import { logger } from "../core/log.js";
import { homePaths, type HomePaths } from "../core/paths.js";
import { discover, sourceRoots, type Discovery } from "../discovery/discover.js";
import { NIX_LINK_PREFIX } from "../contracts/plugin-record.js";
import { candidateFromFolder, candidateFromPackage, type Candidate } from "../discovery/scan.js";
import { loadDeploySpec, type DeploySpec, type SpecPlugin } from "./deploy-spec.js";
import { IntegrityCache } from "./integrity-cache.js";
import { POOL_MIN_TREES, TreePool } from "./tree-hash-pool.js";
import { scanEventHooks, type EventHookScan } from "./event-hooks.js";
import { readLock, type Lock } from "../contracts/lock.js";
import { parseMetadata, type InstallMetadata } from "../contracts/install-metadata.js";
import { ownershipOf, readManaged } from "../config/managed.js";
import type { FileStat, Watch } from "./quick-check.js";
import { ManifestCache } from "../manifest/parse-cache.js";

/** A deploy spec entry resolved to the plugin it names and the link that will expose it. */
export interface SpecTarget {
  entry: SpecPlugin;
  kind: "plugin" | "npm";
  candidate: Candidate;
  /** Link path relative to the home: `plugins/nix-managed-<key>` or `node_modules/<package>`. */
  link: string;
}

/** Everything compile reads from disk; `planCompile` turns it into a plan without touching disk. */
export interface CompileInputs {
  paths: HomePaths;
  configText: string;
  configExists: boolean;
  /** `configText` parsed and schema-checked already, when this process had that parse. */
  configParsed?: LoadedConfig;
  spec?: DeploySpec;
  specTargets: SpecTarget[];
  previous?: Lock;
  managedKind: string | null;
  discovery: Discovery;
  /** realPath → integrity, or an error message when the tree cannot be hashed. */
  integrity: Map<string, { integrity?: string; files?: Record<string, string>; error?: Diagnostic }>;
  /** What the discovery roots were, folded into the inputs hash. */
  env: { roots: string[]; projectPlugins: boolean };
  /** `.install-metadata.json` records by plugin folder name (git origin). */
  gitOrigins: InstallMetadata;
  /** Raw bytes of the lock in force, to detect a no-op. */
  previousText?: string;
  /** The bytes of `.install-metadata.json` this compile read (absent: undefined), for the no-op fingerprint. */
  metadataText?: string;
  /**
   * Ownership recorded by a generation newer than the current one: a compile killed after
   * writing config.yaml but before switching. Items it put in config.yaml are the deployment's.
   */
  pendingOwnership?: { leaves: string[][]; items: Record<string, string[]> };
  /** readlink() of every deployment link path that exists (home-relative path → value). */
  linksOnDisk: Record<string, string>;
  /** readlink() of `<home>/hermes.lock.json` and `<home>/generations/current`, when they are links. */
  pointers: { lock?: string; current?: string };
  diagnostics: Diagnostic[];
  cache: IntegrityCache;
  /** The manifest parses this compile used, saved with `cache` by a compile that applies. */
  manifests: ManifestCache;
  /** Folders and files this compile read, for the next run's no-op check. */
  watch: Watch;
  /** Gateway event hooks of the home and the deploy spec. */
  eventHooks: EventHookScan;
}

export interface GatherOptions {
  home: string;
  specFile?: string;
  managed?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Hash every tree, even immutable store paths and unchanged stat fingerprints. */
  fullHash?: boolean;
  /** Plan against this config.yaml text instead of the file (a dry run of the migration, an edit checked before it is
   * written). */
  configText?: string;
  /** A parse of config.yaml this process already made (the migration's); used when its text is the one read. */
  configParsed?: LoadedConfig;
}

/**
 * The git origins of `.install-metadata.json`, read by install's own reader. A corrupt file does
 * not stop compile (install owns it and refuses to touch it until fixed): it is a warning, and
 * the lock records no git origin until it is fixed.
 */
function readGitOrigins(text: string | undefined, file: string, diagnostics: Diagnostic[]): InstallMetadata {
  try {
    return parseMetadata(text, file);
  } catch (e) {
    if (!(e instanceof HermesError)) throw e;
    diagnostics.push(
      diagnostic("W_INSTALL_METADATA_CORRUPT", `${e.message}; the lock records no git origins until it is fixed`, {
        file: e.file,
        line: e.line,
        col: e.col,
        path: e.path,
      }),
    );
    return {};
  }
}

/** Why a spec target cannot be taken: a declared key the manifest contradicts, or a key already claimed. */
function claimProblem(t: SpecTarget, seen: ReadonlyMap<string, SpecTarget>, spec: DeploySpec): Diagnostic | undefined {
  if (t.entry.key !== undefined && t.entry.key !== t.candidate.key) {
    const from = t.candidate.manifestFile ?? t.entry.path;
    return diagnostic(
      "E_SPEC_KEY_MISMATCH",
      `entry ${t.entry.path} declares key '${t.entry.key}', but ${from} gives the key '${t.candidate.key}'`,
      spec.source.locate([...t.entry.at, "key"]),
    );
  }
  const prev = seen.get(t.candidate.key);
  if (prev) {
    return diagnostic(
      "E_SPEC_DUPLICATE_KEY",
      `plugin key '${t.candidate.key}' is claimed by ${prev.entry.path} and ${t.entry.path}`,
      spec.source.locate([...t.entry.at, "path"]),
    );
  }
  return undefined;
}

async function resolveSpecTargets(
  spec: DeploySpec,
  paths: HomePaths,
): Promise<{ targets: SpecTarget[]; diagnostics: Diagnostic[] }> {
  const targets: SpecTarget[] = [];
  const diagnostics: Diagnostic[] = [];
  const seen = new Map<string, SpecTarget>();
  const add = (t: SpecTarget) => {
    const problem = claimProblem(t, seen, spec);
    if (problem) {
      diagnostics.push(problem);
      return;
    }
    seen.set(t.candidate.key, t);
    targets.push(t);
  };
  for (const entry of spec.plugins) {
    const st = await fsp.stat(entry.path).catch(() => undefined);
    const c = st?.isDirectory() ? await candidateFromFolder(entry.path, "user") : undefined;
    if (!c || !c.manifestFile) {
      diagnostics.push(
        diagnostic(
          "E_SPEC_NO_MANIFEST",
          st ? `${entry.path} has no plugin.yaml` : `${entry.path} does not exist`,
          spec.source.locate([...entry.at, "path"]),
        ),
      );
      continue;
    }
    const link = `plugins/${NIX_LINK_PREFIX}${c.key}`;
    add({
      entry,
      kind: "plugin",
      link,
      candidate: {
        ...c,
        dirName: `${NIX_LINK_PREFIX}${c.key}`,
        path: join(paths.home, link),
        linkTarget: entry.path,
        origin: "nix",
      },
    });
  }
  for (const entry of spec.npmPackages) {
    const r = await candidateFromPackage(entry.path);
    if (!r.candidate) {
      diagnostics.push(
        ...(r.diagnostics.length
          ? r.diagnostics
          : [
              diagnostic(
                "E_SPEC_NO_MANIFEST",
                `${entry.path} is not an npm package with a "hermes-plugin" field`,
                spec.source.locate([...entry.at, "path"]),
              ),
            ]),
      );
      continue;
    }
    const link = `node_modules/${r.packageName}`;
    add({
      entry,
      kind: "npm",
      link,
      candidate: { ...r.candidate, path: join(paths.home, link), linkTarget: entry.path },
    });
  }
  // By key: the order of the spec's entries never changes what is compiled (only plugins.order does).
  targets.sort((a, b) => (a.candidate.key < b.candidate.key ? -1 : a.candidate.key > b.candidate.key ? 1 : 0));
  return { targets, diagnostics };
}

async function loadSpec(
  specFile: string | undefined,
  paths: HomePaths,
  diagnostics: Diagnostic[],
): Promise<{ spec: DeploySpec | undefined; specTargets: SpecTarget[] }> {
  if (!specFile) return { spec: undefined, specTargets: [] };
  const r = await loadDeploySpec(specFile);
  diagnostics.push(...r.diagnostics);
  if (!r.spec) return { spec: r.spec, specTargets: [] };
  const t = await resolveSpecTargets(r.spec, paths);
  diagnostics.push(...t.diagnostics);
  return { spec: r.spec, specTargets: t.targets };
}

async function readPreviousLock(paths: HomePaths, diagnostics: Diagnostic[]): Promise<Lock | undefined> {
  try {
    return await readLock(paths.lock);
  } catch (e) {
    // A broken lock is replaced by the compile; say so rather than refuse.
    const code = e instanceof HermesError && e.code === "E_LOCK_TAMPERED" ? "E_LOCK_TAMPERED" : "E_LOCK_INVALID";
    diagnostics.push({
      ...diagnostic(code, `${(e as HermesError).message}; it will be rewritten`, { file: paths.lock }),
      severity: "warning",
    });
    return undefined;
  }
}

/** Integrity of every winner and conflicting candidate, each real folder hashed once (many: on two threads). */
async function hashCandidates(
  discovery: Discovery,
  cache: IntegrityCache,
  fullHash: boolean | undefined,
  pool: TreePool | undefined,
): Promise<CompileInputs["integrity"]> {
  const integrity: CompileInputs["integrity"] = new Map();
  const toHash = [...discovery.resolution.winners, ...[...discovery.resolution.conflicts.values()].flat()];
  const reals = [...new Set(toHash.flatMap((c) => (c.realPath ? [c.realPath] : [])))];
  const own = async (real: string): Promise<void> => {
    try {
      integrity.set(real, await cache.integrity(real, { full: fullHash }));
    } catch (e) {
      const he =
        e instanceof HermesError
          ? e
          : new HermesError("E_FS_READ", { message: `cannot hash ${real}: ${(e as Error).message}` });
      integrity.set(real, { error: he.toDiagnostic() });
    }
  };
  if (pool) {
    pool.flush();
    // Trees the worker has not started are done here, newest first (the worker goes oldest first).
    const theirs: string[] = [];
    for (const real of [...reals].reverse())
      if (pool.claim(real)) await own(real);
      else theirs.push(real);
    let byWorker = 0;
    for (const real of theirs) {
      const listing = await pool.result(real);
      if (!listing) await own(real);
      else {
        byWorker++;
        await cache.adopt(real, listing, { full: fullHash }).then(
          (h) => integrity.set(real, h),
          () => own(real),
        );
      }
    }
    logger().debug({ trees: reals.length, byWorker }, "plugin trees listed and hashed on two threads");
    return integrity;
  }
  // Bounded concurrency: enough to overlap I/O, few enough not to exhaust file handles.
  const queue = [...reals];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let real = queue.shift(); real; real = queue.shift()) await own(real);
    }),
  );
  return integrity;
}

/** Where the deployment's links (recorded, declared and nix-managed) point now. */
async function readLinksOnDisk(
  paths: HomePaths,
  previous: Lock | undefined,
  specTargets: SpecTarget[],
): Promise<Record<string, string>> {
  const linkPaths = new Set<string>([
    ...(previous?.deployment.links ?? []).map((l) => l.link),
    ...specTargets.map((t) => t.link),
  ]);
  for (const name of await fsp.readdir(paths.plugins).catch(() => [] as string[]))
    if (name.startsWith(NIX_LINK_PREFIX)) linkPaths.add(`plugins/${name}`);
  const linksOnDisk: Record<string, string> = {};
  for (const l of [...linkPaths].sort()) {
    const v = await fsp.readlink(join(paths.home, l)).catch(() => undefined);
    if (v !== undefined) linksOnDisk[l] = v;
  }
  return linksOnDisk;
}

/** Ownership recorded by a generation newer than the current one (an activation that did not finish). */
async function readPendingOwnership(paths: HomePaths): Promise<CompileInputs["pendingOwnership"]> {
  const gens = (await fsp.readdir(paths.generations).catch(() => [] as string[]))
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
  const newest = gens.length ? Math.max(...gens) : undefined;
  const currentGen = await fsp.readlink(join(paths.generations, "current")).then(Number, () => undefined);
  if (!(newest !== undefined && (currentGen === undefined || newest > currentGen))) return undefined;
  const text = await readTextIfExists(join(paths.generations, String(newest), "hermes.lock.json")).catch(
    () => undefined,
  );
  try {
    const d = text ? (JSON.parse(text) as Lock).deployment : undefined;
    if (d) return ownershipOf(d);
  } catch {
    // a torn generation is ignored; it was never current
  }
  return undefined;
}

/** Folders and files whose change makes the compile's inputs stale. */
function watchList(discovery: Discovery, cache: IntegrityCache, specTargets: SpecTarget[]): Watch {
  const roots = discovery.roots.map((r) => r.dir);
  const dirs = new Set<string>(roots);
  const files = new Set<string>();
  // Folders the compile read: one gone when the record is written was removed meanwhile.
  const present = new Set<string>();
  for (const c of discovery.candidates) {
    for (let d = dirname(c.path); roots.some((r) => d.startsWith(r)) && !dirs.has(d); d = dirname(d)) dirs.add(d);
    dirs.add(c.path);
    present.add(c.path);
  }
  const stats = new Map<string, FileStat>();
  for (const [real, entries] of cache.listed) {
    dirs.add(real);
    present.add(real);
    for (const e of entries) {
      const path = join(real, e.rel);
      (e.type === "dir" ? dirs : files).add(path);
      if (e.type === "dir") present.add(path);
      else if (e.type === "file") stats.set(path, e);
    }
  }
  // Folders discovery looked into without finding a plugin, and the package.json files it read.
  for (const d of discovery.looked.dirs) {
    dirs.add(d);
    present.add(d);
  }
  for (const f of discovery.looked.files) files.add(f);
  for (const t of specTargets) dirs.add(t.entry.path);
  return { dirs: [...dirs].sort(), files: [...files].sort(), present: [...present], stats };
}

export async function gatherInputs(opts: GatherOptions): Promise<CompileInputs> {
  const paths = homePaths(resolve(opts.home));
  const diagnostics: Diagnostic[] = [];
  const { spec, specTargets } = await loadSpec(opts.specFile, paths, diagnostics);
  const configText =
    opts.configText ?? (await readTextCappedIfExists(paths.config, SIZE_LIMITS.config, "E_CONFIG_TOO_LARGE"));
  const previousText = await readTextIfExists(paths.lock).catch(() => undefined);
  const previous = await readPreviousLock(paths, diagnostics);
  // Started before discovery so that it is ready when the trees are known; closed whatever happens.
  const likely = likelyTrees(paths, previous);
  const pool = likely >= POOL_MIN_TREES ? TreePool.start(likely * 2 + 64) : undefined;
  try {
    return await gatherWith(opts, paths, diagnostics, { spec, specTargets, configText, previousText, previous }, pool);
  } finally {
    pool?.close();
  }
}

/** Hand a plugin folder found by discovery to the pool's worker, unless the store record answers for it. */
function offerTree(pool: TreePool, cache: IntegrityCache, real: string, full: boolean | undefined): void {
  const o = cache.offer(real, { full });
  if (o) pool.offer(real, o.knownFp);
}

/** How many trees this compile will likely hash: the lock's plugins, or the entries of plugins/ (a first compile). */
function likelyTrees(paths: HomePaths, previous: Lock | undefined): number {
  let entries = 0;
  try {
    entries = readdirSync(paths.plugins).length;
  } catch {
    // no plugins/ folder
  }
  return Math.max(previous?.plugins.length ?? 0, entries);
}

async function gatherWith(
  opts: GatherOptions,
  paths: HomePaths,
  diagnostics: Diagnostic[],
  read: { spec?: DeploySpec; specTargets: SpecTarget[]; configText?: string; previousText?: string; previous?: Lock },
  pool: TreePool | undefined,
): Promise<CompileInputs> {
  const { spec, specTargets, configText, previousText, previous } = read;
  const managedKind = opts.managed ?? (await readManaged(paths))?.kind ?? null;
  const previousLinks = new Set((previous?.deployment.links ?? []).map((l) => join(paths.home, l.link)));
  const manifests = ManifestCache.open(paths.cache);
  const cache = await IntegrityCache.open(paths.cache);
  const discovery = await discover({
    home: paths.home,
    cwd: opts.cwd,
    env: opts.env,
    manifests,
    onPluginFolder: pool && ((real) => offerTree(pool, cache, real, opts.fullHash)),
    adjust: spec
      ? (cands) => [
          // The spec replaces the deployment's links: drop the ones on disk, add what it declares.
          ...cands.filter(
            (c) =>
              !(
                c.linkTarget !== undefined &&
                (previousLinks.has(c.path) || (c.source === "user" && c.dirName.startsWith(NIX_LINK_PREFIX)))
              ),
          ),
          ...specTargets.map((t) => t.candidate),
        ]
      : undefined,
  });
  const integrity = await hashCandidates(discovery, cache, opts.fullHash, pool);
  // Without --spec, the deployment's event hooks are the ones the lock in force recorded (as its grants are).
  const specHookDirs =
    spec?.eventHooks ?? (previous?.event_hooks ?? []).filter((h) => h.source === "spec").map((h) => h.path);
  const eventHooks = await scanEventHooks(paths.home, specHookDirs, cache);
  const watch = watchList(discovery, cache, specTargets);
  const env = opts.env ?? process.env;
  const linksOnDisk = await readLinksOnDisk(paths, previous, specTargets);
  const pendingOwnership = await readPendingOwnership(paths);
  const metadataText = await readTextIfExists(paths.installMetadata).catch(() => undefined);
  const pointers = {
    lock: await fsp.readlink(paths.lock).catch(() => undefined),
    current: await fsp.readlink(join(paths.generations, "current")).catch(() => undefined),
  };
  return {
    pendingOwnership,
    watch: {
      dirs: [...watch.dirs, ...eventHooks.watch.dirs].sort(),
      files: [...watch.files, ...eventHooks.watch.files].sort(),
      present: watch.present,
      stats: watch.stats,
    },
    eventHooks,
    previousText,
    linksOnDisk,
    pointers,
    paths,
    configText: configText ?? "",
    configExists: configText !== undefined,
    configParsed: opts.configParsed?.text === (configText ?? "") ? opts.configParsed : undefined,
    spec,
    specTargets,
    previous,
    managedKind,
    discovery,
    integrity,
    env: {
      roots: sourceRoots({ home: paths.home, cwd: opts.cwd, env }).map((r) => `${r.source}:${r.dir}`),
      projectPlugins: envFlag("HERMES_ENABLE_PROJECT_PLUGINS", env),
    },
    gitOrigins: readGitOrigins(metadataText, paths.installMetadata, diagnostics),
    metadataText,
    diagnostics: [...diagnostics, ...discovery.diagnostics, ...eventHooks.diagnostics],
    cache,
    manifests,
  };
}
