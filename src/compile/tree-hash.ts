import { createHash } from "node:crypto";
import { createReadStream, promises as fsp } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
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
  ino?: number;
  linkTarget?: string;
}

/** Folders that never ship: VCS metadata changes on every fetch. */
const SKIP = new Set([".git", ".hg", ".svn"]);

function inside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === "" || (!r.startsWith(`..${sep}`) && r !== ".." && !isAbsolute(r));
}

/**
 * List a plugin tree (sorted, deterministic). Symlinks are recorded as links, not followed;
 * one that resolves outside the plugin folder is refused, since the hash would not cover
 * what actually runs.
 */
export async function listTree(root: string): Promise<TreeEntry[]> {
  const realRoot = await fsp.realpath(root);
  const out: TreeEntry[] = [];
  const walk = async (dir: string, relDir: string): Promise<void> => {
    const names = (await fsp.readdir(dir)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const name of names) {
      if (SKIP.has(name)) continue;
      const full = join(dir, name);
      const rel = relDir ? `${relDir}/${name}` : name;
      const st = await fsp.lstat(full);
      if (st.isSymbolicLink()) {
        const target = await fsp.readlink(full);
        const resolved = resolve(dir, target);
        const real = await fsp.realpath(full).catch(() => resolved);
        if (!inside(realRoot, real) || !inside(realRoot, resolve(await fsp.realpath(dir), target))) {
          throw new HermesError("E_COMPILE_LINK_ESCAPE", {
            message: `${full} is a symlink to ${target}, outside the plugin folder ${root}`,
            file: full,
          });
        }
        out.push({ rel, type: "link", linkTarget: target });
      } else if (st.isDirectory()) {
        out.push({ rel, type: "dir" });
        await walk(full, rel);
      } else if (st.isFile()) {
        out.push({ rel, type: "file", mode: st.mode & 0o111 ? 0o755 : 0o644, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
      }
    }
  };
  await walk(realRoot, "");
  return out;
}

async function fileSha(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

/** Stat fingerprint used to skip re-reading unchanged files. */
export function fingerprint(entries: readonly TreeEntry[]): string {
  const h = createHash("sha256");
  for (const e of entries) h.update(`${e.type}\0${e.rel}\0${e.mode ?? ""}\0${e.size ?? ""}\0${e.mtimeMs ?? ""}\0${e.ino ?? ""}\0${e.linkTarget ?? ""}\n`);
  return h.digest("hex");
}

export interface TreeHash {
  integrity: string;
  /** Per-file content hashes, for drift reports. */
  files: Record<string, string>;
}

/** sha256 over names, modes, contents and link targets of every shipped file. */
export async function hashTree(root: string, entries?: readonly TreeEntry[]): Promise<TreeHash> {
  const list = entries ?? (await listTree(root));
  const realRoot = await fsp.realpath(root);
  const h = createHash("sha256");
  const files: Record<string, string> = {};
  for (const e of list) {
    if (e.type === "dir") h.update(`D ${e.rel}\n`);
    else if (e.type === "link") {
      files[e.rel] = `link:${e.linkTarget}`;
      h.update(`L ${e.rel} ${e.linkTarget}\n`);
    } else {
      const sha = await fileSha(join(realRoot, e.rel));
      files[e.rel] = sha;
      h.update(`F ${e.mode!.toString(8)} ${e.rel} ${sha}\n`);
    }
  }
  return { integrity: INTEGRITY_PREFIX + h.digest("hex"), files };
}
