import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

/**
 * Git object ids computed without git: what lets a bundle prove, offline, that the plugin tree
 * it carries is exactly `<revision>:<subdir>` of the source repository.
 *
 * - blob id = sha1("blob <len>\0" + bytes); a symlink is a blob of its target, mode 120000;
 * - tree id = sha1("tree <len>\0" + entries), entries `<mode> <name>\0<20-byte id>` sorted by
 *   name bytes with sub-trees compared as `name/` (git's order); modes 100644, 100755, 120000,
 *   160000 (submodule commit), 40000 (tree);
 * - a commit's first line is `tree <id>`.
 *
 * The proof in a bundle is the raw commit object plus the raw trees on the path from the root
 * to the plugin's subdirectory; each is checked by hashing it, so the chain
 * revision → root tree → … → plugin tree holds with git's own (SHA-1) strength.
 */

export type GitFileMode = "100644" | "100755" | "120000" | "160000";

export interface GitFile {
  /** `/`-separated path relative to the tree's root. */
  path: string;
  mode: GitFileMode;
  /** Content (file bytes, or the link target for 120000). Absent for 160000. */
  data?: Buffer;
  /** The submodule commit for 160000 entries. */
  sha?: string;
}

export function objectId(type: "blob" | "tree" | "commit", content: Buffer): string {
  return createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

interface Node {
  files: Map<string, { mode: string; sha: string }>;
  dirs: Map<string, Node>;
}

export interface BuiltTree {
  /** Id of the root tree. */
  root: string;
  /** Raw content of every tree, by id. */
  trees: Map<string, Buffer>;
  /** Raw content of every blob, by id. */
  blobs: Map<string, Buffer>;
}

function entrySortKey(name: string, isTree: boolean): Buffer {
  return Buffer.from(isTree ? `${name}/` : name, "utf8");
}

/** Build the git trees for a set of files (no empty folders: git has none). */
export function buildTree(files: readonly GitFile[]): BuiltTree {
  const rootNode: Node = { files: new Map(), dirs: new Map() };
  const blobs = new Map<string, Buffer>();
  for (const f of files) {
    const segs = f.path.split("/");
    let node = rootNode;
    for (const s of segs.slice(0, -1)) {
      let next = node.dirs.get(s);
      if (!next) {
        next = { files: new Map(), dirs: new Map() };
        node.dirs.set(s, next);
      }
      node = next;
    }
    let sha: string;
    if (f.mode === "160000") sha = f.sha!;
    else {
      const data = f.data ?? Buffer.alloc(0);
      sha = objectId("blob", data);
      blobs.set(sha, data);
    }
    node.files.set(segs[segs.length - 1]!, { mode: f.mode, sha });
  }
  const trees = new Map<string, Buffer>();
  const write = (node: Node): string => {
    const items: Array<{ key: Buffer; bytes: Buffer }> = [];
    for (const [name, d] of node.dirs) {
      const sha = write(d);
      items.push({
        key: entrySortKey(name, true),
        bytes: Buffer.concat([Buffer.from(`40000 ${name}\0`, "utf8"), Buffer.from(sha, "hex")]),
      });
    }
    for (const [name, f] of node.files) {
      items.push({
        key: entrySortKey(name, false),
        bytes: Buffer.concat([Buffer.from(`${f.mode} ${name}\0`, "utf8"), Buffer.from(f.sha, "hex")]),
      });
    }
    items.sort((a, b) => Buffer.compare(a.key, b.key));
    const content = Buffer.concat(items.map((i) => i.bytes));
    const id = objectId("tree", content);
    trees.set(id, content);
    return id;
  };
  return { root: write(rootNode), trees, blobs };
}

export interface TreeEntryRaw {
  mode: string;
  name: string;
  sha: string;
}

/** Parse a raw tree object; throws on malformed content (checkProof turns that into its reason). */
export function parseTree(raw: Buffer): TreeEntryRaw[] {
  const out: TreeEntryRaw[] = [];
  let i = 0;
  while (i < raw.length) {
    const sp = raw.indexOf(0x20, i);
    const nul = raw.indexOf(0x00, sp + 1);
    if (sp < 0 || nul < 0 || nul + 21 > raw.length) throw new Error("malformed tree object");
    out.push({
      mode: raw.subarray(i, sp).toString("latin1"),
      name: raw.subarray(sp + 1, nul).toString("utf8"),
      sha: raw.subarray(nul + 1, nul + 21).toString("hex"),
    });
    i = nul + 21;
  }
  return out;
}

/** The tree id named by a raw commit object's first line. */
export function commitTree(raw: Buffer): string {
  const m = /^tree ([0-9a-f]{40})\n/.exec(raw.subarray(0, 46).toString("latin1"));
  if (!m) throw new Error("malformed commit object");
  return m[1]!;
}

/**
 * Check the proof: the commit hashes to `revision`, and walking `subdir` from its root tree
 * through `pathTrees` (each hashed) arrives at `tree`. Returns a reason when it does not.
 */
export function checkProof(p: {
  revision: string;
  tree: string;
  subdir?: string;
  commit: Buffer;
  pathTrees: readonly Buffer[];
}): string | undefined {
  const rev = objectId("commit", p.commit);
  if (rev !== p.revision) return `the commit object hashes to ${rev}, not ${p.revision}`;
  let root: string;
  try {
    root = commitTree(p.commit);
  } catch (e) {
    return (e as Error).message;
  }
  const segs = p.subdir ? p.subdir.split("/").filter(Boolean) : [];
  if (p.pathTrees.length !== segs.length)
    return `the proof has ${p.pathTrees.length} path tree(s) for ${segs.length} subdirectory level(s)`;
  let cur = root;
  for (let i = 0; i < segs.length; i++) {
    const raw = p.pathTrees[i]!;
    const id = objectId("tree", raw);
    if (id !== cur) return `path tree ${i + 1} hashes to ${id}, not ${cur}`;
    let entries: TreeEntryRaw[];
    try {
      entries = parseTree(raw);
    } catch (e) {
      return (e as Error).message;
    }
    const hit = entries.find((e) => e.name === segs[i] && e.mode === "40000");
    if (!hit) return `'${segs.slice(0, i + 1).join("/")}' is not a folder at ${p.revision}`;
    cur = hit.sha;
  }
  if (cur !== p.tree)
    return `${p.subdir ? `'${p.subdir}'` : "the root"} at ${p.revision} is tree ${cur}, not ${p.tree}`;
  return undefined;
}

/** Write objects as loose objects of a repository's object store (`.git/objects`). */
export async function writeLooseObjects(
  gitDir: string,
  objects: Iterable<{ type: "blob" | "tree" | "commit"; content: Buffer }>,
): Promise<void> {
  for (const o of objects) {
    const id = objectId(o.type, o.content);
    const dir = join(gitDir, "objects", id.slice(0, 2));
    const file = join(dir, id.slice(2));
    await fsp.mkdir(dir, { recursive: true });
    if (
      await fsp.access(file).then(
        () => true,
        () => false,
      )
    )
      continue;
    await fsp.writeFile(file, deflateSync(Buffer.concat([Buffer.from(`${o.type} ${o.content.length}\0`), o.content])), {
      mode: 0o444,
    });
  }
}
