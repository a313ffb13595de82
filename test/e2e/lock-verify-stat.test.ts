import {
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fingerprint, hashTree, listTree } from "../../src/compile/tree-hash.js";
import { sha256Hex } from "../../src/core/hash.js";
import { runCli } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

/**
 * `hermes lock verify` trusts the last compile's no-op record when it names these lock bytes and
 * every folder and file stat it holds is unchanged, else the compile's integrity cache for a tree
 * whose stat fingerprint (names, types, modes, sizes, mtimes, ctimes, inodes, link targets) is
 * unchanged, and hashes everything else; `--full` hashes every file and reads neither.
 */
const scratch = new Scratch("hermes-e2e-lock-verify-stat-");
afterAll(() => scratch.cleanup());

const ENTRY = "export function register(ctx) { return 1; }\n";
/** A whole second, so that putting it back through utimes is exact (utimes takes no nanoseconds). */
const STAMP = 1_700_000_000;

async function compiledHome() {
  const root = scratch.dir("case");
  const home = join(root, "home");
  const bundled = scratch.dir("bundled");
  const plugin = writePlugin(join(home, "plugins", "memo"), { manifest: "name: memo\nversion: '1'\n", entry: false });
  writeText(join(plugin, "index.js"), ENTRY);
  utimesSync(join(plugin, "index.js"), STAMP, STAMP);
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: [memo]\n");
  const cli = (...args: string[]) => runCli(["--home", home, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } });
  // Older than the compile by more than a clock step, or its no-op record would not vouch for them.
  await new Promise((r) => setTimeout(r, 100));
  expect((await cli("compile")).code).toBe(0);
  return { home, plugin, cli };
}

/** Same-size new bytes, with the file's atime and mtime put back as they were. */
function tamperKeepingSizeAndMtime(file: string): void {
  const before = statSync(file);
  const text = readFileSync(file, "utf8");
  writeFileSync(file, text.replace("return 1", "return 2"));
  utimesSync(file, STAMP, STAMP);
  const after = statSync(file);
  expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
}

