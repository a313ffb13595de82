import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch, writePlugin, writeText } from "../support/home.js";
import { hermes, newHome, Repo } from "../install/helpers.js";

/** Files every command reads have a size limit with a clear error (a 30 MB plugin.yaml used to cost every command
 * seconds). */
const s = new Scratch("hermes-e2e-size-");
afterAll(() => s.cleanup());

/** Valid YAML of about `bytes` bytes: a manifest or config padded with a long comment block. */
const padded = (head: string, bytes: number) =>
  `${head}${"# padding padding padding padding padding padding padding padding\n".repeat(Math.ceil(bytes / 65))}`;

function home() {
  const h = s.dir("home");
  const bundled = s.dir("bundled");
  return {
    h,
    cli: (...args: string[]) => runCli(["--home", h, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } }),
  };
}

describe("size limits", () => {
  it(
    "a plugin.yaml over 256 KiB is E_MANIFEST_TOO_LARGE: validate fails, discovery marks it invalid, install " +
      "refuses",
    async () => {
      const t = home();
      const big = writePlugin(join(t.h, "plugins", "big"), padded("name: big\nversion: '1'\n", 300 * 1024));
      writePlugin(join(t.h, "plugins", "small"), "name: small\nversion: '1'\n");
      writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: [big, small]\n");
      const v = await runCli(["plugins", "validate", big]);
      expect(v.code).toBe(1);
      expect(v.stdout + v.stderr).toContain("E_MANIFEST_TOO_LARGE");
      expect(v.stdout + v.stderr).toMatch(/over the 256 KiB limit/);
      const c = await t.cli("compile");
      expect(c.code, c.stderr).toBe(0);
      expect(c.stderr).toContain("E_MANIFEST_TOO_LARGE");
      const lock = JSON.parse((await t.cli("compile", "--dry-run", "--json")).stdout) as {
        loadOrder?: string[];
        load_order?: string[];
      };
      expect(lock.loadOrder ?? lock.load_order).toEqual(["small"]);
      const repo = new Repo(s.dir("repos"), "acme/big", {
        "plugin.yaml": padded("name: bigrepo\nversion: 1.0.0\n", 300 * 1024),
        "index.js": "export function register() {}\n",
      });
      const h = newHome(s, "install");
      const r = await hermes({ s, bundled: bundledWithHelloWorld(s) }, h, ["install", repo.url]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_MANIFEST_TOO_LARGE");
      expect(r.stderr).not.toMatch(STACK_RE);
      expect(existsSync(join(h.plugins, "bigrepo"))).toBe(false);
    },
  );

  it("a config.yaml over 1 MiB is E_CONFIG_TOO_LARGE for every command, and is left as it was", async () => {
    const t = home();
    const text = padded("plugins:\n  enabled: []\n", 1100 * 1024);
    writeText(join(t.h, "config.yaml"), text);
    for (const args of [["plugins", "list"], ["compile"], ["plugins", "enable", "x"]]) {
      const r = await t.cli(...args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toMatch(/E_CONFIG_TOO_LARGE .*over the 1 MiB limit/);
      expect(r.stderr).not.toMatch(STACK_RE);
    }
    expect(readFileSync(join(t.h, "config.yaml"), "utf8")).toBe(text);
  });

  it("a deploy spec over 1 MiB is E_SPEC_TOO_LARGE; a pack over 1 MiB is E_PACK_TOO_LARGE", async () => {
    const t = home();
    const spec = writeText(join(s.dir("spec"), "spec.yaml"), padded("plugins: []\n", 1100 * 1024));
    const r = await t.cli("compile", "--spec", spec, "--dry-run");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_SPEC_TOO_LARGE");
    expect(r.stderr).not.toMatch(STACK_RE);
    const pack = join(s.dir("pack"), "hermes-pack.yaml");
    writeFileSync(pack, padded("name: p\nplugins: []\n", 1100 * 1024));
    const p = await t.cli("plugins", "pack", "show", pack);
    expect(p.code).toBe(1);
    expect(p.stderr).toContain("E_PACK_TOO_LARGE");
  });
});
