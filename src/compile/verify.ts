import { promises as fsp } from "node:fs";
import { diagnostic, isHermesError, type Diagnostic } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { currentGeneration, LOCK_POINTER, readGenerationFiles } from "./generations.js";
import { isStorePath } from "./integrity-cache.js";
import { readLock } from "../contracts/lock.js";
import { hashTree } from "./tree-hash.js";
import { manifestSha256, readManifestFile } from "../manifest/parse.js";

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

/** What was found, one word per state: each has exactly one message. */
export type VerifyState = "ok" | "drift" | "missing" | "invalid" | "tampered";

export interface VerifyReport {
  lock: string;
  state: VerifyState;
  generation?: number;
  plugins: PluginDrift[];
  ok: boolean;
  diagnostics: Diagnostic[];
}

type Lock = NonNullable<Awaited<ReturnType<typeof readLock>>>;
type LockedPlugin = Lock["plugins"][number];

/** A report that stops before any plugin is checked: the lock itself is missing, invalid or tampered with. */
function refusal(paths: HomePaths, state: VerifyState, d: Diagnostic): VerifyReport {
  return { lock: paths.lock, state, plugins: [], ok: false, diagnostics: [d] };
}

/** The lock the home's link points at, or the refusal that says why it cannot be trusted. */
async function openLock(paths: HomePaths): Promise<{ lock: Lock } | { report: VerifyReport }> {
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

/** Re-hash one locked plugin and record in `drift` what differs from the lock. */
async function measureDrift(
  p: LockedPlugin,
  drift: PluginDrift,
  full: boolean,
  recordedFor: (key: string) => Promise<Record<string, string>>,
): Promise<void> {
  const real = await fsp.realpath(p.path).catch(() => undefined);
  if (!real) {
    drift.status = "dangling";
    drift.detail = `${p.path} does not resolve (target ${p.target} is missing)`;
    return;
  }
  if (isStorePath(real) && !full && real === p.target) {
    drift.status = "trusted";
    return;
  }
  try {
    const now = await hashTree(real);
    if (now.integrity !== p.integrity) {
      drift.status = "changed";
      const before = await recordedFor(p.key);
      for (const [f, h] of Object.entries(now.files)) {
        if (!(f in before)) drift.added.push(f);
        else if (before[f] !== h) drift.changed.push(f);
      }
      for (const f of Object.keys(before)) if (!(f in now.files)) drift.removed.push(f);
      if (real !== p.target) drift.detail = `now resolves to ${real} (locked: ${p.target})`;
    }
    const manifest = readManifestFile(real);
    if (manifest !== undefined && manifestSha256(manifest.text) !== p.manifest_sha256) {
      drift.manifest_changed = true;
      drift.status = "changed";
    }
  } catch (e) {
    drift.status = "unverifiable";
    drift.detail = (e as Error).message;
  }
}

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
 * the manifest, or a link whose target is gone. Store paths are immutable and trusted by path
 * unless `full` is set.
 */
export async function verifyLock(
  paths: HomePaths,
  opts: { full?: boolean; all?: boolean } = {},
): Promise<VerifyReport> {
  const opened = await openLock(paths);
  if ("report" in opened) return opened.report;
  const { lock } = opened;
  const generation = await currentGeneration(paths);
  // Per-file records are read only when something drifted (they are large and rarely needed).
  let recordedCache: Record<string, Record<string, string>> | undefined;
  const recordedFor = async (key: string) => {
    recordedCache ??= generation !== undefined ? await readGenerationFiles(paths, generation) : {};
    return recordedCache[key] ?? {};
  };
  const plugins: PluginDrift[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const p of lock.plugins) {
    if (!opts.all && p.action === "skip") continue;
    const drift: PluginDrift = {
      key: p.key,
      path: p.path,
      status: "ok",
      changed: [],
      added: [],
      removed: [],
      manifest_changed: false,
    };
    plugins.push(drift);
    await measureDrift(p, drift, opts.full === true, recordedFor);
    if (drift.status !== "ok" && drift.status !== "trusted") diagnostics.push(driftDiagnostic(p, drift));
  }
  return {
    lock: paths.lock,
    state: diagnostics.length ? "drift" : "ok",
    generation,
    plugins,
    ok: diagnostics.length === 0,
    diagnostics,
  };
}
