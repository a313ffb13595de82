/**
 * Enable state edits and name resolution for the CLI
 * (`findPlugin`), on real config files and real plugin folders.
 */
import { afterEach, describe, expect, it } from "vitest";
import { promises as fsp } from "node:fs";
import { parse } from "yaml";
import { disablePlugin, enablePlugin } from "../../src/config/enable.js";
import { findPlugin, loadPluginSet, type PluginSet } from "../../src/discovery/plugin-set.js";
import { makeSandbox, writePlugin, type Sandbox } from "../discovery/helpers.js";
import { cleanupTemp, fileStamp, writeText } from "../support/home.js";
import { rejection, sleep, thrown } from "../support/util.js";

afterEach(cleanupTemp);

async function config(sb: Sandbox): Promise<{ plugins?: { enabled?: unknown; disabled?: unknown } }> {
  return parse(await fsp.readFile(sb.configFile, "utf8")) ?? {};
}

const CAT = { key: "observability/langfuse", name: "langfuse-tracing" };

describe("enablePlugin", () => {
  it("adds the key to plugins.enabled, creating the file when missing", async () => {
    const sb = await makeSandbox();
    const r = await enablePlugin(sb.configFile, { key: "weather", name: "weather" });
    expect(r).toEqual({ key: "weather", changed: true, message: "✓ Plugin weather enabled." });
    expect(await config(sb)).toEqual({ plugins: { enabled: ["weather"] } });
  });

  it(
    "removes the key and the manifest name from plugins.disabled, not a bare leaf (it may be another plugin's " +
      "key)",
    async () => {
      const sb = await makeSandbox();
      writeText(
        sb.configFile,
        "plugins:\n  enabled: [other]\n  disabled:\n    - observability/langfuse\n    - langfuse\n    - " +
          "langfuse-tracing\n    - keep-me\n",
      );
      const r = await enablePlugin(sb.configFile, CAT);
      expect(r.changed).toBe(true);
      expect((await config(sb)).plugins).toEqual({
        enabled: ["other", "observability/langfuse"],
        disabled: ["langfuse", "keep-me"],
      });
    },
  );

  it("already enabled (by key or by name) and not disabled → no write at all", async () => {
    for (const listed of ["observability/langfuse", "langfuse-tracing"]) {
      const sb = await makeSandbox();
      writeText(sb.configFile, `plugins:\n  enabled: [${listed}]\n`);
      const before = fileStamp(sb.configFile);
      await sleep(20);
      const r = await enablePlugin(sb.configFile, CAT);
      expect(r).toEqual({ key: CAT.key, changed: false, message: `Plugin '${CAT.key}' is already enabled.` });
      expect(fileStamp(sb.configFile)).toEqual(before);
    }
  });

  it("already enabled but also disabled → only the disabled entry is removed", async () => {
    const sb = await makeSandbox();
    writeText(sb.configFile, "plugins:\n  enabled: [weather]\n  disabled: [weather]\n");
    expect((await enablePlugin(sb.configFile, { key: "weather", name: "weather" })).changed).toBe(true);
    expect((await config(sb)).plugins).toEqual({ enabled: ["weather"], disabled: [] });
  });

  it("appends to an `enabled:` key with no value", async () => {
    const sb = await makeSandbox();
    writeText(sb.configFile, "plugins:\n  enabled:\n");
    await enablePlugin(sb.configFile, { key: "a", name: "a" });
    expect((await config(sb)).plugins).toEqual({ enabled: ["a"] });
  });

  it("keeps comments and every other byte", async () => {
    const sb = await makeSandbox();
    const text = [
      "# my hermes config",
      "model:",
      "  default: gpt-4o   # the usual",
      "",
      "plugins:",
      "  # what loads",
      "  enabled:",
      "    - alpha   # first",
      "  disabled: [gamma, weather]  # off for now",
      "",
      "# trailing",
      "other: 1",
      "",
    ].join("\n");
    writeText(sb.configFile, text);
    await enablePlugin(sb.configFile, { key: "weather", name: "weather" });
    const out = await fsp.readFile(sb.configFile, "utf8");
    expect(out).toBe(
      text
        .replace("    - alpha   # first\n", "    - alpha   # first\n    - weather\n")
        .replace("[gamma, weather]", "[gamma]"),
    );
  });

  it(
    "refuses a non-list plugins.enabled with " + "E_SCHEMA_INVALID at its line and column, leaving the " + "file alone",
    async () => {
      const sb = await makeSandbox();
      writeText(sb.configFile, "model: x\nplugins:\n  enabled: weather\n");
      const before = fileStamp(sb.configFile);
      const e = await rejection(() => enablePlugin(sb.configFile, { key: "a", name: "a" }));
      expect(e).toMatchObject({
        code: "E_SCHEMA_INVALID",
        file: sb.configFile,
        line: 3,
        col: 12,
        path: "plugins.enabled",
      });
      expect(e.message).toContain("plugins.enabled");
      expect(fileStamp(sb.configFile)).toEqual(before);
    },
  );

  it("refuses a non-list plugins.disabled, and a non-mapping plugins", async () => {
    const sb = await makeSandbox();
    writeText(sb.configFile, "plugins:\n  disabled: {a: 1}\n");
    expect(await rejection(() => enablePlugin(sb.configFile, { key: "a", name: "a" }))).toMatchObject({
      code: "E_SCHEMA_INVALID",
      line: 2,
      col: 13,
    });
    writeText(sb.configFile, "plugins: [a]\n");
    expect(await rejection(() => enablePlugin(sb.configFile, { key: "a", name: "a" }))).toMatchObject({
      code: "E_SCHEMA_INVALID",
      line: 1,
      col: 10,
    });
  });

  it("refuses to edit a config that does not parse", async () => {
    const sb = await makeSandbox();
    writeText(sb.configFile, "plugins:\n  enabled: [a\n");
    const before = fileStamp(sb.configFile);
    expect(await rejection(() => enablePlugin(sb.configFile, { key: "b", name: "b" }))).toMatchObject({
      code: "E_YAML_PARSE",
      file: sb.configFile,
    });
    expect(fileStamp(sb.configFile)).toEqual(before);
  });
});

