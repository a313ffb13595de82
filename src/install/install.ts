import { promises as fsp, type Stats } from "node:fs";
import { basename, join, relative, sep } from "node:path";
import { compile, type CompileResult } from "../compile/compile.js";
import { loadConfig, type ConfigValue } from "../config/config-file.js";
import { enablePlugin, type OwnershipGuard } from "../config/enable.js";
import { migrateEnabledList } from "../discovery/migrate.js";
import { knownCapabilities, type CapabilityId } from "../contracts/capabilities.js";
import { parseGrantFlag, runConsent, type Io } from "../consent/flow.js";
import { HermesError, type Diagnostic } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { isPythonPlugin, NIX_LINK_PREFIX } from "../contracts/plugin-record.js";
import { candidateFromFolder, type Candidate } from "../discovery/scan.js";
import { findManifestFile, isPluginFolder, SUPPORTED_MANIFEST_VERSION } from "../manifest/parse.js";
import { cloneInto, resolveSubdir, resolveTreePath, snapshotSubdir } from "./checkout.js";
import { promptEnv } from "./env-file.js";
import { isFullSha, parseIdentifier, parseRef, repoNameOf, scrubUrl, type Identifier } from "./identifier.js";
import { localSourceOf, type LocalSource } from "./local-source.js";
import { INDEX_TRUST_NOTE, installIdentifierOf, loadIndex, resolveIndexName } from "./index/load.js";
import { readMetadata, type InstallMetadata, type InstallRecord } from "./metadata.js";
import { installScanGate } from "./scan-gate.js";
import { commitStage, createStage, discardStage, recoverInterrupted, renameStageName, type Stage } from "./stage.js";

export interface InstallOptions {
  paths: HomePaths;
  identifier: string;
  /** `--ref`: a 40-hex commit SHA. */
  ref?: string;
  force?: boolean;
  /** `--enable` true, `--no-enable` false, neither undefined (ask on a terminal, else no). */
  enable?: boolean;
  /** Raw `--grant` values (comma-separated ids). */
  grants?: string[];
  io: Io;
  guard?: OwnershipGuard;
  env?: NodeJS.ProcessEnv;
  /** Where relative local paths are resolved (default: the process's working directory). */
  cwd?: string;
}

export interface InstallResult {
  name: string;
  key: string;
  dir: string;
  source: string;
  revision: string;
  pinned: boolean;
  enabled: boolean;
  granted: CapabilityId[];
  pending: CapabilityId[];
  missingEnv: string[];
  compile?: CompileResult;
}

/**
 * A plugin folder name (it becomes a path and a discovery key): not empty, not `.`/`..`, no `/`,
 * `\` or `..`, no control characters, not hidden (discovery skips dot names), not `__x__`, and not
 * the prefix of deployment links.
 */
export function validatePluginName(name: string): void {
  const bad = (why: string) =>
    new HermesError("E_INSTALL_NAME_INVALID", { message: `invalid plugin name '${name}': ${why}` });
  if (!name.trim()) throw new HermesError("E_INSTALL_NAME_INVALID", { message: "plugin name must not be empty" });
  if (name === "." || name === "..") throw bad("it resolves to the plugins directory or its parent");
  for (const s of ["/", "\\", ".."]) if (name.includes(s)) throw bad(`it must not contain '${s}'`);
  if (/[\u0000-\u001f\u007f]/.test(name)) throw bad("it contains control characters");
  if (name.startsWith(".")) throw bad("it must not start with '.' (hidden folders are not plugins)");
  if (name.startsWith("__") && name.endsWith("__")) throw bad("dunder names are reserved");
  if (name.startsWith(NIX_LINK_PREFIX)) throw bad(`the prefix '${NIX_LINK_PREFIX}' is reserved for deployment links`);
  if (name.length > 200) throw bad("it is longer than 200 characters");
}

/** Where a tree the scan blocked is kept so that its findings can be opened. */
export function scanReviewDir(paths: HomePaths, key: string): string {
  return join(paths.cache, "scan-review", ...key.split("/"));
}

function relocate(ds: readonly Diagnostic[], from: string, to: string): Diagnostic[] {
  return ds.map((d) => (d.file && d.file.startsWith(from) ? { ...d, file: to + d.file.slice(from.length) } : d));
}

/** Folders (up to 3 levels) holding a plugin.yaml, for "did you mean owner/repo/<subdir>". */
async function manifestFolders(root: string, depth = 3): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, d: number) => {
    const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!e.isDirectory() || e.name.startsWith(".") || e.name === "node_modules") continue;
      const p = join(dir, e.name);
      if (findManifestFile(p)) {
        out.push(relative(root, p).split(sep).join("/"));
      } else if (d > 1) await walk(p, d - 1);
      if (out.length >= 10) return;
    }
  };
  await walk(root, depth);
  return out;
}

