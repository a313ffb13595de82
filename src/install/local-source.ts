import { promises as fsp } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { HermesError } from "../core/errors.js";
import { hasScheme } from "./identifier.js";
import { runGit, GIT_SHORT_TIMEOUT_MS } from "./git.js";

/**
 * `hermes plugins install <path>`: an existing folder on this machine is a local source, never an
 * `owner/repo/subdir` on GitHub. A folder in a git repository (bare or with a work tree) is cloned
 * through `file://` like any remote, so pinning, metadata and `update` behave the same; a folder
 * outside any repository is copied as it is (no revision, no pin).
 */
export type LocalSource =
  | { kind: "git"; path: string; url: string; subdir?: string; dirty: boolean }
  | { kind: "folder"; path: string };

/** Forms that can only mean a path: absolute, `./`, `../`, `~/` (and the bare dot names). */
function pathShaped(s: string): boolean {
  return isAbsolute(s) || /^\.\.?(?:[\\/]|$)/.test(s) || /^~(?:[\\/]|$)/.test(s);
}

function expandHome(s: string, env: NodeJS.ProcessEnv): string {
  if (!/^~(?:[\\/]|$)/.test(s)) return s;
  return (env.HOME || homedir()) + s.slice(1);
}

function localError(message: string): HermesError {
  return new HermesError("E_INSTALL_LOCAL_PATH", { message });
}

/**
 * The local source an identifier names, or undefined when it is not a path on this machine. A
 * path-shaped identifier that does not exist is an error (it must not fall through to GitHub);
 * `owner/repo` falls through unless a folder of that relative path exists.
 */
export async function localSourceOf(
  identifier: string,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LocalSource | undefined> {
  const id = identifier.trim();
  if (!id || hasScheme(id) || id.startsWith("-")) return undefined;
  const hash = id.indexOf("#");
  const base = hash >= 0 ? id.slice(0, hash) : id;
  const sub = hash >= 0 ? id.slice(hash + 1).replace(/^\/+|\/+$/g, "") : "";
  if (!base || (!base.includes("/") && !base.includes("\\") && !pathShaped(base))) return undefined;
  const abs = resolve(cwd, expandHome(base, env));
  const st = await fsp.stat(abs).catch(() => undefined);
  if (!st) {
    if (pathShaped(base)) throw localError(`the local path ${abs} does not exist; nothing was installed`);
    return undefined;
  }
  if (!st.isDirectory())
    throw localError(
      `the local path ${abs} is not a folder (give the plugin's folder or its git repository); nothing was installed`,
    );
  const real = await fsp.realpath(abs);
  const git = (args: string[]) => runGit(args, { cwd: real, env, timeoutMs: GIT_SHORT_TIMEOUT_MS });
  const bare = await git(["rev-parse", "--is-bare-repository"]);
  if (!bare.ok) {
    if (sub)
      throw localError(
        `${abs} is not in a git repository: '#${sub}' selects a folder of a repository; give the plugin ` +
          "folder's own path instead",
      );
    return { kind: "folder", path: real };
  }
  if (bare.stdout.trim() === "true") {
    const gitDir = (await git(["rev-parse", "--absolute-git-dir"])).stdout.trim() || real;
    return { kind: "git", path: real, url: `file://${gitDir}`, ...(sub ? { subdir: sub } : {}), dirty: false };
  }
  const top = (await git(["rev-parse", "--show-toplevel"])).stdout.trim();
  const prefix = (await git(["rev-parse", "--show-prefix"])).stdout.trim().replace(/\/+$/, "");
  if (!top) return { kind: "folder", path: real };
  // A folder the repository does not track (an untracked plugin in a dotfiles repo) is a plain folder.
  const tracked = await git(["ls-files", "--", "."]);
  if (tracked.ok && !tracked.stdout.trim()) {
    if (sub)
      throw localError(`${abs} is not tracked by its git repository (${top}): '#${sub}' cannot select a folder of it`);
    return { kind: "folder", path: real };
  }
  const subdir = [prefix, sub].filter(Boolean).join("/");
  // Only committed content travels through a clone: say so when the folder has more.
  const status = await git(["status", "--porcelain", "--", "."]);
  return {
    kind: "git",
    path: real,
    url: `file://${top}`,
    ...(subdir ? { subdir } : {}),
    dirty: status.ok && status.stdout.trim() !== "",
  };
}
