import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundledWithHelloWorld, Scratch, writeFiles } from "../support/home.js";
import { hermes, metadata, newHome, pluginFiles, Repo, stagingLeftovers, type Ctx, type Home } from "./helpers.js";

let s: Scratch;
let ctx: Ctx;
let repos: string;
let alpha: Repo;
let beta: Repo;

beforeAll(() => {
  s = new Scratch("hermes-remove-");
  repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s) };
  alpha = new Repo(
    repos,
    "acme/alpha",
    pluginFiles("alpha", "capabilities: [tools.override, gateway.platform_actions]\n"),
  );
  beta = new Repo(repos, "acme/beta", pluginFiles("beta"));
});
afterAll(() => s?.cleanup());

const CONFIG = `# my settings
plugins:
  enabled: []
  order: [alpha, beta]
  entries:
    beta:
      settings: {x: 1}   # keep me
`;

const text = (h: Home) => readFileSync(join(h.home, "config.yaml"), "utf8");
const cfg = (h: Home) =>
  (parse(text(h)) ?? {}) as {
    plugins: {
      enabled?: string[];
      disabled?: string[];
      order?: string[];
      entries?: Record<string, Record<string, unknown>>;
    };
  };

async function twoPlugins(name: string): Promise<Home> {
  const h = newHome(s, name, CONFIG);
  for (const r of [alpha, beta]) {
    const res = await hermes(ctx, h, [
      "install",
      r.url,
      "--enable",
      ...(r === alpha ? ["--grant", "tools.override,gateway.platform_actions"] : []),
    ]);
    expect(res.code, res.stderr).toBe(0);
  }
  return h;
}

describe.concurrent("hermes plugins remove|rm|uninstall", { timeout: 240_000 }, () => {
  it.each(["remove", "rm", "uninstall"])(
    "%s purges the tree, its metadata record, enable state, order, entries and grants",
    async (verb) => {
      const h = await twoPlugins(`purge-${verb}`);
      const before = cfg(h).plugins;
      expect(before.entries?.alpha?.granted_capabilities).toEqual(["gateway.platform_actions", "tools.override"]);
      expect(before.entries?.alpha?.allow_tool_override).toBe(true);
      const r = await hermes(ctx, h, [verb, "alpha"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`✗ Plugin alpha removed from ${h.plugins}`);
      expect(r.stdout).toContain("plugins.entries.alpha");
      expect(existsSync(join(h.plugins, "alpha"))).toBe(false);
      expect(Object.keys(metadata(h)!)).toEqual(["beta"]);
      const after = cfg(h).plugins;
      expect(after.enabled).toEqual(["beta"]);
      expect(after.order).toEqual(["beta"]);
      expect(after.entries?.alpha).toBeUndefined();
      expect(after.entries?.beta?.settings).toEqual({ x: 1 });
      // The user's comments survive the purge.
      expect(text(h)).toContain("# my settings");
      expect(text(h)).toContain("# keep me");
      const lock = JSON.parse(readFileSync(join(h.home, "hermes.lock.json"), "utf8")) as {
        plugins: Array<{ key: string }>;
      };
      expect(lock.plugins.map((p) => p.key)).not.toContain("alpha");
      expect(stagingLeftovers(h)).toEqual([]);
    },
  );

  it("a reinstall after remove starts over: not enabled, nothing granted, consent asked again", async () => {
    const h = await twoPlugins("reinstall");
    expect((await hermes(ctx, h, ["remove", "alpha"])).code).toBe(0);
    const r = await hermes(ctx, h, ["install", alpha.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Plugin alpha requests the following capabilities:");
    expect(r.stdout).toContain("capabilities NOT granted");
    const p = cfg(h).plugins;
    expect(p.enabled).not.toContain("alpha");
    expect(p.entries?.alpha).toBeUndefined();
  });

  it("a disabled plugin's deny-list entry is purged too", async () => {
    const h = await twoPlugins("disabled");
    expect((await hermes(ctx, h, ["disable", "beta"])).code).toBe(0);
    expect(cfg(h).plugins.disabled).toEqual(["beta"]);
    expect((await hermes(ctx, h, ["rm", "beta"])).code).toBe(0);
    expect(cfg(h).plugins.disabled ?? []).toEqual([]);
    expect(cfg(h).plugins.entries?.beta).toBeUndefined();
  });

  it("a hand-made plugin (no metadata record) is removed; the metadata is left as it was", async () => {
    const h = await twoPlugins("handmade");
    writeFiles(join(h.plugins, "handmade"), pluginFiles("handmade"));
    const meta = readFileSync(h.metadataFile, "utf8");
    const r = await hermes(ctx, h, ["remove", "handmade"]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(h.plugins, "handmade"))).toBe(false);
    expect(readFileSync(h.metadataFile, "utf8")).toBe(meta);
  });

  it("refuses deployment links and bundled plugins", async () => {
    const h = newHome(s, "managed", "plugins:\n  enabled: []\n");
    const target = s.dir("store-plugin");
    writeFiles(target, pluginFiles("linked"));
    mkdirSync(h.plugins, { recursive: true });
    symlinkSync(target, join(h.plugins, "nix-managed-linked"));
    const r = await hermes(ctx, h, ["remove", "linked"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_PLUGIN_MANAGED");
    expect(existsSync(join(h.plugins, "nix-managed-linked"))).toBe(true);
    const b = await hermes(ctx, h, ["remove", "hello-world"]);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain("E_PLUGIN_NOT_FOUND");
  });

  it("a config that does not parse stops the removal before anything changes", async () => {
    const h = await twoPlugins("badconfig");
    writeFileSync(join(h.home, "config.yaml"), "plugins: [unclosed\n");
    const r = await hermes(ctx, h, ["remove", "alpha"]);
    expect(r.code).toBe(1);
    expect(existsSync(join(h.plugins, "alpha"))).toBe(true);
    expect(Object.keys(metadata(h)!).sort()).toEqual(["alpha", "beta"]);
  });
});
