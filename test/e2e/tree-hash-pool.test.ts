import { chmodSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/compile/tree-hash.js";
import { POOL_MIN_TREES } from "../../src/compile/tree-hash-pool.js";
import { runCli } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

/**
 * A compile of many plugins lists and hashes their trees on a worker thread beside the main one
 * (compile/tree-hash-pool.ts). What it records must be what one thread computes, errors included.
 */
const s = new Scratch("hermes-e2e-pool-");
afterAll(() => s.cleanup());

/** A home of `n` plugins with varied trees (nested folders, executables, links inside) and one escaping link. */
function home(n: number): { home: string; env: Record<string, string> } {
  const root = s.dir("case");
  const h = join(root, "home");
  const bundled = join(root, "bundled");
  mkdirSync(bundled, { recursive: true });
  for (let i = 0; i < n; i++) {
    const name = `p${String(i).padStart(4, "0")}`;
    const dir = writePlugin(join(h, "plugins", name), `name: ${name}\nversion: 1.0.${i}\n`);
    writeText(join(dir, "lib", "util.js"), `export const n = ${i};\n`);
    if (i % 3 === 0) writeText(join(dir, "data", "deep", "x.json"), JSON.stringify({ i }));
    if (i % 5 === 0) chmodSync(writeText(join(dir, "bin", "run"), "#!/bin/sh\necho hi\n"), 0o755);
    if (i % 7 === 0) symlinkSync("lib/util.js", join(dir, "alias.js"));
  }
  const leaky = writePlugin(join(h, "plugins", "leaky"), "name: leaky\nversion: 1.0.0\n");
  symlinkSync("../../config.yaml", join(leaky, "cfg.yaml"));
  writeText(join(h, "config.yaml"), "plugins:\n  enabled: [leaky]\n");
  return { home: h, env: { HERMES_BUNDLED_PLUGINS: bundled } };
}

interface LockPlugin {
  key: string;
  integrity: string;
}

describe("hashing plugin trees on two threads", () => {
  it("records, for every plugin, the integrity one thread computes, and the same errors", async () => {
    const many = home(POOL_MIN_TREES + 40);
    const refused = await runCli(["compile", "--verbose"], { home: many.home, env: many.env });
    const line = refused.stderr.split("\n").find((l) => l.includes("hashed on two threads"));
    expect(line, refused.stderr.slice(0, 2000)).toBeDefined();
    // The worker took a share (how much depends on the machine; none at all means it never ran).
    expect(JSON.parse(line!).byWorker).toBeGreaterThan(0);

    // The escaping link is refused with the message the single-threaded path gives (a home below the pool's size).
    const few = home(3);
    const one = await runCli(["compile"], { home: few.home, env: few.env });
    const escapeLine = (r: { stderr: string }, h: string) =>
      r.stderr
        .split("\n")
        .find((l) => l.startsWith("error E_COMPILE_LINK_ESCAPE"))
        ?.replaceAll(h, "HOME");
    expect(escapeLine(refused, many.home)).toMatch(
      /plugin leaky: HOME\/plugins\/leaky\/cfg\.yaml is a symlink to \.\.\/\.\.\//,
    );
    expect(escapeLine(refused, many.home)).toBe(escapeLine(one, few.home));
    expect([refused.code, one.code]).toEqual([1, 1]);

    rmSync(join(many.home, "plugins", "leaky"), { recursive: true });
    writeText(join(many.home, "config.yaml"), "plugins:\n  enabled: []\n");
    const r = await runCli(["compile"], { home: many.home, env: many.env });
    expect(r.code, r.stderr).toBe(0);
    const lock = JSON.parse(readFileSync(join(many.home, "hermes.lock.json"), "utf8")) as { plugins: LockPlugin[] };
    expect(lock.plugins).toHaveLength(POOL_MIN_TREES + 40);
    for (const p of lock.plugins) {
      const real = realpathSync(join(many.home, "plugins", p.key));
      expect(p.integrity, p.key).toBe((await hashTree(real)).integrity);
    }
    expect((await runCli(["lock", "verify", "--full"], { home: many.home, env: many.env })).code).toBe(0);

    // A worker that dies midway loses nothing: the main thread does what it had not delivered.
    const integrities = (l: { plugins: LockPlugin[] }) => l.plugins.map((p) => `${p.key} ${p.integrity}`);
    for (const out of ["hermes.lock.json", "cache", "generations"]) rmSync(join(many.home, out), { recursive: true });
    const dying = await runCli(["compile", "--verbose"], {
      home: many.home,
      env: { ...many.env, HERMES_FAULT_THREAD_EXIT: "tree-hash:20" },
    });
    expect(dying.code, dying.stderr.slice(0, 2000)).toBe(0);
    const after = dying.stderr.split("\n").find((l) => l.includes("hashed on two threads"));
    expect(JSON.parse(after!).byWorker).toBeLessThan(POOL_MIN_TREES);
    const relock = JSON.parse(readFileSync(join(many.home, "hermes.lock.json"), "utf8")) as { plugins: LockPlugin[] };
    expect(integrities(relock)).toEqual(integrities(lock));
  });
});
