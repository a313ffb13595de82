/**
 * Precedence on key collision: project > user >
 * bundled, the impostor rule, npm never shadowing a directory plugin, duplicate keys in one
 * source refused. Real folders, discovered end to end.
 */
import { afterEach, describe, expect, it } from "vitest";
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { discover } from "../../src/discovery/discover.js";
import type { Resolution } from "../../src/discovery/precedence.js";
import { makeSandbox, writeNpmPackage, writePlugin, type Sandbox } from "./helpers.js";
import { cleanupTemp, tempDir } from "../support/home.js";

afterEach(cleanupTemp);

async function resolveIn(sb: Sandbox, project = false): Promise<Resolution> {
  const env = project ? { ...sb.env, HERMES_ENABLE_PROJECT_PLUGINS: "1" } : sb.env;
  return (await discover({ home: sb.home, cwd: sb.cwd, env })).resolution;
}

function winner(r: Resolution, key: string) {
  const w = r.winners.filter((c) => c.key === key);
  expect(w, `winners for ${key}`).toHaveLength(1);
  return w[0]!;
}

describe("later sources win", () => {
  it("project > user > bundled for one key from same-named folders", async () => {
    const sb = await makeSandbox();
    const b = await writePlugin(sb.bundled, "weather");
    const u = await writePlugin(sb.userPlugins, "weather");
    const p = await writePlugin(sb.projectPlugins, "weather");
    const r = await resolveIn(sb, true);
    expect(winner(r, "weather")).toMatchObject({ source: "project", path: p });
    expect(r.shadowed.map((s) => [s.candidate.path, s.by.path, s.reason])).toEqual([
      [b, u, "shadowed"],
      [u, p, "shadowed"],
    ]);
    expect(r.diagnostics).toEqual([]);
    expect(r.conflicts.size).toBe(0);
  });

  it("user beats bundled when project plugins are off", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "weather");
    const u = await writePlugin(sb.userPlugins, "weather");
    await writePlugin(sb.projectPlugins, "weather");
    const r = await resolveIn(sb);
    expect(winner(r, "weather").path).toBe(u);
  });

  it("a category key shadows the same category key", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "image_gen/openai");
    const u = await writePlugin(sb.userPlugins, "image_gen/openai", { manifest: { name: "my-openai" } });
    const r = await resolveIn(sb);
    expect(winner(r, "image_gen/openai")).toMatchObject({ source: "user", path: u, name: "my-openai" });
  });

  it("winners come out sorted by key", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "zz");
    await writePlugin(sb.bundled, "mm");
    await writePlugin(sb.userPlugins, "aa");
    await writeNpmPackage(sb.nodeModules, "bb", true, { spec: {} });
    expect((await resolveIn(sb)).winners.map((c) => c.key)).toEqual(["aa", "bb", "mm", "zz"]);
  });
});

describe("impostor rule", () => {
  it(
    "a user plugin with a bundled key from a differently " + "named folder is ignored with W_DISCOVERY_IMPOSTOR",
    async () => {
      const sb = await makeSandbox();
      const b = await writePlugin(sb.bundled, "disk-cleanup");
      const u = await writePlugin(sb.userPlugins, "my-cleanup", { manifest: { name: "disk-cleanup" } });
      const r = await resolveIn(sb);
      expect(winner(r, "disk-cleanup").path).toBe(b);
      expect(r.shadowed).toHaveLength(1);
      expect(r.shadowed[0]).toMatchObject({ reason: "impostor" });
      expect(r.shadowed[0]!.candidate.path).toBe(u);
      expect(r.shadowed[0]!.by.path).toBe(b);
      expect(r.diagnostics).toHaveLength(1);
      expect(r.diagnostics[0]).toMatchObject({
        code: "W_DISCOVERY_IMPOSTOR",
        severity: "warning",
        file: join(u, "plugin.yaml"),
      });
      expect(r.diagnostics[0]!.message).toContain("disk-cleanup");
      expect(r.diagnostics[0]!.message).toContain("my-cleanup");
      expect(r.diagnostics[0]!.message).toContain("rename the folder to 'disk-cleanup'");
    },
  );

  it("a project impostor is ignored too", async () => {
    const sb = await makeSandbox();
    const b = await writePlugin(sb.bundled, "disk-cleanup");
    await writePlugin(sb.projectPlugins, "other-folder", { manifest: { name: "disk-cleanup" } });
    const r = await resolveIn(sb, true);
    expect(winner(r, "disk-cleanup").path).toBe(b);
    expect(r.diagnostics.map((d) => d.code)).toEqual(["W_DISCOVERY_IMPOSTOR"]);
  });

  it("the impostor check compares with the bundled folder, whatever the bundled manifest name", async () => {
    const sb = await makeSandbox();
    // Bundled key "cleaner" lives in folder "disk-cleanup"; a user folder "disk-cleanup" claiming "cleaner" is
    // legitimate.
    const b = await writePlugin(sb.bundled, "disk-cleanup", { manifest: { name: "cleaner" } });
    const u = await writePlugin(sb.userPlugins, "disk-cleanup", { manifest: { name: "cleaner" } });
    const r = await resolveIn(sb);
    expect(winner(r, "cleaner").path).toBe(u);
    expect(r.shadowed.map((s) => [s.candidate.path, s.reason])).toEqual([[b, "shadowed"]]);
    expect(r.diagnostics).toEqual([]);
  });

  it("a user plugin from the same folder name shadows the bundled one legitimately", async () => {
    const sb = await makeSandbox();
    const b = await writePlugin(sb.bundled, "disk-cleanup");
    const u = await writePlugin(sb.userPlugins, "disk-cleanup", {
      manifest: { name: "disk-cleanup", version: "9.9.9" },
    });
    const r = await resolveIn(sb);
    expect(winner(r, "disk-cleanup")).toMatchObject({ path: u, source: "user" });
    expect(r.shadowed.map((s) => [s.candidate.path, s.reason])).toEqual([[b, "shadowed"]]);
    expect(r.diagnostics).toEqual([]);
  });

  it("a nix-managed-<name> link counts as folder <name>", async () => {
    const sb = await makeSandbox();
    const store = tempDir();
    const b = await writePlugin(sb.bundled, "disk-cleanup");
    const target = await writePlugin(store, "hash-disk-cleanup-1.0", { manifest: { name: "disk-cleanup" } });
    await fsp.symlink(target, join(sb.userPlugins, "nix-managed-disk-cleanup"));
    const r = await resolveIn(sb);
    const w = winner(r, "disk-cleanup");
    expect(w).toMatchObject({
      source: "user",
      origin: "nix",
      path: join(sb.userPlugins, "nix-managed-disk-cleanup"),
      realPath: target,
    });
    expect(r.shadowed.map((s) => [s.candidate.path, s.reason])).toEqual([[b, "shadowed"]]);
    expect(r.diagnostics).toEqual([]);
  });

  it("a nix-managed link named after another plugin is still an impostor", async () => {
    const sb = await makeSandbox();
    const store = tempDir();
    const b = await writePlugin(sb.bundled, "disk-cleanup");
    const target = await writePlugin(store, "x", { manifest: { name: "disk-cleanup" } });
    await fsp.symlink(target, join(sb.userPlugins, "nix-managed-something-else"));
    const r = await resolveIn(sb);
    expect(winner(r, "disk-cleanup").path).toBe(b);
    expect(r.diagnostics.map((d) => d.code)).toEqual(["W_DISCOVERY_IMPOSTOR"]);
  });
});

