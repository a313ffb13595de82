/**
 * The inter-process lock around read-modify-write of config.yaml: `<target>.lock` created with
 * O_EXCL; a dead holder's lock is broken; a live holder is waited for, up to a timeout.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, promises as fsp } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { withFileLock } from "../../src/core/file-lock.js";
import { editConfig } from "../../src/config/config-file.js";
import { enablePlugin } from "../../src/config/enable.js";
import { cleanupTemp, tempDir, writeText } from "../support/home.js";
import { rejection, sleep } from "../support/util.js";

afterEach(cleanupTemp);

/** A pid that certainly belonged to a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", ""]);
  expect(r.status).toBe(0);
  return r.pid!;
}

async function writeLock(lockPath: string, owner: { pid: number; host: string; at?: number }): Promise<void> {
  writeText(lockPath, JSON.stringify({ at: Date.now(), ...owner }));
}

async function enabledOf(file: string): Promise<unknown> {
  return (parse(await fsp.readFile(file, "utf8")) as { plugins: { enabled: unknown } }).plugins.enabled;
}

describe("withFileLock", () => {
  it("runs the function, returns its value and removes the lock", async () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    const v = await withFileLock(file, async () => {
      expect(existsSync(`${file}.lock`)).toBe(true);
      const owner = JSON.parse(await fsp.readFile(`${file}.lock`, "utf8"));
      expect(owner).toMatchObject({ pid: process.pid, host: hostname() });
      return 42;
    });
    expect(v).toBe(42);
    expect(await fsp.readdir(dir)).toEqual([]);
  });

  it("removes the lock when the function throws", async () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    await expect(
      withFileLock(file, async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("serialises holders in one process", async () => {
    const dir = tempDir();
    const file = join(dir, "f");
    const events: string[] = [];
    const hold = (id: string) =>
      withFileLock(file, async () => {
        events.push(`${id}:in`);
        await sleep(30);
        events.push(`${id}:out`);
      });
    await Promise.all([hold("a"), hold("b"), hold("c")]);
    for (let i = 0; i < events.length; i += 2) {
      expect(events[i]!.split(":")[0]).toBe(events[i + 1]!.split(":")[0]);
      expect(events[i]!.endsWith(":in") && events[i + 1]!.endsWith(":out")).toBe(true);
    }
    expect(events).toHaveLength(6);
  });

  it("locks the target of a symlinked file, next to the target", async () => {
    const dir = tempDir();
    const store = tempDir();
    const target = writeText(join(store, "config.yaml"), "");
    await fsp.symlink(target, join(dir, "config.yaml"));
    await withFileLock(join(dir, "config.yaml"), async () => {
      expect(existsSync(`${target}.lock`)).toBe(true);
      expect(existsSync(join(dir, "config.yaml.lock"))).toBe(false);
    });
  });

  it("breaks a stale lock whose pid is dead on this host", async () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    await writeLock(`${file}.lock`, { pid: deadPid(), host: hostname() });
    const t0 = Date.now();
    expect(await withFileLock(file, async () => "got it", { timeoutMs: 2_000 })).toBe("got it");
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it(
    "a lock held by a live process times out with " + "E_FS_LOCK_TIMEOUT naming the holder, and is left in " + "place",
    async () => {
      const dir = tempDir();
      const file = join(dir, "config.yaml");
      await writeLock(`${file}.lock`, { pid: process.pid, host: hostname() });
      const t0 = Date.now();
      let ran = false;
      const e = await rejection(() =>
        withFileLock(
          file,
          async () => {
            ran = true;
          },
          { timeoutMs: 150 },
        ),
      );
      expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(ran).toBe(false);
      expect(e.code).toBe("E_FS_LOCK_TIMEOUT");
      expect(e.file).toBe(`${file}.lock`);
      expect(e.message).toContain(`pid ${process.pid}`);
      expect(existsSync(`${file}.lock`)).toBe(true);
    },
  );

  it("a dead pid on another host is not ours to judge: it is waited for", async () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    await writeLock(`${file}.lock`, { pid: deadPid(), host: `${hostname()}-elsewhere` });
    expect(await rejection(() => withFileLock(file, async () => undefined, { timeoutMs: 100 }))).toMatchObject({
      code: "E_FS_LOCK_TIMEOUT",
    });
  });

  it("an unreadable (torn) lock file is waited for while fresh and broken once old", async () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    writeText(`${file}.lock`, "{not json");
    expect(await rejection(() => withFileLock(file, async () => undefined, { timeoutMs: 100 }))).toMatchObject({
      code: "E_FS_LOCK_TIMEOUT",
    });
    const old = new Date(Date.now() - 60_000);
    await fsp.utimes(`${file}.lock`, old, old);
    expect(await withFileLock(file, async () => "ok", { timeoutMs: 1_000 })).toBe("ok");
  });

  it("waits for a live holder that lets go", async () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    await writeLock(`${file}.lock`, { pid: process.pid, host: hostname() });
    setTimeout(() => void fsp.rm(`${file}.lock`), 100);
    expect(await withFileLock(file, async () => "after", { timeoutMs: 3_000 })).toBe("after");
  });
});

describe("editConfig under the lock", () => {
  it("two concurrent editConfig calls both land", async () => {
    const dir = tempDir();
    const file = writeText(join(dir, "config.yaml"), "# keep\nplugins:\n  enabled: []\n");
    const add = (v: string) =>
      editConfig(file, async (cur) => {
        await sleep(20); // widen the read-modify-write window
        return (cur.value.plugins as { enabled: string[] }).enabled.includes(v)
          ? []
          : [{ op: "append", path: ["plugins", "enabled"], value: v }];
      });
    const [a, b] = await Promise.all([add("alpha"), add("beta")]);
    expect(a.changed && b.changed).toBe(true);
    expect(new Set((await enabledOf(file)) as string[])).toEqual(new Set(["alpha", "beta"]));
    expect((await fsp.readFile(file, "utf8")).startsWith("# keep\n")).toBe(true);
    expect((await fsp.readdir(dir)).sort()).toEqual(["config.yaml"]);
  });

  it("ten concurrent enables all land", async () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    const names = Array.from({ length: 10 }, (_, i) => `p${i}`);
    await Promise.all(names.map((n) => enablePlugin(file, { key: n, name: n })));
    expect([...((await enabledOf(file)) as string[])].sort()).toEqual(names.sort());
  });

  it("edits from several processes all land", async () => {
    const dir = tempDir();
    const file = writeText(join(dir, "config.yaml"), "plugins:\n  enabled: []\n");
    const distEnable = fileURLToPath(new URL("../../dist/config/enable.js", import.meta.url));
    expect(existsSync(distEnable), "dist/ is built by test/global-setup.ts").toBe(true);
    const script =
      `import { enablePlugin } from ${JSON.stringify(distEnable)};
      for (let i = 0; i < 5; i++) await ` +
      "enablePlugin(process.argv[1], { key: process.argv[2] + i, name: process.argv[2] + i });";
    const run = (prefix: string) =>
      new Promise<number>((resolve, reject) => {
        const child = spawn(process.execPath, ["--input-type=module", "-e", script, file, prefix], {
          stdio: ["ignore", "ignore", "inherit"],
        });
        child.on("error", reject);
        child.on("exit", (code) => resolve(code ?? -1));
      });
    expect(await Promise.all([run("a"), run("b"), run("c")])).toEqual([0, 0, 0]);
    const expected = ["a", "b", "c"].flatMap((p) => [0, 1, 2, 3, 4].map((i) => `${p}${i}`)).sort();
    expect([...((await enabledOf(file)) as string[])].sort()).toEqual(expected);
    expect((await fsp.readdir(dir)).sort()).toEqual(["config.yaml"]);
  });
});
