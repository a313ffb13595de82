import { compile, type CompileResult } from "../compile/compile.js";
import { editConfig } from "../config/config-file.js";
import type { OwnershipGuard } from "../config/enable.js";
import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import type { YamlEdit } from "../core/yaml-edit.js";
import type { Io } from "../consent/flow.js";
import { locateInstalled } from "./locate.js";
import { readMetadata } from "./metadata.js";
import { commitStage, createStage, discardStage, recoverInterrupted } from "./stage.js";

export interface RemoveOptions {
  paths: HomePaths;
  name: string;
  io: Io;
  guard?: OwnershipGuard;
  env?: NodeJS.ProcessEnv;
}

export interface RemoveResult {
  name: string;
  key: string;
  dir: string;
  /** Config paths that were purged. */
  purged: string[];
  /** Items the deployment owns, left in place. */
  kept: string[];
  compile?: CompileResult;
}

/**
 * Forget everything config.yaml says about a plugin: its enable state, its place in
 * `plugins.order`, and `plugins.entries.<key>` with its grants (a reinstall, or another plugin
 * under the same key, must be asked again).
 */
export async function purgePluginConfig(
  configFile: string,
  names: readonly string[],
  key: string,
  guard?: OwnershipGuard,
): Promise<{ purged: string[]; kept: string[] }> {
  const purged: string[] = [];
  const kept: string[] = [];
  const owned = (path: string[], item?: string) => {
    if (!guard) return false;
    try {
      guard(path, item);
      return false;
    } catch (e) {
      if (e instanceof HermesError && e.code === "E_CONFIG_MANAGED_KEY") return true;
      throw e;
    }
  };
  const drop = new Set(names);
  await editConfig(configFile, (cur) => {
    const edits: YamlEdit[] = [];
    const plugins = cur.value.plugins;
    if (!plugins || typeof plugins !== "object" || Array.isArray(plugins)) return edits;
    const p = plugins as Record<string, unknown>;
    for (const list of ["enabled", "disabled", "order"] as const) {
      const v = p[list];
      if (!Array.isArray(v)) continue;
      const hits = v.filter((x): x is string => typeof x === "string" && drop.has(x));
      const removable = hits.filter((h) => {
        if (owned(["plugins", list], h)) {
          kept.push(`plugins.${list}: ${h}`);
          return false;
        }
        return true;
      });
      if (removable.length) {
        edits.push({
          op: "remove",
          path: ["plugins", list],
          match: (x) => typeof x === "string" && removable.includes(x),
        });
        for (const h of removable) purged.push(`plugins.${list}: ${h}`);
      }
    }
    const entries = p.entries;
    if (entries && typeof entries === "object" && !Array.isArray(entries)) {
      for (const k of new Set([key, ...names])) {
        if (!Object.prototype.hasOwnProperty.call(entries, k)) continue;
        if (owned(["plugins", "entries", k])) {
          kept.push(`plugins.entries.${k}`);
          continue;
        }
        edits.push({ op: "delete", path: ["plugins", "entries", k] });
        purged.push(`plugins.entries.${k}`);
      }
    }
    return edits;
  });
  return { purged, kept };
}

/** `hermes plugins remove|rm|uninstall <name>`: the folder, its metadata and its config (grants included). */
export async function removePlugin(o: RemoveOptions): Promise<RemoveResult> {
  const { paths, io } = o;
  for (const note of await recoverInterrupted(paths)) io.warn(`note: ${note}`);
  const found = await locateInstalled(paths, o.name);
  const meta = await readMetadata(paths.installMetadata);
  const hasRecord = Object.prototype.hasOwnProperty.call(meta, found.rel);
  // Config first: if the tree cannot be removed afterwards, the plugin is left off and ungranted (fail closed).
  const { purged, kept } = await purgePluginConfig(
    paths.config,
    [found.key, found.name, found.rel],
    found.key,
    o.guard,
  );
  const stage = await createStage(paths, "remove", found.rel);
  try {
    await commitStage(paths, stage, hasRecord ? null : undefined, { expectTarget: true });
  } catch (e) {
    if (e instanceof HermesError) throw e;
    throw new HermesError("E_REMOVE_FAILED", {
      message: `could not remove plugin '${found.rel}': ${(e as Error).message}`,
      cause: e,
    });
  } finally {
    await discardStage(stage).catch(() => undefined);
  }
  io.out(`✗ Plugin ${found.rel} removed from ${paths.plugins}`);
  if (purged.length) io.out(`  Purged from config.yaml: ${purged.join("; ")}`);
  if (kept.length) io.warn(`  Kept (set by the deployment): ${kept.join("; ")}`);
  const compiled = await compile({ home: paths.home, env: o.env });
  if (compiled.applied) io.out(`lock updated: generation ${compiled.generation}`);
  return { name: found.rel, key: found.key, dir: found.dir, purged, kept, compile: compiled };
}
