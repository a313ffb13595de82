import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HermesError } from "../../src/core/errors.js";
import { resolveSubdir } from "../../src/install/checkout.js";
import { bundledWithHelloWorld, Scratch } from "../support/home.js";
import {
  closedPort,
  hermes,
  metadata,
  newHome,
  pluginFiles,
  Repo,
  snapshot,
  stagingLeftovers,
  type Ctx,
  type Home,
} from "./helpers.js";

let s: Scratch;
let ctx: Ctx;
let repos: string;
let good: Repo;

beforeAll(() => {
  s = new Scratch("hermes-install-bad-");
  repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s) };
  good = new Repo(repos, "acme/good", pluginFiles("good"));
});
afterAll(() => s?.cleanup());

/** A home that already has one plugin installed, so "as before" means something. */
async function homeWithPlugin(name: string): Promise<Home> {
  const h = newHome(s, name);
  const r = await hermes(ctx, h, ["install", good.url]);
  expect(r.code, r.stderr).toBe(0);
  return h;
}

/** Run a failing install and check: exit 1, the code, the plugins dir and metadata unchanged, no staging left. */
async function refused(h: Home, args: string[], code: string): Promise<string> {
  const before = snapshot(h);
  const meta = existsSync(h.metadataFile) ? readFileSync(h.metadataFile, "utf8") : undefined;
  const r = await hermes(ctx, h, args);
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.stderr).toContain(code);
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(snapshot(h)).toEqual(before);
  expect(existsSync(h.metadataFile) ? readFileSync(h.metadataFile, "utf8") : undefined).toEqual(meta);
  expect(stagingLeftovers(h)).toEqual([]);
  return r.stderr;
}

