import { promises as fsp, realpathSync } from "node:fs";
import { diagnostic, isHermesError, type Diagnostic } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { currentGeneration } from "./current-generation.js";
import { LOCK_POINTER, readGenerationFiles } from "./generations.js";
import { IntegrityCache, isStorePath } from "./integrity-cache.js";
import { parseTrustedLockText, readLock, type LockEventHook } from "../contracts/lock.js";
import { quickTreesUnchanged } from "./quick-check.js";
import { hashTree, listTree, type TreeHash } from "./tree-hash.js";
import { MANIFEST_FILES, manifestSha256, readManifestFile } from "../manifest/files.js";

export interface PluginDrift {
  key: string;
  path: string;
  status: "ok" | "trusted" | "changed" | "dangling" | "unverifiable";
  changed: string[];
  added: string[];
  removed: string[];
  manifest_changed: boolean;
  detail?: string;
}

/** A gateway event hook the lock names: its folder hashed again, as a plugin's tree is. */
export interface HookDrift {
  name: string;
  path: string;
  status: "ok" | "trusted" | "changed" | "missing" | "unverifiable";
  detail?: string;
}

/** Whether a plugin's or hook's status is a pass: verified, or trusted by its store path. */
export function passed(status: PluginDrift["status"] | HookDrift["status"]): boolean {
  return status === "ok" || status === "trusted";
}

/** What was found, one word per state: each has exactly one message. */
export type VerifyState = "ok" | "drift" | "missing" | "invalid" | "tampered";

export interface VerifyReport {
  lock: string;
  state: VerifyState;
  generation?: number;
  plugins: PluginDrift[];
  event_hooks: HookDrift[];
  ok: boolean;
  diagnostics: Diagnostic[];
}

type Lock = NonNullable<Awaited<ReturnType<typeof readLock>>>;
type LockedPlugin = Lock["plugins"][number];

/** A report that stops before any plugin is checked: the lock itself is missing, invalid or tampered with. */
function refusal(paths: HomePaths, state: VerifyState, d: Diagnostic): VerifyReport {
  return { lock: paths.lock, state, plugins: [], event_hooks: [], ok: false, diagnostics: [d] };
}

/**
 * The lock the home's link points at, or the refusal that says why it cannot be trusted. With
 * `quick`, lock bytes that the last compile's no-op record names over unchanged trees are parsed
 * without a second schema pass (`vouched`: those trees are the ones it was hashed from).
 */
async function openLock(
  paths: HomePaths,
  quick: boolean,
): Promise<{ lock: Lock; vouched?: boolean } | { report: VerifyReport }> {
  const refuse = (state: VerifyState, d: Diagnostic) => ({ report: refusal(paths, state, d) });
  const home = await fsp.stat(paths.home).catch(() => undefined);
  if (!home?.isDirectory())
    return refuse(
      "missing",
      diagnostic("E_LOCK_MISSING", `the home ${paths.home} does not exist`, { file: paths.home }),
    );
  const st = await fsp.lstat(paths.lock).catch(() => undefined);
  if (!st)
    return refuse(
      "missing",
      diagnostic("E_LOCK_MISSING", `${paths.home} has no hermes.lock.json: it was never compiled`, {
        file: paths.lock,
      }),
    );
  // A compile only ever writes the lock inside a generation and points this link at it.
  if (!st.isSymbolicLink()) {
    return refuse(
      "tampered",
      diagnostic(
        "E_LOCK_TAMPERED",
        `hermes.lock.json is a regular file, not the link to ${LOCK_POINTER}: it was replaced after the ` +
          "compile (an in-place edit such as sed -i does this)",
        { file: paths.lock },
      ),
    );
  }
  const pointer = await fsp.readlink(paths.lock);
  if (pointer !== LOCK_POINTER) {
    return refuse(
      "tampered",
      diagnostic("E_LOCK_TAMPERED", `hermes.lock.json points to ${pointer}, not to ${LOCK_POINTER}`, {
        file: paths.lock,
      }),
    );
  }
  if (quick) {
    const text = await fsp.readFile(paths.lock, "utf8").catch(() => undefined);
    // The record names the sha256 of the bytes a compile sealed: these bytes, so their checksum holds.
    const vouched = text !== undefined && quickTreesUnchanged(paths, text);
    const lock = vouched ? parseTrustedLockText(text, { sealed: true }) : undefined;
    if (lock) return { lock, vouched: true };
  }
  let lock: Awaited<ReturnType<typeof readLock>>;
  try {
    lock = await readLock(paths.lock);
  } catch (e) {
    if (!isHermesError(e)) throw e;
    const d = e.toDiagnostic();
    const report = refusal(paths, e.code === "E_LOCK_TAMPERED" ? "tampered" : "invalid", d);
    return { report: { ...report, diagnostics: [d, ...e.diagnostics] } };
  }
  if (!lock)
    return refuse(
      "missing",
      diagnostic("E_LOCK_MISSING", `${LOCK_POINTER} does not exist (the current generation has no lock)`, {
        file: paths.lock,
      }),
    );
  return { lock };
}

