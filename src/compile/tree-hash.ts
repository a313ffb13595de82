import { lstatSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { sha256, sha256File } from "../core/hash.js";
import { join, relative, resolve, sep } from "node:path";
import { isInside } from "../core/contain.js";
import { HermesError } from "../core/errors.js";

export const INTEGRITY_PREFIX = "sha256-tree:";

/** One file of a plugin tree as the hash sees it. */
export interface TreeEntry {
  rel: string;
  type: "file" | "link" | "dir";
  /** 0o755 when any execute bit is set, else 0o644: content, not umask, decides. */
  mode?: number;
  size?: number;
  mtimeMs?: number;
  /** Change time: set by the kernel on every write or utimes, so restoring mtime does not hide a write. */
  ctimeMs?: number;
  ino?: number;
  linkTarget?: string;
}

/**
 * Folders that never ship: git's metadata changes on every fetch and git never checks out files
 * into it. `.hg`/`.svn` are hashed like any file (hermes-kit never creates them, so one that is
 * there came with the plugin); nothing may load from any of the three (`main:` and links are refused).
 */
const SKIP = new Set([".git"]);

/** In a name, this would let another tree give the same hash input (lines end at a newline). */
const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * The hash input is one line per entry, fields split by spaces: a file's path may hold spaces (its mode and
 * sha256 have none and sit on either side), a link's path and target may not (either could take the other's
 * words), and no name may hold a control character. A tree that breaks this is refused, at compile and verify.
 */
function assertHashable(full: string, rel: string, name: string, target?: string): void {
  const bad = CONTROL.test(name)
    ? "its name holds a control character"
    : target !== undefined && (rel.includes(" ") || target.includes(" ") || CONTROL.test(target))
      ? "it is a symlink whose path or target holds a space or a control character"
      : undefined;
  if (bad)
    throw new HermesError("E_COMPILE_UNSAFE_NAME", {
      message: `${JSON.stringify(full)}: ${bad}, so the plugin's integrity hash would not tell it apart`,
      file: full,
    });
}

/**
 * List a plugin tree (sorted, deterministic). Symlinks are recorded as links, not followed;
 * one that resolves outside the plugin folder is refused, since the hash would not cover
 * what actually runs.
 */
export async function listTree(root: string, realRoot = realpathSync.native(root)): Promise<TreeEntry[]> {
  // Synchronous calls: a plugin tree is many tiny entries, and a thread-pool round trip per
  // entry costs more than the work itself (bench/compile.bench.mjs).
  const out: TreeEntry[] = [];
  const walk = (dir: string, relDir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const ent of entries) {
      const name = ent.name;
      if (SKIP.has(name)) continue;
      const full = join(dir, name);
      const rel = relDir ? `${relDir}/${name}` : name;
      if (ent.isSymbolicLink()) {
        const target = readlinkSync(full);
        assertHashable(full, rel, name, target);
        const resolved = resolve(dir, target);
        let real = resolved;
        try {
          real = realpathSync.native(full);
        } catch {
          // dangling inside the tree: judged by where it points
        }
        if (!isInside(realRoot, real) || !isInside(realRoot, resolve(realpathSync.native(dir), target))) {
          throw new HermesError("E_COMPILE_LINK_ESCAPE", {
            message: `${full} is a symlink to ${target}, outside the plugin folder ${root}`,
            file: full,
          });
        }
        const relReal = relative(realRoot, real);
        if (relReal.split(sep).some((seg) => SKIP.has(seg.toLowerCase()))) {
          throw new HermesError("E_COMPILE_LINK_ESCAPE", {
            message: `${full} is a symlink into ${relReal}, git metadata the integrity hash does not cover`,
            file: full,
          });
        }
        out.push({ rel, type: "link", linkTarget: target });
      } else if (ent.isDirectory()) {
        assertHashable(full, rel, name);
        out.push({ rel, type: "dir" });
        walk(full, rel);
      } else if (ent.isFile()) {
        assertHashable(full, rel, name);
        const st = lstatSync(full);
        out.push({
          rel,
          type: "file",
          mode: st.mode & 0o111 ? 0o755 : 0o644,
          size: st.size,
          mtimeMs: st.mtimeMs,
          ctimeMs: st.ctimeMs,
          ino: st.ino,
        });
      }
    }
  };
  walk(realRoot, "");
  return out;
}

/** Stat fingerprint used to skip re-reading unchanged files (the trust rules: docs/architecture.md). */
export function fingerprint(entries: readonly TreeEntry[]): string {
  const h = sha256();
  for (const e of entries)
    h.update(
      `${e.type}\0${e.rel}\0${e.mode ?? ""}\0${e.size ?? ""}\0${e.mtimeMs ?? ""}\0${e.ctimeMs ?? ""}\0` +
        `${e.ino ?? ""}\0${e.linkTarget ?? ""}\n`,
    );
  return h.digest("hex");
}

export interface TreeHash {
  integrity: string;
  /** Per-file content hashes, for drift reports. */
  files: Record<string, string>;
}

/** Large files of one tree hashed at once on the libuv pool: bounds the memory of whole-file reads. */
const PARALLEL_FILES = 4;

/** sha256 over names, modes, contents and link targets of every shipped file; each file is read once. */
export async function hashTree(
  root: string,
  entries?: readonly TreeEntry[],
  realRoot = realpathSync.native(root),
): Promise<TreeHash> {
  const list = entries ?? (await listTree(root, realRoot));
  // Content hashes first (large files in parallel), then the tree hash over them in listing order.
  const pending = list.filter((e) => e.type === "file");
  const shas = new Map<string, string>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pending.length) {
      const e = pending[next++]!;
      shas.set(e.rel, await sha256File(join(realRoot, e.rel), e.size));
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_FILES, pending.length) }, worker));
  const h = sha256();
  const files: Record<string, string> = {};
  for (const e of list) {
    if (e.type === "dir") h.update(`D ${e.rel}\n`);
    else if (e.type === "link") {
      files[e.rel] = `link:${e.linkTarget}`;
      h.update(`L ${e.rel} ${e.linkTarget}\n`);
    } else {
      files[e.rel] = shas.get(e.rel)!;
      h.update(`F ${e.mode!.toString(8)} ${e.rel} ${files[e.rel]}\n`);
    }
  }
  return { integrity: INTEGRITY_PREFIX + h.digest("hex"), files };
}
