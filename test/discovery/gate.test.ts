/**
 * Gating each winning plugin. Order: broken → disabled (key or
 * manifest name) → exclusive → model-provider → bundled backend load_now / platform defer →
 * allow-list (null and [] both mean nothing enabled) → load.
 */
import { afterEach, describe, expect, it } from "vitest";
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { gate } from "../../src/discovery/gate.js";
import { loadPluginSet, type PluginSet, type PluginView } from "../../src/discovery/plugin-set.js";
import { readPluginLists, enableStateOf } from "../../src/config/plugin-lists.js";
import { makeSandbox, writePlugin, type Sandbox } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterEach(cleanupTemp);

async function setOf(sb: Sandbox, plugins: Record<string, unknown> | undefined): Promise<PluginSet> {
  return loadPluginSet({ home: sb.home, env: sb.env, config: plugins === undefined ? {} : { plugins } });
}

function view(set: PluginSet, key: string): PluginView {
  const v = set.views.find((x) => x.candidate.key === key);
  if (!v) throw new Error(`no view ${key}: ${set.views.map((x) => x.candidate.key).join(", ")}`);
  return v;
}

function verdicts(set: PluginSet): Record<string, string> {
  return Object.fromEntries(set.views.map((v) => [v.candidate.key, `${v.verdict.action}/${v.verdict.state}`]));
}

describe("plugin lists", () => {
  it("enabled: absent or non-list → null; [] stays an explicit empty allow-list; disabled non-list → []", () => {
    expect(readPluginLists({}).enabled).toBeNull();
    expect(readPluginLists({ plugins: { enabled: null } })).toMatchObject({ enabled: null, enabledPresent: true });
    expect(readPluginLists({ plugins: { enabled: [] } })).toMatchObject({ enabled: [], enabledPresent: true });
    expect(readPluginLists({ plugins: {} })).toMatchObject({ enabled: null, enabledPresent: false });
    expect(readPluginLists({ plugins: 5 })).toMatchObject({ enabled: null, enabledPresent: false, disabled: [] });
    expect(readPluginLists({ plugins: { disabled: "x" } }).disabled).toEqual([]);
    const bad = readPluginLists({ plugins: { enabled: "alpha" } }, "/h/config.yaml");
    expect(bad.enabled).toBeNull();
    expect(bad.diagnostics).toMatchObject([
      { code: "E_SCHEMA_INVALID", path: "plugins.enabled", file: "/h/config.yaml" },
    ]);
  });

  it("three states; disabled wins; key or name matches", () => {
    const lists = readPluginLists({ plugins: { enabled: ["a", "name-b"], disabled: ["a", "c"] } });
    expect(enableStateOf(["a"], lists)).toBe("disabled");
    expect(enableStateOf(["cat/b", "name-b"], lists)).toBe("enabled");
    expect(enableStateOf(["x/c", "c"], lists)).toBe("disabled");
    expect(enableStateOf(["d"], lists)).toBe("not-enabled");
  });
});

