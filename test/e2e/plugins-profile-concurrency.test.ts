import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { writePlugin, writeText } from "../support/home.js";
import { INITIAL, toggleHomes } from "./toggle-homes.js";

const { scratch, bundled, makeHome, run, readConfig, lists, leftovers } = toggleHomes();

describe.concurrent("--profile", () => {
  it("uses <home>/profiles/NAME for config and user plugins", async () => {
    const h = makeHome("profile");
    const prof = join(h, "profiles", "work");
    writePlugin(join(prof, "plugins", "work-only"), "name: work-only\nversion: 3.0.0\n");
    writeText(join(prof, "config.yaml"), INITIAL);
    const l = await run(["--profile", "work", "plugins", "list", "--plain", "--user"], h);
    expect(l.code).toBe(0);
    expect(l.stdout).toBe(`${"not enabled".padEnd(12)}${"user".padEnd(8)}${"3.0.0".padEnd(8)}work-only\n`);
    const e = await run(["-p", "work", "plugins", "enable", "work-only"], h);
    expect(e.code).toBe(0);
    expect(readFileSync(join(prof, "config.yaml"), "utf8")).toBe(
      "plugins:\n  enabled:\n    - work-only\n_config_version: 21\n",
    );
    expect(readConfig(h)).toBe(INITIAL);
    // the base home does not know the profile's plugin
    const nf = await run(["plugins", "enable", "work-only"], h);
    expect(nf.code).toBe(1);
    expect(nf.stderr).toContain("E_PLUGIN_NOT_FOUND");
    // --home plus --profile, without HERMES_HOME
    const viaFlag = await runCli(["--home", h, "--profile", "work", "plugins", "list", "--plain", "--enabled"], {
      env: { HERMES_BUNDLED_PLUGINS: bundled() },
    });
    expect(viaFlag.stdout).toBe(`${"enabled".padEnd(12)}${"user".padEnd(8)}${"3.0.0".padEnd(8)}work-only\n`);
  });

  it("an invalid profile name (../x) is E_PROFILE_NAME, exit 1, and nothing is created", async () => {
    const h = makeHome("bad-profile");
    for (const args of [
      ["--profile", "../x", "plugins", "enable", "flat"],
      ["--profile", "../x", "plugins", "list"],
      ["-p", "a/b", "plugins", "list"],
      ["--profile", ".hidden", "config", "validate"],
    ]) {
      const r = await run(args, h);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toContain("E_PROFILE_NAME");
      expect(r.stderr).not.toMatch(STACK_RE);
    }
    expect(existsSync(join(h, "x"))).toBe(false);
    expect(existsSync(join(h, "profiles"))).toBe(false);
    expect(readConfig(h)).toBe(INITIAL);
  });
});

describe("concurrent enables", () => {
  it("two enable processes of different plugins started together both stick", async () => {
    const h = makeHome("two");
    const [a, b] = await Promise.all([run(["plugins", "enable", "flat"], h), run(["plugins", "enable", "sora"], h)]);
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, "", ""]);
    expect([...lists(h).enabled].sort()).toEqual(["flat", "video/sora"]);
    expect(leftovers(h)).toEqual([]);
  });

  it("ten concurrent enables all end up in plugins.enabled (also when config.yaml does not exist yet)", async () => {
    for (const config of [INITIAL, null]) {
      const h = scratch().dir("ten");
      const keys = Array.from({ length: 10 }, (_, i) => `pack/p${i}`);
      for (const k of keys) writePlugin(join(h, "plugins", k), `name: ${k.replace("/", "-")}\n`);
      if (config !== null) writeText(join(h, "config.yaml"), config);
      const rs = await Promise.all(keys.map((k) => run(["plugins", "enable", k], h, { timeoutMs: 40_000 })));
      expect(rs.map((r) => r.code)).toEqual(keys.map(() => 0));
      expect([...lists(h).enabled].sort()).toEqual(keys);
      expect(leftovers(h)).toEqual([]);
      const l = await run(["plugins", "list", "--json", "--enabled"], h);
      expect((JSON.parse(l.stdout) as { key: string }[]).map((x) => x.key)).toEqual(keys);
    }
  }, 120_000);
});