/**
 * Copy each top-level `*.example` to its name without `.example`, never overwriting; when
 * reinstalling over a previous copy, that copy's real file is kept instead (user settings survive
 * `--force`).
 */
export async function copyExamples(dir: string, io: Io, previous?: string): Promise<void> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  for (const n of names.sort()) {
    if (!n.endsWith(".example") || n === ".example") continue;
    const real = n.slice(0, -".example".length);
    const dest = join(dir, real);
    if (
      await fsp.lstat(dest).then(
        () => true,
        () => false,
      )
    )
      continue;
    try {
      const prev = previous ? join(previous, real) : undefined;
      if (
        prev &&
        (await fsp.lstat(prev).then(
          (s) => s.isFile(),
          () => false,
        ))
      ) {
        await fsp.copyFile(prev, dest);
        io.out(`  Kept your ${real} from the previous install`);
      } else {
        await fsp.copyFile(join(dir, n), dest);
        io.out(`  Created ${real} from ${n}`);
      }
    } catch (e) {
      io.warn(`warning: could not create ${real} from ${n}: ${(e as Error).message}`);
    }
  }
}

interface Target {
  url: string;
  subdir?: string;
  branch?: string;
  revision?: string;
  pinnedBy?: string;
}

async function resolveIdentifier(
  o: InstallOptions,
  config: ConfigValue,
  local: LocalSource | undefined,
): Promise<{ id: Exclude<Identifier, { kind: "index" }>; indexPin?: string; display: string }> {
  if (local?.kind === "git") {
    o.io.out(
      "Installing from the local git " +
        `repository ${local.url.slice("file://".length)}${local.subdir ? ` (subdir: ${local.subdir})` : ""}`,
    );
    if (local.dirty) o.io.warn(`warning: ${local.path} has uncommitted changes; only what is committed is installed`);
    return {
      id: { kind: "git", url: local.url, ...(local.subdir ? { subdir: local.subdir } : {}) },
      display: o.identifier,
    };
  }
  const id = parseIdentifier(o.identifier);
  if (id.kind !== "index") return { id, display: o.identifier };
  const idx = await loadIndex(o.paths, config, { warn: (l) => o.io.warn(l), env: o.env });
  const r = resolveIndexName(idx.entries, id.name);
  if (r.kind === "ambiguous") {
    throw new HermesError("E_INSTALL_INDEX_AMBIGUOUS", {
      message:
        `plugin name '${id.name}' is ambiguous in the community index (${idx.source}); ` +
        `candidates:\n${r.candidates.map((c) => `  ${c.name}  → ${installIdentifierOf(c)}`).join("\n")}`,
    });
  }
  if (r.kind === "unknown") {
    const close = r.closest.map((c) => `  ${c.name}  → ${installIdentifierOf(c)}`).join("\n");
    throw new HermesError("E_INSTALL_INDEX_NOT_FOUND", {
      message:
        `plugin '${id.name}' was not found in the community index (${idx.source}); nothing was ` +
        `installed${close ? `\nclosest names:\n${close}` : ""}`,
    });
  }
  const e = r.entry;
  const ident = installIdentifierOf(e);
  let indexPin: string | undefined;
  if (e.ref && isFullSha(e.ref)) indexPin = e.ref.toLowerCase();
  else if (e.ref)
    o.io.out(`Index pins ref '${e.ref}' (not an exact commit SHA); installing the default branch head instead.`);
  o.io.out(
    `Resolved '${e.name}' via community index (${idx.source}) ` +
      `→ ${ident}${indexPin ? ` @ ${indexPin.slice(0, 12)}` : ""}`,
  );
  o.io.out(INDEX_TRUST_NOTE);
  const parsed = parseIdentifier(ident);
  if (parsed.kind === "index")
    throw new HermesError("E_INSTALL_IDENTIFIER", {
      message: `index entry '${e.name}' has an invalid repo '${e.repo}'`,
    });
  return { id: parsed, indexPin, display: ident };
}

function canonicalSource(url: string, subdir?: string): string {
  return subdir ? `${scrubUrl(url)}#${subdir}` : scrubUrl(url);
}

function inheritPin(meta: InstallMetadata, source: string): { name: string; rec: InstallRecord } | undefined {
  const hits = Object.entries(meta).filter(([, r]) => r.pinned && r.source === source);
  return hits.length === 1 ? { name: hits[0]![0], rec: hits[0]![1] } : undefined;
}

