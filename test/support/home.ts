/**
 * The one temp-home helper of the tests: throw-away folders (a Scratch per test file, or tracked
 * temp dirs removed by cleanupTemp), and writers for the files a home holds. The CLI runner is
 * test/support/cli.ts.
 */
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ROOT, setSpawnUserHome } from "./cli.js";

/** Remove a tree, giving back permissions a test took away first (a non-root rm would fail on them). */
function removeTree(dir: string): void {
  const restore = (d: string) => {
    try {
      chmodSync(d, 0o755);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) restore(join(d, e.name));
    } catch {
      // Gone or not ours: rm below says so if it matters.
    }
  };
  restore(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Temp folders made by a test file under one root; call cleanup() in afterAll. */
export class Scratch {
  readonly root: string;
  constructor(prefix = "hermes-e2e-") {
    this.root = mkdtempSync(join(tmpdir(), prefix));
    const userHome = join(this.root, ".user-home");
    mkdirSync(userHome, { recursive: true });
    setSpawnUserHome(userHome);
  }

  /** A fresh, unique folder under the scratch root (created unless `create: false`). */
  dir(name: string, opts: { create?: boolean } = {}): string {
    const d = mkdtempSync(join(this.root, `${name.replace(/[^\w.-]/g, "_")}-`));
    if (opts.create === false) rmSync(d, { recursive: true, force: true });
    return d;
  }

  cleanup(): void {
    removeTree(this.root);
  }
}

const made: string[] = [];

/** A fresh folder under the OS temp dir, links resolved (macOS /var → /private/var); cleanupTemp() removes it. */
export function tempDir(prefix = "hk-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** Remove every folder tempDir() made (call it from afterEach or afterAll). */
export function cleanupTemp(): void {
  for (const dir of made.splice(0)) removeTree(dir);
}

/** Write `text` to `file`, creating its folder; returns the file. */
export function writeText(file: string, text: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** Relative path → text; null removes the path. */
export type Files = Record<string, string | null>;

export function writeFiles(dir: string, files: Files): void {
  for (const [rel, text] of Object.entries(files)) {
    const p = join(dir, rel);
    if (text === null) rmSync(p, { recursive: true, force: true });
    else writeText(p, text);
  }
}

export interface PluginFiles {
  /** plugin.yaml text (written as is). */
  manifest: string;
  /** Write index.js (default true unless python). */
  entry?: boolean;
  /** Write __init__.py instead of index.js. */
  python?: boolean;
}

/** A plugin folder with plugin.yaml and an entry. */
export function writePlugin(dir: string, files: PluginFiles | string): string {
  const f = typeof files === "string" ? { manifest: files } : files;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), f.manifest);
  if (f.python) writeFileSync(join(dir, "__init__.py"), "def register(ctx):\n    pass\n");
  else if (f.entry !== false) writeFileSync(join(dir, "index.js"), "export function register(ctx) {}\n");
  return dir;
}

/** A bundled folder holding a copy of the repo's hello-world plugin only (a controlled bundled set). */
export function bundledWithHelloWorld(scratch: Scratch): string {
  const b = scratch.dir("bundled");
  cpSync(join(ROOT, "plugins", "hello-world"), join(b, "hello-world"), { recursive: true });
  return b;
}

export function link(target: string, at: string): void {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at);
}

/** Identity of a file's bytes on disk: an atomic rewrite changes the inode, any write the mtime. */
export function fileStamp(file: string): { ino: number; mtimeMs: number; text: string } {
  const st = statSync(file);
  return { ino: st.ino, mtimeMs: st.mtimeMs, text: readFileSync(file, "utf8") };
}

/** Whether this process can be denied a read by file permissions (root cannot). */
export const permissionsEnforced = typeof process.getuid === "function" && process.getuid() !== 0;
