import { sha256Hex } from "../core/hash.js";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { writeFileAtomic } from "../core/atomic-fs.js";
import { kitVersion } from "../core/kit-version.js";
import type { HomePaths } from "../core/paths.js";
import { NIX_LINK_PREFIX } from "../contracts/plugin-record.js";

/**
 * The no-op fast path. A full compile re-parses every manifest; when nothing changed that is
 * wasted work. After each compile we remember the folders and files its inputs came from, with
 * their stat data. A folder's ctime changes when an entry is added, removed or renamed in it (so does
 * its mtime, but only the ctime cannot be set back), and a file's size/mtime/ctime/inode when it is
 * written, so if every remembered stat still matches
 * (and config, spec and lock bytes are the same) the previous result stands. Anything else, or
 * `--full-hash`, takes the full path.
 */
export interface Watch {
  dirs: string[];
  files: string[];
  /** Folders of `dirs` the compile read (plugin folders and trees): one missing afterwards was removed. */
  present?: string[];
  /**
   * Stats of `files` taken while the compile read them (the tree listings): recorded as they are, so a
   * file written after its listing differs at the next check. Files without one are stat'ed when recording.
   */
  stats?: ReadonlyMap<string, FileStat>;
}

/** What the record keeps of a file (an `lstat`). */
export interface FileStat {
  size?: number;
  mtimeMs?: number;
  ctimeMs?: number;
  ino?: number;
}

/**
 * One record per base. `tree` groups what a compile read by folder, for a compact file that parses
 * fast: `[folder ctime (-1: absent, null: not watched itself), name, size, mtime, ctime, inode, …]`.
 */
interface QuickEntry {
  lockSha: string;
  /** The kit version that wrote it: lock verify's quick path reads no record of another version. */
  kit?: string;
  tree: Record<string, Array<string | number | null>>;
}

/** One entry per base: a deployment's compile and the runtime's startup check differ in base. */
interface QuickFile {
  version: 4;
  entries: Record<string, QuickEntry & { at: number }>;
}

const MAX_ENTRIES = 4;
const NO_THROW = { throwIfNoEntry: false } as const;

function readQuick(paths: HomePaths): QuickFile {
  try {
    const q = JSON.parse(readFileSync(join(paths.cache, FILE), "utf8")) as QuickFile;
    if (q.version === 4 && q.entries && typeof q.entries === "object") return q;
  } catch {
    // absent, corrupt or of another version: nothing remembered
  }
  return { version: 4, entries: {} };
}

const FILE = "quick-check.json";

/** The file's bytes (undecoded: only hashed or compared), or a marker that cannot be a file's. */
function readOr(file: string): Buffer | string {
  try {
    return readFileSync(file);
  } catch {
    return "\0absent";
  }
}

function link(p: string): string {
  try {
    return readlinkSync(p);
  } catch {
    return "\0none";
  }
}

/** What a compile read of config.yaml and the install metadata (null: absent). */
export interface ReadBytes {
  config: string | null;
  metadata: string | null;
}

/**
 * Everything besides plugin trees that a compile result depends on. After a compile, `read` is
 * what it actually read: re-reading the disk then would vouch for a config written meanwhile.
 */
export function baseFingerprint(
  paths: HomePaths,
  parts: {
    kit: string;
    specFile?: string;
    managed?: string | null;
    roots: readonly string[];
    env: unknown;
    read?: ReadBytes;
  },
): string {
  const bytes = (v: string | null | undefined, file: string) =>
    v === undefined ? readOr(file) : v === null ? "\0absent" : Buffer.from(v, "utf8");
  return sha256Hex(
    JSON.stringify({
      kit: parts.kit,
      config: sha256Hex(bytes(parts.read?.config, paths.config)),
      spec: parts.specFile ? sha256Hex(readOr(parts.specFile)) : null,
      specFile: parts.specFile ?? null,
      managed: parts.managed ?? null,
      marker: sha256Hex(readOr(paths.managed)),
      roots: parts.roots,
      env: parts.env,
      metadata: sha256Hex(bytes(parts.read?.metadata, paths.installMetadata)),
      pointers: [link(paths.lock), link(join(paths.generations, "current"))],
    }),
  );
}

/** Whether any compile left a record (a new home has none: no lock to take, nothing to check). */
export function hasQuickRecord(paths: HomePaths): boolean {
  return existsSync(join(paths.cache, FILE));
}

export function quickUpToDate(paths: HomePaths, base: string): boolean {
  const q = readQuick(paths).entries[base];
  return !!q && sha256Hex(readOr(paths.lock)) === q.lockSha && treeUnchanged(q);
}

/**
 * Whether a compile's record (of any base) was written with these lock bytes and every folder and
 * file it read is unchanged: the plugin trees are then the ones the lock was hashed from
 * (`hermes lock verify`'s quick path; config and the other inputs do not matter to it).
 */
