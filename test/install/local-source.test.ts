import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundledWithHelloWorld, Scratch } from "../support/home.js";
import { ENTRY, hermes, metadata, newHome, pluginFiles, Repo, snapshot, type Ctx } from "./helpers.js";

let s: Scratch;
let ctx: Ctx;
let repos: string;
let weather: Repo;
let mono: Repo;

beforeAll(() => {
  s = new Scratch("hermes-local-src-");
  repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s) };
  weather = new Repo(repos, "srv/git/weather", pluginFiles("weather", "description: local weather\n"));
  weather.commit({ "index.js": `${ENTRY}// v2\n` }, "v2");
  mono = new Repo(repos, "acme/mono", { ...pluginFiles("alpha", "", "plugins/alpha/"), "README.md": "mono\n" });
});

afterAll(() => s?.cleanup());

describe.concurrent("hermes plugins install <local path>", { timeout: 120_000 }, () => {
  it(
    "a bare repository's path is a local git source: said so, cloned, recorded with its file:// source, " + "pinnable",
    async () => {
      const h = newHome(s, "bare");
      const r = await hermes(ctx, h, ["install", weather.bare]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`Installing from the local git repository ${realpathSync(weather.bare)}`);
      expect(r.stdout + r.stderr).not.toContain("github.com");
      expect(metadata(h)!.weather).toEqual({
        pinned: false,
        revision: weather.head(),
        source: `file://${realpathSync(weather.bare)}`,
      });

      const first = weather.head();
      const p = newHome(s, "bare-pinned");
      const pinned = await hermes(ctx, p, ["install", weather.bare, "--ref", first]);
      expect(pinned.code, pinned.stderr).toBe(0);
      expect(metadata(p)!.weather!.pinned).toBe(true);
    },
  );

  it("a folder inside a work tree installs that folder of the repository (subdir), relative paths too", async () => {
    const h = newHome(s, "worktree");
    const r = await hermes(ctx, h, ["install", "./plugins/alpha"], { cwd: mono.work });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("(subdir: plugins/alpha)");
    expect(metadata(h)!.alpha!.source).toBe(`file://${realpathSync(mono.work)}#plugins/alpha`);
    expect(existsSync(join(h.plugins, "alpha", "plugin.yaml"))).toBe(true);
  });

  it(
    "a plain folder (no git) is copied as it is, without a " + "revision or a metadata record; --ref is refused",
    async () => {
      const dir = s.dir("plain-folder");
      writeFileSync(join(dir, "plugin.yaml"), "name: plain\nversion: 1.0.0\n");
      writeFileSync(join(dir, "index.js"), ENTRY);
      const h = newHome(s, "plain");
      const r = await hermes(ctx, h, ["install", dir]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`Installing from the local folder ${realpathSync(dir)}`);
      expect(readFileSync(join(h.plugins, "plain", "index.js"), "utf8")).toBe(ENTRY);
      expect(metadata(h)?.plain).toBeUndefined();
      const ref = await hermes(ctx, newHome(s, "plain-ref"), ["install", dir, "--ref", "a".repeat(40)]);
      expect(ref.code).toBe(2);
      expect(ref.stderr).toContain("E_INSTALL_LOCAL_NOT_GIT");
    },
  );

  it("a path that does not exist is an error, never a GitHub owner/repo", async () => {
    const cwd = s.dir("empty-cwd");
    mkdirSync(join(cwd, "x"), { recursive: true });
    const h = newHome(s, "missing");
    for (const id of ["./nope/weather.git", join(cwd, "srv", "git", "weather.git")]) {
      const r = await hermes(ctx, h, ["install", id], { cwd });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_INSTALL_LOCAL_PATH");
      expect(r.stdout).not.toContain("Cloning");
    }
  });
});

describe.concurrent("reinstalling an installed source", { timeout: 120_000 }, () => {
  it("is refused before cloning, and the advice for a pinned plugin is the command that works", async () => {
    const h = newHome(s, "pinned-again");
    const first = weather.head();
    expect((await hermes(ctx, h, ["install", weather.url, "--ref", first])).code).toBe(0);
    const before = snapshot(h);
    const again = await hermes(ctx, h, ["install", weather.url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("E_INSTALL_EXISTS");
    expect(again.stdout).not.toContain("Cloning");
    expect(again.stderr).not.toContain("plugins update");
    const advice = /`(hermes plugins install \S+ --force --ref) <40-character commit SHA>`/.exec(again.stderr);
    expect(advice, again.stderr).not.toBeNull();
    expect(snapshot(h)).toEqual(before);

    const next = weather.commit({ "index.js": `${ENTRY}// v3\n` }, "v3");
    const moved = await hermes(ctx, h, [...advice![1]!.split(" ").slice(2), next]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(metadata(h)!.weather).toMatchObject({ pinned: true, revision: next });
  });

  it("an unpinned one points at update, which works", async () => {
    const h = newHome(s, "unpinned-again");
    expect((await hermes(ctx, h, ["install", `${mono.url}#plugins/alpha`])).code).toBe(0);
    const again = await hermes(ctx, h, ["install", `${mono.url}#plugins/alpha`]);
    expect(again.code).toBe(1);
    expect(again.stdout).not.toContain("Cloning");
    expect(again.stderr).toContain("`hermes plugins update alpha`");
    expect((await hermes(ctx, h, ["update", "alpha"])).code).toBe(0);
  });
});

describe.concurrent("git's own words in git errors", { timeout: 120_000 }, () => {
  it("an empty repository: E_GIT_FAILED quotes git (trimmed of progress lines) and the hint names a fix", async () => {
    const bare = join(s.dir("empty-repos"), "empty.git");
    mkdirSync(bare);
    const { execFileSync } = await import("node:child_process");
    execFileSync("git", ["init", "-q", "--bare", bare]);
    const h = newHome(s, "empty");
    const r = await hermes(ctx, h, ["install", `file://${bare}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_GIT_FAILED");
    expect(r.stderr).toContain("git said:");
    expect(r.stderr).toMatch(/You appear to have cloned an empty repository/);
    expect(r.stderr).not.toContain("Cloning into");
    expect(r.stderr).not.toContain("see git's message above");
  });

  it("a failed clone quotes git's fatal line", async () => {
    const h = newHome(s, "clone-fail");
    const r = await hermes(ctx, h, ["install", `file://${join(repos, "no", "such.git")}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_GIT_CLONE_FAILED");
    expect(r.stderr).toMatch(/git said:\n\s+fatal: .*such\.git/);
  });
});
