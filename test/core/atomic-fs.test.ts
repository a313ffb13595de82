/**
 * Atomic writes: temp file in the
 * same folder, rename, symlinked targets written through, file mode kept, nothing left behind.
 */
import { afterEach, describe, expect, it } from "vitest";
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { readTextIfExists, resolveWriteTarget, symlinkAtomic, writeFileAtomic } from "../../src/core/atomic-fs.js";
import { editConfig } from "../../src/config/config-file.js";
import { cleanupTemp, tempDir, writeText } from "../support/home.js";
import { rejection } from "../support/util.js";

afterEach(cleanupTemp);

async function listing(dir: string): Promise<string[]> {
  return (await fsp.readdir(dir)).sort();
}

describe("writeFileAtomic", () => {
  it("creates a file (and its folder) with the bytes given and mode 0644 by default", async () => {
    const dir = tempDir();
    const file = join(dir, "sub", "config.yaml");
    await writeFileAtomic(file, "a: 1\n");
    expect(await fsp.readFile(file, "utf8")).toBe("a: 1\n");
    expect((await fsp.stat(file)).mode & 0o777).toBe(0o644);
    expect(await listing(join(dir, "sub"))).toEqual(["config.yaml"]);
  });

  it("replaces the content and leaves no temp files", async () => {
    const dir = tempDir();
    const file = writeText(join(dir, "config.yaml"), "old\n");
    for (let i = 0; i < 5; i++) await writeFileAtomic(file, `new ${i}\n`);
    expect(await fsp.readFile(file, "utf8")).toBe("new 4\n");
    expect(await listing(dir)).toEqual(["config.yaml"]);
  });

  it("keeps the file mode of an existing file", async () => {
    const dir = tempDir();
    const file = writeText(join(dir, "secret.yaml"), "x\n");
    await fsp.chmod(file, 0o600);
    await writeFileAtomic(file, "y\n");
    expect((await fsp.stat(file)).mode & 0o7777).toBe(0o600);
    await fsp.chmod(file, 0o640);
    await writeFileAtomic(file, "z\n");
    expect((await fsp.stat(file)).mode & 0o7777).toBe(0o640);
  });

  it("keeps a group-writable mode even under umask 022", async () => {
    const dir = tempDir();
    const file = writeText(join(dir, "shared.yaml"), "x\n");
    await fsp.chmod(file, 0o664);
    const saved = process.umask(0o022);
    try {
      await writeFileAtomic(file, "y\n");
    } finally {
      process.umask(saved);
    }
    expect(await fsp.readFile(file, "utf8")).toBe("y\n");
    expect(((await fsp.stat(file)).mode & 0o7777).toString(8)).toBe("664");
  });

  it("an explicit mode wins", async () => {
    const dir = tempDir();
    const file = writeText(join(dir, "f"), "x\n");
    await writeFileAtomic(file, "y\n", { mode: 0o600 });
    expect((await fsp.stat(file)).mode & 0o777).toBe(0o600);
  });

  it("writes through a symlinked config to its target; the link stays a link", async () => {
    const home = tempDir();
    const dotfiles = tempDir();
    const target = writeText(join(dotfiles, "hermes", "config.yaml"), "old: 1\n");
    await fsp.chmod(target, 0o600);
    const link = join(home, "config.yaml");
    await fsp.symlink(target, link);
    await writeFileAtomic(link, "new: 2\n");
    expect((await fsp.lstat(link)).isSymbolicLink()).toBe(true);
    expect(await fsp.readlink(link)).toBe(target);
    expect(await fsp.readFile(target, "utf8")).toBe("new: 2\n");
    expect((await fsp.stat(target)).mode & 0o7777).toBe(0o600);
    expect(await listing(home)).toEqual(["config.yaml"]);
    expect(await listing(join(dotfiles, "hermes"))).toEqual(["config.yaml"]);
  });

  it("follows a chain of relative links", async () => {
    const dir = tempDir();
    const real = writeText(join(dir, "store", "real.yaml"), "a\n");
    await fsp.symlink("store/real.yaml", join(dir, "mid.yaml"));
    await fsp.symlink("mid.yaml", join(dir, "config.yaml"));
    expect(await resolveWriteTarget(join(dir, "config.yaml"))).toBe(real);
    await writeFileAtomic(join(dir, "config.yaml"), "b\n");
    expect(await fsp.readFile(real, "utf8")).toBe("b\n");
    expect((await fsp.lstat(join(dir, "mid.yaml"))).isSymbolicLink()).toBe(true);
    expect((await fsp.lstat(join(dir, "config.yaml"))).isSymbolicLink()).toBe(true);
  });

  it("a dangling link is written through: its target is created", async () => {
    const dir = tempDir();
    const target = join(dir, "elsewhere", "config.yaml");
    await fsp.symlink(target, join(dir, "config.yaml"));
    await writeFileAtomic(join(dir, "config.yaml"), "x\n");
    expect(await fsp.readFile(target, "utf8")).toBe("x\n");
    expect((await fsp.lstat(join(dir, "config.yaml"))).isSymbolicLink()).toBe(true);
  });

  it("replaceLink replaces the link itself with a regular file", async () => {
    const dir = tempDir();
    const target = writeText(join(dir, "target.yaml"), "t\n");
    const link = join(dir, "link.yaml");
    await fsp.symlink(target, link);
    await writeFileAtomic(link, "own\n", { replaceLink: true });
    expect((await fsp.lstat(link)).isSymbolicLink()).toBe(false);
    expect(await fsp.readFile(link, "utf8")).toBe("own\n");
    expect(await fsp.readFile(target, "utf8")).toBe("t\n");
  });

  it("a symlink loop is refused with E_FS_WRITE", async () => {
    const dir = tempDir();
    await fsp.symlink(join(dir, "b"), join(dir, "a"));
    await fsp.symlink(join(dir, "a"), join(dir, "b"));
    expect(await rejection(() => writeFileAtomic(join(dir, "a"), "x"))).toMatchObject({ code: "E_FS_WRITE" });
  });

  it("a failed write leaves the old file and no temp file", async () => {
    const dir = tempDir();
    // The target path is a folder: rename over it fails after the temp file was written.
    await fsp.mkdir(join(dir, "config.yaml"));
    writeText(join(dir, "config.yaml", "inner"), "keep\n");
    const e = await rejection(() => writeFileAtomic(join(dir, "config.yaml"), "x\n"));
    expect(e.code).toBe("E_FS_WRITE");
    expect(await listing(dir)).toEqual(["config.yaml"]);
    expect(await fsp.readFile(join(dir, "config.yaml", "inner"), "utf8")).toBe("keep\n");
  });

  it("editConfig writes through a symlinked config.yaml and keeps its mode", async () => {
    const home = tempDir();
    const store = tempDir();
    const target = writeText(join(store, "config.yaml"), "# managed by me\nplugins:\n  enabled: []\n");
    await fsp.chmod(target, 0o640);
    await fsp.symlink(target, join(home, "config.yaml"));
    const r = await editConfig(join(home, "config.yaml"), () => [
      { op: "append", path: ["plugins", "enabled"], value: "x" },
    ]);
    expect(r.changed).toBe(true);
    expect((await fsp.lstat(join(home, "config.yaml"))).isSymbolicLink()).toBe(true);
    const text = await fsp.readFile(target, "utf8");
    expect(text.startsWith("# managed by me\nplugins:\n")).toBe(true);
    expect(parse(text)).toEqual({ plugins: { enabled: ["x"] } });
    expect((await fsp.stat(target)).mode & 0o7777).toBe(0o640);
    expect(await listing(home)).toEqual(["config.yaml"]);
    expect(await listing(store)).toEqual(["config.yaml"]);
  });
});

