import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { SimpleGit } from "simple-git";
import { HermesError, type ErrorCode } from "../core/errors.js";
import { redactSecrets, scrubUrl, urlCredentials } from "./identifier.js";

/**
 * Every git call of hermes-kit goes through here (install, update, remove, bundles), so none can hang or leak a secret:
 * a resolved binary, stdin /dev/null (or the input runGitBytes writes), no prompt of any kind (terminal, credential
 * manager, ssh),
 * a wall-clock timeout, and error text with credentials scrubbed.
 */

export const GIT_TIMEOUT_MS = 60_000;
export const GIT_SHORT_TIMEOUT_MS = 15_000;

/** A fixed identity and date for the commits hermes-kit makes itself (stash, subdir snapshots). */
const HERMES_IDENTITY = {
  GIT_AUTHOR_NAME: "hermes-kit",
  GIT_AUTHOR_EMAIL: "hermes-kit@localhost",
  GIT_COMMITTER_NAME: "hermes-kit",
  GIT_COMMITTER_EMAIL: "hermes-kit@localhost",
};

const WELL_KNOWN = ["/usr/bin/git", "/usr/local/bin/git", "/bin/git", "/opt/homebrew/bin/git"];

let resolvedBinary: string | undefined;

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** git on PATH, else a well-known location; refused with a clear error when there is none. */
export function gitBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (resolvedBinary) return resolvedBinary;
  const names = process.platform === "win32" ? ["git.exe", "git.cmd"] : ["git"];
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean)) {
    for (const n of names) {
      const p = join(dir, n);
      if (executable(p)) return (resolvedBinary = p);
    }
  }
  for (const p of WELL_KNOWN) if (executable(p)) return (resolvedBinary = p);
  throw new HermesError("E_GIT_MISSING", { message: "git is not installed or not in PATH" });
}

/** The timeout of network git commands (60 s; HERMES_GIT_TIMEOUT_MS overrides, for tests and slow links). */
export function gitTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return timeoutMs(env, GIT_TIMEOUT_MS);
}

function timeoutMs(env: NodeJS.ProcessEnv, fallback: number): number {
  const v = Number(env.HERMES_GIT_TIMEOUT_MS);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/** The environment of every git child: never prompt, never wait for a person. */
export function gitEnv(
  base: NodeJS.ProcessEnv = process.env,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  env.GIT_TERMINAL_PROMPT = "0";
  env.GCM_INTERACTIVE = "Never";
  env.GIT_ASKPASS = env.GIT_ASKPASS || "";
  const ssh = env.GIT_SSH_COMMAND?.trim() || "ssh";
  env.GIT_SSH_COMMAND = /BatchMode/.test(ssh) ? ssh : `${ssh} -o BatchMode=yes`;
  // Pagers, editors and progress meters have no place in a captured child.
  env.GIT_PAGER = "cat";
  env.GIT_EDITOR = "true";
  env.LC_ALL = "C";
  delete env.GIT_DIR;
  delete env.GIT_WORK_TREE;
  delete env.GIT_INDEX_FILE;
  return { ...env, ...extra };
}

/**
 * Credentials of an http(s) URL reach git through a one-shot credential helper reading them from
 * the environment of that one command: never argv, never `.git/config`, never a helper's store.
 */
function credentialEnv(base: Record<string, string>, rawUrl: string | undefined): Record<string, string> {
  const creds = rawUrl ? urlCredentials(rawUrl) : undefined;
  if (!creds) return {};
  const n = Number.parseInt(base.GIT_CONFIG_COUNT ?? "0", 10) || 0;
  return {
    GIT_CONFIG_COUNT: String(n + 2),
    // An empty value resets the helper list: the user's helpers neither answer nor store.
    [`GIT_CONFIG_KEY_${n}`]: "credential.helper",
    [`GIT_CONFIG_VALUE_${n}`]: "",
    [`GIT_CONFIG_KEY_${n + 1}`]: "credential.helper",
    [`GIT_CONFIG_VALUE_${n + 1}`]:
      '!f() { test "$1" = get || exit 0; printf "username=%s\\npassword=%s\\n" "$HERMES_GIT_CRED_USER" ' +
      '"$HERMES_GIT_CRED_PASS"; }; f',
    HERMES_GIT_CRED_USER: creds.username,
    HERMES_GIT_CRED_PASS: creds.password,
  };
}

export interface GitRunOptions {
  cwd: string;
  /** The raw URL this call talks to: its credentials are passed via the helper and scrubbed from errors. */
  url?: string;
  timeoutMs?: number;
  /** Set hermes-kit's identity (commands that create commits: stash, commit-tree). */
  identity?: boolean;
  env?: NodeJS.ProcessEnv;
  extraEnv?: Record<string, string>;
}

export interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
  /** Scrubbed, trimmed error text (stderr, else stdout) when `ok` is false. */
  error: string;
  timedOut: boolean;
}