describe("disablePlugin", () => {
  it("removes key and name (not a bare leaf) from enabled and adds the key to disabled", async () => {
    const sb = await makeSandbox();
    writeText(
      sb.configFile,
      "plugins:\n  enabled:\n    - observability/langfuse\n    - langfuse\n    - langfuse-tracing\n    - keep-me\n",
    );
    const r = await disablePlugin(sb.configFile, CAT);
    expect(r).toEqual({ key: CAT.key, changed: true, message: "⊘ Plugin observability/langfuse disabled." });
    expect((await config(sb)).plugins).toEqual({
      enabled: ["langfuse", "keep-me"],
      disabled: ["observability/langfuse"],
    });
  });

  it("on an empty config writes plugins.disabled", async () => {
    const sb = await makeSandbox();
    await disablePlugin(sb.configFile, { key: "weather", name: "weather" });
    expect(await config(sb)).toEqual({ plugins: { disabled: ["weather"] } });
  });

  it("already disabled (by key or by name) and not enabled → no write", async () => {
    for (const listed of ["observability/langfuse", "langfuse-tracing"]) {
      const sb = await makeSandbox();
      writeText(sb.configFile, `plugins:\n  enabled: [x]\n  disabled: [${listed}]\n`);
      const before = fileStamp(sb.configFile);
      await sleep(20);
      const r = await disablePlugin(sb.configFile, CAT);
      expect(r).toEqual({ key: CAT.key, changed: false, message: `Plugin '${CAT.key}' is already disabled.` });
      expect(fileStamp(sb.configFile)).toEqual(before);
    }
  });

  it("refuses a non-list plugins.enabled with position", async () => {
    const sb = await makeSandbox();
    writeText(sb.configFile, "plugins:\n  enabled: 42\n");
    expect(await rejection(() => disablePlugin(sb.configFile, { key: "a", name: "a" }))).toMatchObject({
      code: "E_SCHEMA_INVALID",
      line: 2,
      col: 12,
    });
  });

  it("enable then disable then enable round-trips", async () => {
    const sb = await makeSandbox();
    await enablePlugin(sb.configFile, CAT);
    await disablePlugin(sb.configFile, CAT);
    expect((await config(sb)).plugins).toEqual({ enabled: [], disabled: ["observability/langfuse"] });
    await enablePlugin(sb.configFile, CAT);
    expect((await config(sb)).plugins).toEqual({ enabled: ["observability/langfuse"], disabled: [] });
  });
});

