import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

/** Values that used to end in E_INTERNAL (a TypeError or EISDIR) end in catalog codes, through the real CLI. */
const s = new Scratch("hermes-e2e-hostile-");
afterAll(() => s.cleanup());

function home() {
  const h = s.dir("home");
  const bundled = s.dir("bundled");
  return {
    h,
    cli: (...args: string[]) => runCli(["--home", h, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } }),
  };
}

const noInternal = (r: { stderr: string; stdout: string }) => {
  expect(r.stderr + r.stdout).not.toContain("E_INTERNAL");
  expect(r.stderr).not.toMatch(STACK_RE);
};

describe("hostile values end in catalog codes", () => {
  it("pack show <directory> is E_PACK_NOT_FOUND naming a folder (was EISDIR)", async () => {
    const t = home();
    const r = await t.cli("plugins", "pack", "show", s.dir("a-folder"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/E_PACK_NOT_FOUND .*is a folder/);
    noInternal(r);
  });

  it(
    "a deploy spec whose grants are {toString: 1} / {valueOf: 1} is E_SPEC_INVALID at the grant (was a " + "TypeError)",
    async () => {
      const t = home();
      const store = writePlugin(join(s.dir("store"), "q"), "name: q\nversion: '1'\ncapabilities: [tools.override]\n");
      const spec = writeText(
        join(s.dir("spec"), "spec.yaml"),
        `plugins:\n  - path: ${store}\n    grants: [{toString: 1}, {valueOf: 1}]\n`,
      );
      const r = await t.cli("compile", "--spec", spec, "--dry-run");
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /E_SPEC_INVALID .*grants\[0\]\.toString: a mapping here has a key named like a built-in method/,
      );
      noInternal(r);
    },
  );

  it("a plugin.yaml with {toString: 1} values is listed, explained and compiled with its problems named", async () => {
    const t = home();
    writePlugin(
      join(t.h, "plugins", "p"),
      "name: p\nversion: {toString: 1}\nkind: {valueOf: 1}\nconfig_schema:\n  k: {type: {toString: " +
        "1}}\nrequires_plugins: [{id: q, version_range: {valueOf: 1}}]\n",
    );
    writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: [p]\n");
    for (const args of [
      ["plugins", "list"],
      ["plugins", "why", "p"],
      ["compile"],
      ["plugins", "validate", join(t.h, "plugins", "p")],
    ]) {
      const r = await t.cli(...args);
      noInternal(r);
    }
  });

  it("a lock nested 5,000 deep is E_LOCK_INVALID for lock verify and recompiled at start", async () => {
    const t = home();
    writePlugin(join(t.h, "plugins", "p"), "name: p\nversion: '1'\n");
    writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: [p]\n");
    expect((await t.cli("compile")).code).toBe(0);
    mkdirSync(join(t.h, "generations", "current"), { recursive: true });
    writeFileSync(join(t.h, "generations", "current", "hermes.lock.json"), `${"[".repeat(5000)}${"]".repeat(5000)}`);
    const v = await t.cli("lock", "verify");
    expect(v.code).toBe(1);
    expect(v.stderr).toMatch(/E_LOCK_INVALID .*nested deeper than/);
    noInternal(v);
    const c = await t.cli("plugins", "chain");
    expect(c.code, c.stderr).toBe(0);
    noInternal(c);
  });
});