async function client(opts: GitRunOptions, signal: AbortSignal): Promise<SimpleGit> {
  // Loaded on the first git call: commands that never run git do not pay for simple-git.
  const { simpleGit } = await import("simple-git");
  const base = opts.env ?? process.env;
  const env = gitEnv(base, opts.extraEnv);
  Object.assign(env, credentialEnv(env, opts.url));
  if (opts.identity) Object.assign(env, HERMES_IDENTITY);
  const git = simpleGit({
    baseDir: opts.cwd,
    binary: gitBinary(base),
    maxConcurrentProcesses: 1,
    abort: signal,
    trimmed: false,
    // The environment is ours (built above), not attacker input: let simple-git pass it through.
    unsafe: {
      allowUnsafeSshCommand: true,
      allowUnsafeConfigEnvCount: true,
      allowUnsafeCredentialHelper: true,
      allowUnsafeAskPass: true,
      allowUnsafeConfigPaths: true,
      allowUnsafeEditor: true,
      allowUnsafePager: true,
      allowUnsafeGitProxy: true,
      allowUnsafeTemplateDir: true,
      allowUnsafeDiffExternal: true,
    },
  }).env(env);
  // stdin is /dev/null: simple-git leaves an open pipe otherwise, which a reading child would wait on.
  const store = (git as unknown as { _plugins?: { add(p: unknown): unknown } })._plugins;
  if (!store || typeof store.add !== "function")
    throw new Error(
      "internal error: simple-git internals changed (the pinned version has _plugins); cannot set git's " +
        "stdin to /dev/null",
    );
  store.add({
    type: "spawn.options",
    action: (data: Record<string, unknown>) => ({ ...data, stdio: ["ignore", "pipe", "pipe"] }),
  });
  return git;
}

/** Run `git <args>`; never throws for a non-zero exit (the caller words the failure). */
export async function runGit(args: string[], opts: GitRunOptions): Promise<GitResult> {
  const ms = opts.timeoutMs ?? timeoutMs(opts.env ?? process.env, GIT_TIMEOUT_MS);
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  const urls = opts.url ? [opts.url] : [];
  // A missing git is its own error (E_GIT_MISSING), not a failed command.
  gitBinary(opts.env ?? process.env);
  try {
    const git = await client(opts, ac.signal);
    let stderr = "";
    const stdout = await git
      .outputHandler((_c, _o, err) => err.on("data", (d: Buffer) => (stderr += d.toString("utf8"))))
      .raw(args);
    return { ok: true, stdout, stderr: redactSecrets(stderr, urls), error: "", timedOut: false };
  } catch (e) {
    const timedOut = ac.signal.aborted;
    const raw = e instanceof Error ? e.message : String(e);
    const error = redactSecrets(gitMessage(raw), urls);
    return { ok: false, stdout: "", stderr: error, error: timedOut ? "" : error, timedOut };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Run `git <args>` with `input` on stdin and stdout kept as bytes (object reads: `cat-file
 * --batch`), which simple-git cannot do; the same binary, environment and timeout as runGit.
 */
export async function runGitBytes(
  args: string[],
  input: string,
  opts: GitRunOptions,
): Promise<{ ok: boolean; stdout: Buffer; error: string }> {
  const base = opts.env ?? process.env;
  const ms = opts.timeoutMs ?? timeoutMs(base, GIT_TIMEOUT_MS);
  const child = spawn(gitBinary(base), args, {
    cwd: opts.cwd,
    env: gitEnv(base, opts.extraEnv),
    stdio: ["pipe", "pipe", "pipe"],
    timeout: ms,
  });
  const chunks: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => chunks.push(c));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const done = new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code ?? 1));
  });
  child.stdin.end(input);
  const code = await done;
  return { ok: code === 0, stdout: Buffer.concat(chunks), error: code === 0 ? "" : stderr.trim() || `exit ${code}` };
}