describe("npm packages", () => {
  it("never shadow a directory plugin of the same key", async () => {
    const sb = await makeSandbox();
    const u = await writePlugin(sb.userPlugins, "weather");
    const b = await writePlugin(sb.bundled, "clock");
    const n1 = await writeNpmPackage(sb.nodeModules, "weather", true, { spec: {} });
    const n2 = await writeNpmPackage(sb.nodeModules, "hermes-clock", true, { spec: { manifest: { name: "clock" } } });
    const r = await resolveIn(sb);
    expect(winner(r, "weather").path).toBe(u);
    expect(winner(r, "clock").path).toBe(b);
    expect(r.shadowed.map((s) => [s.candidate.path, s.by.path, s.reason]).sort()).toEqual(
      [
        [n1, u, "directory-wins"],
        [n2, b, "directory-wins"],
      ].sort(),
    );
  });

  it("an npm package with a new key wins on its own", async () => {
    const sb = await makeSandbox();
    const n = await writeNpmPackage(sb.nodeModules, "@acme/solo", true, { spec: { manifest: { name: "solo" } } });
    const r = await resolveIn(sb);
    expect(winner(r, "solo")).toMatchObject({ source: "npm", path: n });
  });
});

describe("duplicate keys in one source", () => {
  it("two user plugins with one key → E_DISCOVERY_DUPLICATE_KEY naming both paths, and neither wins", async () => {
    const sb = await makeSandbox();
    const a = await writePlugin(sb.userPlugins, "folder-a", { manifest: { name: "same" } });
    const b = await writePlugin(sb.userPlugins, "folder-b", { manifest: { name: "same" } });
    await writePlugin(sb.userPlugins, "other");
    const r = await resolveIn(sb);
    expect(r.winners.map((c) => c.key)).toEqual(["other"]);
    expect(r.conflicts.get("same")?.map((c) => c.path)).toEqual([a, b]);
    const e = r.diagnostics.filter((d) => d.code === "E_DISCOVERY_DUPLICATE_KEY");
    expect(e).toHaveLength(1);
    expect(e[0]!.severity).toBe("error");
    expect(e[0]!.message).toContain(a);
    expect(e[0]!.message).toContain(b);
    expect(e[0]!.message).toContain("'same'");
  });

  it("a folder named like another plugin's manifest name collides with it", async () => {
    const sb = await makeSandbox();
    const a = await writePlugin(sb.userPlugins, "alpha");
    const b = await writePlugin(sb.userPlugins, "zeta", { manifest: { name: "alpha" } });
    const r = await resolveIn(sb);
    expect(r.winners).toEqual([]);
    expect(r.conflicts.get("alpha")?.map((c) => c.path)).toEqual([a, b]);
  });

  it("two npm packages with one key conflict; neither wins", async () => {
    const sb = await makeSandbox();
    await writeNpmPackage(sb.nodeModules, "one", true, { spec: { manifest: { name: "dup" } } });
    await writeNpmPackage(sb.nodeModules, "two", true, { spec: { manifest: { name: "dup" } } });
    const r = await resolveIn(sb);
    expect(r.winners).toEqual([]);
    expect(r.conflicts.get("dup")).toHaveLength(2);
    expect(r.diagnostics.map((d) => d.code)).toEqual(["E_DISCOVERY_DUPLICATE_KEY"]);
  });

  it("one key in two different sources is precedence, not a conflict", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "same");
    await writePlugin(sb.userPlugins, "same");
    const r = await resolveIn(sb);
    expect(r.conflicts.size).toBe(0);
    expect(r.diagnostics).toEqual([]);
  });
});
