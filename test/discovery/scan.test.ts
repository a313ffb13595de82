/**
 * Scanning plugin roots and sources,
 * on real temporary folders with real symlinks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { promises as fsp } from "node:fs";
import { join, resolve } from "node:path";
import { BUNDLED_SKIP, scanNodeModules, scanRoot, type Candidate } from "../../src/discovery/scan.js";
import { discover, sourceRoots } from "../../src/discovery/discover.js";
import { PACKAGE_ROOT } from "../../src/core/paths.js";
import { makeSandbox, writeNpmPackage, writePlugin } from "./helpers.js";
import { cleanupTemp, permissionsEnforced, tempDir, writeText } from "../support/home.js";

afterEach(cleanupTemp);

function keys(cs: readonly Candidate[]): string[] {
  return cs.map((c) => c.key);
}

function byKey(cs: readonly Candidate[], key: string): Candidate {
  const c = cs.find((x) => x.key === key);
  if (!c) throw new Error(`no candidate ${key} in ${keys(cs).join(", ")}`);
  return c;
}

describe("scanRoot: folders", () => {
  it("returns candidates in sorted (code point) order regardless of creation order", async () => {
    const root = tempDir();
    for (const n of ["zeta", "Alpha", "beta", "alpha"]) await writePlugin(root, n);
    const { candidates, diagnostics } = await scanRoot(root, "user");
    expect(keys(candidates)).toEqual(["Alpha", "alpha", "beta", "zeta"]);
    expect(diagnostics).toEqual([]);
  });

  it("skips dunder and dot folders, and plain files", async () => {
    const root = tempDir();
    await writePlugin(root, "__pycache__");
    await writePlugin(root, ".staging");
    await writePlugin(root, ".git");
    await writePlugin(root, "real");
    writeText(join(root, "README.md"), "not a plugin\n");
    const { candidates } = await scanRoot(root, "user");
    expect(keys(candidates)).toEqual(["real"]);
  });

  it("a flat plugin's key is its manifest name, not the folder name", async () => {
    const root = tempDir();
    const dir = await writePlugin(root, "some-folder", { manifest: { name: "the-name", version: "1.2.0" } });
    const { candidates } = await scanRoot(root, "user");
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      key: "the-name",
      name: "the-name",
      dirName: "some-folder",
      source: "user",
      origin: "local",
      status: "ok",
      path: dir,
      realPath: dir,
      entry: "index.js",
      manifestFile: join(dir, "plugin.yaml"),
    });
    expect(candidates[0]!.manifest!.version).toBe("1.2.0");
  });

  it("falls back to plugin.yml when plugin.yaml is absent, and prefers plugin.yaml when both exist", async () => {
    const root = tempDir();
    const yml = await writePlugin(root, "yml-only", { manifest: "name: from-yml\n", manifestFile: "plugin.yml" });
    const both = await writePlugin(root, "both", { manifest: "name: from-yaml\n" });
    writeText(join(both, "plugin.yml"), "name: from-yml-2\n");
    const { candidates } = await scanRoot(root, "user");
    expect(keys(candidates)).toEqual(["from-yaml", "from-yml"]);
    expect(byKey(candidates, "from-yml").manifestFile).toBe(join(yml, "plugin.yml"));
  });

  it("a folder without a manifest is a category scanned one level deep with key cat/dir", async () => {
    const root = tempDir();
    await writePlugin(root, "image_gen/openai", { manifest: { name: "openai-images" } });
    await writePlugin(root, "image_gen/fal");
    const { candidates } = await scanRoot(root, "bundled");
    expect(keys(candidates)).toEqual(["image_gen/fal", "image_gen/openai"]);
    const openai = byKey(candidates, "image_gen/openai");
    expect(openai).toMatchObject({ name: "openai-images", category: "image_gen", dirName: "openai", status: "ok" });
  });

  it("does not descend deeper than <root>/<cat>/<plugin>", async () => {
    const root = tempDir();
    await writePlugin(root, "cat/sub/deep");
    await writePlugin(root, "cat/ok");
    const { candidates } = await scanRoot(root, "user");
    expect(keys(candidates)).toEqual(["cat/ok"]);
  });

  it("dunder and dot folders are skipped inside a category too", async () => {
    const root = tempDir();
    await writePlugin(root, "cat/__pycache__");
    await writePlugin(root, "cat/.hidden");
    await writePlugin(root, "cat/shown");
    const { candidates } = await scanRoot(root, "user");
    expect(keys(candidates)).toEqual(["cat/shown"]);
  });

  it("a root that does not exist yields nothing and no error", async () => {
    const root = tempDir();
    expect(await scanRoot(join(root, "missing"), "user")).toEqual({
      candidates: [],
      diagnostics: [],
      looked: { dirs: [], files: [] },
    });
  });
});

describe("scanRoot: bundled skip names", () => {
  it(
    "skips cron_providers and computer_use at the top of the bundled root (memory/, context_engine/ and " +
      "model-providers/ are scanned)",
    async () => {
      expect([...BUNDLED_SKIP].sort()).toEqual(["computer_use", "cron_providers"]);
      const root = tempDir();
      for (const n of BUNDLED_SKIP) {
        await writePlugin(root, n); // as a plugin
        await writePlugin(root, `${n}/inner`); // and as a category
      }
      await writePlugin(root, "kept");
      const { candidates } = await scanRoot(root, "bundled", { skipTop: BUNDLED_SKIP });
      expect(keys(candidates)).toEqual(["kept"]);
    },
  );

  it("memory/ and context_engine/ are categories of exclusive plugins in the bundled and the user root", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "memory/honcho");
    await writePlugin(sb.userPlugins, "memory/honcho");
    await writePlugin(sb.userPlugins, "context_engine/mine");
    await writePlugin(sb.userPlugins, "context_engine/declared", { manifest: { kind: "standalone" } });
    const d = await discover({ home: sb.home, env: sb.env });
    expect(d.candidates.map((c) => `${c.source}:${c.key}:${c.manifest?.kind}`)).toEqual([
      "bundled:memory/honcho:exclusive",
      "user:context_engine/declared:standalone",
      "user:context_engine/mine:exclusive",
      "user:memory/honcho:exclusive",
    ]);
    // The user's folder wins over the bundled one of the same name.
    expect(d.resolution.winners.find((c) => c.key === "memory/honcho")?.source).toBe("user");
  });

  it("platforms/ and image_gen/ are ordinary categories of the bundled root", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "platforms/irc", { manifest: { kind: "platform" } });
    await writePlugin(sb.bundled, "image_gen/openai");
    const d = await discover({ home: sb.home, env: sb.env });
    expect(d.candidates.map((c) => `${c.source}:${c.key}`)).toEqual([
      "bundled:image_gen/openai",
      "bundled:platforms/irc",
    ]);
  });
});

describe("scanRoot: symlinks", () => {
  it("a symlinked plugin folder whose target is outside the root works", async () => {
    const root = tempDir();
    const elsewhere = tempDir();
    const target = await writePlugin(elsewhere, "store/linked-src", { manifest: { name: "linked" } });
    await fsp.symlink(target, join(root, "linked"));
    const { candidates } = await scanRoot(root, "user");
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      key: "linked",
      status: "ok",
      path: join(root, "linked"),
      realPath: target,
      linkTarget: target,
      entry: "index.js",
    });
  });

  it("a relative symlink works too", async () => {
    const parent = tempDir();
    const root = join(parent, "plugins");
    await fsp.mkdir(root);
    await writePlugin(parent, "store-rel/p", { manifest: { name: "rel" } });
    await fsp.symlink("../store-rel/p", join(root, "rel-link"));
    const { candidates } = await scanRoot(root, "user");
    expect(candidates.map((c) => [c.key, c.status, c.linkTarget])).toEqual([["rel", "ok", "../store-rel/p"]]);
  });

  it(
    "a dangling symlink is a candidate with status " +
      "'dangling' and E_DISCOVERY_DANGLING_LINK naming the " +
      "target",
    async () => {
      const root = tempDir();
      const gone = join(root, "..", "nowhere-xyz", "plugin");
      await fsp.symlink(gone, join(root, "broken"));
      await writePlugin(root, "fine");
      const { candidates } = await scanRoot(root, "user");
      expect(keys(candidates)).toEqual(["broken", "fine"]);
      const b = byKey(candidates, "broken");
      expect(b.status).toBe("dangling");
      expect(b.linkTarget).toBe(gone);
      expect(b.diagnostics).toHaveLength(1);
      expect(b.diagnostics[0]).toMatchObject({
        code: "E_DISCOVERY_DANGLING_LINK",
        severity: "error",
        file: join(root, "broken"),
      });
      expect(b.diagnostics[0]!.message).toContain(gone);
      expect(byKey(candidates, "fine").status).toBe("ok");
    },
  );

  it("a dangling nix-managed-<name> link is keyed by <name>", async () => {
    const root = tempDir();
    await fsp.symlink("/nix/store/does-not-exist-hk", join(root, "nix-managed-weather"));
    const { candidates } = await scanRoot(root, "user");
    expect(candidates.map((c) => [c.key, c.status, c.origin])).toEqual([["weather", "dangling", "nix"]]);
  });

  it("a nix-managed-<name> link without a manifest name is keyed by <name>", async () => {
    const root = tempDir();
    const store = tempDir();
    const target = await writePlugin(store, "abc123-weather");
    await fsp.symlink(target, join(root, "nix-managed-weather"));
    const { candidates } = await scanRoot(root, "user");
    expect(candidates.map((c) => [c.key, c.name, c.status, c.origin])).toEqual([["weather", "weather", "ok", "nix"]]);
  });

  it("a symlinked category folder is scanned as a category", async () => {
    const root = tempDir();
    const store = tempDir();
    await writePlugin(store, "shared-cat/one");
    await fsp.symlink(join(store, "shared-cat"), join(root, "cat"));
    const { candidates } = await scanRoot(root, "user");
    expect(candidates.map((c) => [c.key, c.category, c.status, c.realPath])).toEqual([
      ["cat/one", "cat", "ok", join(store, "shared-cat", "one")],
    ]);
  });

  it("a symlink to a file is not a plugin", async () => {
    const root = tempDir();
    writeText(join(root, "file.txt"), "x");
    await fsp.symlink(join(root, "file.txt"), join(root, "file-link"));
    expect((await scanRoot(root, "user")).candidates).toEqual([]);
  });
});

describe("scanRoot: status of a folder", () => {
  it("a python plugin (__init__.py, no index.js) is a plugin with entry __init__.py, without problems", async () => {
    const root = tempDir();
    await writePlugin(root, "py", { entry: "__init__.py", entrySource: "def register(ctx):\n    pass\n" });
    const { candidates } = await scanRoot(root, "user");
    expect(candidates[0]).toMatchObject({ key: "py", status: "ok", entry: "__init__.py" });
    expect(candidates[0]!.diagnostics).toEqual([]);
  });

  it("a JavaScript entry wins over __init__.py", async () => {
    const root = tempDir();
    const dir = await writePlugin(root, "both");
    await fsp.writeFile(join(dir, "__init__.py"), "def register(ctx):\n    pass\n");
    const { candidates } = await scanRoot(root, "user");
    expect(candidates[0]).toMatchObject({ key: "both", status: "ok", entry: "index.js" });
  });

  it("a plugin with both index.js and __init__.py is a JS plugin", async () => {
    const root = tempDir();
    await writePlugin(root, "dual", { files: { "__init__.py": "def register(ctx): pass\n" } });
    expect((await scanRoot(root, "user")).candidates[0]).toMatchObject({ status: "ok", entry: "index.js" });
  });

  it("index.mjs is an entry; `main:` names another one", async () => {
    const root = tempDir();
    await writePlugin(root, "mjs", { entry: "index.mjs" });
    await writePlugin(root, "main", { manifest: { main: "lib/start.js" }, entry: "lib/start.js" });
    const { candidates } = await scanRoot(root, "user");
    expect(candidates.map((c) => [c.key, c.status, c.entry])).toEqual([
      ["main", "ok", "lib/start.js"],
      ["mjs", "ok", "index.mjs"],
    ]);
  });

  it("no entry at all → status 'invalid' with E_PLUGIN_NO_ENTRY", async () => {
    const root = tempDir();
    const dir = await writePlugin(root, "noentry", { entry: null });
    const c = (await scanRoot(root, "user")).candidates[0]!;
    expect(c.status).toBe("invalid");
    expect(c.diagnostics).toMatchObject([
      { code: "E_PLUGIN_NO_ENTRY", severity: "error", file: join(dir, "plugin.yaml") },
    ]);
  });

  it("a `main:` that does not exist → E_PLUGIN_NO_ENTRY naming it (index.js is not used instead)", async () => {
    const root = tempDir();
    await writePlugin(root, "badmain", { manifest: { main: "dist/missing.js" } });
    const c = (await scanRoot(root, "user")).candidates[0]!;
    expect(c.status).toBe("invalid");
    expect(c.entry).toBeUndefined();
    expect(c.diagnostics[0]!.code).toBe("E_PLUGIN_NO_ENTRY");
    expect(c.diagnostics[0]!.message).toContain("dist/missing.js");
  });

  it("a root plugin.json (no plugin.yaml) is a portable package", async () => {
    const root = tempDir();
    writeText(join(root, "cat", "skills-pack", "plugin.json"), JSON.stringify({ name: "skills-pack" }));
    const c = (await scanRoot(root, "user")).candidates[0]!;
    expect(c).toMatchObject({ key: "cat/skills-pack", status: "portable", category: "cat" });
    expect(c.diagnostics.map((d) => [d.code, d.severity])).toEqual([["W_DISCOVERY_PORTABLE_PLUGIN", "warning"]]);
  });

  it("a flat portable package is keyed by the name in its plugin.json", async () => {
    const root = tempDir();
    writeText(join(root, "pack-folder", "plugin.json"), JSON.stringify({ name: "agent-skills", version: "1.0.0" }));
    const c = (await scanRoot(root, "user")).candidates[0]!;
    expect(c.status).toBe("portable");
    expect(c.key).toBe("agent-skills");
    expect(c.name).toBe("agent-skills");
  });

  it("plugin.yaml wins over plugin.json", async () => {
    const root = tempDir();
    await writePlugin(root, "mixed", { manifest: { name: "native" }, files: { "plugin.json": "{}" } });
    expect((await scanRoot(root, "user")).candidates.map((c) => [c.key, c.status])).toEqual([["native", "ok"]]);
  });

  it("a user plugin with a .git folder has origin 'git'", async () => {
    const root = tempDir();
    await writePlugin(root, "cloned", { files: { ".git/HEAD": "ref: refs/heads/main\n" } });
    expect((await scanRoot(root, "user")).candidates[0]!.origin).toBe("git");
  });

  it("a bad manifest never aborts the scan of the others", async () => {
    const root = tempDir();
    await writePlugin(root, "a-good");
    await writePlugin(root, "b-broken-yaml", { manifest: "name: [unclosed\n" });
    await writePlugin(root, "c-list", { manifest: "- not\n- a mapping\n" });
    await writePlugin(root, "d-good");
    const { candidates } = await scanRoot(root, "user");
    expect(candidates.map((c) => [c.key, c.status])).toEqual([
      ["a-good", "ok"],
      ["b-broken-yaml", "invalid"],
      ["c-list", "invalid"],
      ["d-good", "ok"],
    ]);
    expect(byKey(candidates, "b-broken-yaml").diagnostics[0]!.code).toBe("E_YAML_PARSE");
    expect(byKey(candidates, "c-list").diagnostics[0]!.code).toBe("E_MANIFEST_NOT_MAPPING");
  });

  it.skipIf(!permissionsEnforced)(
    "an unreadable plugin folder is reported and skipped, the others still scan (skipped when running as " +
      "root: chmod 000 does not stop root from reading)",
    async () => {
      const root = tempDir();
      await writePlugin(root, "a-ok");
      const locked = await writePlugin(root, "b-locked");
      await writePlugin(root, "c-ok");
      await fsp.chmod(locked, 0o000);
      try {
        const { candidates, diagnostics } = await scanRoot(root, "user");
        expect(keys(candidates.filter((c) => c.status === "ok"))).toEqual(["a-ok", "c-ok"]);
        const all = [...diagnostics, ...candidates.flatMap((c) => c.diagnostics)];
        const unreadable = all.filter((d) => d.code === "E_DISCOVERY_UNREADABLE");
        expect(unreadable).toHaveLength(1);
        expect(unreadable[0]!.message).toContain(locked);
      } finally {
        await fsp.chmod(locked, 0o755);
      }
    },
  );

  it.skipIf(!permissionsEnforced)(
    "an unreadable plugin.yaml gives status 'unreadable' (skipped when running as root: chmod 000 does not " +
      "stop root from reading)",
    async () => {
      const root = tempDir();
      const dir = await writePlugin(root, "secret");
      await fsp.chmod(join(dir, "plugin.yaml"), 0o000);
      const c = (await scanRoot(root, "user")).candidates[0]!;
      expect(c).toMatchObject({ key: "secret", status: "unreadable" });
      expect(c.diagnostics[0]!.code).toBe("E_DISCOVERY_UNREADABLE");
    },
  );
});

describe("scanNodeModules", () => {
  it('finds packages with "hermes-plugin": true (manifest at the package root)', async () => {
    const nm = join(tempDir(), "node_modules");
    const pkg = await writeNpmPackage(nm, "hermes-weather", true, { spec: { manifest: { name: "weather" } } });
    await writeNpmPackage(nm, "left-pad", undefined);
    await writeNpmPackage(nm, "turned-off", false, { spec: {} });
    const { candidates, diagnostics } = await scanNodeModules(nm);
    expect(diagnostics).toEqual([]);
    expect(candidates.map((c) => [c.key, c.source, c.origin, c.status, c.path])).toEqual([
      ["weather", "npm", "npm", "ok", pkg],
    ]);
  });

  it('finds packages whose "hermes-plugin" is a relative folder, and scoped packages', async () => {
    const nm = join(tempDir(), "node_modules");
    const scoped = await writeNpmPackage(nm, "@acme/hermes-tools", "plugin", {
      at: "plugin",
      spec: { manifest: { name: "acme-tools" } },
    });
    await writeNpmPackage(nm, "@acme/not-a-plugin", undefined);
    const { candidates } = await scanNodeModules(nm);
    expect(candidates.map((c) => [c.key, c.status, c.path])).toEqual([["acme-tools", "ok", join(scoped, "plugin")]]);
  });

  it("an npm plugin without a manifest name is keyed by the package folder name", async () => {
    const nm = join(tempDir(), "node_modules");
    await writeNpmPackage(nm, "@acme/nameless", "lib", { at: "lib", spec: {} });
    expect((await scanNodeModules(nm)).candidates.map((c) => c.key)).toEqual(["nameless"]);
  });

  it(
    '"hermes-plugin" escaping the package → E_MANIFEST_PATH_ESCAPE; a missing manifest → ' + "E_DISCOVERY_NO_MANIFEST",
    async () => {
      const nm = join(tempDir(), "node_modules");
      await writeNpmPackage(nm, "escaper", "../elsewhere");
      await writeNpmPackage(nm, "empty", true);
      await writeNpmPackage(nm, "good", true, { spec: {} });
      const { candidates, diagnostics } = await scanNodeModules(nm);
      expect(candidates.map((c) => c.key)).toEqual(["good"]);
      expect(diagnostics.map((d) => d.code).sort()).toEqual(["E_DISCOVERY_NO_MANIFEST", "E_MANIFEST_PATH_ESCAPE"]);
      expect(diagnostics.find((d) => d.code === "E_MANIFEST_PATH_ESCAPE")!.file).toBe(
        join(nm, "escaper", "package.json"),
      );
    },
  );

  it("a missing node_modules yields nothing", async () => {
    expect(await scanNodeModules(join(tempDir(), "node_modules"))).toEqual({
      candidates: [],
      diagnostics: [],
      looked: { dirs: [], files: [] },
    });
  });
});

describe("discover: sources", () => {
  it("scans bundled, user and npm (project off) in that order", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "b-one");
    await writePlugin(sb.userPlugins, "u-one");
    await writePlugin(sb.projectPlugins, "p-one");
    await writeNpmPackage(sb.nodeModules, "n-one", true, { spec: {} });
    const d = await discover({ home: sb.home, cwd: sb.cwd, env: sb.env });
    expect(d.roots).toEqual([
      { source: "bundled", dir: sb.bundled },
      { source: "user", dir: sb.userPlugins },
      { source: "npm", dir: sb.nodeModules },
    ]);
    expect(d.candidates.map((c) => `${c.source}:${c.key}`)).toEqual(["bundled:b-one", "user:u-one", "npm:n-one"]);
  });

  it.each([["1"], ["true"], ["yes"], ["on"], [" TRUE "]])(
    "HERMES_ENABLE_PROJECT_PLUGINS=%j scans <cwd>/.hermes/plugins",
    async (flag) => {
      const sb = await makeSandbox();
      await writePlugin(sb.projectPlugins, "p-one");
      const d = await discover({ home: sb.home, cwd: sb.cwd, env: { ...sb.env, HERMES_ENABLE_PROJECT_PLUGINS: flag } });
      expect(d.roots.map((r) => r.source)).toEqual(["bundled", "user", "project", "npm"]);
      expect(d.roots[2]!.dir).toBe(sb.projectPlugins);
      expect(d.candidates.map((c) => `${c.source}:${c.key}`)).toEqual(["project:p-one"]);
      expect(d.candidates[0]!.origin).toBe("project");
    },
  );

  it.each([["0"], ["false"], ["no"], ["off"], [""]])(
    "HERMES_ENABLE_PROJECT_PLUGINS=%j leaves project plugins out",
    async (flag) => {
      const sb = await makeSandbox();
      await writePlugin(sb.projectPlugins, "p-one");
      const d = await discover({ home: sb.home, cwd: sb.cwd, env: { ...sb.env, HERMES_ENABLE_PROJECT_PLUGINS: flag } });
      expect(d.roots.map((r) => r.source)).toEqual(["bundled", "user", "npm"]);
      expect(d.candidates).toEqual([]);
    },
  );

  it("HERMES_ENABLE_PROJECT_PLUGINS=maybe is refused with E_ENV_FLAG", async () => {
    const sb = await makeSandbox();
    await expect(
      discover({ home: sb.home, cwd: sb.cwd, env: { ...sb.env, HERMES_ENABLE_PROJECT_PLUGINS: "maybe" } }),
    ).rejects.toMatchObject({
      code: "E_ENV_FLAG",
    });
  });

  it("HERMES_BUNDLED_PLUGINS overrides the bundled root; without it the package's plugins/ is used", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "only-here", { manifest: { kind: "backend" } });
    const d = await discover({ home: sb.home, env: sb.env });
    expect(d.candidates.map((c) => `${c.source}:${c.key}`)).toEqual(["bundled:only-here"]);
    expect(sourceRoots({ home: sb.home, env: {} })[0]).toEqual({
      source: "bundled",
      dir: resolve(PACKAGE_ROOT, "plugins"),
    });
    expect(sourceRoots({ home: sb.home, env: { HERMES_BUNDLED_PLUGINS: "  " } })[0]!.dir).toBe(
      resolve(PACKAGE_ROOT, "plugins"),
    );
  });

  it("bundled: false leaves the bundled source out", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "b-one");
    const d = await discover({ home: sb.home, env: sb.env, bundled: false });
    expect(d.roots.map((r) => r.source)).toEqual(["user", "npm"]);
    expect(d.candidates).toEqual([]);
  });

  it("a bad manifest in one source never aborts discovery of the others", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "b-bad", { manifest: "{{{" });
    await writePlugin(sb.bundled, "b-good");
    await writePlugin(sb.userPlugins, "u-bad", { manifest: "name: [x\n" });
    await writePlugin(sb.userPlugins, "u-good");
    await fsp.symlink(join(sb.root, "gone"), join(sb.userPlugins, "u-dangling"));
    const d = await discover({ home: sb.home, env: sb.env });
    expect(d.candidates.map((c) => `${c.key}:${c.status}`)).toEqual([
      "b-bad:invalid",
      "b-good:ok",
      "u-bad:invalid",
      "u-dangling:dangling",
      "u-good:ok",
    ]);
    expect(d.resolution.winners.map((c) => c.key)).toEqual(["b-bad", "b-good", "u-bad", "u-dangling", "u-good"]);
  });
});