/** Progress chatter git prints before the line that matters. */
const GIT_NOISE_RE = new RegExp(
  String.raw`^(?:Cloning into |remote: (?:Counting|Compressing|Enumerating|Total)|Receiving objects|` +
    String.raw`Resolving deltas|Unpacking objects|Updating files)`,
);
const GIT_MESSAGE_LINES = 20;
const GIT_MESSAGE_CHARS = 2000;

/** git's stderr as shown in an error: progress lines dropped, blank runs collapsed, the tail kept. */
export function gitMessage(text: string): string {
  const lines = text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => !GIT_NOISE_RE.test(l))
    .filter((l, i, all) => l !== "" || (i > 0 && all[i - 1] !== ""));
  let kept = lines.join("\n").trim().split("\n");
  if (kept.length > GIT_MESSAGE_LINES) kept = ["…", ...kept.slice(-GIT_MESSAGE_LINES)];
  let out = kept.join("\n");
  if (out.length > GIT_MESSAGE_CHARS) out = `…${out.slice(-GIT_MESSAGE_CHARS)}`;
  return out;
}

/** Run git and turn a failure into a HermesError with the scrubbed git text. */
export async function gitOrThrow(
  args: string[],
  opts: GitRunOptions & { code?: ErrorCode; what: string },
): Promise<string> {
  const r = await runGit(args, opts);
  if (r.ok) return r.stdout;
  const ms = opts.timeoutMs ?? timeoutMs(opts.env ?? process.env, GIT_TIMEOUT_MS);
  if (r.timedOut)
    throw new HermesError("E_GIT_TIMEOUT", {
      message: `${opts.what} timed out after ${Math.round(ms / 1000)} seconds`,
    });
  throw new HermesError(opts.code ?? "E_GIT_FAILED", {
    message: `${opts.what} failed; git said:\n${indent(r.error || "(git printed nothing)")}`,
  });
}

export function indent(s: string): string {
  return s
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}

/** A hint for clone failures that usually mean "private" or "no such repository". */
export function cloneHint(errorText: string, url: string): string | undefined {
  if (
    /auth|credential|permission denied|could not read username|not found|repository .* does not exist|403|401/i.test(
      errorText,
    )
  ) {
    return (
      `check that ${scrubUrl(url)} exists and that you may read it (for a private repository, configure a git ` +
      "credential helper or an ssh key)"
    );
  }
  if (
    new RegExp(
      String.raw`could not resolve host|connection refused|timed out|unable to connect|` +
        String.raw`network is unreachable|failed to connect`,
      "i",
    ).test(errorText)
  ) {
    return "check the network connection and the URL's host and port";
  }
  return undefined;
}

export async function revParse(cwd: string, rev: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  const r = await runGit(["rev-parse", "--verify", "--quiet", rev], { cwd, env, timeoutMs: GIT_SHORT_TIMEOUT_MS });
  const v = r.stdout.trim();
  return r.ok && v ? v.toLowerCase() : undefined;
}

/** The refs a remote advertises (`git ls-remote --heads --tags`), short names without `refs/…/`. */
export async function remoteRefs(cwd: string, url: string, env?: NodeJS.ProcessEnv): Promise<Set<string>> {
  const out = await gitOrThrow(["ls-remote", "--heads", "--tags", "--", url], {
    cwd,
    url,
    env,
    code: "E_GIT_CLONE_FAILED",
    what: `Listing the branches of ${scrubUrl(url)}`,
  });
  const names = new Set<string>();
  for (const line of out.split("\n")) {
    const ref = line.split("\t")[1]?.trim();
    if (!ref) continue;
    names.add(ref.replace(/^refs\/(heads|tags)\//, "").replace(/\^\{\}$/, ""));
  }
  return names;
}
