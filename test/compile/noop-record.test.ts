import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compile } from "../../src/compile/compile.js";
import { cleanupTemp, tempDir } from "../support/home.js";

/**
 * What the no-op record (compile/quick-check.ts) must not vouch for: changes that leave every stat it used to
 * compare as it was. Each case compiles, changes the home, and checks the next compile sees the change.
 */
afterAll(cleanupTemp);

function plugin(dir: string, name: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), `name: ${name}\nversion: 1.0.0\n`);
  writeFileSync(join(dir, "index.js"), "export function register() {}\n");
}

/** A home with plugin `a`, compiled, whose no-op record was written (files older than a clock step). */
async function compiledHome(prepare?: (home: string) => void): Promise<{ home: string; env: NodeJS.ProcessEnv }> {
  const root = tempDir("hk-noop-record-");
  mkdirSync(join(root, "bundled"));
  const home = join(root, "home");
  plugin(join(home, "plugins", "a"), "a");
  prepare?.(home);
  writeFileSync(join(home, "config.yaml"), "plugins:\n  enabled: [a, later, deep, npmplug]\n");
  const env = { HERMES_BUNDLED_PLUGINS: join(root, "bundled"), PATH: process.env.PATH };
  await new Promise((r) => setTimeout(r, 100));
  expect((await compile({ home, env })).applied).toBe(true);
  expect(existsSync(join(home, "cache", "quick-check.json"))).toBe(true);
  expect((await compile({ home, env })).applied, "an untouched home is a no-op").toBe(false);
  return { home, env };
}

const lockKeys = (home: string) =>
  (JSON.parse(readFileSync(join(home, "hermes.lock.json"), "utf8")) as { plugins: Array<{ key: string }> }).plugins
    .map((p) => p.key)
    .sort();

describe("the no-op record", () => {
  it("sees a file added to a plugin folder whose mtime was then set back", async () => {
    const { home, env } = await compiledHome();
    const dir = join(home, "plugins", "a");
    const before = statSync(dir, { bigint: true }).mtimeNs;
    writeFileSync(join(dir, "extra.js"), "export const x = 1;\n");
    // Put the folder's mtime back to the nanosecond (utimes from Node rounds through a double).
    const at = `@${before / 1_000_000_000n}.${String(before % 1_000_000_000n).padStart(9, "0")}`;
    execFileSync("touch", ["-m", "-d", at, dir]);
    expect(statSync(dir, { bigint: true }).mtimeNs).toBe(before);
    const r = await compile({ home, env });
    expect(r.applied).toBe(true);
    expect(r.plan.pluginChanges).toEqual([{ op: "change", key: "a", details: ["files changed"] }]);
  });

  it("sees a manifest added to a folder that held no plugin, at the top of plugins/ and in a category", async () => {
    const { home, env } = await compiledHome((h) => {
      mkdirSync(join(h, "plugins", "later"));
      mkdirSync(join(h, "plugins", "group", "deep"), { recursive: true });
    });
    expect(lockKeys(home)).toEqual(["a"]);
    plugin(join(home, "plugins", "later"), "later");
    plugin(join(home, "plugins", "group", "deep"), "deep");
    expect((await compile({ home, env })).applied).toBe(true);
    expect(lockKeys(home)).toEqual(["a", "group/deep", "later"]);
  });

  it("sees a node_modules package.json edited in place to declare a plugin", async () => {
    const { home, env } = await compiledHome((h) => {
      const pkg = join(h, "node_modules", "npmplug");
      mkdirSync(pkg, { recursive: true });
      writeFileSync(join(pkg, "package.json"), `${JSON.stringify({ name: "npmplug", version: "1.0.0" })}\n`);
      plugin(pkg, "npmplug");
    });
    expect(lockKeys(home)).toEqual(["a"]);
    const pj = join(home, "node_modules", "npmplug", "package.json");
    writeFileSync(pj, `${JSON.stringify({ name: "npmplug", version: "1.0.0", "hermes-plugin": true })}\n`);
    expect((await compile({ home, env })).applied).toBe(true);
    expect(lockKeys(home)).toEqual(["a", "npmplug"]);
  });
});
