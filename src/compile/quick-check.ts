import { sha256Hex } from "../core/hash.js";
import { lstatSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic-fs.js";
import type { HomePaths } from "../core/paths.js";

/**
 * The no-op fast path. A full compile re-parses every manifest; when nothing changed that is
 * wasted work. After each compile we remember the folders and files its inputs came from, with
 * their stat data. A folder's mtime changes when an entry is added, removed or renamed in it,
 * and a file's size/mtime/inode when it is written, so if every remembered stat still matches
 * (and config, spec and lock bytes are the same) the previous result stands. Anything else, or
 * `--full-hash`, takes the full path.
 */
export interface Watch {
  dirs: string[];
  files: string[];
}

interface QuickEntry {
  lockSha: string;
  dirs: Record<string, number>;
  files: Record<string, [number, number, number]>;
}

/** One entry per base: a deployment's compile and the runtime's startup check differ in base. */
interface QuickFile {
  version: 2;
  entries: Record<string, QuickEntry & { at: number }>;
}

const MAX_ENTRIES = 4;

function readQuick(paths: HomePaths): QuickFile {
  try {
    const q = JSON.parse(readFileSync(join(paths.cache, FILE), "utf8")) as QuickFile;
    if (q.version === 2 && q.entries && typeof q.entries === "object") return q;
  } catch {
    // absent or corrupt: nothing remembered
  }
  return { version: 2, entries: {} };
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

export function quickUpToDate(paths: HomePaths, base: string): boolean {
  const q = readQuick(paths).entries[base];
  if (!q) return false;
  if (sha256Hex(readOr(paths.lock)) !== q.lockSha) return false;
  for (const [d, m] of Object.entries(q.dirs)) {
    try {
      if (statSync(d).mtimeMs !== m) return false;
    } catch {
      if (m !== -1) return false;
    }
  }
  for (const [f, [size, mtime, ino]] of Object.entries(q.files)) {
    try {
      const st = lstatSync(f);
      if (st.size !== size || st.mtimeMs !== mtime || st.ino !== ino) return false;
    } catch {
      return false;
    }
  }
  return true;
}

export async function recordQuick(paths: HomePaths, base: string, watch: Watch): Promise<void> {
  const dirs: Record<string, number> = {};
  for (const d of watch.dirs) {
    try {
      dirs[d] = statSync(d).mtimeMs;
    } catch {
      dirs[d] = -1;
    }
  }
  const files: Record<string, [number, number, number]> = {};
  for (const f of watch.files) {
    try {
      const st = lstatSync(f);
      files[f] = [st.size, st.mtimeMs, st.ino];
    } catch {
      // vanished between compile and now: leave it out, so the next check fails on its dir
    }
  }
  const q = readQuick(paths);
  q.entries[base] = { lockSha: sha256Hex(readOr(paths.lock)), dirs, files, at: Date.now() };
  const keep = Object.entries(q.entries)
    .sort((a, b) => b[1].at - a[1].at)
    .slice(0, MAX_ENTRIES);
  await writeFileAtomic(join(paths.cache, FILE), JSON.stringify({ version: 2, entries: Object.fromEntries(keep) }));
}
