import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

/**
 * Issue 17: the v21 migration runs only for configs older than v21 (`_config_version`, as the original):
 * a brand-new home's config gets the current version and a plugin dropped into it stays opt-in; an older
 * config is migrated once, stamped, comments kept; a managed home's first activation grandfathers nothing,
 * and a version its deployment sets is left to it.
 */
const scratch = new Scratch("hermes-e2e-config-version-");
afterAll(() => scratch.cleanup());

function setup(name: string) {
  const root = scratch.dir(name);
  const home = join(root, "home");
  const bundled = join(root, "bundled");
  writeText(join(bundled, ".keep"), "");
  const cli = (...args: string[]) => runCli(["--home", home, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } });
  const config = () => readFileSync(join(home, "config.yaml"), "utf8");
  const status = async () => {
    const r = await cli("plugins", "list", "--json");
    expect(r.code, r.stderr).toBe(0);
    return Object.fromEntries(
      (JSON.parse(r.stdout) as { key: string; status: string }[]).map((x) => [x.key, x.status]),
    );
  };
  return { root, home, cli, config, status };
}

describe("_config_version and the v21 migration", () => {
  it("a brand-new home: the first command writes the current version; a dropped-in plugin stays opt-in", async () => {
    const t = setup("fresh");
    writePlugin(join(t.home, "plugins", "dropped"), "name: dropped\nversion: '1'\n");
    expect(await t.status()).toEqual({ dropped: "not enabled" });
    const c = await t.cli("compile");
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).not.toContain("randfather");
    expect(c.stderr).not.toMatch(STACK_RE);
    expect(t.config()).toBe("_config_version: 21\n");
    expect(await t.status()).toEqual({ dropped: "not enabled" });
  });

  it("an older config is migrated once: grandfathered, stamped, comments kept; later drops stay opt-in", async () => {
    const t = setup("older");
    const older = "# my settings\nmodel:\n  default: gpt-4o  # the usual\n";
    writeText(join(t.home, "config.yaml"), older);
    writePlugin(join(t.home, "plugins", "mine"), "name: mine\nversion: '1'\n");
    // A read-only command shows the migrated state and writes nothing.
    expect(await t.status()).toEqual({ mine: "enabled" });
    expect(t.config()).toBe(older);
    const c = await t.cli("compile");
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toContain("Grandfathered 1 installed user plugin(s) into plugins.enabled: mine");
    expect(t.config()).toContain("# my settings\nmodel:\n  default: gpt-4o  # the usual\n");
    expect(parse(t.config())).toEqual({
      model: { default: "gpt-4o" },
      plugins: { enabled: ["mine"] },
      _config_version: 21,
    });
    writePlugin(join(t.home, "plugins", "later"), "name: later\nversion: '1'\n");
    const again = await t.cli("compile");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("randfather");
    expect(await t.status()).toEqual({ later: "not enabled", mine: "enabled" });
  });

  it("a managed home: the first activation grandfathers nothing; a version the deployment sets is its", async () => {
    const t = setup("managed");
    const store = join(t.root, "store");
    writePlugin(join(store, "linked"), "name: linked\nversion: '1'\n");
    writePlugin(join(t.home, "plugins", "by-hand"), "name: by-hand\nversion: '1'\n");
    const spec = writeText(join(t.root, "spec.yaml"), `plugins:\n  - path: ${store}/linked\n    enable: false\n`);
    const first = await t.cli("compile", "--spec", spec, "--managed", "nixos");
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain("randfather");
    expect(parse(t.config())).toMatchObject({ _config_version: 21 });
    expect(await t.status()).toEqual({ "by-hand": "not enabled", linked: "not enabled" });
    expect((await t.cli("plugins", "enable", "by-hand")).code).toBe(0);
    // The deployment now sets the version itself (an older number): the kit does not stamp over what it owns.
    const owned = writeText(
      join(t.root, "spec2.yaml"),
      `plugins:\n  - path: ${store}/linked\n    enable: false\nsettings:\n  _config_version: 20\n`,
    );
    expect((await t.cli("compile", "--spec", owned, "--managed", "nixos")).code).toBe(0);
    const enable = await t.cli("plugins", "enable", "linked");
    expect(enable.code, enable.stderr).toBe(0);
    expect(enable.stderr).not.toContain("randfather");
    expect(parse(t.config())).toEqual({ _config_version: 20, plugins: { enabled: ["by-hand", "linked"] } });
  });
});
