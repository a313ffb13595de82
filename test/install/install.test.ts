import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundledWithHelloWorld, Scratch } from "../support/home.js";
import {
  DumbHttp,
  ENTRY,
  git,
  GitDaemon,
  githubToLocal,
  hermes,
  metadata,
  newHome,
  pluginFiles,
  Repo,
  snapshot,
  stagingLeftovers,
  type Ctx,
} from "./helpers.js";

let s: Scratch;
let ctx: Ctx;
let repos: string;
let daemon: GitDaemon;
let http: DumbHttp;
let indexServer: Server;
let indexUrl = "";
let indexDoc: unknown = [];

/** Repos shared by the tests below (each test installs into its own home). */
let demo: Repo;
let mono: Repo;
let gh: Repo;
let featureSha = "";

beforeAll(async () => {
  s = new Scratch("hermes-install-");
  repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s), env: githubToLocal(repos) };
  demo = new Repo(repos, "acme/demo", {
    ...pluginFiles("demo", "description: a demo\n"),
    "settings.yaml.example": "a: 1\n",
    "keep.yaml.example": "b: 1\n",
    "keep.yaml": "b: mine\n",
    "after-install.md": "# Thanks\nRun `demo --setup` next.\n",
  });
  demo.commit({ "index.js": `${ENTRY}// v2\n` }, "v2");
  mono = new Repo(repos, "acme/mono", {
    "README.md": "mono repo\n",
    ...pluginFiles("alpha", "", "plugins/alpha/"),
    ...pluginFiles("beta", "", "plugins/beta/"),
    "plugins/notes.txt": "not a plugin folder\n",
  });
  symlinkSync("plugins/alpha", join(mono.work, "linked"));
  symlinkSync("/etc", join(mono.work, "outside"));
  mono.commit({}, "links");
  gh = new Repo(repos, "octo/tools", { ...pluginFiles("tool-a", "", "plugins/tool-a/"), "README.md": "x\n" });
  featureSha = gh.branch("feature/x", { "plugins/tool-a/feature.txt": "only on the branch\n" });
  daemon = new GitDaemon(repos);
  await daemon.start();
  http = new DumbHttp(repos, "bob", "s3cr3t-T0KEN-value");
  await http.start();
  indexServer = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(indexDoc));
  });
  await new Promise<void>((r) => indexServer.listen(0, "127.0.0.1", r));
  indexUrl = `http://127.0.0.1:${(indexServer.address() as { port: number }).port}/index.json`;
});

afterAll(async () => {
  daemon?.stop();
  await http?.stop();
  await new Promise((r) => indexServer?.close(r));
  s?.cleanup();
});

const cfg = (h: { home: string }) =>
  (parse(existsSync(join(h.home, "config.yaml")) ? readFileSync(join(h.home, "config.yaml"), "utf8") : "") ?? {}) as {
    plugins?: Record<string, unknown>;
  };
const lock = (h: { home: string }) =>
  JSON.parse(readFileSync(join(h.home, "hermes.lock.json"), "utf8")) as { plugins: Array<Record<string, unknown>> };
const lockEntry = (h: { home: string }, key: string) =>
  lock(h).plugins.find((p) => p.key === key) as Record<string, unknown> | undefined;
const gitIn = (dir: string, ...args: string[]) => git(dir, ...args);