describe.concurrent("bad input: clear errors, nothing changed", { timeout: 240_000 }, () => {
  it("a repository that does not exist", async () => {
    const h = await homeWithPlugin("nonexistent");
    const err = await refused(h, ["install", `file://${join(repos, "acme", "nope.git")}`], "E_GIT_CLONE_FAILED");
    expect(err).toMatch(/does not (exist|appear to be a git repository)/);
  });

  it("an unreachable host (network failure)", async () => {
    const h = await homeWithPlugin("unreachable");
    const port = await closedPort();
    const started = Date.now();
    const err = await refused(h, ["install", `git://127.0.0.1:${port}/x.git`], "E_GIT_CLONE_FAILED");
    expect(err).toMatch(/network|connect|refused/i);
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it(
    "a host that accepts and never answers: the clone " + "times out (HERMES_GIT_TIMEOUT_MS), nothing changed",
    async () => {
      const h = await homeWithPlugin("blackhole");
      const sockets: Socket[] = [];
      const hole = createServer((sock) => sockets.push(sock));
      await new Promise<void>((r) => hole.listen(0, "127.0.0.1", r));
      const port = (hole.address() as { port: number }).port;
      try {
        const before = snapshot(h);
        const r = await hermes(ctx, h, ["install", `git://127.0.0.1:${port}/x.git`], {
          env: { HERMES_GIT_TIMEOUT_MS: "3000" },
        });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain("E_GIT_TIMEOUT");
        expect(r.stderr).toContain("timed out after 3 seconds");
        expect(snapshot(h)).toEqual(before);
        expect(stagingLeftovers(h)).toEqual([]);
      } finally {
        for (const sock of sockets) sock.destroy();
        await new Promise((r) => hole.close(r));
      }
    },
  );

  it("a repository without a manifest names the folders that have one", async () => {
    const repo = new Repo(repos, "acme/nomanifest", {
      "README.md": "x\n",
      ...pluginFiles("inner", "", "plugins/inner/"),
    });
    const h = await homeWithPlugin("nomanifest");
    const err = await refused(h, ["install", repo.url], "E_INSTALL_NO_MANIFEST");
    expect(err).toContain("plugins/inner");
  });

  it("a broken manifest is refused with its problems", async () => {
    const repo = new Repo(repos, "acme/broken", {
      "plugin.yaml": "name: [unclosed\n",
      "index.js": "export function register() {}\n",
    });
    const h = await homeWithPlugin("broken");
    await refused(h, ["install", repo.url], "E_INSTALL_MANIFEST_INVALID");
  });

  it("subdirectories that escape: '..', absolute, a symlink out of the repository", async () => {
    const repo = new Repo(repos, "acme/escape", { ...pluginFiles("esc"), "file.txt": "x\n" });
    mkdirSync(join(s.root, "outside-plugin"), { recursive: true });
    writeFileSync(join(s.root, "outside-plugin", "plugin.yaml"), "name: outside\n");
    symlinkSync(join(s.root, "outside-plugin"), join(repo.work, "out"));
    symlinkSync("../..", join(repo.work, "up"));
    repo.commit({}, "links");
    const h = await homeWithPlugin("escape");
    for (const sub of ["../acme/good", "sub/../../x", "out", "up", "up/etc"]) {
      const err = await refused(h, ["install", `${repo.url}#${sub}`], "E_INSTALL_SUBDIR_ESCAPE");
      expect(err).toContain("escapes the repository");
    }
    await refused(h, ["install", `${repo.url}#missing/dir`], "E_INSTALL_SUBDIR_MISSING");
    // A fragment is relative to the repository root: `#/etc` is the repository's `etc`, never the host's.
    await refused(h, ["install", `${repo.url}#/etc`], "E_INSTALL_SUBDIR_MISSING");
    const notDir = await refused(h, ["install", `${repo.url}#file.txt`], "E_INSTALL_SUBDIR_MISSING");
    expect(notDir).toContain("not a directory");
  });

  it("plugin names with '/' or '..' (and other unusable names) are refused", async () => {
    const h = await homeWithPlugin("names");
    for (const [i, name] of ["a/b", "../evil", "..", ".hidden", "nix-managed-x"].entries()) {
      const repo = new Repo(repos, `acme/badname${i}`, {
        "plugin.yaml": `name: ${JSON.stringify(name)}\n`,
        "index.js": "export function register() {}\n",
      });
      await refused(h, ["install", repo.url], "E_INSTALL_NAME_INVALID");
    }
    expect(existsSync(join(h.home, "evil"))).toBe(false);
  });

  it("a corrupt metadata file: install, update and remove refuse with its position and change nothing", async () => {
    const h = await homeWithPlugin("corrupt");
    writeFileSync(h.metadataFile, '{\n  "good": {"pinned": false,\n');
    const err = await refused(h, ["install", good.url, "--force"], "E_INSTALL_METADATA_CORRUPT");
    expect(err).toContain(".install-metadata.json:3:");
    await refused(h, ["update", "good"], "E_INSTALL_METADATA_CORRUPT");
    await refused(h, ["remove", "good"], "E_INSTALL_METADATA_CORRUPT");
    writeFileSync(h.metadataFile, "[1, 2]\n");
    await refused(h, ["install", good.url, "--force"], "E_INSTALL_METADATA_CORRUPT");
  });

  it("identifiers that are not identifiers are usage errors (exit 2)", async () => {
    const h = newHome(s, "ident");
    for (const id of ["--x", "a\\b"]) {
      const r = await hermes(ctx, h, ["install", "--", id]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("E_INSTALL_IDENTIFIER");
    }
    expect(existsSync(h.plugins)).toBe(false);
  });

  it("update and remove of what is not installed name the installed plugins", async () => {
    const h = await homeWithPlugin("notfound");
    for (const verb of ["update", "remove"]) {
      const r = await hermes(ctx, h, [verb, "godo"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_PLUGIN_NOT_FOUND");
      expect(r.stderr).toContain("did you mean 'good'");
      expect(r.stderr).toContain("installed plugins: good");
    }
    expect(metadata(h)!.good).toBeDefined();
  });
});

describe("resolveSubdir", () => {
  it("refuses absolute paths, '..' and links out; resolves links that stay inside", async () => {
    const root = s.dir("subdir-unit");
    mkdirSync(join(root, "a", "b"), { recursive: true });
    symlinkSync("a/b", join(root, "inside"));
    symlinkSync("/", join(root, "root"));
    const code = async (sub: string) =>
      resolveSubdir(root, sub).then(
        () => undefined,
        (e: HermesError) => e.code,
      );
    for (const sub of ["/etc", "C:/x", "a/../../x", "..", "root", "root/etc", "."])
      expect(await code(sub)).toBe("E_INSTALL_SUBDIR_ESCAPE");
    expect(await resolveSubdir(root, "inside")).toBe("a/b");
    expect(await resolveSubdir(root, "a//b/")).toBe("a/b");
  });
});
