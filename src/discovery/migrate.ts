import { homePaths, PACKAGE_ROOT } from "../core/paths.js";
import { join, resolve } from "node:path";
import { promises as fsp } from "node:fs";
import { resolveWinners } from "./precedence.js";
import { BUNDLED_SKIP, scanRoot } from "./scan.js";
import { logger } from "../core/log.js";
import type { YamlEdit } from "../core/yaml-edit.js";
import type { ConfigValue, LoadedConfig } from "../config/config-file.js";
import { ownershipOf, readManaged } from "../config/managed.js";
import { readPluginLists } from "../config/plugin-lists.js";

/**
 * Top-level user plugins to grandfather (they loaded before plugins.enabled existed), named as discovery keys them
 * (a `nix-managed-x` link without a name is `x`). A user plugin that takes a bundled key from a
 * differently named folder is an impostor: grandfathering it would switch the bundled one on.
 */
export async function grandfatheredNames(
  home: string,
  disabled: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<string[]> {
  const user = await scanRoot(homePaths(home).plugins, "user");
  const bundledDir = resolve(env.HERMES_BUNDLED_PLUGINS?.trim() || join(PACKAGE_ROOT, "plugins"));
  const bundled = await scanRoot(bundledDir, "bundled", { skipTop: BUNDLED_SKIP });
  const topLevel = user.candidates.filter((c) => c.category === undefined && c.manifestFile);
  const { shadowed } = resolveWinners([...bundled.candidates, ...topLevel]);
  const impostors = new Set(shadowed.filter((s) => s.reason === "impostor").map((s) => s.candidate));
  const out: string[] = [];
  for (const c of topLevel) {
    if (impostors.has(c) || disabled.includes(c.name) || disabled.includes(c.key) || out.includes(c.name)) continue;
    out.push(c.name);
  }
  return out;
}

/** The config schema version this kit writes: the original's v21 made plugins opt-in (`plugins.enabled`). */
export const CONFIG_VERSION = 21;

/** `_config_version` as the original reads it: missing, a boolean or not a number is 0 (older than every version). */
export function configVersion(config: ConfigValue): number {
  const v = config._config_version;
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*[+-]?\d+\s*$/.test(v) ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? Math.max(Math.trunc(n), 0) : 0;
}

export interface MigrationPlan {
  edits: YamlEdit[];
  /** The plugins grandfathered into `plugins.enabled`. */
  names: string[];
  /** Whether the v21 step writes `plugins.enabled` (what is announced); a version stamp alone is not. */
  grandfathers: boolean;
}

/**
 * What the migrations would write into `cur`, as the original decides: a home without config.yaml is new
 * (current already, so nothing is grandfathered: its new config only gets `_config_version`); a config
 * older than v21 (no `_config_version`) without `plugins.enabled` gets the list and the version stamp; one
 * that has the list already is not rewritten (nothing to migrate, and the list keeps later runs from it).
 */
export async function planMigration(
  home: string,
  cur: Pick<LoadedConfig, "value" | "exists">,
  env: NodeJS.ProcessEnv = process.env,
): Promise<MigrationPlan> {
  const none: MigrationPlan = { edits: [], names: [], grandfathers: false };
  const plugins = cur.value.plugins;
  // A `plugins:` that is not a mapping is the user's to fix (config validate says so); never overwrite it.
  if (plugins !== undefined && plugins !== null && (typeof plugins !== "object" || Array.isArray(plugins))) return none;
  if (cur.exists && configVersion(cur.value) >= CONFIG_VERSION) return none;
  // A deployment that sets `_config_version` decides it; the kit does not stamp over it.
  const stamp: YamlEdit[] = (await deploymentOwnsVersion(home))
    ? []
    : [{ op: "set", path: ["_config_version"], value: CONFIG_VERSION }];
  const lists = readPluginLists(cur.value);
  // A new config starts current; an older one that already has the list has nothing to migrate, so it is left as is.
  if (!cur.exists) return { ...none, edits: stamp };
  if (lists.enabledPresent) return none;
  const names = await grandfatheredNames(home, lists.disabled, env);
  return { edits: [{ op: "set", path: ["plugins", "enabled"], value: names }, ...stamp], names, grandfathers: true };
}

/** Whether a managed home's deployment owns `_config_version` (as its lock records). */
async function deploymentOwnsVersion(home: string): Promise<boolean> {
  const paths = homePaths(home);
  if (!(await readManaged(paths))) return false;
  // Loaded only for a managed home: the lock contract brings the schema checker and the hook catalog.
  const { readLock } = await import("../contracts/lock.js");
  const lock = await readLock(paths.lock).catch(() => undefined);
  return ownershipOf(lock?.deployment).leaves.some((l) => l.length === 1 && l[0] === "_config_version");
}

/** The one line every migration prints on stderr (a dry run says what it would do). */
export function migrationNotice(names: readonly string[], dryRun = false): string {
  const what = names.length
    ? `${names.length} installed user plugin(s) into plugins.enabled: ${names.join(", ")}`
    : "no installed user plugins; plugins.enabled is written as an empty list";
  return `${dryRun ? "Would grandfather" : "Grandfathered"} ${what} (one-time migration: plugins.enabled was absent)`;
}

/**
 * The v21 migration: in a config older than v21 without `plugins.enabled`, the user plugins already
 * installed keep loading (they are written to the allow-list); bundled ones are never grandfathered.
 * It runs once: the config is stamped `_config_version: 21`, so later installs stay opt-in (install
 * runs it before placing). A brand-new home (no config.yaml) only gets the stamp: a plugin dropped
 * into it is never grandfathered. Every run that grandfathers is announced (`announce`, default: a
 * warning on stderr). Written through editConfig: locked, atomic, comments kept.
 */
export async function migrateEnabledList(
  home: string,
  env: NodeJS.ProcessEnv = process.env,
  announce: (line: string) => void = (line) => logger().warn(line),
): Promise<{ migrated: boolean; names: string[]; config?: LoadedConfig }> {
  let names: string[] = [];
  // A home that does not exist yet has nothing to grandfather; creating it here would be a surprise.
  if (
    !(await fsp.stat(home).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return { migrated: false, names };
  let grandfathers = false;
  // Loaded here: a read-only command plans the migration without the YAML editor.
  const { editConfig } = await import("../config/config-file.js");
  const res = await editConfig(homePaths(home).config, async (cur) => {
    const m = await planMigration(home, cur, env);
    ({ names, grandfathers } = m);
    return m.edits;
  });
  const migrated = res.changed && grandfathers;
  if (migrated) announce(migrationNotice(names));
  else names = [];
  // The config as it now is, parsed: compile plans from it instead of parsing the same bytes again.
  return { migrated, names, config: res.after };
}