export function quickTreesUnchanged(paths: HomePaths, lockText: string): boolean {
  const sha = sha256Hex(lockText);
  const kit = kitVersion();
  return Object.values(readQuick(paths).entries).some((q) => q?.lockSha === sha && q.kit === kit && treeUnchanged(q));
}

function treeUnchanged(q: QuickEntry): boolean {
  if (!q.tree || typeof q.tree !== "object") return false;
  try {
    for (const dir in q.tree) if (!folderUnchanged(dir, q.tree[dir]!)) return false;
  } catch {
    return false; // a record of another shape: not a proof of anything
  }
  return true;
}

/** A folder's stat; undefined when it cannot be stat'ed (absent, or not a folder one can reach). */
function dirStat(dir: string): { ctimeMs: number } | undefined {
  try {
    return statSync(dir, NO_THROW);
  } catch {
    return undefined;
  }
}

/** A folder's ctime; -1 when it cannot be stat'ed. Unlike its mtime, no one can put it back after adding an entry. */
function dirCtime(dir: string): number {
  return dirStat(dir)?.ctimeMs ?? -1;
}

/** One folder of the record: its own ctime when watched, then each file's size, mtime, ctime and inode. */
function folderUnchanged(dir: string, rec: ReadonlyArray<string | number | null>): boolean {
  const c = rec[0];
  if (c !== null && dirCtime(dir) !== c) return false;
  for (let i = 1; i < rec.length; i += 5) {
    // Plain concatenation: the names were split off these exact paths (join would only re-normalize).
    const st = lstatSync(dir + sep + rec[i], NO_THROW);
    if (
      !st ||
      st.size !== rec[i + 1] ||
      st.mtimeMs !== rec[i + 2] ||
      st.ctimeMs !== rec[i + 3] ||
      st.ino !== rec[i + 4]
    )
      return false;
  }
  return true;
}

/**
 * Whether a stat may describe a change made after `since` (when the compile began reading): the
 * kernel stamps ctime from a clock that lags by up to a tick, and some file systems keep whole seconds.
 */
function changedSince(st: { ctimeMs: number } | undefined, since: number | undefined): boolean {
  if (!st || since === undefined) return false;
  return st.ctimeMs >= since - (st.ctimeMs % 1000 === 0 ? 2000 : 50);
}

/**
 * Whether the plugins folder holds an entry the compile did not write (its `nix-managed-*` links)
 * that changed after `since`: a plugin folder or link added, replaced or renamed meanwhile.
 */
function pluginsFolderChanged(paths: HomePaths, since: number): boolean {
  let names: string[];
  try {
    names = readdirSync(paths.plugins);
  } catch {
    return false; // no plugins folder: nothing in it to have changed
  }
  return names.some(
    (n) => !n.startsWith(NIX_LINK_PREFIX) && changedSince(lstatSync(join(paths.plugins, n), NO_THROW), since),
  );
}

export interface RecordOptions {
  /** When the compile began reading (Date.now()): anything changed later writes no record. */
  since?: number;
  /** The lock bytes the compile produced or checked (default: read the lock now). */
  lockText?: string;
}

/**
 * Remember what a compile read. A file or folder changed after `since` may differ from what the
 * lock holds, and so may a watched folder the compile read that is gone: then nothing is recorded
 * and the next check is a full one. The plugins folder itself changes with the compile's own links,
 * so its other entries are checked one by one instead.
 */
export async function recordQuick(
  paths: HomePaths,
  base: string,
  watch: Watch,
  opts: RecordOptions = {},
): Promise<void> {
  const { since } = opts;
  const present = new Set(watch.present);
  if (since !== undefined && pluginsFolderChanged(paths, since)) return;
  const tree: QuickEntry["tree"] = {};
  for (const d of watch.dirs) {
    const st = dirStat(d);
    if (since !== undefined && !st && present.has(d)) return;
    if (d !== paths.plugins && d !== paths.home && changedSince(st, since)) return;
    tree[d] = [st?.ctimeMs ?? -1];
  }
  for (const f of watch.files) {
    const listed = watch.stats?.get(f);
    const st = listed?.ctimeMs !== undefined ? (listed as Required<FileStat>) : lstatSync(f, NO_THROW);
    // Gone since the compile read it: no record (without `since`, left out: its folder's check fails).
    if (!st && since !== undefined) return;
    if (!st) continue;
    if (changedSince(st, since)) return;
    const dir = dirname(f);
    (tree[dir] ??= [null]).push(basename(f), st.size, st.mtimeMs, st.ctimeMs, st.ino);
  }
  const q = readQuick(paths);
  const lockBytes = opts.lockText === undefined ? readOr(paths.lock) : Buffer.from(opts.lockText, "utf8");
  q.entries[base] = { lockSha: sha256Hex(lockBytes), kit: kitVersion(), tree, at: Date.now() };
  const keep = Object.entries(q.entries)
    .sort((a, b) => b[1].at - a[1].at)
    .slice(0, MAX_ENTRIES);
  await writeFileAtomic(join(paths.cache, FILE), JSON.stringify({ version: 4, entries: Object.fromEntries(keep) }));
}
