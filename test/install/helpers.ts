/**
 * Real git repositories for the install tests: a working repo per test, pushed to a bare repo
 * that is served by `file://`, by `git daemon` on 127.0.0.1, and (for credentials) by a tiny
 * HTTP server speaking git's "dumb" protocol behind basic auth.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer, Socket } from "node:net";
import { dirname, join, normalize } from "node:path";
import { runCli, ttyCli, type RunOptions, type RunResult } from "../support/cli.js";
import { writeFiles, type Files, type Scratch } from "../support/home.js";
import type { IndexEntry } from "../../src/install/index/parse.js";

export const GIT_ID = [
  "-c",
  "user.name=Test Author",
  "-c",
  "user.email=test@example.com",
  "-c",
  "init.defaultBranch=main",
  "-c",
  "commit.gpgsign=false",
];

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", [...GIT_ID, ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
  }).trim();
}

export const ENTRY = "export function register(ctx) {}\n";

export function pluginFiles(name: string, extra: string = "", prefix = ""): Files {
  return { [`${prefix}plugin.yaml`]: `name: ${name}\nversion: 1.0.0\n${extra}`, [`${prefix}index.js`]: ENTRY };
}

/** A working repo and its bare twin under `<root>/<owner>/<name>.git` (the layout git daemon serves). */
export class Repo {
  readonly work: string;
  readonly bare: string;
  constructor(
    readonly root: string,
    readonly path: string,
    files: Files,
  ) {
    this.work = join(root, "_work", path);
    this.bare = join(root, `${path}.git`);
    mkdirSync(this.work, { recursive: true });
    git(this.work, "init", "-q", "-b", "main");
    writeFiles(this.work, files);
    git(this.work, "add", "-A");
    git(this.work, "commit", "-q", "-m", "initial");
    mkdirSync(dirname(this.bare), { recursive: true });
    git(dirname(this.bare), "clone", "-q", "--bare", this.work, this.bare);
    git(this.work, "remote", "add", "origin", this.bare);
    git(this.bare, "update-server-info");
  }

  get url(): string {
    return `file://${this.bare}`;
  }

  head(): string {
    return git(this.work, "rev-parse", "HEAD");
  }

  /** Commit a change and push it; returns the new commit. */
  commit(files: Files, message = "change", branch = "main"): string {
    writeFiles(this.work, files);
    git(this.work, "add", "-A");
    git(this.work, "commit", "-q", "-m", message);
    git(this.work, "push", "-q", "origin", `HEAD:${branch}`);
    git(this.bare, "update-server-info");
    return this.head();
  }