/**
 * Whether the plugin's manifest still has the locked hash, from the bytes hashTree already read
 * (the file discovery picks: plugin.yaml, else plugin.yml); only a mismatch reads the text again.
 */
function manifestChanged(real: string, p: LockedPlugin, files: Record<string, string>): boolean {
  const first = MANIFEST_FILES.find((name) => name in files);
  if (first !== undefined && files[first] === p.manifest_sha256) return false;
  const manifest = readManifestFile(real);
  return manifest !== undefined && manifestSha256(manifest.text) !== p.manifest_sha256;
}

/** How one plugin is checked: `full` hashes everything; otherwise `cache` may vouch for unchanged trees. */
interface Check {
  full: boolean;
  cache: IntegrityCache | undefined;
  recordedFor: (key: string) => Promise<Record<string, string>>;
}

/** Record in `drift` what differs between the tree hashed now and the lock. */
async function compareTree(real: string, p: LockedPlugin, now: TreeHash, drift: PluginDrift, check: Check) {
  if (now.integrity !== p.integrity) {
    drift.status = "changed";
    const before = await check.recordedFor(p.key);
    for (const [f, h] of Object.entries(now.files)) {
      if (!(f in before)) drift.added.push(f);
      else if (before[f] !== h) drift.changed.push(f);
    }
    for (const f of Object.keys(before)) if (!(f in now.files)) drift.removed.push(f);
    if (real !== p.target) drift.detail = `now resolves to ${real} (locked: ${p.target})`;
  }
  if (manifestChanged(real, p, now.files)) {
    drift.manifest_changed = true;
    drift.status = "changed";
  }
}

/** Re-hash one locked plugin (unless the quick check vouches for it) and record in `drift` what differs. */
async function measureDrift(p: LockedPlugin, drift: PluginDrift, check: Check): Promise<void> {
  let real: string;
  try {
    real = realpathSync.native(p.path);
  } catch {
    drift.status = "dangling";
    drift.detail = `${p.path} does not resolve (target ${p.target} is missing)`;
    return;
  }
  if (isStorePath(real) && !check.full && real === p.target) {
    drift.status = "trusted";
    return;
  }
  try {
    // `real` is already resolved: the tree functions are told so instead of resolving it again.
    const entries = await listTree(real, real);
    // Quick check: the compile's hashes stand while every stat field it recorded is unchanged.
    const recorded = check.full ? undefined : check.cache?.recorded(real, entries);
    const now = recorded?.integrity === p.integrity ? recorded : await hashTree(real, entries, real);
    await compareTree(real, p, now, drift, check);
  } catch (e) {
    drift.status = "unverifiable";
    drift.detail = (e as Error).message;
  }
}

/**
 * One event hook's folder against its locked integrity. A vouched lock needs no hash (the record watched every
 * file of the folder); a store path is trusted by path unless `full`.
 */
