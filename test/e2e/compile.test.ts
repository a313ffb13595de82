import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

/** `hermes compile`, `hermes lock verify` and the imperative commands' recompiles, as a user runs them. */
const scratch = new Scratch("hermes-e2e-compile-");
afterAll(() => scratch.cleanup());

function setup() {
  const root = scratch.dir("case");
  const home = join(root, "home");
  const bundled = join(root, "bundled");
  mkdirSync(bundled, { recursive: true });
  const store = join(root, "store");
  writePlugin(join(store, "alpha"), "name: alpha\nversion: '1'\ncapabilities: [tools.override]\n");
  writePlugin(join(store, "beta"), "name: beta\nversion: '1'\n");
  writePlugin(join(home, "plugins", "mine"), "name: mine\nversion: '1'\n");
  writeText(join(home, "config.yaml"), "# mine\nplugins:\n  enabled:\n    - mine  # by hand\n");
  const spec = writeText(
    join(root, "spec.yaml"),
    `plugins:\n  - path: ${store}/alpha\n    grants: [tools.override]\n  - path: ${store}/beta\nsettings:\n  ` +
      "model:\n    default: llama\n",
  );
  const env = { HERMES_BUNDLED_PLUGINS: bundled };
  const cli = (...args: string[]) => runCli(["--home", home, ...args], { env });
  return { root, home, store, spec, cli };
}

const lock = (home: string) =>
  JSON.parse(readFileSync(join(home, "hermes.lock.json"), "utf8")) as {
    plugins: Array<{
      key: string;
      action: string;
      capabilities: { granted: string[]; consent: string | null };
      managed: boolean;
    }>;
    load_order: string[];
  };

