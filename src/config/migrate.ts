import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { homePaths } from "../core/paths.js";
import { editConfig } from "./config-file.js";
import { readPluginLists } from "./plugin-lists.js";

async function manifestName(dir: string, fallback: string): Promise<string> {
  for (const f of ["plugin.yaml", "plugin.yml"]) {
    let text: string;
    try {
      text = await fsp.readFile(join(dir, f), "utf8");
    } catch {
      continue;
    }
    try {
      const v = parse(text) as { name?: unknown } | null;
      return typeof v?.name === "string" && v.name.trim() ? v.name.trim() : fallback;
    } catch {
      return fallback;
    }
  }
  return "";
}

/** Top-level user plugins to grandfather (runtime spec §3.3): sorted, folders with a manifest. */
export async function grandfatheredNames(home: string, disabled: readonly string[]): Promise<string[]> {
  const dir = homePaths(home).plugins;
  try {
    const names = (await fsp.readdir(dir)).sort();
    const out: string[] = [];
    for (const n of names) {
      if (n.startsWith(".")) continue;
      const st = await fsp.stat(join(dir, n)).catch(() => undefined);
      if (!st?.isDirectory()) continue;
      const name = await manifestName(join(dir, n), n);
      if (name && !disabled.includes(name) && !out.includes(name)) out.push(name);
    }
    return out;
  } catch {
    return [];
  }
}

/**
 * The v21 migration: when `plugins.enabled` is absent, the user plugins already installed keep
 * loading (they are written to the allow-list); bundled ones are never grandfathered. It runs
 * once: afterwards the key exists, so later installs stay opt-in (install runs it before placing).
 */
export async function migrateEnabledList(home: string): Promise<{ migrated: boolean; names: string[] }> {
  let names: string[] = [];
  // A home that does not exist yet has nothing to grandfather; creating it here would be a surprise.
  if (!(await fsp.stat(home).then((s) => s.isDirectory(), () => false))) return { migrated: false, names };
  const res = await editConfig(homePaths(home).config, async (cur) => {
    const lists = readPluginLists(cur.value);
    if (lists.enabledPresent) return [];
    names = await grandfatheredNames(home, lists.disabled);
    return [{ op: "set", path: ["plugins", "enabled"], value: names }];
  });
  return { migrated: res.changed, names };
}
