/**
 * The v21 migration: in a config older than v21 (no `_config_version`) without `plugins.enabled`, the
 * user plugins already installed are written to the allow-list, once, and the version is stamped. A home
 * without config.yaml is new: it gets the version and nothing is grandfathered. Real homes, real folders.
 */
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, promises as fsp, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { configVersion, grandfatheredNames, migrateEnabledList } from "../../src/discovery/migrate.js";
import { loadPluginSet } from "../../src/discovery/plugin-set.js";
import { makeSandbox, writePlugin, type Sandbox } from "./helpers.js";
import { cleanupTemp, fileStamp, tempDir, writeText } from "../support/home.js";
import { sleep } from "../support/util.js";

afterEach(cleanupTemp);

async function configValue(sb: Sandbox): Promise<Record<string, unknown>> {
  return parse(await fsp.readFile(sb.configFile, "utf8")) as Record<string, unknown>;
}

/** A config.yaml written before v21: it exists and has no `_config_version`. */
const OLDER = "# written before plugins were opt-in\n";
async function olderHome(): Promise<Sandbox> {
  const sb = await makeSandbox();
  writeText(sb.configFile, OLDER);
  return sb;
}

describe("migrateEnabledList", () => {
  it("grandfathers top-level user plugins by manifest name or folder name, sorted by folder", async () => {
    const sb = await olderHome();
    await writePlugin(sb.userPlugins, "b-folder", { manifest: { name: "zulu" } });
    await writePlugin(sb.userPlugins, "a-folder"); // no name → folder name
    await writePlugin(sb.userPlugins, "c-yml", { manifest: "name: from-yml\n", manifestFile: "plugin.yml" });
    await writePlugin(sb.userPlugins, "d-broken", { manifest: "name: [oops\n" }); // unparsable → folder name
    const r = await migrateEnabledList(sb.home);
    expect(r).toMatchObject({ migrated: true, names: ["a-folder", "zulu", "from-yml", "d-broken"] });
    // The config as the migration left it, parsed: compile plans from this instead of parsing it again.
    expect(r.config?.text).toBe(readFileSync(join(sb.home, "config.yaml"), "utf8"));
    expect(r.config?.value).toEqual(await configValue(sb));
    expect(await configValue(sb)).toEqual({
      plugins: { enabled: ["a-folder", "zulu", "from-yml", "d-broken"] },
      _config_version: 21,
    });
  });

  it("skips plugins listed in plugins.disabled", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "keep");
    await writePlugin(sb.userPlugins, "off-folder", { manifest: { name: "off" } });
    writeText(sb.configFile, "plugins:\n  disabled: [off]\n");
    const r = await migrateEnabledList(sb.home);
    expect(r.names).toEqual(["keep"]);
    expect((await configValue(sb)).plugins).toEqual({ disabled: ["off"], enabled: ["keep"] });
  });

  it("never grandfathers bundled plugins", async () => {
    const sb = await olderHome();
    await writePlugin(sb.bundled, "bundled-one");
    await writePlugin(sb.userPlugins, "user-one");
    expect((await migrateEnabledList(sb.home)).names).toEqual(["user-one"]);
  });

  it(
    "a user plugin that legitimately shadows a bundled one " + "(same folder name) is grandfathered and loads",
    async () => {
      const sb = await olderHome();
      await writePlugin(sb.bundled, "hello");
      await writePlugin(sb.userPlugins, "hello");
      expect((await migrateEnabledList(sb.home)).names).toEqual(["hello"]);
      const set = await loadPluginSet({ home: sb.home, env: sb.env, config: await configValue(sb) });
      expect(set.views.map((v) => [v.candidate.source, v.candidate.key, v.verdict.action])).toEqual([
        ["user", "hello", "load"],
      ]);
    },
  );

  it(
    "an impostor of a bundled plugin is not grandfathered, so the bundled plugin does not get enabled through " +
      "its name",
    async () => {
      const sb = await olderHome();
      await writePlugin(sb.bundled, "hello");
      await writePlugin(sb.userPlugins, "not-hello", { manifest: { name: "hello" } });
      await writePlugin(sb.userPlugins, "mine");
      await migrateEnabledList(sb.home, sb.env);
      const set = await loadPluginSet({ home: sb.home, env: sb.env, config: await configValue(sb) });
      expect(set.views.map((v) => [v.candidate.source, v.candidate.key, v.verdict.action])).toEqual([
        ["bundled", "hello", "skip"],
        ["user", "mine", "load"],
      ]);
    },
  );

  it(
    "does not descend into category folders, and ignores " + "folders without a manifest, files and dot folders",
    async () => {
      const sb = await olderHome();
      await writePlugin(sb.userPlugins, "observability/langfuse");
      await writePlugin(sb.userPlugins, ".staging-x");
      await fsp.mkdir(join(sb.userPlugins, "empty-folder"));
      writeText(join(sb.userPlugins, "notes.txt"), "x");
      await writePlugin(sb.userPlugins, "real");
      expect((await migrateEnabledList(sb.home)).names).toEqual(["real"]);
    },
  );

  it("writes an empty list when there is nothing to grandfather, so later installs stay opt-in", async () => {
    const sb = await olderHome();
    const r = await migrateEnabledList(sb.home);
    expect(r).toMatchObject({ migrated: true, names: [] });
    expect(await configValue(sb)).toEqual({ plugins: { enabled: [] }, _config_version: 21 });
  });

  it("runs once: a second run changes nothing and new plugins stay opt-in", async () => {
    const sb = await olderHome();
    await writePlugin(sb.userPlugins, "first");
    expect((await migrateEnabledList(sb.home)).migrated).toBe(true);
    const before = fileStamp(sb.configFile);
    await writePlugin(sb.userPlugins, "second");
    await sleep(20);
    expect(await migrateEnabledList(sb.home)).toMatchObject({ migrated: false, names: [] });
    expect(fileStamp(sb.configFile)).toEqual(before);
    expect(await configValue(sb)).toEqual({ plugins: { enabled: ["first"] }, _config_version: 21 });
  });

  it.each([
    ["an empty list", "plugins:\n  enabled: []\n"],
    ["a null value", "plugins:\n  enabled:\n"],
    ["a list", "plugins:\n  enabled: [x]\n"],
  ])(
    "an older config with plugins.enabled (%s): nothing to migrate, the file is not rewritten",
    async (_label, text) => {
      const sb = await makeSandbox();
      await writePlugin(sb.userPlugins, "would-be-added");
      writeText(sb.configFile, text);
      const before = fileStamp(sb.configFile);
      expect(await migrateEnabledList(sb.home)).toMatchObject({ migrated: false, names: [] });
      expect(await fsp.readFile(sb.configFile, "utf8")).toBe(text);
      expect(await migrateEnabledList(sb.home)).toMatchObject({ migrated: false, names: [] });
      expect(fileStamp(sb.configFile)).toEqual(before);
    },
  );

  it("keeps the rest of the config, comments included", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "p");
    const text = "# mine\nmodel:\n  default: gpt-4o  # the usual\nplugins:\n  disabled: [q]  # off\n";
    writeText(sb.configFile, text);
    await migrateEnabledList(sb.home);
    const out = await fsp.readFile(sb.configFile, "utf8");
    expect(out).toContain("# mine\nmodel:\n  default: gpt-4o  # the usual\nplugins:\n  disabled: [q]  # off\n");
    expect(parse(out)).toEqual({
      model: { default: "gpt-4o" },
      plugins: { disabled: ["q"], enabled: ["p"] },
      _config_version: 21,
    });
  });

  it("a non-mapping plugins value is left for the user to fix, never overwritten", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "p");
    writeText(sb.configFile, "plugins: 5\n");
    expect((await migrateEnabledList(sb.home)).migrated).toBe(false);
    expect(await configValue(sb)).toEqual({ plugins: 5 });
  });

  it("refuses a config.yaml that does not parse and leaves it as it was", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "p");
    writeText(sb.configFile, "plugins:\n  disabled: [a\n");
    const before = fileStamp(sb.configFile);
    await expect(migrateEnabledList(sb.home)).rejects.toMatchObject({ code: "E_YAML_PARSE", file: sb.configFile });
    expect(fileStamp(sb.configFile)).toEqual(before);
  });

  it("does nothing for a home folder that does not exist, and does not create it", async () => {
    const root = tempDir();
    const home = join(root, "no-such-home");
    expect(await migrateEnabledList(home)).toMatchObject({ migrated: false, names: [] });
    expect(existsSync(home)).toBe(false);
  });

  it("an older config in a home without a plugins folder gets an empty allow-list", async () => {
    const root = tempDir();
    const home = join(root, "home");
    await fsp.mkdir(home);
    writeText(join(home, "config.yaml"), OLDER);
    expect(await migrateEnabledList(home)).toMatchObject({ migrated: true, names: [] });
    expect(parse(await fsp.readFile(join(home, "config.yaml"), "utf8"))).toEqual({
      plugins: { enabled: [] },
      _config_version: 21,
    });
  });

  it("a brand-new home (no config.yaml) gets the current version: a plugin dropped in stays opt-in", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "dropped-in");
    expect(await migrateEnabledList(sb.home)).toMatchObject({ migrated: false, names: [] });
    expect(await fsp.readFile(sb.configFile, "utf8")).toBe("_config_version: 21\n");
    const set = await loadPluginSet({ home: sb.home, env: sb.env, config: await configValue(sb) });
    expect(set.views.map((v) => [v.candidate.key, v.verdict.action])).toEqual([["dropped-in", "skip"]]);
    // And it stays so: the next run sees a current config.
    expect(await migrateEnabledList(sb.home)).toMatchObject({ migrated: false, names: [] });
  });

  it.each([
    ["current", "_config_version: 21\n"],
    ["newer (the original's later versions)", "_config_version: 23\n"],
  ])("a %s config without plugins.enabled is not migrated and not rewritten", async (_label, text) => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "p");
    writeText(sb.configFile, text);
    const before = fileStamp(sb.configFile);
    expect(await migrateEnabledList(sb.home)).toMatchObject({ migrated: false, names: [] });
    expect(fileStamp(sb.configFile)).toEqual(before);
  });

  it.each([
    ["20", 20],
    ['"21"', 21],
    ["true", 0],
    ["x", 0],
    ["-3", 0],
    ["21.9", 21],
  ])("_config_version %s reads as %d (missing or unreadable is older than every version)", (raw, want) => {
    expect(configVersion(parse(`_config_version: ${raw}\n`) as Record<string, unknown>)).toBe(want);
    expect(configVersion({})).toBe(0);
  });

  it("a v20 config is migrated once: grandfathered, then stamped 21", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "old-one");
    writeText(sb.configFile, "_config_version: 20  # set by an older hermes\n");
    expect(await migrateEnabledList(sb.home)).toMatchObject({ migrated: true, names: ["old-one"] });
    const out = await fsp.readFile(sb.configFile, "utf8");
    expect(out).toContain("_config_version: 21  # set by an older hermes\n");
    expect(parse(out)).toEqual({ _config_version: 21, plugins: { enabled: ["old-one"] } });
  });

  it("follows symlinked plugin folders", async () => {
    const sb = await makeSandbox();
    const store = tempDir();
    const target = await writePlugin(store, "pkg", { manifest: { name: "linked" } });
    await fsp.symlink(target, join(sb.userPlugins, "linked"));
    await fsp.symlink(join(store, "gone"), join(sb.userPlugins, "dangling"));
    expect(await grandfatheredNames(sb.home, [])).toEqual(["linked"]);
  });

  it("grandfathered names are the keys discovery uses, so the migrated plugins actually load", async () => {
    const sb = await olderHome();
    const store = tempDir();
    await writePlugin(sb.userPlugins, "plain");
    await writePlugin(sb.userPlugins, "named-folder", { manifest: { name: "named" } });
    // A Nix-placed link whose manifest has no name: discovery keys it by the name after the prefix.
    const target = await writePlugin(store, "hash-weather");
    await fsp.symlink(target, join(sb.userPlugins, "nix-managed-weather"));
    await migrateEnabledList(sb.home);
    const set = await loadPluginSet({ home: sb.home, env: sb.env, config: await configValue(sb) });
    expect(Object.fromEntries(set.views.map((v) => [v.candidate.key, v.verdict.action]))).toEqual({
      named: "load",
      plain: "load",
      weather: "load",
    });
  });
});
