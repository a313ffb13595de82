import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, Scratch, writePlugin, writeText } from "./cli.js";

/** Homes hardened against kills, managed ownership and misleading state (config, enable, compile). */
const scratch = new Scratch("hermes-e2e-hardening-");
afterAll(() => scratch.cleanup());

function home(config = "plugins:\n  enabled: []\n") {
  const root = scratch.dir("case");
  const h = join(root, "home");
  const bundled = join(root, "bundled");
  writeText(join(bundled, ".keep"), "");
  writePlugin(join(h, "plugins", "cap"), "name: cap\nversion: '1'\ncapabilities: [tools.override]\n");
  writeText(join(h, "config.yaml"), config);
  const env = { HERMES_BUNDLED_PLUGINS: bundled };
  const cli = (args: string[], extra: Record<string, string> = {}) => runCli(["--home", h, ...args], { env: { ...env, ...extra } });
  return { root, h, bundled, cli };
}

type Cfg = { plugins?: { enabled?: string[]; disabled?: string[]; entries?: Record<string, { granted_capabilities?: string[] }> } };
const cfg = (h: string) => (parse(readFileSync(join(h, "config.yaml"), "utf8")) ?? {}) as Cfg;

describe("enable --grant", () => {
  it("enables and grants in one config write: a kill at any fault point leaves both or neither", async () => {
    const t = home();
    for (let k = 1; k <= 4; k++) {
      writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: []\n");
      const r = await t.cli(["plugins", "enable", "cap", "--grant", "tools.override"], { HERMES_FAULT_KILL_AT: String(k) });
      const c = cfg(t.h);
      const enabled = (c.plugins?.enabled ?? []).includes("cap");
      const granted = (c.plugins?.entries?.cap?.granted_capabilities ?? []).includes("tools.override");
      expect(granted, `fault point ${k} (signal ${r.signal}): enabled=${enabled} granted=${granted}`).toBe(enabled);
    }
    writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: []\n");
    const ok = await t.cli(["plugins", "enable", "cap", "--grant", "tools.override"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("✓ Plugin cap enabled.");
    expect(ok.stdout).toContain("✓ Granted: tools.override");
    expect(cfg(t.h).plugins?.entries?.cap?.granted_capabilities).toEqual(["tools.override"]);
  });
});

describe("runtime start in an unmanaged home", () => {
  it("says on stderr which plugin changed when it recompiles a tampered home", async () => {
    const t = home("plugins:\n  enabled: [cap]\n");
    const first = await t.cli(["compile"]);
    expect(first.code, first.stderr).toBe(0);
    writeText(join(t.h, "plugins", "cap", "index.js"), "export function register(ctx) { /* tampered */ }\n");
    const r = await t.cli(["plugins", "chain"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("lock is stale: plugin(s) changed since the last compile: ~ cap (files changed); recompiling");
  });
});