describe("gate order on real plugins", () => {
  it("broken plugins are skipped first, even when enabled", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "noentry", { entry: null });
    await writePlugin(sb.userPlugins, "py", { entry: "__init__.py" });
    await writePlugin(sb.userPlugins, "badyaml", { manifest: "name: [x\n" });
    await fsp.symlink(join(sb.root, "gone"), join(sb.userPlugins, "dangling"));
    const set = await setOf(sb, { enabled: ["noentry", "py", "badyaml", "dangling"] });
    // A Python plugin of the original is not broken: it loads through the Python bridge.
    expect(verdicts(set)).toEqual({
      badyaml: "skip/enabled",
      dangling: "skip/enabled",
      noentry: "skip/enabled",
      py: "load/enabled",
    });
    expect(view(set, "dangling").verdict.reason).toContain("broken symlink");
    expect(view(set, "dangling").verdict.reason).toContain(join(sb.root, "gone"));
    expect(view(set, "noentry").verdict.reason).toMatch(/^invalid manifest: no entry module/);
    expect(view(set, "badyaml").verdict.reason).toMatch(/^invalid manifest: /);
  });

  it("broken wins over disabled", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "noentry", { entry: null });
    const v = view(await setOf(sb, { disabled: ["noentry"] }), "noentry").verdict;
    expect(v).toMatchObject({ action: "skip", state: "disabled" });
    expect(v.reason).toMatch(/^invalid manifest: no entry module/);
  });

  it("disabled by key or by manifest name; disabled wins over enabled", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "cat/by-key");
    await writePlugin(sb.userPlugins, "cat/by-name", { manifest: { name: "aliased" } });
    await writePlugin(sb.userPlugins, "both");
    const set = await setOf(sb, {
      enabled: ["cat/by-key", "cat/by-name", "both"],
      disabled: ["cat/by-key", "aliased", "both"],
    });
    for (const k of ["cat/by-key", "cat/by-name", "both"]) {
      expect(view(set, k).verdict).toEqual({
        state: "disabled",
        action: "skip",
        reason: "disabled via config (plugins.disabled)",
      });
    }
  });

  it("disabled wins over a bundled backend and a bundled platform", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "backend-x", { manifest: { kind: "backend" } });
    await writePlugin(sb.bundled, "platforms/irc", { manifest: { kind: "platform", name: "irc-platform" } });
    const set = await setOf(sb, { disabled: ["backend-x", "irc-platform"] });
    expect(verdicts(set)).toEqual({ "backend-x": "skip/disabled", "platforms/irc": "skip/disabled" });
  });

  it("exclusive plugins are skipped even when enabled, with the activation hint", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "honcho", { manifest: { kind: "exclusive" } });
    await writePlugin(sb.userPlugins, "inferred", { entrySource: "class X extends MemoryProvider {}\n" });
    await writePlugin(sb.bundled, "bundled-mem", { manifest: { kind: "exclusive" } });
    const set = await setOf(sb, { enabled: ["honcho", "inferred", "bundled-mem"] });
    for (const k of ["honcho", "inferred", "bundled-mem"]) {
      expect(view(set, k).verdict).toMatchObject({ action: "skip", state: "enabled" });
      expect(view(set, k).verdict.reason).toBe("exclusive plugin — activate via memory.provider config");
    }
  });

  it("an exclusive plugin in a context_engine category points at context.engine", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "context_engine/lcm", { manifest: { kind: "exclusive" } });
    expect(view(await setOf(sb, {}), "context_engine/lcm").verdict.reason).toBe(
      "exclusive plugin — activate via context.engine config",
    );
  });

  it("memory.provider / context.engine load the exclusive plugin they name, without plugins.enabled", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "memory/facts");
    await writePlugin(sb.userPlugins, "memory/honcho", { manifest: { name: "honcho-memory" } });
    await writePlugin(sb.userPlugins, "context_engine/lcm");
    const load = async (config: Record<string, unknown>) => {
      const set = await loadPluginSet({ home: sb.home, env: sb.env, config });
      return { set, v: Object.fromEntries(set.views.map((x) => [x.candidate.key, x.verdict])) };
    };
    // By folder, or by manifest name; the engine by its folder; nothing else of the slot loads.
    let { set, v } = await load({
      memory: { provider: "facts" },
      context: { engine: "lcm" },
      plugins: { enabled: [] },
    });
    expect(v["memory/facts"]).toEqual({ state: "not-enabled", action: "load", reason: "selected by memory.provider" });
    expect(v["memory/honcho"]).toMatchObject({ action: "skip" });
    expect(v["context_engine/lcm"]).toMatchObject({ action: "load", reason: "selected by context.engine" });
    expect(set.loadOrder).toEqual(["context_engine/lcm", "memory/facts"]);
    ({ v } = await load({ memory: { provider: "honcho-memory" } }));
    expect(v["memory/honcho"]).toMatchObject({ action: "load" });
    // compressor is the built-in engine, never a plugin; plugins.disabled still wins over a selection.
    ({ v } = await load({
      context: { engine: "compressor" },
      memory: { provider: "facts" },
      plugins: { disabled: ["facts"] },
    }));
    expect(v["context_engine/lcm"]).toMatchObject({ action: "skip" });
    expect(v["memory/facts"]).toMatchObject({ action: "skip", reason: "disabled via config (plugins.disabled)" });
    // A name nothing discovered provides: a warning naming the nearest one.
    ({ set } = await load({ memory: { provider: "fatcs" }, context: { engine: "lmc" } }));
    expect(set.diagnostics.filter((d) => d.code === "W_PROVIDER_NOT_FOUND").map((d) => [d.path, d.severity])).toEqual([
      ["memory.provider", "warning"],
      ["context.engine", "warning"],
    ]);
    expect(set.diagnostics.map((d) => d.message).join("\n")).toMatch(/'fatcs' .*did you mean 'facts'\?/);
    expect(set.diagnostics.map((d) => d.message).join("\n")).toMatch(/'lmc' .*did you mean 'lcm'\?/);
  });

  it("exclusive comes before the bundled backend rule; model-provider before it too", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "mp", { manifest: { kind: "model-provider" } });
    await writePlugin(sb.bundled, "inferred-mp", { entrySource: "ProviderProfile; ctx.register_provider(p)\n" });
    const set = await setOf(sb, undefined);
    for (const k of ["mp", "inferred-mp"]) {
      expect(view(set, k).verdict.action).toBe("skip");
      expect(view(set, k).verdict.reason).toContain("model-provider");
    }
  });

  it("every plugin in model-providers/ loads now, bundled or user, without plugins.enabled", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "model-providers/openrouter");
    await writePlugin(sb.userPlugins, "model-providers/acme");
    await writePlugin(sb.userPlugins, "model-providers/off", { manifest: { kind: "model-provider" } });
    const set = await setOf(sb, { enabled: [], disabled: ["off"] });
    for (const k of ["model-providers/openrouter", "model-providers/acme"]) {
      expect(view(set, k).candidate.manifest?.kind).toBe("model-provider");
      expect(view(set, k).verdict).toEqual({
        state: "not-enabled",
        action: "load_now",
        reason: "model-provider plugin: registers its profile at every start",
      });
    }
    expect(view(set, "model-providers/off").verdict.action).toBe("skip");
    expect(set.loadOrder).toEqual(["model-providers/acme", "model-providers/openrouter"]);
  });

  it("bundled backend → load_now and bundled platform → defer, bypassing the allow-list", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "backend-x", { manifest: { kind: "backend" } });
    await writePlugin(sb.bundled, "platforms/irc", { manifest: { kind: "platform" } });
    for (const plugins of [undefined, { enabled: [] }, { enabled: null }]) {
      const set = await setOf(sb, plugins);
      expect(view(set, "backend-x").verdict).toMatchObject({ action: "load_now", state: "not-enabled" });
      expect(view(set, "platforms/irc").verdict).toMatchObject({ action: "defer", state: "not-enabled" });
    }
  });

  it("user backends and user platforms need opt-in like everything else", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "ub", { manifest: { kind: "backend" } });
    await writePlugin(sb.userPlugins, "platforms/mine", { manifest: { kind: "platform" } });
    expect(verdicts(await setOf(sb, {}))).toEqual({ "platforms/mine": "skip/not-enabled", ub: "skip/not-enabled" });
    expect(verdicts(await setOf(sb, { enabled: ["ub", "platforms/mine"] }))).toEqual({
      "platforms/mine": "load/enabled",
      ub: "load/enabled",
    });
  });

  it("bundled standalone plugins need opt-in", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "disk-cleanup");
    expect(view(await setOf(sb, {}), "disk-cleanup").verdict.action).toBe("skip");
    expect(view(await setOf(sb, { enabled: ["disk-cleanup"] }), "disk-cleanup").verdict.action).toBe("load");
  });

  it("null and [] both mean nothing enabled, with the enable command in the reason", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "cat/thing");
    for (const plugins of [undefined, {}, { enabled: null }, { enabled: [] }, { enabled: "cat/thing" }]) {
      const v = view(await setOf(sb, plugins), "cat/thing").verdict;
      expect(v).toEqual({
        state: "not-enabled",
        action: "skip",
        reason: "not enabled in config (run `hermes plugins enable cat/thing` to activate)",
      });
    }
  });

  it("enabled by key or by manifest name → load", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "cat/k");
    await writePlugin(sb.userPlugins, "cat/n", { manifest: { name: "n-name" } });
    const set = await setOf(sb, { enabled: ["cat/k", "n-name"] });
    expect(view(set, "cat/k").verdict).toEqual({ state: "enabled", action: "load", reason: "enabled in config" });
    expect(view(set, "cat/n").verdict).toEqual({ state: "enabled", action: "load", reason: "enabled in config" });
  });

  it("the leaf of a category key alone does not enable it", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "observability/langfuse", { manifest: { name: "langfuse-tracing" } });
    expect(view(await setOf(sb, { enabled: ["langfuse"] }), "observability/langfuse").verdict.action).toBe("skip");
  });

  it("duplicate-key plugins are listed, both skipped with the reason, and get no load position", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "a", { manifest: { name: "dup" } });
    await writePlugin(sb.userPlugins, "b", { manifest: { name: "dup" } });
    const set = await setOf(sb, { enabled: ["dup"] });
    const dups = set.views.filter((v) => v.candidate.key === "dup");
    expect(dups.map((v) => [v.candidate.dirName, v.conflict, v.verdict.action, v.loadPosition])).toEqual([
      ["a", true, "skip", undefined],
      ["b", true, "skip", undefined],
    ]);
    expect(dups[0]!.verdict.reason).toContain("duplicate key 'dup'");
  });

  it("shadowed plugins are listed as losers with the reason", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "weather");
    await writePlugin(sb.userPlugins, "weather");
    await writePlugin(sb.userPlugins, "fake", { manifest: { name: "weather2" } });
    await writePlugin(sb.bundled, "weather2");
    const set = await setOf(sb, { enabled: ["weather", "weather2"] });
    const losers = [...set.losers].sort((a, b) => (a.candidate.key < b.candidate.key ? -1 : 1));
    expect(losers.map((l) => [l.candidate.source, l.candidate.key, l.shadowedBy!.reason, l.verdict.action])).toEqual([
      ["bundled", "weather", "shadowed", "skip"],
      ["user", "weather2", "impostor", "skip"],
    ]);
    expect(losers[0]!.verdict.reason).toContain("project > user > bundled");
    expect(losers[1]!.verdict.reason).toContain("rename it to 'weather2'");
  });
});

describe("gate() is a pure function of the candidate and the lists", () => {
  it("follows the documented order for a synthetic candidate", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "b", { manifest: { kind: "backend", name: "b-name" } });
    const c = (await setOf(sb, undefined)).views[0]!.candidate;
    const L = (plugins: Record<string, unknown>) => readPluginLists({ plugins });
    expect(gate(c, L({})).action).toBe("load_now");
    expect(gate(c, L({ disabled: ["b-name"] })).action).toBe("skip");
    expect(gate(c, L({}), true)).toMatchObject({
      action: "skip",
      reason: "duplicate key 'b-name': another plugin of the same source claims it",
    });
    expect(gate({ ...c, source: "user" }, L({})).action).toBe("skip");
    expect(gate({ ...c, source: "user" }, L({ enabled: ["b-name"] })).action).toBe("load");
    expect(gate({ ...c, manifest: { ...c.manifest!, kind: "platform" } }, L({})).action).toBe("defer");
    expect(gate({ ...c, manifest: { ...c.manifest!, kind: "exclusive" } }, L({ enabled: ["b-name"] })).action).toBe(
      "skip",
    );
  });
});
