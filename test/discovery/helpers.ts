/**
 * Shared fixtures for the unit tests: real temporary folders, real plugin folders, real configs.
 * Every folder made here is removed by `cleanupTmp()` (call it from `afterEach`).
 */
import { promises as fsp } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { stringify } from "yaml";

const made: string[] = [];

/** A fresh folder under the OS temp dir, with links resolved (macOS /var → /private/var). */
export async function makeTmp(prefix = "hk-unit-"): Promise<string> {
  const dir = await fsp.realpath(await fsp.mkdtemp(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

export async function cleanupTmp(): Promise<void> {
  for (const dir of made.splice(0)) {
    // A test may leave a folder unreadable; give permissions back before removing.
    await restoreModes(dir).catch(() => undefined);
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

async function restoreModes(dir: string): Promise<void> {
  await fsp.chmod(dir, 0o755).catch(() => undefined);
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await restoreModes(join(dir, e.name));
}

export async function writeFile(file: string, text: string): Promise<string> {
  await fsp.mkdir(dirname(file), { recursive: true });
  await fsp.writeFile(file, text);
  return file;
}

export interface PluginSpec {
  /** Manifest content: an object (dumped as YAML), raw text, or null for no manifest file at all. */
  manifest?: Record<string, unknown> | string | null;
  /** Manifest file name; plugin.yaml unless told. */
  manifestFile?: "plugin.yaml" | "plugin.yml";
  /** Entry file name (default index.js); null for none. */
  entry?: string | null;
  /** Entry file text. */
  entrySource?: string;
  /** Extra files, relative to the plugin folder. */
  files?: Record<string, string>;
}

/** Create `<root>/<rel>` as a plugin folder; returns its path. */
export async function writePlugin(root: string, rel: string, spec: PluginSpec = {}): Promise<string> {
  const dir = join(root, rel);
  await fsp.mkdir(dir, { recursive: true });
  const manifest = spec.manifest === undefined ? {} : spec.manifest;
  if (manifest !== null) {
    const text = typeof manifest === "string" ? manifest : Object.keys(manifest).length ? stringify(manifest) : "";
    await fsp.writeFile(join(dir, spec.manifestFile ?? "plugin.yaml"), text);
  }
  const entry = spec.entry === undefined ? "index.js" : spec.entry;
  if (entry !== null) await writeFile(join(dir, entry), spec.entrySource ?? "export function register(ctx) {}\n");
  for (const [rel2, text] of Object.entries(spec.files ?? {})) await writeFile(join(dir, rel2), text);
  return dir;
}

export interface Sandbox {
  /** Temp root holding everything below. */
  root: string;
  /** HERMES_HOME (`<root>/home`), with `plugins/` created. */
  home: string;
  /** `<home>/plugins`. */
  userPlugins: string;
  /** The bundled root, used through HERMES_BUNDLED_PLUGINS. */
  bundled: string;
  /** A working directory for project plugins (`<cwd>/.hermes/plugins`). */
  cwd: string;
  projectPlugins: string;
  /** `<home>/node_modules`. */
  nodeModules: string;
  /** `<home>/config.yaml`. */
  configFile: string;
  /** An explicit environment: bundled root set, project plugins off. */
  env: NodeJS.ProcessEnv;
}

export async function makeSandbox(): Promise<Sandbox> {
  const root = await makeTmp();
  const home = join(root, "home");
  const sb: Sandbox = {
    root,
    home,
    userPlugins: join(home, "plugins"),
    bundled: join(root, "bundled"),
    cwd: join(root, "project"),
    projectPlugins: join(root, "project", ".hermes", "plugins"),
    nodeModules: join(home, "node_modules"),
    configFile: join(home, "config.yaml"),
    env: {},
  };
  sb.env = { HERMES_BUNDLED_PLUGINS: sb.bundled };
  for (const d of [sb.userPlugins, sb.bundled, sb.projectPlugins]) await fsp.mkdir(d, { recursive: true });
  return sb;
}

/** An npm package under `<nodeModules>/<name>` (name may be `@scope/pkg`). */
export async function writeNpmPackage(
  nodeModules: string,
  name: string,
  hermesPlugin: unknown,
  plugin: { at?: string; spec?: PluginSpec } = {},
): Promise<string> {
  const dir = join(nodeModules, name);
  const pkg: Record<string, unknown> = { name, version: "1.0.0" };
  if (hermesPlugin !== undefined) pkg["hermes-plugin"] = hermesPlugin;
  await writeFile(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  if (plugin.spec) await writePlugin(dir, plugin.at ?? ".", plugin.spec);
  return dir;
}

/** Identity of a file's bytes on disk: an atomic rewrite changes the inode, any write the mtime. */
export async function fileStamp(file: string): Promise<{ ino: number; mtimeMs: number; text: string }> {
  const st = await fsp.stat(file);
  return { ino: st.ino, mtimeMs: st.mtimeMs, text: await fsp.readFile(file, "utf8") };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Run `fn`, expect it to reject, return the error. */
export async function rejection(fn: () => Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await fn();
  } catch (e) {
    return e as Error & Record<string, unknown>;
  }
  throw new Error("expected a rejection, but the call resolved");
}

/** Run `fn`, expect it to throw synchronously, return the error. */
export function thrown(fn: () => unknown): Error & Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    return e as Error & Record<string, unknown>;
  }
  throw new Error("expected a throw, but the call returned");
}

/** Whether this process can be denied a read by file permissions (root cannot). */
export const permissionsEnforced = typeof process.getuid === "function" && process.getuid() !== 0;