describe("writeFileAtomic run by root in a user's folder", () => {
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

  it.skipIf(!asRoot)(
    "concurrent writes into a new folder: the folder and every file take the user's owner",
    async () => {
      for (let round = 0; round < 200; round++) {
        const home = tempDir();
        await fsp.chown(home, 1234, 1234);
        const files = ["a", "b", "c", "d", "e", "f", "g", "h"].map((n) => join(home, "cache", n));
        await Promise.all(files.map((f) => writeFileAtomic(f, "x")));
        const owners = await Promise.all([join(home, "cache"), ...files].map(async (p) => (await fsp.stat(p)).uid));
        expect(owners, `round ${round}`).toEqual(owners.map(() => 1234));
      }
    },
  );
});

describe("symlinkAtomic and readTextIfExists", () => {
  it("points a link at a new target, replacing an old link, without temp files", async () => {
    const dir = tempDir();
    writeText(join(dir, "a", "x"), "a");
    writeText(join(dir, "b", "x"), "b");
    const link = join(dir, "link");
    await symlinkAtomic(join(dir, "a"), link);
    expect(await fsp.readFile(join(link, "x"), "utf8")).toBe("a");
    await symlinkAtomic(join(dir, "b"), link);
    expect(await fsp.readlink(link)).toBe(join(dir, "b"));
    expect(await fsp.readFile(join(link, "x"), "utf8")).toBe("b");
    expect(await listing(dir)).toEqual(["a", "b", "link"]);
  });

  it("readTextIfExists: undefined for a missing file, the text otherwise, E_FS_READ for a folder", async () => {
    const dir = tempDir();
    expect(await readTextIfExists(join(dir, "nope"))).toBeUndefined();
    expect(await readTextIfExists(writeText(join(dir, "f"), "hi"))).toBe("hi");
    expect(await rejection(() => readTextIfExists(dir))).toMatchObject({ code: "E_FS_READ" });
  });
});
