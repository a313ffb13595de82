import { promises as fsp } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { isContainedRelativePath, isInside } from "../core/contain.js";
import { HermesError } from "../core/errors.js";
import {
  cloneHint,
  gitMessage,
  gitOrThrow,
  gitTimeoutMs,
  indent,
  remoteRefs,
  revParse,
  runGit,
  type GitRunOptions,
} from "./git.js";
import { isFullSha, scrubUrl } from "./identifier.js";

/**
 * Git checkouts of plugins: clone (pinned or not), subdirectory snapshots that stay updatable,
 * and the "pull" step of an update.
 *
 * A subdirectory install places only the subdirectory, yet must stay updatable. The placed
 * folder gets the clone's `.git`, with HEAD on a local branch `hermes-subdir` whose commits are
 * snapshots: tree = the upstream commit's `<subdir>` tree, parent = the previous snapshot, made
 * with a fixed identity and date (same input, same commit id). `git status` then shows local
 * edits, and an update is a fast-forward to the next snapshot, so the autostash contract applies
 * unchanged. The subdirectory and branch are kept in the checkout's own git config
 * (`hermes.subdir`, `hermes.branch`, `hermes.upstream`), not in the install metadata.
 */

export const SUBDIR_BRANCH = "hermes-subdir";

const DUMB_HTTP_RE = /dumb http transport does not support shallow/i;

const SNAPSHOT_ENV = { GIT_AUTHOR_DATE: "@0 +0000", GIT_COMMITTER_DATE: "@0 +0000" };

export interface CloneRequest {
  /** Raw URL (credentials allowed: they reach git only through the one-shot helper). */
  url: string;
  /** Requested 40-hex revision (pinned install). */
  revision?: string;
  /** Branch or tag to clone (GitHub /tree/<branch>/… URLs). */
  branch?: string;
  env?: NodeJS.ProcessEnv;
}

function gitOpts<T extends object>(
  cwd: string,
  req: { url?: string; env?: NodeJS.ProcessEnv },
  extra: T,
): GitRunOptions & T {
  return { cwd, url: req.url, env: req.env, ...extra };
}

/**
 * GitHub `/tree/<rest…>`: the longest leading run of segments that names a branch or tag of the
 * remote is the branch; the remaining segments are the subdirectory. A 40-hex first segment is
 * a commit (a pin).
 */
export async function resolveTreePath(
  cwd: string,
  url: string,
  tree: readonly string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ branch?: string; revision?: string; subdir?: string }> {
  if (tree.length && isFullSha(tree[0]!))
    return { revision: tree[0]!.toLowerCase(), subdir: tree.slice(1).join("/") || undefined };
  const refs = await remoteRefs(cwd, url, env);
  for (let n = tree.length; n >= 1; n--) {
    const name = tree.slice(0, n).join("/");
    if (refs.has(name)) return { branch: name, subdir: tree.slice(n).join("/") || undefined };
  }
  throw new HermesError("E_GIT_BRANCH_NOT_FOUND", {
    message: `no branch or tag of ${scrubUrl(url)} matches the start of '${tree.join("/")}'`,
  });
}

/**
 * Clone `req.url` into `<cwd>/<dirName>`. The stored origin is the scrubbed URL (credentials never
 * reach `.git/config`). Pinned: fetch exactly that commit, check it out detached, verify HEAD.
 * Returns the installed revision (lowercase 40-hex).
 */
export async function cloneInto(cwd: string, dirName: string, req: CloneRequest): Promise<string> {
  const clean = scrubUrl(req.url);
  const cloneArgs = (shallow: boolean) => [
    "clone",
    ...(shallow ? ["--depth", "1"] : []),
    "--no-tags",
    ...(req.revision ? ["--no-checkout"] : []),
    ...(req.branch ? ["--branch", req.branch] : []),
    "--",
    clean,
    dirName,
  ];
  let shallow = true;
  let r = await runGit(cloneArgs(true), gitOpts(cwd, req, {}));
  if (!r.ok && DUMB_HTTP_RE.test(r.error)) {
    // git's "dumb" HTTP transport cannot make shallow clones: take the whole history instead.
    shallow = false;
    await fsp.rm(join(cwd, dirName), { recursive: true, force: true });
    r = await runGit(cloneArgs(false), gitOpts(cwd, req, {}));
  }
  if (!r.ok) {
    if (r.timedOut)
      throw new HermesError("E_GIT_TIMEOUT", {
        message: `git clone of ${clean} timed out after ${Math.round(gitTimeoutMs(req.env) / 1000)} seconds`,
      });
    const hint = cloneHint(r.error, req.url);
    throw new HermesError("E_GIT_CLONE_FAILED", {
      message: `git clone of ${clean} failed; git said:\n${indent(r.error || "(git printed nothing)")}`,
      ...(hint ? { hint } : {}),
    });
  }
  const dir = join(cwd, dirName);
  if (req.revision) {
    const sha = req.revision;
    await gitOrThrow(
      ["fetch", ...(shallow ? ["--depth", "1"] : []), "--no-tags", "origin", sha],
      gitOpts(dir, req, { code: "E_GIT_FETCH_FAILED", what: `Fetching commit '${sha}'` }),
    );
    await gitOrThrow(
      ["checkout", "--quiet", "--detach", sha],
      gitOpts(dir, req, { code: "E_GIT_CHECKOUT_FAILED", what: `Checkout of commit '${sha}'` }),
    );
    const head = await revParse(dir, "HEAD", req.env);
    if (head !== sha) {
      throw new HermesError("E_GIT_REVISION_MISMATCH", {
        message: `checked-out revision '${head ?? "?"}' does not match the requested commit '${sha}'`,
      });
    }
    return sha;
  }
  const head = await revParse(dir, "HEAD", req.env);
  if (!head) {
    // The clone itself succeeded: what git said while cloning (an empty repository, …) is the reason.
    const why = gitMessage(
      [r.stderr, (await runGit(["rev-parse", "HEAD"], gitOpts(dir, req, {}))).error].filter(Boolean).join("\n"),
    );
    throw new HermesError("E_GIT_FAILED", {
      message: `${clean} was cloned but has no commit to install; git said:\n${indent(why || "(git printed nothing)")}`,
    });
  }
  return head;
}

