/**
 * The one CLI runner of the tests: spawn the built CLI (dist/cli/main.js, built by
 * test/global-setup.ts) exactly as a user would, piped or on a pseudo-terminal, and capture what
 * it prints. Temp homes come from test/support/home.ts.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

// Never touch the real ~/.hermes even if a test forgets to pass a home; Scratch points it into its root.
let userHome = join(tmpdir(), "hermes-e2e-nohome");

/** The HOME every spawned CLI gets (test/support/home.ts's Scratch sets it). */
export function setSpawnUserHome(dir: string): void {
  userHome = dir;
}

/**
 * The environment of a spawned CLI: process.env without HERMES_* (nothing leaks in from the
 * developer's shell), NO_COLOR, HOME, HERMES_HOME when `home` is given, then `env` (`undefined` deletes).
 */
export function cliEnv(opts: Pick<RunOptions, "env" | "home"> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("HERMES_")) env[k] = v;
  env.NO_COLOR = "1";
  env.HOME = userHome;
  if (opts.home !== undefined) env.HERMES_HOME = opts.home;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export interface Spawned {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SpawnOptions extends Omit<RunOptions, "timeoutMs"> {
  /**
   * Discard stdout and stderr: a killed CLI then closes at once, not when the children it started let go of its
   * pipes.
   */
  ignoreOutput?: boolean;
}

/** Spawn the CLI and keep the child (to signal it, or to watch it while it runs). */
export function spawnCli(args: readonly string[], opts: SpawnOptions = {}): Spawned {
  const input = opts.input;
  const output = opts.ignoreOutput ? "ignore" : "pipe";
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: cliEnv(opts),
    stdio: [input === undefined ? "ignore" : "pipe", output, output],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  // keepOpen: the pipe stays open for the whole life of the child, never written to.
  if (typeof input === "string") child.stdin?.end(input);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (child.stdin && !child.stdin.destroyed) child.stdin.destroy();
      resolve({ code, signal });
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Run the CLI to its end and capture its exit and output. */
export function runCli(args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const s = spawnCli(args, opts);
  const ms = opts.timeoutMs ?? 40_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      s.child.kill("SIGKILL");
      reject(
        new CliTimeout(
          `hermes ${args.join(" ")} did not exit within ${ms} ms\nstdout: ${s.stdout()}\nstderr: ${s.stderr()}`,
        ),
      );
    }, ms);
    s.done.then(
      ({ code, signal }) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout: s.stdout(), stderr: s.stderr() });
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Whether util-linux `script` can make a pseudo-terminal here (the terminal tests skip without it). */
export const hasScript = spawnSync("script", ["-qfec", "true", "/dev/null"], { stdio: "ignore" }).status === 0;

export interface Tty {
  /** Wait until `what` appears after the text matched so far (fails after `ms`, or when the CLI exits without it). */
  expect(what: string | RegExp, ms?: number): Promise<void>;
  /** Type on the terminal (`\r` is Enter). */
  type(text: string): void;
  /** Everything the terminal showed so far. */
  out(): string;
  child: ChildProcess;
  /** The exit, with what the terminal showed as stdout (carriage returns removed). */
  done: Promise<RunResult>;
}

/** Run the CLI on a pseudo-terminal (util-linux `script`), to answer its prompts as a user would. */
export function ttyCli(args: readonly string[], opts: Pick<RunOptions, "env" | "home" | "cwd"> = {}): Tty {
  const cmd = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const child = spawn("script", ["-qfec", cmd, "/dev/null"], {
    cwd: opts.cwd ?? ROOT,
    env: cliEnv(opts),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  let closed = false;
  const done = new Promise<RunResult>((resolve) =>
    child.on("close", (code, signal) => {
      closed = true;
      resolve({ code, signal, stdout: out.replace(/\r/g, ""), stderr: err });
    }),
  );
  let from = 0;
  return {
    async expect(what, ms = 20_000) {
      const t0 = Date.now();
      for (;;) {
        const rest = out.slice(from);
        const at =
          typeof what === "string"
            ? { index: rest.indexOf(what), length: what.length }
            : ((m) => (m ? { index: m.index, length: m[0].length } : { index: -1, length: 0 }))(what.exec(rest));
        if (at.index >= 0) {
          // Only text after this match counts for the next one.
          from += at.index + at.length;
          return;
        }
        if (closed || Date.now() - t0 > ms)
          throw new Error(`no ${String(what)}${closed ? " before the exit" : ""} in:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    type: (text) => void child.stdin.write(text),
    out: () => out + err,
    child,
    done,
  };
}

/** A stack frame line such as `    at foo (/x/y.js:1:2)`. */
export const STACK_RE = /\n\s+at .+:\d+:\d+/;

/** Run many CLI invocations with bounded parallelism (keeps 2-core machines responsive). */
export async function runAll<T>(tasks: Array<() => Promise<T>>, parallel = 4): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      const task = tasks[i];
      if (task) out[i] = await task();
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
