import { HermesError } from "../../core/errors.js";
import { revParse, runGit, runGitBytes } from "../../install/git.js";
import type { GitFile, GitFileMode } from "./git-objects.js";

/**
 * Reading a plugin's recorded revision out of its installed checkout (the `.git` that
 * `hermes plugins install` leaves in every git-installed plugin, subdirectory installs
 * included): the files of `<revision>:<subdir>` exactly as git stores them (bytes, modes,
 * symlinks, submodule commits), never the working tree, which may hold local edits, copied
 * `*.example` files or ignored files.
 */

export interface RevisionTree {
  tree: string;
  files: GitFile[];
  /** Raw commit object of the revision. */
  commit: Buffer;
  /** Raw trees from the root to the parent of the plugin folder (one per subdir segment). */
  pathTrees: Buffer[];
}

interface CatResult {
  type: string;
  data: Buffer;
}

/** `git cat-file --batch` over many objects in one process. Missing objects are absent from the map. */
export async function catFileBatch(
  cwd: string,
  ids: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Map<string, CatResult>> {
  const out = new Map<string, CatResult>();
  if (!ids.length) return out;
  const r = await runGitBytes(["cat-file", "--batch"], `${ids.join("\n")}\n`, { cwd, env });
  if (!r.ok) throw new HermesError("E_GIT_FAILED", { message: `git cat-file failed in ${cwd}: ${r.error}` });
  const buf = r.stdout;
  let i = 0;
  for (const id of ids) {
    const nl = buf.indexOf(0x0a, i);
    if (nl < 0) break;
    const head = buf.subarray(i, nl).toString("latin1");
    i = nl + 1;
    const m = /^([0-9a-f]{40}) (\w+) (\d+)$/.exec(head);
    if (!m) continue; // "<id> missing"
    const size = Number(m[3]);
    out.set(id, { type: m[2]!, data: Buffer.from(buf.subarray(i, i + size)) });
    i += size + 1;
  }
  return out;
}

/** The 40-hex object id `spec` names, if any. */
async function objectId(cwd: string, spec: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  const v = await revParse(cwd, spec, env);
  return v && /^[0-9a-f]{40}$/.test(v) ? v : undefined;
}

function noSource(what: string, dir: string, revision: string): HermesError {
  return new HermesError("E_BUNDLE_EXPORT_SOURCE", { message: `cannot bundle ${dir}: ${what} (revision ${revision})` });
}

export async function readRevisionTree(
  dir: string,
  revision: string,
  subdir: string | undefined,
  env?: NodeJS.ProcessEnv,
): Promise<RevisionTree> {
  const gitDir = await runGit(["rev-parse", "--git-dir"], { cwd: dir, env });
  if (!gitDir.ok) throw noSource("it is not a git checkout (no .git)", dir, revision);
  const commitId = await objectId(dir, `${revision}^{commit}`, env);
  if (commitId !== revision) throw noSource("its .git does not hold the recorded commit", dir, revision);
  const segs = subdir ? subdir.split("/").filter(Boolean) : [];
  const tree = await objectId(dir, segs.length ? `${revision}:${segs.join("/")}` : `${revision}^{tree}`, env);
  if (!tree)
    throw noSource(
      `'${subdir ?? "."}' is not a folder of the recorded commit, or its objects are missing`,
      dir,
      revision,
    );
  const pathIds: string[] = [];
  for (let i = 0; i < segs.length; i++) {
    const id = await objectId(dir, i === 0 ? `${revision}^{tree}` : `${revision}:${segs.slice(0, i).join("/")}`, env);
    if (!id) throw noSource(`the tree of '${segs.slice(0, i).join("/") || "."}' is missing`, dir, revision);
    pathIds.push(id);
  }
  const ls = await runGit(["ls-tree", "-r", "-z", "--full-tree", tree], { cwd: dir, env });
  if (!ls.ok) throw noSource(`git ls-tree failed: ${ls.error}`, dir, revision);
  const rows = ls.stdout.split("\0").filter(Boolean);
  const listed: Array<{ mode: GitFileMode; type: string; id: string; path: string }> = [];
  for (const row of rows) {
    const m = /^(\d+) (\w+) ([0-9a-f]{40})\t([\s\S]+)$/.exec(row);
    if (!m) throw noSource(`unexpected git ls-tree line ${JSON.stringify(row)}`, dir, revision);
    const mode = m[1]!;
    if (mode !== "100644" && mode !== "100755" && mode !== "120000" && mode !== "160000")
      throw noSource(`unsupported file mode ${mode} for ${m[4]}`, dir, revision);
    listed.push({ mode, type: m[2]!, id: m[3]!, path: m[4]! });
  }
  const objects = await catFileBatch(
    dir,
    [revision, ...pathIds, ...new Set(listed.filter((l) => l.mode !== "160000").map((l) => l.id))],
    env,
  );
  const commit = objects.get(revision);
  if (!commit || commit.type !== "commit") throw noSource("the commit object is missing", dir, revision);
  const pathTrees = pathIds.map((id) => {
    const t = objects.get(id);
    if (!t || t.type !== "tree") throw noSource(`tree ${id} is missing`, dir, revision);
    return t.data;
  });
  const files: GitFile[] = listed.map((l) => {
    if (l.mode === "160000") return { path: l.path, mode: l.mode, sha: l.id };
    const o = objects.get(l.id);
    if (!o || o.type !== "blob") throw noSource(`blob ${l.id} (${l.path}) is missing`, dir, revision);
    return { path: l.path, mode: l.mode, data: o.data };
  });
  return { tree, files, commit: commit.data, pathTrees };
}

/** Whether the checkout has local changes (they are not bundled; the bundle carries the revision). */
export async function isDirty(dir: string, env?: NodeJS.ProcessEnv): Promise<boolean> {
  const r = await runGit(["status", "--porcelain", "--untracked-files=no"], { cwd: dir, env });
  return r.ok && r.stdout.trim().length > 0;
}