/**
 * Check a subdirectory against the clone: no `..`, not absolute, and after resolving symlinks
 * still inside the repository (and not inside `.git`). Returns its real path relative to the clone.
 */
export async function resolveSubdir(cloneDir: string, subdir: string): Promise<string> {
  const segs = subdir.split(/[\\/]+/).filter(Boolean);
  if (!isContainedRelativePath(subdir)) {
    throw new HermesError("E_INSTALL_SUBDIR_ESCAPE", {
      message: `plugin subdirectory '${subdir}' escapes the repository`,
    });
  }
  const rootReal = await fsp.realpath(cloneDir);
  // Walk segment by segment: a symlink that leaves the repository is an escape even when what it
  // points at does not exist.
  let real = rootReal;
  for (const seg of segs) {
    const next = join(real, seg);
    const st = await fsp.lstat(next).catch(() => undefined);
    if (!st)
      throw new HermesError("E_INSTALL_SUBDIR_MISSING", {
        message: `plugin subdirectory '${subdir}' does not exist in the repository`,
      });
    if (st.isSymbolicLink()) {
      const target = await fsp.readlink(next);
      const resolved = isAbsolute(target) ? target : join(real, target);
      if (!isInside(rootReal, resolved))
        throw new HermesError("E_INSTALL_SUBDIR_ESCAPE", {
          message: `plugin subdirectory '${subdir}' escapes the repository (a symlink leads to ${target})`,
        });
      const r = await fsp.realpath(next).catch(() => undefined);
      if (!r)
        throw new HermesError("E_INSTALL_SUBDIR_ESCAPE", {
          message: `plugin subdirectory '${subdir}' is a symlink that leads nowhere inside the repository`,
        });
      if (!isInside(rootReal, r))
        throw new HermesError("E_INSTALL_SUBDIR_ESCAPE", {
          message: `plugin subdirectory '${subdir}' escapes the repository (it resolves to ${r})`,
        });
      real = r;
    } else real = next;
  }
  const rel = relative(rootReal, real).split(sep).join("/");
  if (rel === "")
    throw new HermesError("E_INSTALL_SUBDIR_ESCAPE", {
      message: `plugin subdirectory '${subdir}' is the repository root; install without a subdirectory`,
    });
  if (rel === ".git" || rel.startsWith(".git/"))
    throw new HermesError("E_INSTALL_SUBDIR_ESCAPE", { message: `plugin subdirectory '${subdir}' points into .git` });
  if (!(await fsp.stat(real)).isDirectory())
    throw new HermesError("E_INSTALL_SUBDIR_MISSING", {
      message: `plugin subdirectory '${subdir}' is not a directory`,
    });
  return rel;
}

async function snapshotCommit(
  dir: string,
  tree: string,
  parent: string | undefined,
  source: string,
  upstream: string,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  const args = ["commit-tree", tree, "-m", `hermes-kit snapshot of ${source} at ${upstream}`];
  if (parent) args.push("-p", parent);
  const out = await gitOrThrow(args, {
    cwd: dir,
    env,
    identity: true,
    extraEnv: SNAPSHOT_ENV,
    what: "Recording the subdirectory snapshot",
  });
  return out.trim();
}

/**
 * Turn `<cloneDir>/<rel>` into a self-contained, updatable checkout at `dest` (see the module
 * comment). `cloneDir` is consumed.
 */