async function showAfterInstall(io: Io, dir: string, name: string, display: string): Promise<void> {
  const text = await fsp.readFile(join(dir, "after-install.md"), "utf8").catch(() => undefined);
  if (text && text.trim()) {
    io.out(`── ${name}: after-install.md ──`);
    for (const l of text.replace(/\s+$/, "").split("\n")) io.out(l);
    io.out("──");
  } else {
    io.out(`✓ Installed ${display}`);
    io.out(`  Location: ${dir}`);
  }
}

/** The one way forward for an installed plugin: a pin moves only with --ref, a branch install updates. */
function existsError(name: string, target: string, rec: InstallRecord | undefined): HermesError {
  if (rec?.pinned) {
    return new HermesError("E_INSTALL_EXISTS", {
      message:
        `plugin '${name}' is already installed at ${target}, pinned to ${rec.revision} from ${rec.source}; ` +
        "nothing was cloned",
      hint:
        `to move the pin run \`hermes plugins install ${rec.source} --force --ref <40-character commit SHA>\` ` +
        `(with --force alone it is reinstalled at ${rec.revision.slice(0, 12)})`,
    });
  }
  return new HermesError("E_INSTALL_EXISTS", {
    message:
      `plugin '${name}' is already installed at ${target}` + `${rec ? ` from ${rec.source}` : ""}; nothing was cloned`,
    hint: rec
      ? `run \`hermes plugins update ${name}\` to pull its latest revision, or add --force to reinstall it`
      : `add --force to replace it (it has no git record, so \`hermes plugins update\` cannot update it)`,
  });
}

async function refuseInstalledSource(paths: HomePaths, meta: InstallMetadata, source: string): Promise<void> {
  for (const [name, rec] of Object.entries(meta)) {
    if (rec.source !== source) continue;
    const target = join(paths.plugins, ...name.split("/"));
    if (
      await fsp.lstat(target).then(
        () => true,
        () => false,
      )
    )
      throw existsError(name, target, rec);
  }
}

/**
 * A local folder outside any git repository: copied as it is, scanned and placed like a clone,
 * with no revision and no metadata record (nothing to pin or pull).
 */
async function installFolder(o: InstallOptions, folder: string, meta: InstallMetadata): Promise<InstallResult> {
  const { io, paths } = o;
  if (o.ref !== undefined) {
    throw new HermesError("E_INSTALL_LOCAL_NOT_GIT", {
      message: `--ref needs a git repository; ${folder} is a plain folder (not in a git repository)`,
    });
  }
  io.out(`Installing from the local folder ${folder} (not a git repository: copied as it is, no revision recorded)`);
  const stage = await createStage(paths, "install", "");
  try {
    await fsp.cp(folder, stage.plugin, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false });
    return await placeCandidate(o, stage, {
      display: folder,
      source: folder,
      revision: "local",
      fallback: basename(folder),
      meta,
      record: undefined,
    });
  } finally {
    await discardStage(stage).catch(() => undefined);
  }
}

interface Placement {
  display: string;
  source: string;
  /** 40-hex commit, or `local` for a plain folder. */
  revision: string;
  /** Folder name used when the manifest names none. */
  fallback: string;
  subdir?: string;
  meta: InstallMetadata;
  /** The metadata record to write (none for a plain local folder). */
  record: InstallRecord | undefined;
}

/** The staged folder as a loadable candidate; no manifest, a bad name or manifest errors refuse the install. */
async function stagedCandidate(stage: Stage, p: Placement): Promise<Candidate> {
  // The manifest decides the name; a folder without one is not installed (issues theme: "✓ Installed" then unusable).
  const cand = await candidateFromFolder(stage.plugin, "user", { dirName: p.fallback });
  if (!cand) {
    const found = await manifestFolders(stage.plugin);
    throw new HermesError("E_INSTALL_NO_MANIFEST", {
      message:
        `${p.display} has no plugin.yaml${p.subdir ? ` in '${p.subdir}'` : " at the top of the repository"}; ` +
        "nothing was installed",
      hint: found.length
        ? `plugin folders in this repository: ${found.join(", ")}; install one ` +
          `with ${p.display.replace(/\/+$/, "")}/${found[0]} (or <url>#${found[0]})`
        : "a plugin needs a plugin.yaml at the top of its folder; point the identifier at the folder that has one",
    });
  }
  const where = `${p.display}${p.subdir && !p.display.includes(p.subdir) ? `#${p.subdir}` : ""}`;
  // The name becomes a folder: refuse an unusable one by name before the manifest's other problems.
  validatePluginName(cand.name);
  const errors = cand.diagnostics.filter((d) => d.severity === "error");
  if (errors.length || (!cand.manifest && cand.status !== "portable")) {
    throw new HermesError("E_INSTALL_MANIFEST_INVALID", {
      message:
        `the plugin in ${where} cannot load (${errors.length} problem(s) in its manifest or files); nothing ` +
        "was installed",
      diagnostics: relocate(errors, stage.plugin, cand.name),
    });
  }
  return cand;
}