describe("findPlugin", () => {
  async function fixture(): Promise<PluginSet> {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "weather-folder", { manifest: { name: "weather" } });
    await writePlugin(sb.userPlugins, "observability/langfuse", { manifest: { name: "langfuse-tracing" } });
    await writePlugin(sb.userPlugins, "a/shared");
    await writePlugin(sb.userPlugins, "b/shared");
    await writePlugin(sb.userPlugins, "x/one", { manifest: { name: "twin" } });
    await writePlugin(sb.userPlugins, "y/two", { manifest: { name: "twin" } });
    await writePlugin(sb.bundled, "clock");
    await writePlugin(sb.userPlugins, "clock");
    return loadPluginSet({ home: sb.home, env: sb.env, config: {} });
  }

  it("resolves a key, a manifest name and a unique category leaf", async () => {
    const set = await fixture();
    expect(findPlugin(set, "weather").candidate.dirName).toBe("weather-folder");
    expect(findPlugin(set, "observability/langfuse").candidate.key).toBe("observability/langfuse");
    expect(findPlugin(set, "langfuse-tracing").candidate.key).toBe("observability/langfuse");
    expect(findPlugin(set, "langfuse").candidate.key).toBe("observability/langfuse");
  });

  it("prefers the winner over shadowed plugins, and finds losers only when asked", async () => {
    const set = await fixture();
    expect(findPlugin(set, "clock").candidate.source).toBe("user");
    expect(findPlugin(set, "clock", { includeLosers: true }).candidate.source).toBe("user");
  });

  it("an ambiguous leaf → E_PLUGIN_AMBIGUOUS naming the candidates", async () => {
    const set = await fixture();
    const e = thrown(() => findPlugin(set, "shared"));
    expect(e.code).toBe("E_PLUGIN_AMBIGUOUS");
    expect(e.message).toContain("a/shared");
    expect(e.message).toContain("b/shared");
  });

  it("an ambiguous manifest name → E_PLUGIN_AMBIGUOUS naming both keys", async () => {
    const set = await fixture();
    const e = thrown(() => findPlugin(set, "twin"));
    expect(e.code).toBe("E_PLUGIN_AMBIGUOUS");
    expect(e.message).toContain("x/one");
    expect(e.message).toContain("y/two");
  });

  it("not found → E_PLUGIN_NOT_FOUND with 'did you mean' for a near miss, without it for nonsense", async () => {
    const set = await fixture();
    const near = thrown(() => findPlugin(set, "wether"));
    expect(near.code).toBe("E_PLUGIN_NOT_FOUND");
    expect(near.message).toContain("'wether'");
    expect(near.message).toContain("did you mean 'weather'?");
    const far = thrown(() => findPlugin(set, "qqqqqqqqqqqq"));
    expect(far.code).toBe("E_PLUGIN_NOT_FOUND");
    expect(far.message).not.toContain("did you mean");
  });

  it("the folder name of a flat plugin is not its key", async () => {
    const set = await fixture();
    const e = thrown(() => findPlugin(set, "weather-folder"));
    expect(e.code).toBe("E_PLUGIN_NOT_FOUND");
    expect(e.message).toContain("'weather-folder'");
  });
});
