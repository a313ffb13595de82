import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasScript, runCli, STACK_RE, ttyCli } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch, writePlugin, writeText } from "../support/home.js";

/**
 * Issue 18: `hermes plugins` alone opens the interactive screen on a terminal (a pseudo-terminal made by
 * util-linux `script`), and prints `plugins list` anywhere else.
 */
const scratch = new Scratch("hermes-e2e-plugins-screen-");
afterAll(() => scratch.cleanup());
const bundled = bundledWithHelloWorld(scratch);

const CONFIG = "# my settings\nplugins:\n  enabled: [beta] # beta stays on\n_config_version: 21\n";
const DOWN = "\x1b[B";
const ESC = "\x1b";

function makeHome(name: string): string {
  const home = scratch.dir(name);
  writePlugin(
    join(home, "plugins", "alpha"),
    "name: alpha\ndescription: Custom search tool\ncapabilities: [tools.override]\n",
  );
  writePlugin(join(home, "plugins", "beta"), "name: beta\ndescription: Event hooks\n");
  writePlugin(join(home, "plugins", "memory", "honcho"), "name: honcho\ndescription: Memory\nkind: exclusive\n");
  writeText(join(home, "config.yaml"), CONFIG);
  return home;
}

const env = { HERMES_BUNDLED_PLUGINS: bundled, NO_COLOR: "1" };

type LockRow = { key: string; action: string; capabilities: { granted: string[] } };
const lockOf = (home: string) =>
  JSON.parse(readFileSync(join(home, "hermes.lock.json"), "utf8")) as { plugins: LockRow[]; load_order: string[] };