/** An existing target is replaced only with --force, only if it is a plugin folder, and never past a pin. */
async function checkReplaceable(
  o: InstallOptions,
  p: Placement,
  name: string,
  target: string,
  targetStat: Stats,
): Promise<void> {
  const prior = p.meta[name];
  if (!o.force) throw existsError(name, target, prior);
  if (targetStat.isDirectory() && !prior && !(await isPluginFolder(target))) {
    throw new HermesError("E_INSTALL_EXISTS", {
      message: `${target} exists and is not a plugin folder (a category of plugins?); --force will not replace it`,
      hint: "move the folder away, or install the plugin under another name",
    });
  }
  if (!p.record?.pinned && prior?.pinned) {
    throw new HermesError("E_INSTALL_PINNED", {
      message:
        `plugin '${name}' is pinned to ${prior.revision}; reinstall it with an explicit --ref <40-character ` +
        "commit SHA> to change its source or revision",
    });
  }
}

/** Warn about what the staged plugin's own checks found, and a manifest newer than this kit reads. */
function warnStaged(io: Io, cand: Candidate, stage: Stage, name: string): void {
  for (const d of relocate(cand.diagnostics, stage.plugin, name))
    if (d.severity === "warning") io.warn(`warning ${d.code}: ${d.message}`);
  if (cand.manifest && cand.manifest.manifest_version > SUPPORTED_MANIFEST_VERSION) {
    io.warn(
      `warning: ${name} declares manifest_version ${cand.manifest.manifest_version}; this hermes-kit ` +
        `supports up to ${SUPPORTED_MANIFEST_VERSION} and loads it with the fields it knows`,
    );
  }
}

/** Say how a placed plugin that is not a JavaScript one runs (Python) or that it does not load (portable). */
function warnNotLoadable(io: Io, name: string, cand: Candidate | undefined): void {
  if (cand && isPythonPlugin(cand))
    io.warn(
      `note: ${name} is a Python plugin of the original Hermes: it runs through the Python bridge (Python 3.10+)`,
    );
  if (cand?.status === "portable")
    io.warn(`warning: ${name} is a portable plugin.json package: listed, but not loaded by this runtime yet`);
}

/** Enable the plugin when --enable or the user's answer says so; whether it was enabled. */
async function enableIfAsked(o: InstallOptions, key: string, name: string): Promise<boolean> {
  const { io, paths } = o;
  let enable = o.enable;
  if (enable === undefined) enable = io.interactive ? await io.confirm(`  Enable '${name}' now? [y/N] `) : false;
  let enabled = false;
  if (enable) {
    const res = await enablePlugin(paths.config, { key, name }, o.guard);
    enabled = true;
    io.out(res.message);
  } else {
    io.out(`Plugin installed but not enabled. Run \`hermes plugins enable ${key}\` to activate.`);
  }
  return enabled;
}

/** From a filled stage to a placed, scanned, recorded plugin: shared by clones and local folders. */
async function placeCandidate(o: InstallOptions, stage: Stage, p: Placement): Promise<InstallResult> {
  const { io, paths } = o;
  let cand: Candidate | undefined = await stagedCandidate(stage, p);
  const name = cand.name;
  validatePluginName(name);
  await renameStageName(stage, name);
  const target = join(paths.plugins, name);
  warnStaged(io, cand, stage, name);

  const targetStat = await fsp.lstat(target).catch(() => undefined);
  if (targetStat) await checkReplaceable(o, p, name, target, targetStat);
  const key = cand.key;
  const declared = knownCapabilities(cand.manifest?.capabilities ?? []);
  const grants = o.grants && o.grants.length ? parseGrantFlag(o.grants, declared, key) : undefined;

  await installScanGate(
    io,
    {
      dir: stage.plugin,
      displayDir: target,
      pluginKey: key,
      revision: p.revision,
      source: p.source,
      configFile: paths.config,
      reviewDir: scanReviewDir(paths, key),
    },
    { force: o.force },
  );
  await copyExamples(stage.plugin, io, targetStat ? target : undefined);

  // The one-time v21 migration runs before the new folder exists, so a fresh install is never grandfathered.
  await migrateEnabledList(paths.home, o.env);
  await commitStage(paths, stage, p.record, { expectTarget: Boolean(targetStat) });
  cand = await candidateFromFolder(target, "user", { dirName: name });
  const manifest = cand?.manifest;

  warnNotLoadable(io, name, cand);
  const missingEnv = manifest ? await promptEnv(o, name, manifest.requires_env) : [];
  if (manifest?.python_dependencies.length) {
    io.out(`${name} declares Python dependencies (not installed automatically):`);
    for (const d of manifest.python_dependencies) io.out(`  - ${d}`);
  }
  await showAfterInstall(io, target, name, p.display);

  const enabled = await enableIfAsked(o, key, name);
  const cfgNow = (await loadConfig(paths.config)).value;
  const consent = await runConsent({
    configFile: paths.config,
    config: cfgNow,
    key,
    declared,
    context: "install",
    io,
    grants,
    guard: o.guard,
  });
  const compiled = await compile({ home: paths.home, env: o.env });
  if (compiled.applied) io.out(`lock updated: generation ${compiled.generation}`);
  if (enabled) io.out("Takes effect on next session.");
  return {
    name,
    key,
    dir: target,
    source: p.source,
    revision: p.revision,
    pinned: p.record?.pinned ?? false,
    enabled,
    granted: consent.granted,
    pending: consent.pending,
    missingEnv,
    compile: compiled,
  };
}