describe.concurrent("hermes plugins install", { timeout: 240_000 }, () => {
  it("file://: clones, records exact metadata, never enables without a terminal, compiles the lock", async () => {
    const h = newHome(s, "file");
    const r = await hermes(ctx, h, ["install", demo.url]);
    expect(r.stderr).toContain("insecure or local URL scheme");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Cloning ${demo.url}...`);
    expect(r.stdout).toContain("Plugin installed but not enabled. Run `hermes plugins enable demo` to activate.");
    expect(readFileSync(h.metadataFile, "utf8")).toBe(
      `{\n  "demo": {\n    "pinned": false,\n    "revision": "${demo.head()}",\n    "source": "${demo.url}"\n  }\n}\n`,
    );
    const dir = join(h.plugins, "demo");
    expect(readFileSync(join(dir, "index.js"), "utf8")).toContain("// v2");
    expect(gitIn(dir, "rev-parse", "HEAD")).toBe(demo.head());
    // A brand-new home: its config gets the current version only; the fresh install is not grandfathered.
    expect(cfg(h)).toEqual({ _config_version: 21 });
    const entry = lockEntry(h, "demo");
    expect(entry?.git).toEqual({ source: demo.url, revision: demo.head(), pinned: false });
    expect(stagingLeftovers(h)).toEqual([]);
  });

  it(".example files are copied without overwriting; after-install.md is shown", async () => {
    const h = newHome(s, "examples");
    const r = await hermes(ctx, h, ["install", demo.url]);
    expect(r.code, r.stderr).toBe(0);
    const dir = join(h.plugins, "demo");
    expect(readFileSync(join(dir, "settings.yaml"), "utf8")).toBe("a: 1\n");
    expect(readFileSync(join(dir, "keep.yaml"), "utf8")).toBe("b: mine\n");
    expect(r.stdout).toContain("Created settings.yaml from settings.yaml.example");
    expect(r.stdout).not.toContain("Created keep.yaml");
    expect(r.stdout).toContain("Run `demo --setup` next.");
  });

  it("git daemon: unpinned and pinned (detached, HEAD verified)", async () => {
    const h = newHome(s, "daemon");
    const url = daemon.url("acme/demo");
    const r = await hermes(ctx, h, ["install", url, "--enable"]);
    expect(r.code, r.stderr).toBe(0);
    expect(metadata(h)!.demo).toEqual({ pinned: false, revision: demo.head(), source: url });
    expect(cfg(h).plugins?.enabled).toEqual(["demo"]);
    const first = gitIn(demo.work, "rev-parse", "HEAD~1");
    const h2 = newHome(s, "daemon-pinned");
    const p = await hermes(ctx, h2, ["install", url, "--ref", first.toUpperCase()]);
    expect(p.code, p.stderr).toBe(0);
    const dir = join(h2.plugins, "demo");
    expect(gitIn(dir, "rev-parse", "HEAD")).toBe(first);
    expect(() => gitIn(dir, "symbolic-ref", "-q", "HEAD")).toThrow();
    expect(readFileSync(join(dir, "index.js"), "utf8")).not.toContain("// v2");
    expect(metadata(h2)!.demo).toEqual({ pinned: true, revision: first, source: url });
    expect(lockEntry(h2, "demo")?.git).toEqual({ source: url, revision: first, pinned: true });
  });

  it("--ref accepts only a full commit SHA; nothing is created otherwise", async () => {
    const h = newHome(s, "bad-ref");
    for (const ref of [demo.head().slice(0, 7), "v1.0.0", "main", demo.head().slice(0, 39)]) {
      const r = await hermes(ctx, h, ["install", demo.url, "--ref", ref]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("E_INSTALL_REF_NOT_SHA");
      expect(r.stderr).toContain("full 40-character commit SHA");
    }
    expect(existsSync(h.plugins)).toBe(false);
  });

  it("--ref of a commit that is not in the repository fails cleanly", async () => {
    const h = newHome(s, "missing-ref");
    const r = await hermes(ctx, h, ["install", demo.url, "--ref", "0".repeat(40)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_GIT_FETCH_FAILED");
    expect(snapshot(h).filter((x) => !x.startsWith("."))).toEqual([]);
    expect(metadata(h)).toBeUndefined();
    expect(stagingLeftovers(h)).toEqual([]);
  });

  it.each([
    ["#subdir", () => `${mono.url}#plugins/alpha`, "alpha", () => `${mono.url}#plugins/alpha`],
    [".git/subdir", () => `${mono.url}/plugins/beta`, "beta", () => `${mono.url}#plugins/beta`],
    [
      "owner/repo/subdir",
      () => "acme/mono/plugins/alpha",
      "alpha",
      () => "https://github.com/acme/mono.git#plugins/alpha",
    ],
    [
      "git daemon #subdir",
      () => `${daemon.url("acme/mono")}#plugins/beta`,
      "beta",
      () => `${daemon.url("acme/mono")}#plugins/beta`,
    ],
    ["symlink inside the repo", () => `${mono.url}#linked`, "alpha", () => `${mono.url}#linked`],
  ])("subdir install (%s) places only the subdir and stays updatable", async (_label, id, name, source) => {
    const h = newHome(s, `sub-${name}`);
    const r = await hermes(ctx, h, ["install", id()]);
    expect(r.code, r.stderr).toBe(0);
    const dir = join(h.plugins, name);
    expect(existsSync(join(dir, "plugin.yaml"))).toBe(true);
    expect(existsSync(join(dir, "README.md"))).toBe(false);
    expect(metadata(h)![name]).toEqual({ pinned: false, revision: mono.head(), source: source() });
    // A clean checkout of the snapshot: git sees no changes, and knows where it came from.
    expect(gitIn(dir, "status", "--porcelain")).toBe("");
    expect(gitIn(dir, "config", "hermes.upstream")).toBe(mono.head());
    const u = await hermes(ctx, h, ["update", name]);
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout).toContain("already up to date");
  });

  it("a pinned subdir install records the pin; update refuses it", async () => {
    const h = newHome(s, "sub-pinned");
    const first = gitIn(mono.work, "rev-list", "--max-parents=0", "HEAD");
    const r = await hermes(ctx, h, ["install", `${mono.url}#plugins/beta`, "--ref", first]);
    expect(r.code, r.stderr).toBe(0);
    const dir = join(h.plugins, "beta");
    expect(metadata(h)!.beta).toEqual({ pinned: true, revision: first, source: `${mono.url}#plugins/beta` });
    expect(gitIn(dir, "config", "hermes.upstream")).toBe(first);
    expect(gitIn(dir, "status", "--porcelain")).toBe("");
    const u = await hermes(ctx, h, ["update", "beta"]);
    expect(u.code).toBe(1);
    expect(u.stderr).toContain(
      `hermes plugins install ${mono.url}#plugins/beta --force --ref <40-character commit SHA>`,
    );
  });

  it("GitHub /tree/<branch-with-slash>/<path> keeps both branch and path, and update follows the branch", async () => {
    const h = newHome(s, "tree");
    const r = await hermes(ctx, h, ["install", "https://github.com/octo/tools/tree/feature/x/plugins/tool-a"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("(branch: feature/x)");
    const dir = join(h.plugins, "tool-a");
    expect(readFileSync(join(dir, "feature.txt"), "utf8")).toBe("only on the branch\n");
    expect(metadata(h)!["tool-a"]).toEqual({
      pinned: false,
      revision: featureSha,
      source: "https://github.com/octo/tools.git#plugins/tool-a",
    });
    expect(gitIn(dir, "config", "hermes.branch")).toBe("feature/x");
    git(gh.work, "checkout", "-q", "feature/x");
    const next = gh.commit({ "plugins/tool-a/feature.txt": "branch v2\n" }, "branch v2", "feature/x");
    git(gh.work, "checkout", "-q", "main");
    const u = await hermes(ctx, h, ["update", "tool-a"]);
    expect(u.code, u.stderr).toBe(0);
    expect(readFileSync(join(dir, "feature.txt"), "utf8")).toBe("branch v2\n");
    expect(metadata(h)!["tool-a"]!.revision).toBe(next);
  });

  it("a /tree/ URL naming no branch of the repository is refused", async () => {
    const h = newHome(s, "tree-bad");
    const r = await hermes(ctx, h, ["install", "https://github.com/octo/tools/tree/nope/plugins/tool-a"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_GIT_BRANCH_NOT_FOUND");
  });

  it("owner/repo shorthand resolves to https://github.com/<owner>/<repo>.git", async () => {
    const h = newHome(s, "shorthand");
    const r = await hermes(ctx, h, ["install", "acme/demo", "--no-enable"]);
    expect(r.code, r.stderr).toBe(0);
    expect(metadata(h)!.demo!.source).toBe("https://github.com/acme/demo.git");
    expect(gitIn(join(h.plugins, "demo"), "config", "remote.origin.url")).toBe("https://github.com/acme/demo.git");
    // A brand-new home: its config gets the current version only; nothing is enabled, nothing grandfathered.
    expect(cfg(h)).toEqual({ _config_version: 21 });
  });

  it("an existing plugin needs --force; --force replaces it and keeps files made from .example", async () => {
    const h = newHome(s, "force");
    expect((await hermes(ctx, h, ["install", demo.url])).code).toBe(0);
    writeFileSync(join(h.plugins, "demo", "settings.yaml"), "a: customised\n");
    const before = snapshot(h);
    const again = await hermes(ctx, h, ["install", demo.url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("E_INSTALL_EXISTS");
    expect(again.stderr).toContain("--force");
    expect(snapshot(h)).toEqual(before);
    const forced = await hermes(ctx, h, ["install", demo.url, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(h.plugins, "demo", "settings.yaml"), "utf8")).toBe("a: customised\n");
    expect(stagingLeftovers(h)).toEqual([]);
  });

  it("two concurrent installs of one plugin: one wins, the other is refused, nothing torn", async () => {
    const h = newHome(s, "race", "plugins:\n  enabled: []\n");
    const [a, b] = await Promise.all([
      hermes(ctx, h, ["install", demo.url]),
      hermes(ctx, h, ["install", daemon.url("acme/demo")]),
    ]);
    expect([a.code, b.code].sort()).toEqual([0, 1]);
    const loser = a.code === 1 ? a : b;
    expect(loser.stderr).toContain("E_INSTALL_EXISTS");
    const meta = metadata(h)!;
    expect(Object.keys(meta)).toEqual(["demo"]);
    expect(meta.demo!.source).toBe(a.code === 0 ? demo.url : daemon.url("acme/demo"));
    expect(gitIn(join(h.plugins, "demo"), "config", "remote.origin.url")).toBe(meta.demo!.source);
    expect(stagingLeftovers(h)).toEqual([]);
  });

  it(
    "pin inheritance: reinstalling a pinned source without --ref keeps the pin, even after the folder was " + "deleted",
    async () => {
      const h = newHome(s, "inherit");
      const first = gitIn(demo.work, "rev-parse", "HEAD~1");
      expect((await hermes(ctx, h, ["install", demo.url, "--ref", first])).code).toBe(0);
      const forced = await hermes(ctx, h, ["install", demo.url, "--force"]);
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stdout).toContain("Keeping the pin of 'demo'");
      expect(metadata(h)!.demo).toEqual({ pinned: true, revision: first, source: demo.url });
      rmSync(join(h.plugins, "demo"), { recursive: true, force: true });
      const again = await hermes(ctx, h, ["install", demo.url]);
      expect(again.code, again.stderr).toBe(0);
      expect(gitIn(join(h.plugins, "demo"), "rev-parse", "HEAD")).toBe(first);
      expect(metadata(h)!.demo!.pinned).toBe(true);
    },
  );

  it(
    "pin protection: a pinned plugin is not replaced from " + "another source without --ref, even with --force",
    async () => {
      const h = newHome(s, "protect");
      const first = gitIn(demo.work, "rev-parse", "HEAD~1");
      expect((await hermes(ctx, h, ["install", demo.url, "--ref", first])).code).toBe(0);
      const before = snapshot(h);
      const other = await hermes(ctx, h, ["install", daemon.url("acme/demo"), "--force"]);
      expect(other.code).toBe(1);
      expect(other.stderr).toContain("E_INSTALL_PINNED");
      expect(other.stderr).toContain("--ref <40-character commit SHA>");
      expect(snapshot(h)).toEqual(before);
      expect(metadata(h)!.demo).toEqual({ pinned: true, revision: first, source: demo.url });
      const repinned = await hermes(ctx, h, ["install", daemon.url("acme/demo"), "--force", "--ref", demo.head()]);
      expect(repinned.code, repinned.stderr).toBe(0);
      expect(metadata(h)!.demo).toEqual({ pinned: true, revision: demo.head(), source: daemon.url("acme/demo") });
    },
  );

  it(
    "credentials in an http(s) URL are used for the clone " + "and never reach .git/config, metadata or output",
    async () => {
      const h = newHome(s, "creds");
      const r = await hermes(ctx, h, ["install", http.url("acme/demo")]);
      expect(r.code, r.stderr).toBe(0);
      const secret = "s3cr3t-T0KEN-value";
      const clean = http.url("acme/demo", false);
      expect(http.seen.some((l) => l.includes("auth=yes"))).toBe(true);
      const gitConfig = readFileSync(join(h.plugins, "demo", ".git", "config"), "utf8");
      expect(gitConfig).toContain(clean);
      for (const text of [
        gitConfig,
        readFileSync(h.metadataFile, "utf8"),
        r.stdout,
        r.stderr,
        readFileSync(join(h.home, "hermes.lock.json"), "utf8"),
      ]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain("bob:");
      }
      expect(metadata(h)!.demo!.source).toBe(clean);
      // A failing clone does not echo them either.
      const bad = await hermes(ctx, h, ["install", http.url("acme/missing"), "--force"]);
      expect(bad.code).toBe(1);
      expect(`${bad.stdout}${bad.stderr}`).not.toContain(secret);
      const wrong = await hermes(ctx, newHome(s, "creds-wrong"), [
        "install",
        `http://bob:wrong-${secret}@127.0.0.1:${http.port}/acme/demo.git`,
      ]);
      expect(wrong.code).toBe(1);
      expect(`${wrong.stdout}${wrong.stderr}`).not.toContain(secret);
    },
  );

  it(
    "bare index names: exact and case-insensitive; the index pin pins; near misses are suggested and install " +
      "nothing",
    async () => {
      indexDoc = {
        schema_version: 1,
        plugins: [
          { name: "Demo-Plugin", repo: "acme/demo", description: "d", ref: gitIn(demo.work, "rev-parse", "HEAD~1") },
          { name: "tool-a", repo: "octo/tools", subdir: "plugins/tool-a", ref: "main" },
          { name: "twin", repo: "acme/demo" },
          { name: "TWIN", repo: "acme/mono" },
        ],
      };
      const h = newHome(s, "index", `plugins:\n  index_url: ${indexUrl}\n`);
      const miss = await hermes(ctx, h, ["install", "demo-plugn"]);
      expect(miss.code).toBe(1);
      expect(miss.stderr).toContain("E_INSTALL_INDEX_NOT_FOUND");
      expect(miss.stderr).toContain("Demo-Plugin  → acme/demo");
      const partial = await hermes(ctx, h, ["install", "demo"]);
      expect(partial.code).toBe(1);
      expect(partial.stderr).toContain("E_INSTALL_INDEX_NOT_FOUND");
      expect(existsSync(join(h.plugins, "demo"))).toBe(false);
      const amb = await hermes(ctx, h, ["install", "twin"]);
      expect(amb.code).toBe(1);
      expect(amb.stderr).toContain("E_INSTALL_INDEX_AMBIGUOUS");
      const ok = await hermes(ctx, h, ["install", "demo-PLUGIN"]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(
        /Resolved 'Demo-Plugin' via community index \((remote|cache)\) → acme\/demo @ [0-9a-f]{12}/,
      );
      expect(ok.stdout).toContain("Indexed ≠ audited");
      expect(metadata(h)!.demo).toEqual({
        pinned: true,
        revision: gitIn(demo.work, "rev-parse", "HEAD~1"),
        source: "https://github.com/acme/demo.git",
      });
      const sub = await hermes(ctx, h, ["install", "tool-a"]);
      expect(sub.code, sub.stderr).toBe(0);
      expect(sub.stdout).toContain("not an exact commit SHA");
      expect(metadata(h)!["tool-a"]).toMatchObject({
        pinned: false,
        source: "https://github.com/octo/tools.git#plugins/tool-a",
      });
    },
  );

  it("requires_env without a terminal is listed, never asked", async () => {
    const repo = new Repo(
      repos,
      "acme/envy",
      pluginFiles(
        "envy",
        "requires_env:\n  - name: ENVY_TOKEN\n    description: the token\n    secret: true\n  - PLAIN_VAR\n",
      ),
    );
    const h = newHome(s, "env");
    writeFileSync(join(h.home, ".env"), "PLAIN_VAR=x\n");
    const r = await hermes(ctx, h, ["install", repo.url], { input: { keepOpen: true } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("envy requires environment variables that are not set:");
    expect(r.stdout).toContain("ENVY_TOKEN — the token");
    expect(r.stdout).not.toMatch(/^\s+PLAIN_VAR/m);
    expect(readFileSync(join(h.home, ".env"), "utf8")).toBe("PLAIN_VAR=x\n");
  });
});