describe("hermes plugins without a terminal", () => {
  it("prints the same as `plugins list` (no escape codes, no wait for input)", async () => {
    const home = makeHome("plain");
    const [bare, list] = [await runCli(["plugins"], { home, env }), await runCli(["plugins", "list"], { home, env })];
    expect(bare.code).toBe(0);
    expect(bare.stdout).toBe(list.stdout);
    expect(bare.stdout).toMatch(/^alpha\s+not enabled/m);
    expect(bare.stdout).toMatch(/^beta\s+enabled/m);
    expect(bare.stdout).not.toContain("\x1b");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(CONFIG);
  });

  it("an unknown subcommand is still a usage error", async () => {
    const r = await runCli(["plugins", "bogus"], { home: makeHome("bogus"), env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'bogus'/);
  });
});

describe.skipIf(!hasScript)("hermes plugins on a terminal", () => {
  it("toggles two plugins, picks a memory provider, confirms: config, lock and list agree", async () => {
    const home = makeHome("confirm");
    const t = ttyCli(["plugins"], { home, env });
    await t.expect("General Plugins");
    await t.expect("[bundled]");
    await t.expect("Memory Provider");
    await t.expect("▸ (built-in)");
    t.type(" ");
    await t.expect("→ [✓] alpha — Custom search tool");
    t.type(DOWN);
    await t.expect("→ [✓] beta");
    t.type(" ");
    await t.expect("→ [ ] beta");
    t.type(DOWN + DOWN);
    await t.expect("→ [ ] hello-world");
    await t.expect("→ Memory Provider");
    t.type("\r");
    await t.expect("memory.provider · ↑↓ move");
    t.type(DOWN);
    await t.expect("→ honcho");
    t.type("\r");
    await t.expect("▸ honcho");
    // Nothing is written while the screen is open.
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(CONFIG);
    t.type(ESC);
    await t.expect("enable  alpha");
    await t.expect("disable beta");
    await t.expect("memory.provider: honcho");
    await t.expect("Apply these changes? [y/N]");
    t.type("y\r");
    await t.expect("Grant these capabilities? [y/N]");
    t.type("y\r");
    await t.expect("lock updated: generation 1");
    const r = await t.done;
    expect(r.code).toBe(0);
    // NO_COLOR: the screen's own text has no colour or bold codes.
    expect(r.stdout).not.toMatch(/\x1b\[[0-9;]*m/);

    const config = readFileSync(join(home, "config.yaml"), "utf8");
    expect(config).toContain("# my settings");
    expect(config).toContain("# beta stays on");
    expect(config).toMatch(/enabled: \[alpha\]/);
    expect(config).toMatch(/disabled:\n\s+- beta/);
    expect(config).toMatch(/memory:\n\s+provider: honcho/);
    expect(config).toMatch(/granted_capabilities:/);

    const lock = lockOf(home);
    const row = (k: string) => lock.plugins.find((p) => p.key === k)!;
    expect(row("alpha").action).toBe("load");
    expect(row("alpha").capabilities.granted).toEqual(["tools.override"]);
    expect(row("beta").action).toBe("skip");
    expect(row("memory/honcho").action).toBe("load");
    expect(existsSync(join(home, "generations"))).toBe(true);

    const list = await runCli(["plugins", "list", "--json"], { home, env });
    const rows = JSON.parse(list.stdout) as { key: string; status: string; provider: { active: boolean } | null }[];
    const status = Object.fromEntries(rows.map((x) => [x.key, x.status]));
    expect(status).toMatchObject({ alpha: "enabled", beta: "disabled", "hello-world": "not enabled" });
    expect(rows.find((x) => x.key === "memory/honcho")!.provider!.active).toBe(true);
  }, 90_000);

  it("ESC then declining the question changes nothing; ESC with no change writes nothing", async () => {
    const home = makeHome("esc");
    const t = ttyCli(["plugins"], { home, env });
    await t.expect("→ [ ] alpha");
    t.type(" ");
    await t.expect("→ [✓] alpha");
    t.type(ESC);
    await t.expect("Apply these changes? [y/N]");
    t.type("n\r");
    await t.expect("Not applied; nothing changed.");
    expect((await t.done).code).toBe(0);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(CONFIG);
    expect(existsSync(join(home, "hermes.lock.json"))).toBe(false);

    const again = ttyCli(["plugins"], { home, env });
    await again.expect("→ [ ] alpha");
    again.type(ESC);
    await again.expect("No changes.");
    expect((await again.done).code).toBe(0);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(CONFIG);
    expect(existsSync(join(home, "hermes.lock.json"))).toBe(false);
  }, 90_000);
});

/**
 * A managed (Nix-deployed) home: the deployment enables `alpha` (it owns that item of plugins.enabled), the user
 * has `mine` on and `extra` off. Rows whose toggle would edit what the deployment owns are read-only.
 */
function managedHome(name: string) {
  const root = scratch.dir(name);
  const home = join(root, "home");
  const store = join(root, "store");
  writePlugin(join(store, "alpha"), "name: alpha\nversion: '1'\ndescription: Deployed\n");
  writePlugin(join(home, "plugins", "mine"), "name: mine\ndescription: Mine\n");
  writePlugin(join(home, "plugins", "extra"), "name: extra\ndescription: Extra\n");
  writeText(join(home, "config.yaml"), "# mine\nplugins:\n  enabled:\n    - mine # by hand\n");
  const spec = (policy: string) => writeText(join(root, "spec.yaml"), `${policy}plugins:\n  - path: ${store}/alpha\n`);
  const menv = { HERMES_BUNDLED_PLUGINS: scratch.dir(`${name}-bundled`), NO_COLOR: "1" };
  const cli = (...a: string[]) => runCli(["--home", home, ...a], { env: menv });
  const deploy = async (policy = "") => {
    const r = await cli("compile", "--spec", spec(policy), "--managed", "nixos");
    expect(r.code, r.stderr).toBe(0);
  };
  const statuses = async () => {
    const list = await cli("plugins", "list", "--json");
    return Object.fromEntries(
      (JSON.parse(list.stdout) as { key: string; status: string }[]).map((x) => [x.key, x.status]),
    );
  };
  const screen = () => ttyCli(["--home", home, "plugins"], { env: menv });
  const config = () => readFileSync(join(home, "config.yaml"), "utf8");
  return { home, cli, deploy, statuses, screen, config };
}

describe.skipIf(!hasScript)("hermes plugins on a terminal, in a managed home", () => {
  it("toggles the user's own plugins; the deployment's entry stays; lock and list agree", async () => {
    const m = managedHome("managed-ok");
    await m.deploy();
    const t = m.screen();
    await t.expect("→ [✓] alpha — Deployed");
    t.type(DOWN);
    await t.expect("→ [ ] extra");
    t.type(" ");
    await t.expect("→ [✓] extra");
    t.type(DOWN + " ");
    await t.expect("→ [ ] mine");
    t.type(ESC);
    await t.expect("enable  extra");
    await t.expect("disable mine");
    await t.expect("Apply these changes? [y/N]");
    t.type("y\r");
    await t.expect(/lock updated: generation \d+/);
    expect((await t.done).code).toBe(0);
    const config = m.config();
    expect(config).toContain("# mine");
    expect(config).toMatch(/enabled:\n(\s+- .*\n)*\s+- alpha\n/);
    expect(config).toMatch(/\s+- extra\n/);
    expect(config).toMatch(/disabled:\n\s+- mine/);
    expect(await m.statuses()).toMatchObject({ alpha: "enabled", extra: "enabled", mine: "disabled" });
    const verify = await m.cli("lock", "verify");
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 90_000);

  it("a row whose toggle the deployment owns is [managed]: SPACE names the owner and changes nothing", async () => {
    const m = managedHome("managed-locked");
    // With the replace policy the whole enabled list is the deployment's: enabling anything more is refused.
    await m.deploy("listPolicy: replace\n");
    const before = m.config();
    const t = m.screen();
    await t.expect("→ [✓] alpha — Deployed");
    t.type(DOWN);
    await t.expect("→ [ ] extra — Extra [managed]");
    t.type(" ");
    // The frame drawn for SPACE: the box is still empty and the note names the owner.
    await t.expect(/→ \[ \] extra — Extra \[managed\][^\x1b]*extra: plugins\.enabled is set by the nixos/);
    expect(t.out()).not.toContain("[✓] extra");
    t.type(ESC);
    await t.expect("No changes.");
    expect((await t.done).code).toBe(0);
    expect(m.config()).toBe(before);
    expect(await m.statuses()).toMatchObject({ alpha: "enabled", extra: "not enabled" });
  }, 90_000);

  it("re-enabling a deployed plugin the user disabled drops its deny entry, as `plugins enable`", async () => {
    const m = managedHome("managed-reenable");
    await m.deploy("listPolicy: replace\n");
    expect((await m.cli("plugins", "disable", "alpha")).code).toBe(0);
    const t = m.screen();
    await t.expect(/→ \[ \] alpha — Deployed\s/);
    t.type(" ");
    await t.expect("→ [✓] alpha — Deployed");
    t.type(ESC);
    await t.expect("enable  alpha");
    t.type("y\r");
    await t.expect(/lock updated: generation \d+/);
    expect((await t.done).code).toBe(0);
    expect(t.out()).not.toMatch(/alpha — Deployed \[managed\]/);
    const config = m.config();
    expect(config).toMatch(/enabled:\n\s+- alpha\n/);
    expect(config).not.toMatch(/disabled:[\s\S]*- alpha/);
    expect(await m.statuses()).toMatchObject({ alpha: "enabled", extra: "not enabled" });
    expect((await m.cli("lock", "verify")).code).toBe(0);
  }, 90_000);

  it("a deployment taking a key over while the screen is open: confirming is refused before any write", async () => {
    const m = managedHome("managed-stale");
    await m.deploy();
    const t = m.screen();
    await t.expect("→ [✓] alpha");
    t.type(DOWN + " ");
    await t.expect("→ [✓] extra");
    t.type(DOWN + " ");
    await t.expect("→ [ ] mine");
    await m.deploy("listPolicy: replace\n");
    const before = m.config();
    const lockBefore = readFileSync(join(m.home, "hermes.lock.json"), "utf8");
    t.type(ESC);
    await t.expect("Apply these changes? [y/N]");
    t.type("y\r");
    await t.expect("plugins.enabled is set by the nixos deployment of this home");
    const r = await t.done;
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain("E_CONFIG_MANAGED_KEY");
    expect(r.stdout).not.toMatch(STACK_RE);
    // Neither the disable of mine (allowed on its own) nor the lock was written.
    expect(m.config()).toBe(before);
    expect(readFileSync(join(m.home, "hermes.lock.json"), "utf8")).toBe(lockBefore);
    expect((await m.cli("lock", "verify")).code).toBe(0);
  }, 90_000);
});
