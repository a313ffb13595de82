import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentHash } from "../../src/contracts/capabilities.js";
import { runCli } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch, writeFiles } from "../support/home.js";
import { hermes, hermesTty, newHome, pluginFiles, Repo, type Ctx, type Home } from "./helpers.js";

let s: Scratch;
let ctx: Ctx;
let repos: string;
let capsRepo: Repo;
let envRepo: Repo;

beforeAll(() => {
  s = new Scratch("hermes-consent-");
  repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s) };
  capsRepo = new Repo(repos, "acme/caps", pluginFiles("caps", "capabilities: [tools.override, llm.model_override]\n"));
  envRepo = new Repo(
    repos,
    "acme/envy",
    pluginFiles(
      "envy",
      "requires_env:\n  - name: ENVY_TOKEN\n    description: the token\n    secret: true\n  - name: ENVY_REGION\n",
    ),
  );
});
afterAll(() => s?.cleanup());

type Entry = {
  granted_capabilities?: string[];
  capabilities_consent?: { hash: string; granted_at: string; granted_via?: string };
  allow_tool_override?: boolean;
  llm?: Record<string, boolean>;
};
const cfg = (h: Home) =>
  (parse(readFileSync(join(h.home, "config.yaml"), "utf8")) ?? {}) as {
    plugins: { enabled?: string[]; entries?: Record<string, Entry> };
  };
const lockCaps = (h: Home, key: string) =>
  (
    JSON.parse(readFileSync(join(h.home, "hermes.lock.json"), "utf8")) as {
      plugins: Array<{ key: string; capabilities: Record<string, unknown> }>;
    }
  ).plugins.find((p) => p.key === key)?.capabilities;

/** A home with the `caps` plugin placed by hand (declares tools.override and llm.model_override). */
function capsHome(name: string, config = "plugins:\n  enabled: []\n_config_version: 21\n"): Home {
  const h = newHome(s, name, config);
  writeFiles(join(h.plugins, "caps"), pluginFiles("caps", "capabilities: [tools.override, llm.model_override]\n"));
  return h;
}