  branch(name: string, files: Files): string {
    git(this.work, "checkout", "-q", "-b", name);
    const sha = this.commit(files, `on ${name}`, name);
    git(this.work, "checkout", "-q", "main");
    return sha;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A port nothing listens on (bound, then released). */
export const closedPort = freePort;

export class GitDaemon {
  private child?: ChildProcess;
  port = 0;
  constructor(readonly base: string) {}

  async start(): Promise<void> {
    this.port = await freePort();
    this.child = spawn(
      "git",
      [
        "daemon",
        "--export-all",
        `--base-path=${this.base}`,
        `--port=${this.port}`,
        "--listen=127.0.0.1",
        "--reuseaddr",
        "--informative-errors",
        this.base,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let err = "";
    this.child.stderr!.on("data", (d) => (err += String(d)));
    // Ready when a ls-remote of nothing answers (connection accepted).
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await new Promise<void>((resolve, reject) => {
          const sock = new Socket();
          sock.once("connect", () => {
            sock.destroy();
            resolve();
          });
          sock.once("error", reject);
          sock.connect(this.port, "127.0.0.1");
        });
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`git daemon did not start: ${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  url(path: string): string {
    return `git://127.0.0.1:${this.port}/${path}.git`;
  }

  stop(): void {
    if (this.child && this.child.exitCode === null) this.child.kill("SIGTERM");
  }
}

/** git's dumb HTTP protocol over static files of `base`, behind basic auth `user:pass`. */
export class DumbHttp {
  private server?: Server;
  port = 0;
  readonly seen: string[] = [];
  constructor(
    readonly base: string,
    readonly user: string,
    readonly pass: string,
  ) {}

  async start(): Promise<void> {
    const expected = `Basic ${Buffer.from(`${this.user}:${this.pass}`).toString("base64")}`;
    this.server = createHttpServer((req, res) => {
      this.seen.push(`${req.method} ${req.url} auth=${req.headers.authorization ? "yes" : "no"}`);
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { "WWW-Authenticate": 'Basic realm="test"' });
        return res.end("unauthorized");
      }
      const rel = normalize(decodeURIComponent((req.url ?? "/").split("?")[0]!)).replace(/^(\.\.[/\\])+/, "");
      const file = join(this.base, rel);
      if (!file.startsWith(this.base) || !existsSync(file)) {
        res.writeHead(404);
        return res.end("not found");
      }
      try {
        const body = readFileSync(file);
        res.writeHead(200, { "Content-Type": "application/octet-stream" });
        res.end(body);
      } catch {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.port = (this.server!.address() as { port: number }).port;
  }

  url(path: string, creds = true): string {
    return `http://${creds ? `${this.user}:${this.pass}@` : ""}127.0.0.1:${this.port}/${path}.git`;
  }

  stop(): Promise<void> {
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** `https://github.com/<owner>/<repo>` → the local bare repos, for shorthand and index identifiers. */
export function githubToLocal(root: string): Record<string, string> {
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: `url.file://${root}/.insteadOf`,
    GIT_CONFIG_VALUE_0: "https://github.com/",
  };
}

export interface Home {
  home: string;
  plugins: string;
  metadataFile: string;
}

export function newHome(s: Scratch, name: string, config: string | null = null): Home {
  const home = s.dir(`home-${name}`);
  if (config !== null) writeFileSync(join(home, "config.yaml"), config);
  return { home, plugins: join(home, "plugins"), metadataFile: join(home, "plugins", ".install-metadata.json") };
}

export function metadata(h: Home): Record<string, { pinned: boolean; revision: string; source: string }> | undefined {
  return existsSync(h.metadataFile) ? JSON.parse(readFileSync(h.metadataFile, "utf8")) : undefined;
}

/** Everything under the plugins dir, `.git` internals excluded: the state a failure must not change. */
export function snapshot(h: Home): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    if (!existsSync(dir)) return;
    for (const n of readdirSync(dir).sort()) {
      if (n === ".git") {
        out.push(`${rel}${n}/`);
        continue;
      }
      const p = join(dir, n);
      let isDir = false;
      try {
        isDir = readdirSync(p) !== undefined;
      } catch {
        isDir = false;
      }
      if (isDir) {
        out.push(`${rel}${n}/`);
        walk(p, `${rel}${n}/`);
      } else out.push(`${rel}${n}=${readFileSync(p, "utf8").length}`);
    }
  };
  walk(h.plugins, "");
  return out;
}

export function stagingLeftovers(h: Home): string[] {
  if (!existsSync(h.plugins)) return [];
  return readdirSync(h.plugins).filter(
    (n) => /^\.(install|update|remove)-\d+-/.test(n) || n.endsWith(".lock") || n.endsWith(".tmp"),
  );
}

export interface Ctx {
  s: Scratch;
  bundled: string;
  /** Extra environment for every run (e.g. githubToLocal). */
  env?: Record<string, string>;
}

export function hermes(ctx: Ctx, h: Home, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return runCli(["plugins", ...args], {
    home: h.home,
    timeoutMs: 120_000,
    ...opts,
    env: { HERMES_BUNDLED_PLUGINS: ctx.bundled, ...ctx.env, ...opts.env },
  });
}

/**
 * Run `hermes plugins …` on a pseudo-terminal, typing `answers` (each followed by Enter) once the
 * matching prompt text has appeared; an answer whose prompt never comes is not typed.
 */
export function hermesTty(
  ctx: Ctx,
  h: Home,
  args: string[],
  answers: Array<[RegExp, string]>,
  env: Record<string, string> = {},
): Promise<RunResult> {
  return cliTty(ctx, h, ["plugins", ...args], answers, env);
}

/** Run `hermes <argv>` on a pseudo-terminal, answering as hermesTty does. */
export async function cliTty(
  ctx: Ctx,
  h: Home,
  argv: string[],
  answers: Array<[RegExp, string]>,
  env: Record<string, string> = {},
): Promise<RunResult> {
  const t = ttyCli(argv, {
    home: h.home,
    env: { HERMES_BUNDLED_PLUGINS: ctx.bundled, TERM: "dumb", ...ctx.env, ...env },
  });
  const timer = setTimeout(() => t.child.kill("SIGKILL"), 120_000);
  try {
    for (const [prompt, answer] of answers) {
      if (
        !(await t.expect(prompt, 120_000).then(
          () => true,
          () => false,
        ))
      )
        break;
      t.type(`${answer}\r`);
    }
    const r = await t.done;
    if (r.signal === "SIGKILL") throw new Error(`tty run timed out\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r;
  } finally {
    clearTimeout(timer);
  }
}

/** An index entry with empty optional fields, named `name` and hosted at `o/<name>`. */
export function indexEntry(name: string, more: Partial<IndexEntry> = {}): IndexEntry {
  return {
    name,
    description: "",
    author: "",
    tags: [],
    repo: `o/${name}`,
    ref: "",
    subdir: null,
    homepage: null,
    capabilities: [],
    api_version: null,
    added_at: null,
    ...more,
  };
}