describe("hermes compile", () => {
  it("--dry-run prints the plan and writes nothing; --check exits 1 until applied", async () => {
    const t = setup();
    const before = readFileSync(join(t.home, "config.yaml"), "utf8");
    const dry = await t.cli("compile", "--spec", t.spec, "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`+ plugins/nix-managed-alpha → ${t.store}/alpha`);
    expect(dry.stdout).toContain('~ model.default: (unset) → "llama"');
    expect(existsSync(join(t.home, "hermes.lock.json"))).toBe(false);
    expect(readFileSync(join(t.home, "config.yaml"), "utf8")).toBe(before);
    expect((await t.cli("compile", "--spec", t.spec, "--check")).code).toBe(1);
    const json = await t.cli("compile", "--spec", t.spec, "--dry-run", "--json");
    const plan = JSON.parse(json.stdout) as { changed: boolean; links: Array<{ op: string; link: string }> };
    expect(plan.changed).toBe(true);
    expect(plan.links.map((l) => `${l.op} ${l.link}`)).toEqual([
      "add plugins/nix-managed-alpha",
      "add plugins/nix-managed-beta",
    ]);
    const applied = await t.cli("compile", "--spec", t.spec, "--managed", "nixos");
    expect(applied.code, applied.stderr).toBe(0);
    expect((await t.cli("compile", "--spec", t.spec, "--check")).code).toBe(0);
  });

  it("links spec plugins by key, keeps the user's plugins and comments, records declarative grants", async () => {
    const t = setup();
    const r = await t.cli("compile", "--spec", t.spec, "--managed", "nixos");
    expect(r.code, r.stderr).toBe(0);
    expect(readlinkSync(join(t.home, "plugins", "nix-managed-alpha"))).toBe(
      "../generations/current/links/plugins%2Fnix-managed-alpha",
    );
    expect(realpathSync(join(t.home, "plugins", "nix-managed-alpha"))).toBe(join(t.store, "alpha"));
    const cfg = readFileSync(join(t.home, "config.yaml"), "utf8");
    expect(cfg).toContain("# mine\n");
    expect(cfg).toContain("    - mine  # by hand\n");
    expect(cfg).toContain("    - alpha\n    - beta\n");
    const l = lock(t.home);
    expect(l.load_order).toEqual(["alpha", "beta", "mine"]);
    const alpha = l.plugins.find((p) => p.key === "alpha")!;
    expect(alpha.capabilities).toMatchObject({ granted: ["tools.override"], consent: "declarative" });
    expect(alpha.managed).toBe(true);
    expect(readFileSync(join(t.home, ".managed"), "utf8")).toContain('"kind":"nixos"');
  });

  it("removing a plugin from the spec removes its link; an empty list removes all", async () => {
    const t = setup();
    await t.cli("compile", "--spec", t.spec);
    writeText(t.spec, `plugins:\n  - path: ${t.store}/beta\n`);
    expect((await t.cli("compile", "--spec", t.spec)).code).toBe(0);
    expect(existsSync(join(t.home, "plugins", "nix-managed-alpha"))).toBe(false);
    expect(lstatSync(join(t.home, "plugins", "nix-managed-beta")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(t.home, "config.yaml"), "utf8")).not.toContain("alpha");
    writeText(t.spec, "plugins: []\n");
    expect((await t.cli("compile", "--spec", t.spec)).code).toBe(0);
    expect(existsSync(join(t.home, "plugins", "nix-managed-beta"))).toBe(false);
    expect(existsSync(join(t.home, "plugins", "mine"))).toBe(true);
  });

  it("a spec entry without plugin.yaml fails the compile and changes nothing", async () => {
    const t = setup();
    await t.cli("compile", "--spec", t.spec);
    const lockBefore = readFileSync(join(t.home, "hermes.lock.json"), "utf8");
    const cfgBefore = readFileSync(join(t.home, "config.yaml"), "utf8");
    mkdirSync(join(t.store, "empty"));
    writeText(
      t.spec,
      `plugins:\n  - path: ${t.store}/beta\n  - path: ${t.store}/empty\n  - path: ${t.store}/missing\n`,
    );
    const r = await t.cli("compile", "--spec", t.spec);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_COMPILE_REFUSED");
    expect(r.stderr).toMatch(/E_SPEC_NO_MANIFEST .*spec\.yaml:3:\d+ plugins\[1\]\.path: .*empty has no plugin\.yaml/);
    expect(r.stderr).toMatch(/E_SPEC_NO_MANIFEST .*spec\.yaml:4:\d+ plugins\[2\]\.path: .*missing does not exist/);
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(readFileSync(join(t.home, "hermes.lock.json"), "utf8")).toBe(lockBefore);
    expect(readFileSync(join(t.home, "config.yaml"), "utf8")).toBe(cfgBefore);
    expect(existsSync(join(t.home, "plugins", "nix-managed-alpha"))).toBe(true);
  });

  it("enable and disable recompile the lock; a managed home refuses what the deployment owns", async () => {
    const t = setup();
    await t.cli("compile", "--spec", t.spec, "--managed", "nixos");
    writePlugin(join(t.home, "plugins", "extra"), "name: extra\n");
    const en = await t.cli("plugins", "enable", "extra");
    expect(en.code, en.stderr).toBe(0);
    expect(lock(t.home).load_order).toContain("extra");
    // alpha is enabled by the deployment: disabling it keeps that item and adds a deny entry.
    const dis = await t.cli("plugins", "disable", "alpha");
    expect(dis.code, dis.stderr).toBe(0);
    const cfg = readFileSync(join(t.home, "config.yaml"), "utf8");
    expect(cfg).toContain("    - alpha\n");
    expect(cfg).toMatch(/disabled:\n\s+- alpha/);
    expect(lock(t.home).plugins.find((p) => p.key === "alpha")!.action).toBe("skip");
    // With the replace policy the whole enabled list is the deployment's.
    writeText(t.spec, `listPolicy: replace\nplugins:\n  - path: ${t.store}/beta\n`);
    expect((await t.cli("compile", "--spec", t.spec, "--managed", "nixos")).code).toBe(0);
    const refused = await t.cli("plugins", "enable", "mine");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("E_CONFIG_MANAGED_KEY");
    expect(refused.stderr).toContain("plugins.enabled is set by the nixos deployment");
  });

  it("rollback returns to the previous generation; list-generations shows them", async () => {
    const t = setup();
    await t.cli("compile", "--spec", t.spec);
    writeText(t.spec, `plugins:\n  - path: ${t.store}/beta\nsettings:\n  model:\n    default: other\n`);
    await t.cli("compile", "--spec", t.spec);
    expect(existsSync(join(t.home, "plugins", "nix-managed-alpha"))).toBe(false);
    const list = await t.cli("compile", "--list-generations", "--json");
    const gens = JSON.parse(list.stdout) as Array<{ generation: number; current: boolean }>;
    expect(gens.map((g) => [g.generation, g.current])).toEqual([
      [1, false],
      [2, true],
    ]);
    const rb = await t.cli("compile", "--rollback");
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stdout).toContain("rolled back to generation 1 (from 2)");
    expect(realpathSync(join(t.home, "plugins", "nix-managed-alpha"))).toBe(join(t.store, "alpha"));
    expect(readFileSync(join(t.home, "config.yaml"), "utf8")).toContain("default: llama");
    expect(lock(t.home).load_order).toEqual(["alpha", "beta", "mine"]);
    const bad = await t.cli("compile", "--rollback", "9");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("E_COMPILE_NO_GENERATION");
  });
});

describe("hermes lock verify", () => {
  it("reports changed, added and removed files and a dangling link, with exit 1", async () => {
    const t = setup();
    await t.cli("compile", "--spec", t.spec);
    const ok = await t.cli("lock", "verify");
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("lock verified: no drift");
    writeFileSync(join(t.home, "plugins", "mine", "index.js"), "export function register(ctx) { /* tampered */ }\n");
    writeFileSync(join(t.home, "plugins", "mine", "new.js"), "x\n");
    const r = await t.cli("lock", "verify");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/E_LOCK_DRIFT .*plugin mine changed: changed: index\.js; added: new\.js/);
    const { rmSync } = await import("node:fs");
    rmSync(join(t.store, "beta"), { recursive: true });
    const j = await t.cli("lock", "verify", "--json");
    const report = JSON.parse(j.stdout) as { plugins: Array<{ key: string; status: string }> };
    expect(report.plugins.find((p) => p.key === "beta")!.status).toBe("dangling");
  });
});
