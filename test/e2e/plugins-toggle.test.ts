import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STACK_RE, type RunOptions } from "../support/cli.js";
import { writePlugin } from "../support/home.js";
import { INITIAL, toggleHomes } from "./toggle-homes.js";

const { makeHome, run, readConfig, lists, leftovers } = toggleHomes();

/** The result line of enable/disable (later lines, e.g. a lock/compile note, may follow). */
const firstLine = (s: string) => s.split("\n")[0];

describe.concurrent("hermes plugins enable|disable", () => {
  it("enables by key, and the list shows it enabled", async () => {
    const h = makeHome("by-key");
    const r = await run(["plugins", "enable", "flat"], h);
    expect(r.code).toBe(0);
    expect(firstLine(r.stdout)).toBe("✓ Plugin flat enabled. Takes effect on next session.");
    expect(lists(h).enabled).toEqual(["flat"]);
    expect(leftovers(h)).toEqual([]);
    const l = await run(["plugins", "list", "--plain", "--user"], h);
    expect(l.stdout).toMatch(/^enabled\s+user\s+1\.0\.0\s+flat$/m);
  });

  it("enables a category plugin by its manifest name, writing the canonical key", async () => {
    const h = makeHome("by-name");
    const r = await run(["plugins", "enable", "sora-video"], h);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Plugin video/sora enabled.");
    expect(lists(h).enabled).toEqual(["video/sora"]);
  });

  it("enables by a unique leaf name (openai → image_gen/openai)", async () => {
    const h = makeHome("by-leaf");
    const r = await run(["plugins", "enable", "openai"], h);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Plugin image_gen/openai enabled.");
    expect(lists(h).enabled).toEqual(["image_gen/openai"]);
  });

  it("enables a bundled plugin", async () => {
    const h = makeHome("bundled");
    const r = await run(["plugins", "enable", "hello-world"], h);
    expect(r.code).toBe(0);
    expect(lists(h).enabled).toEqual(["hello-world"]);
    const l = await run(["plugins", "list", "--plain", "--enabled"], h);
    expect(l.stdout).toBe(`${"enabled".padEnd(12)}${"bundled".padEnd(8)}${"1.0".padEnd(8)}hello-world\n`);
  });

  it("not found: exit 1, E_PLUGIN_NOT_FOUND with 'did you mean', config untouched", async () => {
    const h = makeHome("not-found");
    const r = await run(["plugins", "enable", "helo-world"], h);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("E_PLUGIN_NOT_FOUND");
    expect(r.stderr).toContain("did you mean 'hello-world'");
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(readConfig(h)).toBe(INITIAL);
    const d = await run(["plugins", "disable", "flatt"], h);
    expect(d.code).toBe(1);
    expect(d.stderr).toContain("E_PLUGIN_NOT_FOUND");
    expect(d.stderr).toContain("did you mean 'flat'");
    expect(readConfig(h)).toBe(INITIAL);
  });

  it("ambiguous leaf: exit 1, E_PLUGIN_AMBIGUOUS naming both keys, config untouched", async () => {
    const h = makeHome("ambiguous");
    writePlugin(join(h, "plugins", "tts", "openai"), "name: openai-tts\n");
    const r = await run(["plugins", "enable", "openai"], h);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_PLUGIN_AMBIGUOUS");
    expect(r.stderr).toContain("image_gen/openai");
    expect(r.stderr).toContain("tts/openai");
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(readConfig(h)).toBe(INITIAL);
    // the full key still works
    const ok = await run(["plugins", "enable", "tts/openai"], h);
    expect(ok.code).toBe(0);
    expect(lists(h).enabled).toEqual(["tts/openai"]);
  });

  it("already enabled: says so and does not write the file", async () => {
    const cfg = "# mine\nplugins:\n  enabled:\n    - flat\n_config_version: 21\n";
    const h = makeHome("already", cfg);
    const before = statSync(join(h, "config.yaml"));
    await new Promise((r) => setTimeout(r, 20));
    const r = await run(["plugins", "enable", "flat"], h);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Plugin 'flat' is already enabled.\n");
    const after = statSync(join(h, "config.yaml"));
    expect(readConfig(h)).toBe(cfg);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
    expect(leftovers(h)).toEqual([]);
    // the manifest name of an enabled category plugin also counts as enabled
    const h2 = makeHome("already-alias", "plugins:\n  enabled: [openai-image]\n_config_version: 21\n");
    const r2 = await run(["plugins", "enable", "image_gen/openai", "--json"], h2);
    expect(JSON.parse(r2.stdout)).toMatchObject({
      key: "image_gen/openai",
      changed: false,
      message: "Plugin 'image_gen/openai' is already enabled.",
    });
    expect(readConfig(h2)).toBe("plugins:\n  enabled: [openai-image]\n_config_version: 21\n");
  });

  it("disable by manifest name moves the key from enabled to disabled; already disabled is a no-op", async () => {
    const h = makeHome("disable", "plugins:\n  enabled:\n    - image_gen/openai\n    - flat\n");
    const r = await run(["plugins", "disable", "openai-image"], h);
    expect(r.code).toBe(0);
    expect(firstLine(r.stdout)).toBe("⊘ Plugin image_gen/openai disabled. Takes effect on next session.");
    expect(lists(h)).toEqual({ enabled: ["flat"], disabled: ["image_gen/openai"] });
    const text = readConfig(h);
    const again = await run(["plugins", "disable", "openai"], h);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe("Plugin 'image_gen/openai' is already disabled.\n");
    expect(readConfig(h)).toBe(text);
    const l = await run(["plugins", "list", "--plain", "--user"], h);
    expect(l.stdout).toMatch(/^disabled\s+user\s+2\.0\.0\s+image_gen\/openai$/m);
  });

  it("enable takes a plugin off the deny-list even when it is already on the allow-list", async () => {
    const h = makeHome("both", "plugins:\n  enabled: [flat]\n  disabled: [flat]\n");
    const before = await run(["plugins", "list", "--plain", "--user"], h);
    expect(before.stdout).toMatch(/^disabled\s+user\s+1\.0\.0\s+flat$/m);
    const r = await run(["plugins", "enable", "flat"], h);
    expect(r.code).toBe(0);
    expect(lists(h)).toEqual({ enabled: ["flat"], disabled: [] });
  });

  it("--json prints the result object; errors become a JSON error on stdout", async () => {
    const h = makeHome("json");
    const e = await run(["plugins", "enable", "flat", "--json"], h);
    expect(e.code).toBe(0);
    expect(JSON.parse(e.stdout)).toMatchObject({ key: "flat", changed: true, message: "✓ Plugin flat enabled." });
    const d = await run(["plugins", "disable", "sora", "--json"], h);
    expect(JSON.parse(d.stdout)).toMatchObject({
      key: "video/sora",
      changed: true,
      message: "⊘ Plugin video/sora disabled.",
    });
    const nf = await run(["plugins", "enable", "nope", "--json"], h);
    expect(nf.code).toBe(1);
    const err = JSON.parse(nf.stdout) as { error: { code: string; message: string; hint: string } };
    expect(err.error.code).toBe("E_PLUGIN_NOT_FOUND");
    expect(err.error.hint).toBeTruthy();
    expect(lists(h)).toEqual({ enabled: ["flat"], disabled: ["video/sora"] });
  });

  it("never prompts or hangs when stdin is a pipe that is never written to", async () => {
    const h = makeHome("stdin");
    // A hang never ends; the generous bound only keeps a loaded CI machine from failing a working CLI.
    const opts: RunOptions = { input: { keepOpen: true }, timeoutMs: 30_000 };
    const results = await Promise.all([
      run(["plugins", "enable", "flat"], h, opts),
      run(["plugins", "enable", "nope"], h, opts),
      run(["plugins", "disable", "openai"], h, { ...opts }),
      run(["plugins", "list"], h, opts),
    ]);
    expect(results.map((r) => r.code)).toEqual([0, 1, 0, 0]);
    expect(lists(h)).toEqual({ enabled: ["flat"], disabled: ["image_gen/openai"] });
  });

  it("enabling a plugin that cannot load works but warns", async () => {
    const h = makeHome("warn");
    writePlugin(join(h, "plugins", "broken"), "name: broken\nversion: [1\n");
    const r = await run(["plugins", "enable", "broken"], h);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^warning: broken cannot load: invalid manifest/m);
    expect(lists(h).enabled).toEqual(["broken"]);
  });

  it(
    "refuses to edit a config.yaml that does not parse " + "(E_YAML_PARSE with line:col), leaving it as it was",
    async () => {
      const bad = "# mine\nplugins:\n  enabled: [flat\n";
      const h = makeHome("unparsable", bad);
      const r = await run(["plugins", "enable", "sora"], h);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_YAML_PARSE");
      expect(r.stderr).toMatch(
        new RegExp(`${join(h, "config.yaml").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:\\d+:\\d+`),
      );
      expect(r.stderr).not.toMatch(STACK_RE);
      expect(readConfig(h)).toBe(bad);
    },
  );

  it(
    "refuses plugins.enabled that is not a list " + "(E_SCHEMA_INVALID at plugins.enabled), leaving it as " + "it was",
    async () => {
      const bad = "plugins:\n  enabled: notalist\n_config_version: 21\n";
      const h = makeHome("notalist", bad);
      const r = await run(["plugins", "enable", "flat"], h);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_SCHEMA_INVALID");
      expect(r.stderr).toMatch(/config\.yaml:2:12 plugins\.enabled/);
      expect(readConfig(h)).toBe(bad);
    },
  );

  it("does not rewrite a config whose `plugins:` is not a mapping (read-only list, then enable refuses)", async () => {
    const bad = "# mine\nplugins: true  # oops\nmodel: x\n";
    const h = makeHome("plugins-scalar", bad);
    const l = await run(["plugins", "list"], h);
    expect(l.code).toBe(0);
    expect(readConfig(h)).toBe(bad);
    expect(l.stderr).toMatch(/problem\(s\) in config\.yaml/);
    const r = await run(["plugins", "enable", "flat"], h);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_SCHEMA_INVALID");
    expect(readConfig(h)).toBe(bad);
  });

  it("disabling a category plugin leaves an unrelated flat plugin with the same leaf name enabled", async () => {
    const h = makeHome("leaf-collision-disable", "plugins:\n  enabled:\n    - openai\n    - image_gen/openai\n");
    writePlugin(join(h, "plugins", "openai"), "name: openai\n");
    const r = await run(["plugins", "disable", "image_gen/openai"], h);
    expect(r.code).toBe(0);
    expect(lists(h)).toEqual({ enabled: ["openai"], disabled: ["image_gen/openai"] });
  });

  it("enabling a category plugin does not un-disable an unrelated flat plugin with the same leaf name", async () => {
    const h = makeHome("leaf-collision-enable", "plugins:\n  enabled: [openai]\n  disabled: [openai]\n");
    writePlugin(join(h, "plugins", "openai"), "name: openai\n");
    const r = await run(["plugins", "enable", "image_gen/openai"], h);
    expect(r.code).toBe(0);
    expect(lists(h)).toEqual({ enabled: ["openai", "image_gen/openai"], disabled: ["openai"] });
  });
});
