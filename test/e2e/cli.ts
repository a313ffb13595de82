/**
 * End-to-end helpers: spawn the built CLI (dist/cli/main.js, built by test/global-setup.ts)
 * exactly as a user would, in throw-away homes.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = join(ROOT, "dist", "cli", "main.js");

export interface RunOptions {
  /** Extra environment (merged over a scrubbed copy of process.env). `undefined` values delete. */
  env?: Record<string, string | undefined>;
  /** Sets HERMES_HOME (the `--home` flag can still be passed in args). */
  home?: string;
  cwd?: string;
  /**
   * stdin: undefined → 'ignore' (closed); a string → written then closed;
   * `{ keepOpen: true }` → a pipe that is never written to nor closed.
   */
  input?: string | { keepOpen: true };
  /** Kill the process and reject after this many ms (default 40 s; vitest's test timeout is 60 s). */
  timeoutMs?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export class CliTimeout extends Error {}

/** The environment every spawn starts from: no HERMES_* leaking in from the developer's shell. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("HERMES_")) env[k] = v;
  env.NO_COLOR = "1";
  // Never touch the real ~/.hermes even if a test forgets to pass a home.
  env.HOME = scratchHome;
  return env;
}

let scratchHome = join(tmpdir(), "hermes-e2e-nohome");

export function runCli(args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const env = baseEnv();
  if (opts.home !== undefined) env.HERMES_HOME = opts.home;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const input = opts.input;
  const stdinMode = input === undefined ? "ignore" : "pipe";
  const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env, stdio: [stdinMode, "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  if (typeof input === "string") child.stdin!.end(input);
  // keepOpen: the pipe stays open for the whole life of the child, never written to.
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new CliTimeout(`hermes ${args.join(" ")} did not exit within ${opts.timeoutMs ?? 40_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 40_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (child.stdin && !child.stdin.destroyed) child.stdin.destroy();
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A stack frame line such as `    at foo (/x/y.js:1:2)`. */
export const STACK_RE = /\n\s+at .+:\d+:\d+/;

/** Temp folders made by a test file; call cleanup() in afterAll. */
export class Scratch {
  readonly root: string;
  constructor(prefix = "hermes-e2e-") {
    this.root = mkdtempSync(join(tmpdir(), prefix));
    scratchHome = join(this.root, ".user-home");
    mkdirSync(scratchHome, { recursive: true });
  }

  /** A fresh, unique folder under the scratch root (created unless `create: false`). */
  dir(name: string, opts: { create?: boolean } = {}): string {
    const d = mkdtempSync(join(this.root, `${name.replace(/[^\w.-]/g, "_")}-`));
    if (opts.create === false) rmSync(d, { recursive: true, force: true });
    return d;
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

export function writeText(file: string, text: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

export interface PluginFiles {
  /** plugin.yaml text (written as is). */
  manifest: string;
  /** Write index.js (default true unless python). */
  entry?: boolean;
  /** Write __init__.py instead of index.js. */
  python?: boolean;
}

/** A plugin folder with plugin.yaml and an entry. */
export function writePlugin(dir: string, files: PluginFiles | string): string {
  const f = typeof files === "string" ? { manifest: files } : files;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), f.manifest);
  if (f.python) writeFileSync(join(dir, "__init__.py"), "def register(ctx):\n    pass\n");
  else if (f.entry !== false) writeFileSync(join(dir, "index.js"), "export function register(ctx) {}\n");
  return dir;
}

/** A bundled folder holding a copy of the repo's hello-world plugin only (a controlled bundled set). */
export function bundledWithHelloWorld(scratch: Scratch): string {
  const b = scratch.dir("bundled");
  cpSync(join(ROOT, "plugins", "hello-world"), join(b, "hello-world"), { recursive: true });
  return b;
}

export function link(target: string, at: string): void {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at);
}

/** Run many CLI invocations with bounded parallelism (keeps 2-core machines responsive). */
export async function runAll<T>(tasks: Array<() => Promise<T>>, parallel = 4): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, tasks.length) }, worker));
  return out;
}

/** One diagnostic of `--format json` (validate commands). */
export interface Diag {
  code: string;
  severity: "error" | "warning";
  message: string;
  file: string;
  line: number;
  col: number;
  path?: string;
}
