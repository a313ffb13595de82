import { pidAlive } from "../core/pid.js";
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { sweepStaleTemps, writeFileAtomic } from "../core/atomic-fs.js";
import { HermesError } from "../core/errors.js";
import { faultPoint } from "../core/fault.js";
import type { HomePaths } from "../core/paths.js";
import { readMetadata, withMetadataLock, writeMetadata, type InstallRecord } from "./metadata.js";

/**
 * Crash-safe changes of the plugins dir, so that a failure or a
 * `kill -9` at any instant leaves the plugins dir and the metadata as they were, or as they
 * were meant to become — never in between.
 *
 * Every change happens in a staging dir inside the plugins dir (same filesystem: renames are
 * atomic) named `.<op>-<pid>-<random>`, holding a journal. Placement runs under the metadata
 * lock: journal → `placing`, old tree → `staging/previous`, new tree → target, metadata written,
 * journal → `committed`. A process that dies before `committed` is rolled back by the next
 * command that opens the plugins dir (`recoverInterrupted`): tree and metadata record restored.
 */

export type StageOp = "install" | "update" | "remove";

export interface Journal {
  op: StageOp;
  pid: number;
  host: string;
  /** The plugin folder, relative to the plugins dir (also its metadata key). */
  name: string;
  phase: "staging" | "placing" | "committed";
  /** Whether the target existed when placement began. */
  hadTarget?: boolean;
  /** The metadata record before placement (absent: there was none). */
  previousRecord?: InstallRecord | null;
}

const STAGING_RE = /^\.(install|update|remove)-(\d+)-[0-9a-f]{8,}$/;

export interface Stage {
  dir: string;
  /** Where the new tree is built. */
  plugin: string;
  journal: Journal;
}

function journalFile(stageDir: string): string {
  return join(stageDir, "journal.json");
}

async function saveJournal(stage: { dir: string; journal: Journal }): Promise<void> {
  await writeFileAtomic(journalFile(stage.dir), `${JSON.stringify(stage.journal, null, 2)}\n`);
}

async function exists(p: string): Promise<boolean> {
  return fsp.lstat(p).then(
    () => true,
    () => false,
  );
}

export async function createStage(paths: HomePaths, op: StageOp, name: string): Promise<Stage> {
  await fsp.mkdir(paths.plugins, { recursive: true });
  const dir = join(paths.plugins, `.${op}-${process.pid}-${randomBytes(6).toString("hex")}`);
  await fsp.mkdir(dir);
  const stage: Stage = {
    dir,
    plugin: join(dir, "plugin"),
    journal: { op, pid: process.pid, host: hostname(), name, phase: "staging" },
  };
  await saveJournal(stage);
  faultPoint();
  return stage;
}

export async function renameStageName(stage: Stage, name: string): Promise<void> {
  stage.journal.name = name;
  await saveJournal(stage);
}

export async function discardStage(stage: { dir: string }): Promise<void> {
  await rmTree(stage.dir);
}

async function rmTree(p: string): Promise<void> {
  // A git child orphaned by a kill may still be writing; a few retries outlast it.
  for (let i = 0; ; i++) {
    try {
      await fsp.rm(p, { recursive: true, force: true, maxRetries: 3 });
      return;
    } catch (e) {
      if (i >= 4) throw e;
      await new Promise((r) => setTimeout(r, 50 * (i + 1)));
    }
  }
}

function targetOf(paths: HomePaths, name: string): string {
  return join(paths.plugins, ...name.split("/"));
}

/**
 * Put `stage.plugin` at `plugins/<name>` (replacing what is there) and write `record` to the
 * metadata (`undefined` keeps the existing record as is; `null` drops it) — all or nothing.
 * `op: "remove"` moves the target out instead and places nothing.
 */
