import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

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
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runCli(["--home", h, ...args], { env: { ...env, ...extra } });
  return { root, h, bundled, cli };
}

type Cfg = {
  plugins?: { enabled?: string[]; disabled?: string[]; entries?: Record<string, { granted_capabilities?: string[] }> };
};
const cfg = (h: string) => (parse(readFileSync(join(h, "config.yaml"), "utf8")) ?? {}) as Cfg;

describe("enable --grant", () => {
  it("enables and grants in one config write: a kill at any fault point leaves both or neither", async () => {
    const t = home();
    for (let k = 1; k <= 4; k++) {
      writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: []\n");
      const r = await t.cli(["plugins", "enable", "cap", "--grant", "tools.override"], {
        HERMES_FAULT_KILL_AT: String(k),
      });
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
    expect(r.stderr).toContain(
      "lock is stale: plugin(s) changed since the last compile: ~ cap (files changed); recompiling",
    );
  });
});

/** `hermes compile` held right after gathering its inputs while `change` runs; its exit code. */
async function compileChangedMidway(t: ReturnType<typeof home>, change: () => void): Promise<number | null> {
  const hold = writeText(join(t.root, "hold"), "");
  const child = spawnCli(["--home", t.h, "compile"], {
    env: { HERMES_BUNDLED_PLUGINS: t.bundled, HERMES_FAULT_HOLD: "compile-gathered", HERMES_FAULT_HOLD_FILE: hold },
    ignoreOutput: true,
  });
  const done = child.done.then((r) => r.code);
  for (let i = 0; i < 200 && !existsSync(`${hold}.reached`); i++) await new Promise((r) => setTimeout(r, 50));
  expect(existsSync(`${hold}.reached`), "compile never reached the point after gathering its inputs").toBe(true);
  change();
  rmSync(hold);
  return done;
}

describe("the no-op record of a compile", () => {
  it(
    "describes the config the compile read, not one written " + "while it ran (compile --check then says stale)",
    async () => {
      const t = home("plugins:\n  enabled: [cap]\n");
      writePlugin(join(t.h, "plugins", "other"), "name: other\nversion: '1'\n");
      // Another process's enable lands after this compile read config.yaml.
      const code = await compileChangedMidway(t, () =>
        writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: [cap, other]\n"),
      );
      expect(code).toBe(0);
      const check = await t.cli(["compile", "--check"]);
      expect(check.code, `${check.stdout}\n${check.stderr}`).toBe(1);
      const fixed = await t.cli(["compile"]);
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(
        (JSON.parse(readFileSync(join(t.h, "hermes.lock.json"), "utf8")) as { load_order: string[] }).load_order,
      ).toEqual(["cap", "other"]);
    },
  );
});

describe("the no-op record of a compile (plugin files)", () => {
  // The lock holds the hashes read while gathering; stats taken after that must not vouch for a newer file.
  for (const [what, edit] of [
    [
      "a plugin file rewritten",
      (h: string) =>
        writeText(join(h, "plugins", "cap", "index.js"), "export function register(ctx) { /* later */ }\n"),
    ],
    [
      "a file added to a plugin",
      (h: string) => writeText(join(h, "plugins", "cap", "extra.js"), "export const x = 1;\n"),
    ],
    ["a plugin folder added", (h: string) => writePlugin(join(h, "plugins", "late"), "name: late\nversion: '1'\n")],
    ["a plugin folder removed", (h: string) => rmSync(join(h, "plugins", "other"), { recursive: true })],
  ] as const) {
    it(`${what} while the compile runs: compile --check and the next start say stale, never up to date`, async () => {
      const t = home("plugins:\n  enabled: [cap, other]\n");
      writePlugin(join(t.h, "plugins", "other"), "name: other\nversion: '1'\n");
      // Older than the compile by more than the clock's step, as an untouched tree is.
      await new Promise((r) => setTimeout(r, 100));
      expect(await compileChangedMidway(t, () => edit(t.h))).toBe(0);
      const check = await t.cli(["compile", "--check"]);
      expect(check.code, `${check.stdout}\n${check.stderr}`).toBe(1);
      const start = await t.cli(["plugins", "chain"]);
      expect(start.code, start.stderr).toBe(0);
      expect(start.stderr).toContain("lock is stale: ");
      // Recompiled by that start: now the record stands.
      expect((await t.cli(["compile", "--check"])).code).toBe(0);
    });
  }
});

describe("imperative edits that would break the home are refused before writing", () => {
  it(
    "a managed home: disabling a plugin the spec marks " + "required is refused, naming the deployment and its spec",
    async () => {
      // A current config (v21), so the hand edit below appends to the plugins section the deployment writes.
      const t = home("# mine\n_config_version: 21\n");
      writePlugin(join(t.root, "store", "guard"), "name: guard\nversion: '1'\n");
      const spec = writeText(
        join(t.root, "spec.yaml"),
        `plugins:\n  - path: ${join(t.root, "store", "guard")}\n    required: true\n`,
      );
      const c = await t.cli(["compile", "--spec", spec, "--managed", "nixos"]);
      expect(c.code, c.stderr).toBe(0);
      const before = readFileSync(join(t.h, "config.yaml"), "utf8");
      const r = await t.cli(["plugins", "disable", "guard"]);
      expect(r.code).toBe(1);
      expect(r.stdout).not.toContain("disabled.");
      expect(r.stderr).toContain("E_CONFIG_MANAGED_KEY");
      expect(r.stderr).toContain(
        `required plugin guard is declared by the nixos deployment of this home (spec ${spec})`,
      );
      expect(r.stderr).toContain(`drop \`required\` (or the plugin) from ${spec}`);
      expect(readFileSync(join(t.h, "config.yaml"), "utf8")).toBe(before);
      const again = await t.cli(["compile", "--spec", spec, "--managed", "nixos"]);
      expect(again.code, again.stderr).toBe(0);
      // A home already in that state (edited by hand): the error's hint names the edit that fixes it.
      writeText(join(t.h, "config.yaml"), `${before}  disabled: [guard]\n`);
      const broken = await t.cli(["compile", "--spec", spec, "--managed", "nixos"]);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toContain(
        `hint: remove guard from plugins.disabled in ${join(t.h, "config.yaml")} (\`hermes plugins enable ` +
          `guard\`); it is required by the deploy spec ${spec}`,
      );
      const fix = await t.cli(["plugins", "enable", "guard"]);
      expect(fix.code, fix.stderr).toBe(0);
      expect((await t.cli(["compile", "--spec", spec, "--managed", "nixos"])).code).toBe(0);
    },
  );

  it(
    "an unmanaged home: disabling a plugin its config marks " + "required is refused with where the requirement is",
    async () => {
      const t = home("plugins:\n  enabled: [cap]\n  entries:\n    cap:\n      required: true\n");
      expect((await t.cli(["compile"])).code).toBe(0);
      const before = readFileSync(join(t.h, "config.yaml"), "utf8");
      const r = await t.cli(["plugins", "disable", "cap"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_CONFIG_EDIT_BREAKS_COMPILE");
      expect(r.stderr).toContain(
        "required plugin cap will not load: disabled via config (plugins.disabled) " +
          `(${join(t.h, "config.yaml")} plugins.entries.cap.required)`,
      );
      expect(readFileSync(join(t.h, "config.yaml"), "utf8")).toBe(before);
    },
  );
});

describe("compile --dry-run and the v21 migration", () => {
  it(
    "a dry run plans on the migrated config (as the real run will) and says so on stderr; the real run " +
      "announces it",
    async () => {
      const t = home("model:\n  default: x\n");
      writePlugin(join(t.h, "plugins", "other"), "name: other\nversion: '1'\n");
      const before = readFileSync(join(t.h, "config.yaml"), "utf8");
      const dry = await t.cli(["compile", "--dry-run", "--json"]);
      expect(dry.code, dry.stderr).toBe(0);
      const predicted = JSON.parse(dry.stdout) as { loadOrder?: string[]; load_order?: string[] };
      expect(predicted.loadOrder ?? predicted.load_order).toEqual(["cap", "other"]);
      expect(dry.stderr).toContain("Would grandfather 2 installed user plugin(s) into plugins.enabled: cap, other");
      expect(readFileSync(join(t.h, "config.yaml"), "utf8")).toBe(before);
      const real = await t.cli(["compile"]);
      expect(real.code, real.stderr).toBe(0);
      expect(real.stderr).toContain("Grandfathered 2 installed user plugin(s) into plugins.enabled: cap, other");
      expect(real.stdout).toContain("(2 plugin(s) load)");
      expect(cfg(t.h).plugins?.enabled).toEqual(["cap", "other"]);
    },
  );
});

describe("compile --rollback", () => {
  it(
    "restores what the generation ran, config included, and stays after an imperative change; the listing says " +
      "why it is current",
    async () => {
      const t = home("# mine\nplugins:\n  enabled: [cap]\n");
      writePlugin(join(t.h, "plugins", "extra"), "name: extra\nversion: '1'\n");
      expect((await t.cli(["compile"])).code).toBe(0);
      const gen1Config = readFileSync(join(t.h, "config.yaml"), "utf8");
      const en = await t.cli(["plugins", "enable", "extra"]);
      expect(en.code, en.stderr).toBe(0);
      const rb = await t.cli(["compile", "--rollback"]);
      expect(rb.code, rb.stderr).toBe(0);
      expect(rb.stdout).toBe("rolled back to generation 1 (from 2)\n");
      expect(readFileSync(join(t.h, "config.yaml"), "utf8")).toBe(gen1Config);
      const lockOrder = () =>
        (JSON.parse(readFileSync(join(t.h, "hermes.lock.json"), "utf8")) as { load_order: string[] }).load_order;
      expect(lockOrder()).toEqual(["cap"]);
      // A runtime start and a check leave it in force.
      expect((await t.cli(["plugins", "chain"])).code).toBe(0);
      expect((await t.cli(["compile", "--check"])).code).toBe(0);
      expect(lockOrder()).toEqual(["cap"]);
      const list = await t.cli(["compile", "--list-generations", "--json"]);
      const gens = JSON.parse(list.stdout) as Array<{
        generation: number;
        current: boolean;
        current_reason: string | null;
      }>;
      expect(gens.map((g) => [g.generation, g.current])).toEqual([
        [1, true],
        [2, false],
      ]);
      expect(gens[0]!.current_reason).toMatch(
        /^rolled back to at .* from generation 2; stays until the next change is compiled$/,
      );
      const text = await t.cli(["compile", "--list-generations"]);
      expect(text.stdout).toMatch(/\*\s+1 .*\(current: rolled back to at .* from generation 2/);
      // The next explicit change is compiled on top of it.
      expect((await t.cli(["plugins", "enable", "extra"])).code).toBe(0);
      expect(lockOrder()).toEqual(["cap", "extra"]);
    },
  );
});

describe("root writing into a user's home", () => {
  const root = process.getuid?.() === 0;
  it.skipIf(!root)(
    "keeps the owner and mode of every file it replaces; everything it creates takes the home's owner",
    async () => {
      const { chmodSync, chownSync, lstatSync, readdirSync, statSync } = await import("node:fs");
      const t = home("plugins:\n  enabled: []\n");
      writePlugin(join(t.h, "plugins", "other"), "name: other\nversion: '1'\n");
      const walk = (d: string, f: (p: string) => void) => {
        f(d);
        for (const e of readdirSync(d, { withFileTypes: true })) {
          const p = join(d, e.name);
          if (e.isDirectory()) walk(p, f);
          else f(p);
        }
      };
      walk(t.h, (p) => chownSync(p, 1234, 1234));
      chmodSync(join(t.h, "config.yaml"), 0o600);
      const r = await t.cli(["plugins", "enable", "other"]);
      expect(r.code, r.stderr).toBe(0);
      const cfgStat = statSync(join(t.h, "config.yaml"));
      expect([cfgStat.uid, cfgStat.gid, cfgStat.mode & 0o777]).toEqual([1234, 1234, 0o600]);
      const rootOwned: string[] = [];
      walk(t.h, (p) => {
        if (lstatSync(p).uid !== 1234) rootOwned.push(p);
      });
      expect(rootOwned).toEqual([]);
      expect(readdirSync(join(t.h, "generations")).length).toBeGreaterThan(0);
    },
  );
});

describe("typos are errors, and read-only commands never write", () => {
  it("chain kind, profile and home typos fail with the nearest name; --create makes a profile", async () => {
    const { existsSync, mkdirSync } = await import("node:fs");
    const t = home("plugins:\n  enabled: [cap]\n");
    const chain = await t.cli(["plugins", "chain", "tool_executon"]);
    expect(chain.code).toBe(2);
    expect(chain.stderr).toContain("E_USAGE");
    expect(chain.stderr).toContain("did you mean 'tool_execution'?");
    mkdirSync(join(t.h, "profiles", "work"), { recursive: true });
    const prof = await t.cli(["-p", "wrok", "plugins", "list"]);
    expect(prof.code).toBe(1);
    expect(prof.stderr).toContain("E_PROFILE_NOT_FOUND");
    expect(prof.stderr).toContain("did you mean 'work'?");
    expect(existsSync(join(t.h, "profiles", "wrok"))).toBe(false);
    const created = await t.cli(["--create", "-p", "fresh", "plugins", "list"]);
    expect(created.code, created.stderr).toBe(0);
    expect(existsSync(join(t.h, "profiles", "fresh"))).toBe(true);
    const missing = join(t.root, "nonexistent");
    for (const args of [
      ["plugins", "list"],
      ["plugins", "why", "cap"],
      ["plugins", "chain"],
    ]) {
      const r = await runCli(["--home", missing, ...args], { env: { HERMES_BUNDLED_PLUGINS: t.bundled } });
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toContain("E_HOME_NOT_FOUND");
      expect(existsSync(missing), args.join(" ")).toBe(false);
    }
  });

  it("an unparsable config.yaml fails plugins list instead of showing everything not enabled", async () => {
    const t = home("plugins: [enabled: cap\n");
    const r = await t.cli(["plugins", "list"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_YAML_PARSE");
  });

  it("a read-only command on a home without plugins.enabled shows the migrated state but writes nothing", async () => {
    const t = home("model:\n  default: x\n");
    const before = readFileSync(join(t.h, "config.yaml"), "utf8");
    const l = await t.cli(["plugins", "list", "--plain", "--user"]);
    expect(l.code, l.stderr).toBe(0);
    expect(l.stdout).toMatch(/^enabled\s+user\s+1\s+cap$/m);
    expect(readFileSync(join(t.h, "config.yaml"), "utf8")).toBe(before);
    const { existsSync } = await import("node:fs");
    expect(existsSync(join(t.h, "config.yaml.lock"))).toBe(false);
  });
});

describe("one key claimed by two plugins", () => {
  it(
    "is no dead end: compile goes on while neither is enabled, why names both paths, and each is addressable " +
      "by its folder",
    async () => {
      const t = home("plugins:\n  enabled: [cap]\n");
      const a = writePlugin(join(t.h, "plugins", "nachos"), "name: nachos\nversion: '1'\n");
      const b = writePlugin(join(t.h, "plugins", "nachos-copy"), "name: nachos\nversion: '2'\n");
      const c = await t.cli(["compile"]);
      expect(c.code, c.stderr).toBe(0);
      expect(c.stderr).toContain(`plugin key 'nachos' is claimed by ${a} and ${b}`);
      const why = await t.cli(["plugins", "why", "nachos"]);
      expect(why.code).toBe(1);
      expect(why.stderr).toContain("E_PLUGIN_AMBIGUOUS");
      expect(why.stderr).toContain(`\`hermes plugins why ${a}\` or \`hermes plugins why ${b}\``);
      const byPath = await t.cli(["plugins", "why", b]);
      expect(byPath.code, byPath.stderr).toBe(0);
      expect(byPath.stdout).toContain(`path:      ${b}`);
      expect(byPath.stdout).toContain("v2");
    },
  );
});