export async function snapshotSubdir(
  cloneDir: string,
  rel: string,
  dest: string,
  info: { source: string; revision: string; env?: NodeJS.ProcessEnv },
): Promise<void> {
  const env = info.env;
  const tree = (
    await gitOrThrow(["rev-parse", `HEAD:${rel}`], { cwd: cloneDir, env, what: `Reading the tree of '${rel}'` })
  ).trim();
  const branchOut = await runGit(["symbolic-ref", "--quiet", "--short", "HEAD"], { cwd: cloneDir, env });
  const branch = branchOut.ok ? branchOut.stdout.trim() : "";
  const commit = await snapshotCommit(cloneDir, tree, undefined, info.source, info.revision, env);
  await fsp.rename(join(cloneDir, ...rel.split("/")), dest);
  await fsp.rename(join(cloneDir, ".git"), join(dest, ".git"));
  const g = (args: string[], what: string) => gitOrThrow(args, { cwd: dest, env, what });
  await g(["update-ref", `refs/heads/${SUBDIR_BRANCH}`, commit], "Creating the snapshot branch");
  await g(["symbolic-ref", "HEAD", `refs/heads/${SUBDIR_BRANCH}`], "Switching to the snapshot branch");
  await g(["reset", "--quiet", "--mixed", "HEAD"], "Indexing the snapshot");
  await g(["config", "hermes.subdir", rel], "Recording the subdirectory");
  await g(["config", "hermes.upstream", info.revision], "Recording the upstream revision");
  if (branch) await g(["config", "hermes.branch", branch], "Recording the branch");
}

export async function subdirOf(dir: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  const r = await runGit(["config", "--get", "hermes.subdir"], { cwd: dir, env });
  return r.ok && r.stdout.trim() ? r.stdout.trim() : undefined;
}

export interface PullResult {
  ok: boolean;
  /** Upstream revision now checked out (the snapshot's source commit for subdir installs). */
  revision?: string;
  upToDate: boolean;
  output: string;
  error: string;
  timedOut: boolean;
}

/** The "pull" of an update: `git pull --ff-only`, or for a subdirectory checkout, fetch + next snapshot + ff-merge. */
export async function pullCheckout(dir: string, env?: NodeJS.ProcessEnv): Promise<PullResult> {
  const sub = await subdirOf(dir, env);
  if (!sub) {
    const before = await revParse(dir, "HEAD", env);
    const r = await runGit(["pull", "--ff-only", "--no-rebase"], { cwd: dir, env });
    const after = await revParse(dir, "HEAD", env);
    const output = `${r.stdout}${r.stderr}`.trim();
    return {
      ok: r.ok,
      revision: after,
      upToDate: r.ok && before === after,
      output,
      error: r.error,
      timedOut: r.timedOut,
    };
  }
  const branchCfg = await runGit(["config", "--get", "hermes.branch"], { cwd: dir, env });
  const branch = branchCfg.ok && branchCfg.stdout.trim() ? branchCfg.stdout.trim() : "HEAD";
  const upCfg = await runGit(["config", "--get", "hermes.upstream"], { cwd: dir, env });
  const upstreamBefore = upCfg.stdout.trim().toLowerCase();
  let f = await runGit(["fetch", "--depth", "1", "--no-tags", "origin", branch], { cwd: dir, env });
  if (!f.ok && DUMB_HTTP_RE.test(f.error))
    f = await runGit(["fetch", "--no-tags", "origin", branch], { cwd: dir, env });
  if (!f.ok) return { ok: false, upToDate: false, output: "", error: f.error, timedOut: f.timedOut };
  const upstream = await revParse(dir, "FETCH_HEAD", env);
  if (!upstream)
    return { ok: false, upToDate: false, output: "", error: "could not read the fetched revision", timedOut: false };
  if (upstream === upstreamBefore)
    return { ok: true, revision: upstream, upToDate: true, output: "Already up to date.", error: "", timedOut: false };
  const tree = await revParse(dir, `FETCH_HEAD:${sub}`, env);
  if (!tree) {
    return {
      ok: false,
      upToDate: false,
      output: "",
      error: `the subdirectory '${sub}' no longer exists at ${upstream} (or is not a directory)`,
      timedOut: false,
    };
  }
  const source = (await runGit(["config", "--get", "remote.origin.url"], { cwd: dir, env })).stdout.trim();
  const head = await revParse(dir, "HEAD", env);
  let next: string;
  try {
    next = await snapshotCommit(dir, tree, head, `${source}#${sub}`, upstream, env);
  } catch (e) {
    return { ok: false, upToDate: false, output: "", error: (e as Error).message, timedOut: false };
  }
  const m = await runGit(["merge", "--ff-only", "--quiet", next], { cwd: dir, env });
  if (!m.ok) return { ok: false, upToDate: false, output: "", error: m.error, timedOut: m.timedOut };
  await runGit(["config", "hermes.upstream", upstream], { cwd: dir, env });
  return {
    ok: true,
    revision: upstream,
    upToDate: false,
    output: `Fast-forward to ${upstream}`,
    error: "",
    timedOut: false,
  };
}

/** The upstream revision a checkout is at: `hermes.upstream` for subdir checkouts, else HEAD. */
export async function upstreamRevision(dir: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  const r = await runGit(["config", "--get", "hermes.upstream"], { cwd: dir, env });
  if (r.ok && isFullSha(r.stdout.trim())) return r.stdout.trim().toLowerCase();
  return revParse(dir, "HEAD", env);
}