export async function commitStage(
  paths: HomePaths,
  stage: Stage,
  record: InstallRecord | null | undefined,
  opts: { expectTarget?: boolean } = {},
): Promise<void> {
  const target = targetOf(paths, stage.journal.name);
  await withMetadataLock(paths.installMetadata, async () => {
    const meta = await readMetadata(paths.installMetadata);
    const name = stage.journal.name;
    const prev = Object.prototype.hasOwnProperty.call(meta, name) ? meta[name]! : null;
    const present = await exists(target);
    // What the caller checked before taking the lock must still hold: another command may have won the race.
    if (opts.expectTarget !== undefined && present !== opts.expectTarget) {
      throw new HermesError(present ? "E_INSTALL_EXISTS" : "E_PLUGIN_NOT_FOUND", {
        message: present
          ? `plugin '${name}' was installed by another command meanwhile; nothing was changed`
          : `plugin '${name}' was removed by another command meanwhile; nothing was changed`,
      });
    }
    stage.journal.phase = "placing";
    stage.journal.hadTarget = present;
    stage.journal.previousRecord = prev;
    await saveJournal(stage);
    try {
      if (stage.journal.hadTarget) {
        await fsp.rename(target, join(stage.dir, "previous"));
        faultPoint();
      }
      if (stage.journal.op !== "remove") {
        await fsp.rename(stage.plugin, target);
        faultPoint();
      }
      if (record !== undefined) {
        const changed = record === null ? prev !== null : JSON.stringify(prev) !== JSON.stringify(record);
        if (changed) {
          if (record === null) delete meta[name];
          else meta[name] = record;
          await writeMetadata(paths.installMetadata, meta);
        }
      }
      stage.journal.phase = "committed";
      await saveJournal(stage);
    } catch (e) {
      try {
        await rollback(paths, stage.dir, stage.journal);
      } catch (re) {
        throw new HermesError("E_INSTALL_ROLLBACK_FAILED", {
          message:
            `${stage.journal.op} of '${name}' failed (${(e as Error).message}) and could not be undone ` +
            `automatically (${(re as Error).message}); the previous copy remains ` +
            `at ${join(stage.dir, "previous")}`,
          cause: e,
        });
      }
      throw e;
    }
  });
}

/** Undo a placement that did not reach `committed`. Runs under the metadata lock. */
async function rollback(paths: HomePaths, dir: string, j: Journal): Promise<void> {
  const target = targetOf(paths, j.name);
  const previous = join(dir, "previous");
  const placed = j.op !== "remove" && !(await exists(join(dir, "plugin"))) && (await exists(target));
  if (await exists(previous)) {
    if (await exists(target)) await fsp.rename(target, join(dir, "discard"));
    await fsp.rename(previous, target);
  } else if (placed && !j.hadTarget) {
    await fsp.rename(target, join(dir, "discard"));
  }
  if (j.previousRecord !== undefined) {
    const meta = await readMetadata(paths.installMetadata);
    const cur = Object.prototype.hasOwnProperty.call(meta, j.name) ? meta[j.name]! : null;
    if (JSON.stringify(cur) !== JSON.stringify(j.previousRecord)) {
      if (j.previousRecord === null) delete meta[j.name];
      else meta[j.name] = j.previousRecord;
      await writeMetadata(paths.installMetadata, meta);
    }
  }
}

/**
 * Finish what a killed install/update/remove left behind: roll back an unfinished placement and
 * delete its staging dir. Staging dirs of live processes (this host) are left alone.
 */
export async function recoverInterrupted(paths: HomePaths): Promise<string[]> {
  const names = await fsp.readdir(paths.plugins).catch(() => [] as string[]);
  const recovered: string[] = [];
  for (const n of names.sort()) {
    const m = STAGING_RE.exec(n);
    if (!m) continue;
    const pid = Number(m[2]);
    const dir = join(paths.plugins, n);
    let journal: Journal | undefined;
    try {
      journal = JSON.parse(await fsp.readFile(journalFile(dir), "utf8")) as Journal;
    } catch {
      journal = undefined;
    }
    if (journal && journal.host !== hostname()) continue;
    if (pid === process.pid || pidAlive(pid)) continue;
    if (journal?.phase === "placing") {
      await withMetadataLock(paths.installMetadata, () => rollback(paths, dir, journal!));
      recovered.push(`${journal.op} of '${journal.name}' was interrupted and has been rolled back`);
    }
    await rmTree(dir);
  }
  await breakStaleLock(`${paths.installMetadata}.lock`);
  // A metadata write killed between its temp file and the rename.
  await sweepStaleTemps(paths.plugins, basename(paths.installMetadata));
  return recovered;
}

/** A metadata lock whose holder (on this host) was killed is removed, not left for the next writer to trip on. */
async function breakStaleLock(lockPath: string): Promise<void> {
  let owner: { pid?: unknown; host?: unknown } | undefined;
  try {
    owner = JSON.parse(await fsp.readFile(lockPath, "utf8")) as { pid?: unknown; host?: unknown };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    // Unreadable: a lock being written right now, or torn by a crash; only age tells.
    const age = await fsp.stat(lockPath).then(
      (st) => Date.now() - st.mtimeMs,
      () => 0,
    );
    if (age > 5_000) await fsp.rm(lockPath, { force: true });
    return;
  }
  if (
    owner?.host === hostname() &&
    typeof owner.pid === "number" &&
    owner.pid !== process.pid &&
    !pidAlive(owner.pid)
  ) {
    await fsp.rm(lockPath, { force: true });
  }
}