/** `hermes plugins install <identifier>`: resolve, clone, scan, place, consent, compile. */
export async function installPlugin(o: InstallOptions): Promise<InstallResult> {
  const io = o.io;
  const paths = o.paths;
  for (const note of await recoverInterrupted(paths)) io.warn(`note: ${note}`);
  const requested = o.ref !== undefined ? parseRef(o.ref) : undefined;
  const config = (await loadConfig(paths.config)).value;
  // A corrupt metadata file is refused before any work: it is rewritten at placement.
  const meta = await readMetadata(paths.installMetadata);
  const local = await localSourceOf(o.identifier, o.cwd ?? process.cwd(), o.env);
  if (local?.kind === "folder") return installFolder(o, local.path, meta);
  const { id, indexPin, display } = await resolveIdentifier(o, config, local);

  const t: Target = { url: id.url, subdir: id.subdir };
  if (requested) t.revision = requested;
  else if (indexPin) {
    t.revision = indexPin;
    t.pinnedBy = "index";
  }

  const stage = await createStage(paths, "install", "");
  try {
    if (id.treePath) {
      const tr = await resolveTreePath(stage.dir, id.url, id.treePath, o.env);
      t.branch = tr.branch;
      t.subdir = tr.subdir;
      if (tr.revision && !t.revision) t.revision = tr.revision;
    }
    const source = canonicalSource(t.url, t.subdir);
    // Known before any clone: reinstalling an installed source needs --force (say so without cloning).
    if (!o.force) await refuseInstalledSource(paths, meta, source);
    if (!t.revision) {
      const inherited = inheritPin(meta, source);
      if (inherited) {
        t.revision = inherited.rec.revision;
        io.out(
          `Keeping the pin of '${inherited.name}' at ${inherited.rec.revision.slice(0, 12)} (same source); ` +
            "pass --ref to move it.",
        );
      }
    }
    const lower = t.url.toLowerCase();
    if (!local && (lower.startsWith("http://") || lower.startsWith("file://") || lower.startsWith("git://"))) {
      io.warn("Warning: Using an insecure or local URL scheme. Consider https:// or ssh for production installs.");
    }
    io.out(
      `Cloning ${scrubUrl(t.url)}${t.branch ? ` (branch: ${t.branch})` : ""}` +
        `${t.subdir ? ` (subdir: ${t.subdir})` : ""}${t.revision ? ` @ ${t.revision}` : ""}...`,
    );
    const revision = await cloneInto(stage.dir, "clone", {
      url: t.url,
      revision: t.revision,
      branch: t.branch,
      env: o.env,
    });
    const cloneDir = join(stage.dir, "clone");
    if (t.subdir) {
      const rel = await resolveSubdir(cloneDir, t.subdir);
      await snapshotSubdir(cloneDir, rel, stage.plugin, { source, revision, env: o.env });
    } else {
      await fsp.rename(cloneDir, stage.plugin);
    }

    const fallback = t.subdir ? t.subdir.split("/").filter(Boolean).pop()! : repoNameOf(t.url);
    return await placeCandidate(o, stage, {
      display,
      source,
      revision,
      fallback,
      subdir: t.subdir,
      meta,
      record: { pinned: Boolean(t.revision), revision, source },
    });
  } finally {
    await discardStage(stage).catch(() => undefined);
  }
}