async function hookDrift(h: LockEventHook, vouched: boolean | undefined, full: boolean): Promise<HookDrift> {
  const drift: HookDrift = { name: h.name, path: h.path, status: "ok" };
  if (vouched) return drift;
  if (!full && isStorePath(h.path)) return { ...drift, status: "trusted" };
  try {
    if ((await hashTree(h.path)).integrity !== h.integrity) drift.status = "changed";
  } catch (e) {
    const gone = (e as NodeJS.ErrnoException).code === "ENOENT";
    drift.status = gone ? "missing" : "unverifiable";
    drift.detail = gone ? `${h.path} does not exist` : (e as Error).message;
  }
  return drift;
}

/** Plugins checked at once: their large files hash in parallel on the libuv pool. */
const PARALLEL_PLUGINS = 4;

/** The one E_LOCK_DRIFT message that lists everything that drifted in a plugin. */
function driftDiagnostic(p: LockedPlugin, drift: PluginDrift): Diagnostic {
  const parts = [
    drift.changed.length ? `changed: ${drift.changed.join(", ")}` : "",
    drift.added.length ? `added: ${drift.added.join(", ")}` : "",
    drift.removed.length ? `removed: ${drift.removed.join(", ")}` : "",
    drift.manifest_changed ? "manifest changed" : "",
    drift.detail ?? "",
  ].filter(Boolean);
  return diagnostic("E_LOCK_DRIFT", `plugin ${p.key} ${drift.status}${parts.length ? `: ${parts.join("; ")}` : ""}`, {
    file: p.path,
  });
}

/**
 * Re-hash what the lock names and say, per plugin, what drifted: files changed, added or removed,
 * the manifest, or a link whose target is gone. Unless `full` is set, store paths are trusted by
 * path and a tree whose stat fingerprint matches the compile's integrity cache is not re-read.
 */
export async function verifyLock(
  paths: HomePaths,
  opts: { full?: boolean; all?: boolean } = {},
): Promise<VerifyReport> {
  const opened = await openLock(paths, !opts.full && !opts.all);
  if ("report" in opened) return opened.report;
  const { lock, vouched } = opened;
  const generation = await currentGeneration(paths);
  // Per-file records are read only when something drifted (they are large and rarely needed).
  let recordedCache: Promise<Record<string, Record<string, string>>> | undefined;
  const recordedFor = async (key: string) => {
    recordedCache ??= generation !== undefined ? readGenerationFiles(paths, generation) : Promise.resolve({});
    return (await recordedCache)[key] ?? {};
  };
  const check: Check = {
    full: opts.full === true,
    // --full trusts nothing but the lock, and a vouched lock needs no hash: the integrity cache is not even read.
    cache: opts.full || vouched ? undefined : await IntegrityCache.open(paths.cache),
    recordedFor,
  };
  const todo = lock.plugins.filter((p) => opts.all || p.action !== "skip");
  const plugins: PluginDrift[] = todo.map((p) => ({
    key: p.key,
    path: p.path,
    status: "ok",
    changed: [],
    added: [],
    removed: [],
    manifest_changed: false,
  }));
  // Store paths are trusted by path as below; every other tree is the one the lock was hashed from.
  if (vouched) for (const [i, p] of todo.entries()) if (isStorePath(p.target)) plugins[i]!.status = "trusted";
  let next = vouched ? todo.length : 0;
  const worker = async (): Promise<void> => {
    while (next < todo.length) {
      const i = next++;
      await measureDrift(todo[i]!, plugins[i]!, check);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_PLUGINS, todo.length) }, worker));
  const hooks = await Promise.all((lock.event_hooks ?? []).map((h) => hookDrift(h, vouched, check.full)));
  const diagnostics = [
    ...todo.flatMap((p, i) => (passed(plugins[i]!.status) ? [] : [driftDiagnostic(p, plugins[i]!)])),
    ...hooks.flatMap((h) =>
      !passed(h.status)
        ? [
            diagnostic("E_LOCK_DRIFT", `event hook ${h.name} ${h.status}${h.detail ? `: ${h.detail}` : ""}`, {
              file: h.path,
            }),
          ]
        : [],
    ),
  ];
  return {
    lock: paths.lock,
    state: diagnostics.length ? "drift" : "ok",
    generation,
    plugins,
    event_hooks: hooks,
    ok: diagnostics.length === 0,
    diagnostics,
  };
}