describe.concurrent("capability consent", { timeout: 240_000 }, () => {
  it(
    "enable --grant records the consent (hash, time, via " + "flag), mirrors legacy keys, and the lock carries it",
    async () => {
      const h = capsHome("grant");
      const r = await hermes(ctx, h, ["enable", "caps", "--grant", "tools.override"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.split("\n")[0]).toBe("✓ Plugin caps enabled. Takes effect on next session.");
      expect(r.stdout).toContain("✓ Granted: tools.override");
      expect(r.stdout).toContain("Not granted: llm.model_override");
      const e = cfg(h).plugins.entries!.caps!;
      expect(e.granted_capabilities).toEqual(["tools.override"]);
      expect(e.capabilities_consent!.hash).toBe(consentHash(["tools.override", "llm.model_override"]));
      expect(e.capabilities_consent!.granted_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
      expect(e.capabilities_consent!.granted_via).toBe("flag");
      expect(e.allow_tool_override).toBe(true);
      expect(lockCaps(h, "caps")).toMatchObject({ granted: ["tools.override"], consent: "flag" });
      // A second grant is a union with the first.
      const more = await hermes(ctx, h, ["enable", "caps", "--grant", "llm.model_override"]);
      expect(more.code, more.stderr).toBe(0);
      expect(cfg(h).plugins.entries!.caps!.granted_capabilities).toEqual(["llm.model_override", "tools.override"]);
      expect(cfg(h).plugins.entries!.caps!.llm).toEqual({ allow_model_override: true });
      expect(lockCaps(h, "caps")).toMatchObject({ granted: ["llm.model_override", "tools.override"] });
      // What consent writes is valid config.
      const v = await runCli(["config", "validate", join(h.home, "config.yaml")], { home: h.home });
      expect(v.code, v.stdout + v.stderr).toBe(0);
    },
  );

  it(
    "enable --grant refuses undeclared and unknown capabilities by name and position, before anything is " + "written",
    async () => {
      const h = capsHome("grant-bad");
      const before = readFileSync(join(h.home, "config.yaml"), "utf8");
      const und = await hermes(ctx, h, ["enable", "caps", "--grant", "tools.override,gateway.platform_actions"]);
      expect(und.code).toBe(1);
      expect(und.stderr).toContain("E_GRANT_UNDECLARED");
      expect(und.stderr).toContain("--grant[1]");
      expect(und.stderr).toContain("'gateway.platform_actions'");
      const unk = await hermes(ctx, h, ["enable", "caps", "--grant", "tools.overide"]);
      expect(unk.code).toBe(1);
      expect(unk.stderr).toContain("E_GRANT_UNKNOWN_CAPABILITY");
      expect(unk.stderr).toContain("did you mean 'tools.override'");
      expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toBe(before);
    },
  );

  it.each([
    ["closed", undefined],
    ["open pipe", { keepOpen: true } as const],
  ])(
    "enable without a terminal (stdin %s) prints what is pending, grants nothing, never waits",
    async (_label, input) => {
      const h = capsHome(`notty-${_label.replace(" ", "-")}`);
      const r = await hermes(ctx, h, ["enable", "caps"], { input, timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("Plugin caps requests the following capabilities:");
      expect(r.stdout).toContain("    tools.override — ");
      expect(r.stdout).toContain("capabilities NOT granted (fail closed)");
      expect(r.stdout).toContain("hermes plugins enable caps --grant tools.override,llm.model_override");
      expect(cfg(h).plugins.enabled).toEqual(["caps"]);
      expect(cfg(h).plugins.entries?.caps).toBeUndefined();
    },
  );

  it("on a terminal: yes grants (via interactive), no declines", async () => {
    const yes = capsHome("tty-yes");
    const r = await hermesTty(ctx, yes, ["enable", "caps"], [[/Grant these capabilities\? \[y\/N\]/, "y"]]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain("✓ Granted: tools.override, llm.model_override");
    expect(cfg(yes).plugins.entries!.caps!.capabilities_consent!.granted_via).toBe("interactive");
    expect(cfg(yes).plugins.entries!.caps!.granted_capabilities).toEqual(["llm.model_override", "tools.override"]);
    const no = capsHome("tty-no");
    const d = await hermesTty(ctx, no, ["enable", "caps"], [[/Grant these capabilities\? \[y\/N\]/, ""]]);
    expect(d.code, d.stdout).toBe(0);
    expect(d.stdout).toContain("Declined.");
    expect(cfg(no).plugins.entries?.caps).toBeUndefined();
  });

  it("install on a terminal: enable prompt, consent prompt, masked secret prompt saved to .env", async () => {
    const h = newHome(s, "tty-install");
    const r = await hermesTty(
      ctx,
      h,
      ["install", envRepo.url],
      [
        [/ENVY_TOKEN: /, "super-secret-value"],
        [/ENVY_REGION: /, ""],
        [/Enable 'envy' now\? \[y\/N\]/, "y"],
      ],
    );
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain("envy requires the following environment variables:");
    expect(r.stdout).not.toContain("super-secret-value");
    expect(r.stdout).toContain("******************");
    expect(r.stdout).toContain("Skipped (set ENVY_REGION");
    expect(readFileSync(join(h.home, ".env"), "utf8")).toBe("ENVY_TOKEN=super-secret-value\n");
    expect(cfg(h).plugins.enabled).toEqual(["envy"]);
    const caps = newHome(s, "tty-install-caps");
    const c = await hermesTty(
      ctx,
      caps,
      ["install", capsRepo.url, "--no-enable"],
      [[/Grant these capabilities\? \[y\/N\]/, "yes"]],
    );
    expect(c.code, c.stdout).toBe(0);
    expect(cfg(caps).plugins.entries!.caps!.granted_capabilities).toEqual(["llm.model_override", "tools.override"]);
    // A brand-new home: nothing grandfathered, nothing enabled.
    expect(cfg(caps).plugins?.enabled).toBeUndefined();
  });

  it("install on a terminal: a 'caution' scan verdict is asked about (yes installs, no installs nothing)", async () => {
    const repo = new Repo(repos, "acme/cautious", {
      ...pluginFiles("cautious"),
      "setup.sh": "#!/bin/sh\nls ~/.ssh/\n",
    });
    const no = newHome(s, "tty-caution-no");
    const n = await hermesTty(ctx, no, ["install", repo.url], [[/Install anyway\? \[y\/N\]/, "n"]]);
    expect(n.code, n.stdout).toBe(1);
    expect(n.stdout).toContain("ssh_dir_access");
    expect(n.stdout).toContain("E_INSTALL_SCAN_CAUTION");
    const yes = newHome(s, "tty-caution-yes");
    const y = await hermesTty(ctx, yes, ["install", repo.url, "--no-enable"], [[/Install anyway\? \[y\/N\]/, "y"]]);
    expect(y.code, y.stdout).toBe(0);
    expect(readFileSync(join(yes.plugins, "cautious", "setup.sh"), "utf8")).toContain(".ssh");
  });

  it("install --grant grants headlessly; --grant of an undeclared capability installs nothing", async () => {
    const h = newHome(s, "install-grant");
    const bad = await hermes(ctx, h, ["install", capsRepo.url, "--grant", "gateway.platform_actions"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("E_GRANT_UNDECLARED");
    const ok = await hermes(ctx, h, ["install", capsRepo.url, "--enable", "--grant", "tools.override"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(cfg(h).plugins.entries!.caps!.capabilities_consent!.granted_via).toBe("flag");
    expect(lockCaps(h, "caps")).toMatchObject({ granted: ["tools.override"], consent: "flag" });
  });

  it("capabilities [name]: declared vs granted, legacy-only, granted but not declared; --json", async () => {
    const h = capsHome(
      "report",
      "plugins:\n  enabled: [caps]\n  entries:\n    caps:\n      llm: {allow_model_override: true}\n      " +
        "allow_platform_actions: true\n",
    );
    writeFiles(join(h.plugins, "plain"), pluginFiles("plain"));
    expect((await hermes(ctx, h, ["enable", "caps", "--grant", "tools.override"])).code).toBe(0);
    const t = await hermes(ctx, h, ["capabilities"]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toContain("caps (local)");
    expect(t.stdout).toContain("  tools.override: granted");
    expect(t.stdout).toContain(
      "  llm.model_override: legacy key only (deprecated; not honoured without a recorded consent) via " +
        "llm.allow_model_override",
    );
    expect(t.stdout).toContain(
      "  gateway.platform_actions: granted (not declared in manifest) via legacy key allow_platform_actions",
    );
    expect(t.stdout).not.toContain("plain");
    const j = JSON.parse((await hermes(ctx, h, ["capabilities", "caps", "--json"])).stdout) as Array<
      Record<string, unknown>
    >;
    expect(j[0]).toMatchObject({ key: "caps", consent: { hash_current: true, granted_via: "flag" } });
    const one = await hermes(ctx, h, ["capabilities", "plain"]);
    expect(one.stdout).toContain("declared: (none)");
    const none = await hermes(ctx, newHome(s, "none"), ["capabilities"]);
    expect(none.stdout).toContain("No plugins declare or hold capabilities.");
    const legacyOnly = capsHome(
      "legacy",
      "plugins:\n  enabled: [caps]\n  entries:\n    caps:\n      allow_tool_override: true\n",
    );
    const l = await hermes(ctx, legacyOnly, ["capabilities", "caps"]);
    expect(l.stdout).toContain(
      "tools.override: legacy key only (deprecated; not honoured without a recorded consent) via allow_tool_override",
    );
  });

  it("a grant recorded for another declared set is not carried by the lock", async () => {
    const h = capsHome("stale");
    expect((await hermes(ctx, h, ["enable", "caps", "--grant", "tools.override"])).code).toBe(0);
    writeFileSync(join(h.plugins, "caps", "plugin.yaml"), "name: caps\ncapabilities: [tools.override]\n");
    const c = await runCompile(h);
    expect(c).toBe(0);
    expect(lockCaps(h, "caps")).toMatchObject({ granted: [] });
    const j = JSON.parse((await hermes(ctx, h, ["capabilities", "caps", "--json"])).stdout) as Array<{
      declared: unknown;
    }>;
    expect(j[0]!.declared).toEqual([{ capability: "tools.override", state: "stale" }]);
  });
});

async function runCompile(h: Home): Promise<number | null> {
  const r = await runCli(["compile"], { home: h.home, env: { HERMES_BUNDLED_PLUGINS: ctx.bundled } });
  return r.code;
}
