import { homePaths, PACKAGE_ROOT } from "../core/paths.js";
import { join, resolve } from "node:path";
import { promises as fsp } from "node:fs";
import { resolveWinners } from "./precedence.js";
import { BUNDLED_SKIP, scanRoot } from "./scan.js";
import { logger } from "../core/log.js";
import type { YamlEdit } from "../core/yaml-edit.js";
import { editConfig, type LoadedConfig } from "../config/config-file.js";
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

/** What the v21 migration would write into `cur`: nothing when `plugins.enabled` exists. */
export async function planMigration(
  home: string,
  cur: LoadedConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ edits: YamlEdit[]; names: string[] }> {
  const lists = readPluginLists(cur.value);
  const plugins = cur.value.plugins;
  // A `plugins:` that is not a mapping is the user's to fix (config validate says so); never overwrite it.
  if (plugins !== undefined && plugins !== null && (typeof plugins !== "object" || Array.isArray(plugins)))
    return { edits: [], names: [] };
  if (lists.enabledPresent) return { edits: [], names: [] };
  const names = await grandfatheredNames(home, lists.disabled, env);
  return { edits: [{ op: "set", path: ["plugins", "enabled"], value: names }], names };
}

/** The one line every migration prints on stderr (a dry run says what it would do). */
export function migrationNotice(names: readonly string[], dryRun = false): string {
  const what = names.length
    ? `${names.length} installed user plugin(s) into plugins.enabled: ${names.join(", ")}`
    : "no installed user plugins; plugins.enabled is written as an empty list";
  return `${dryRun ? "Would grandfather" : "Grandfathered"} ${what} (one-time migration: plugins.enabled was absent)`;
}

/**
 * The v21 migration: when `plugins.enabled` is absent, the user plugins already installed keep
 * loading (they are written to the allow-list); bundled ones are never grandfathered. It runs
 * once: afterwards the key exists, so later installs stay opt-in (install runs it before placing).
 * Every run that writes is announced (`announce`, default: a warning on stderr).
 */
export async function migrateEnabledList(
  home: string,
  env: NodeJS.ProcessEnv = process.env,
  announce: (line: string) => void = (line) => logger().warn(line),
): Promise<{ migrated: boolean; names: string[] }> {
  let names: string[] = [];
  // A home that does not exist yet has nothing to grandfather; creating it here would be a surprise.
  if (
    !(await fsp.stat(home).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return { migrated: false, names };
  const res = await editConfig(homePaths(home).config, async (cur) => {
    const m = await planMigration(home, cur, env);
    names = m.names;
    return m.edits;
  });
  if (res.changed) announce(migrationNotice(names));
  return { migrated: res.changed, names };
}