describe("hermes lock verify: the stat quick check and --full", () => {
  it("a file rewritten with its size and mtime restored is caught by --full and by the quick check", async () => {
    const t = await compiledHome();
    expect((await t.cli("lock", "verify")).code).toBe(0);
    tamperKeepingSizeAndMtime(join(t.plugin, "index.js"));
    for (const flags of [["--full"], []]) {
      const r = await t.cli("lock", "verify", ...flags);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/E_LOCK_DRIFT .*plugins\/memo: plugin memo changed: changed: index\.js$/m);
    }
  });

  it("--full never trusts the integrity cache, even one forged to match the new stat data", async () => {
    const t = await compiledHome();
    const file = join(t.plugin, "index.js");
    tamperKeepingSizeAndMtime(file);
    // Forge the cache entry: the fingerprint of the tampered tree, with the lock's hashes kept.
    const cacheFile = join(t.home, "cache", "integrity.json");
    const cache = JSON.parse(readFileSync(cacheFile, "utf8")) as { entries: Record<string, { fp: string }> };
    const key = Object.keys(cache.entries).find((k) => k.endsWith("/plugins/memo"));
    expect(key).toBeDefined();
    cache.entries[key!]!.fp = fingerprint(await listTree(t.plugin));
    writeFileSync(cacheFile, JSON.stringify(cache));
    // The documented trust rule: the quick check believes the cache hermes wrote.
    expect((await t.cli("lock", "verify")).code).toBe(0);
    const full = await t.cli("lock", "verify", "--full");
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/E_LOCK_DRIFT .*plugins\/memo: plugin memo changed: changed: index\.js$/m);
  });

  it("an unchanged home is vouched for by the no-op record: the same report as listing every tree", async () => {
    const t = await compiledHome();
    const quick = await t.cli("lock", "verify", "--json");
    expect(quick.code, quick.stderr).toBe(0);
    rmSync(join(t.home, "cache", "quick-check.json"));
    const listed = await t.cli("lock", "verify", "--json");
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(quick.stdout)).toEqual(JSON.parse(listed.stdout));
    expect(JSON.parse(quick.stdout)).toMatchObject({ ok: true, plugins: [{ key: "memo", status: "ok" }] });
  });

  it("the record is what answers (trusted as hermes wrote it); --full ignores it", async () => {
    const t = await compiledHome();
    const file = join(t.plugin, "index.js");
    tamperKeepingSizeAndMtime(file);
    // Forge the record: the tampered file's new ctime, so every stat it holds matches the disk again.
    const recordFile = join(t.home, "cache", "quick-check.json");
    const record = JSON.parse(readFileSync(recordFile, "utf8")) as {
      entries: Record<string, { tree: Record<string, Array<string | number | null>> }>;
    };
    expect(Object.keys(record.entries).length).toBeGreaterThan(0);
    for (const entry of Object.values(record.entries)) {
      const rec = entry.tree[t.plugin]!;
      const at = rec.indexOf("index.js");
      expect(at).toBeGreaterThan(0);
      rec[at + 3] = statSync(file).ctimeMs;
    }
    writeFileSync(recordFile, JSON.stringify(record));
    expect((await t.cli("lock", "verify")).code).toBe(0);
    // A record written by another version of the kit is not read (its lock may be of another shape).
    const other = JSON.parse(readFileSync(recordFile, "utf8")) as { entries: Record<string, { kit?: string }> };
    for (const entry of Object.values(other.entries)) entry.kit = "0.0.0-other";
    writeFileSync(recordFile, JSON.stringify(other));
    expect((await t.cli("lock", "verify")).code).toBe(1);
    writeFileSync(recordFile, JSON.stringify(record));
    const full = await t.cli("lock", "verify", "--full");
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/E_LOCK_DRIFT .*plugins\/memo: plugin memo changed: changed: index\.js$/m);
    // Without the record, the integrity cache's fingerprint (ctime included) no longer matches: caught.
    rmSync(recordFile);
    expect((await t.cli("lock", "verify")).code).toBe(1);
  });

  it("a touched but unchanged file falls back to hashing and reports no drift", async () => {
    const t = await compiledHome();
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(t.plugin, "index.js"), later, later);
    const r = await t.cli("lock", "verify");
    expect(r.stdout).toContain("lock verified: no drift");
    expect(r.code).toBe(0);
  });

  it("names that would give another tree the same hash input are refused, at verify and at compile", async () => {
    const t = await compiledHome();
    // Two files become one whose name spells the lines of both: the hash input would be unchanged.
    writeText(join(t.plugin, "a"), "AAA\n");
    writeText(join(t.plugin, "b"), "BBB\n");
    expect((await t.cli("compile")).code).toBe(0);
    const forged = `a ${sha256Hex("AAA\n")}\nF 644 b`;
    renameSync(join(t.plugin, "b"), join(t.plugin, forged));
    rmSync(join(t.plugin, "a"));
    for (const flags of [["--full"], []]) {
      const r = await t.cli("lock", "verify", ...flags);
      expect(r.code, r.stdout).toBe(1);
      expect(r.stderr).toMatch(/E_LOCK_DRIFT .*plugin memo unverifiable: .*holds a control character/);
    }
    await expect(hashTree(t.plugin)).rejects.toMatchObject({ code: "E_COMPILE_UNSAFE_NAME" });
    const c = await t.cli("compile");
    expect(c.code).toBe(1);
    expect(c.stderr).toContain("E_COMPILE_UNSAFE_NAME");

    // A link's path and target are split by a space in the hash input: neither may hold one.
    rmSync(join(t.plugin, forged));
    symlinkSync("x y", join(t.plugin, "alias"));
    expect((await t.cli("compile")).stderr).toMatch(
      /E_COMPILE_UNSAFE_NAME .*symlink whose path or target holds a space/,
    );
    // A file's name may hold spaces: its mode and sha256 on either side keep the line unambiguous.
    rmSync(join(t.plugin, "alias"));
    writeText(join(t.plugin, "with space.js"), "export {};\n");
    expect((await t.cli("compile")).code).toBe(0);
  });

  it("checks the lock's gateway event hooks as it checks plugins", async () => {
    const t = await compiledHome();
    const hook = join(t.home, "hooks", "audit");
    writeText(join(hook, "HOOK.yaml"), "name: audit\nevents: [gateway:startup]\n");
    writeText(join(hook, "handler.js"), "export function handle() {}\n");
    await new Promise((r) => setTimeout(r, 100));
    expect((await t.cli("compile")).code).toBe(0);
    for (const flags of [["--full"], []]) {
      const ok = await t.cli("lock", "verify", ...flags);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/^ok +event hook audit$/m);
    }
    writeFileSync(join(hook, "handler.js"), "export function handle() { /* edited */ }\n");
    for (const flags of [["--full"], [], ["--all"]]) {
      const r = await t.cli("lock", "verify", ...flags);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/E_LOCK_DRIFT .*hooks\/audit: event hook audit changed$/m);
      expect(r.stdout).toContain("drift in 0 plugin(s) and 1 event hook(s)");
    }
    const report = JSON.parse((await t.cli("lock", "verify", "--json")).stdout) as { event_hooks: unknown[] };
    expect(report.event_hooks).toEqual([{ name: "audit", path: realpathSync(hook), status: "changed" }]);
    rmSync(hook, { recursive: true });
    expect((await t.cli("lock", "verify")).stderr).toMatch(/event hook audit missing: .* does not exist/);
  });

  it("a changed manifest is reported from the bytes the tree hash read", async () => {
    const t = await compiledHome();
    writeFileSync(join(t.plugin, "plugin.yaml"), "name: memo\nversion: '2'\n");
    const r = await t.cli("lock", "verify", "--json");
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      plugins: Array<{ key: string; manifest_changed: boolean; changed: string[] }>;
    };
    expect(report.plugins).toEqual([
      expect.objectContaining({ key: "memo", manifest_changed: true, changed: ["plugin.yaml"] }),
    ]);
  });
});
