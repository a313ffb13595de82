/**
 * Plugin folders for the discovery tests (and the config, manifest and core tests that need them):
 * a sandbox with every plugin root, plugins written from a spec, npm packages. Temp folders come
 * from test/support/home.ts; call cleanupTemp() from afterEach.
 */
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { tempDir, writeText } from "../support/home.js";

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
  if (entry !== null) writeText(join(dir, entry), spec.entrySource ?? "export function register(ctx) {}\n");
  for (const [rel2, text] of Object.entries(spec.files ?? {})) writeText(join(dir, rel2), text);
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
  const root = tempDir("hk-unit-");
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
  writeText(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  if (plugin.spec) await writePlugin(dir, plugin.at ?? ".", plugin.spec);
  return dir;
}
