import type { Command } from "commander";
import { isHermesError, type Diagnostic } from "../core/errors.js";
import { logger } from "../core/log.js";
import { homePaths, resolveHome, type HomePaths } from "../core/paths.js";
import { loadConfig, type LoadedConfig } from "../config/config-file.js";
import { migrateEnabledList } from "../config/migrate.js";
import { assertNotOwned, readManaged } from "../config/managed.js";
import type { OwnershipGuard } from "../config/enable.js";
import { readLock } from "../compile/lock.js";
import { loadPluginSet, type PluginSet } from "../discovery/plugin-set.js";
import { recoverInterrupted } from "../install/stage.js";
import { err } from "./output.js";

export interface GlobalOptions {
  home?: string;
  profile?: string;
}

/**
 * Roll back an install, update or remove that a killed process left half-placed, before
 * anything reads the plugins dir: every `plugins` command, compile, and each runtime start.
 */
export async function recoverPluginsDir(paths: HomePaths): Promise<void> {
  for (const note of await recoverInterrupted(paths).catch(() => [] as string[])) err(`note: ${note}`);
}

export function homeOf(cmd: Command): HomePaths {
  const g = cmd.optsWithGlobals<GlobalOptions>();
  return homePaths(resolveHome({ home: g.home, profile: g.profile }));
}

export interface PluginState {
  paths: HomePaths;
  config: LoadedConfig;
  set: PluginSet;
}

/** Config (after the one-time v21 migration) plus discovery: what every `plugins` command reads. */
export async function pluginState(cmd: Command, opts: { bundled?: boolean } = {}): Promise<PluginState> {
  const paths = homeOf(cmd);
  await recoverPluginsDir(paths);
  try {
    await migrateEnabledList(paths.home, process.env, (line) => err(line));
  } catch (e) {
    // A read-only or unparsable config must not stop read-only commands; the edit commands report it.
    logger().debug({ err: isHermesError(e) ? e.message : String(e) }, "plugins.enabled migration skipped");
  }
  const config = await loadConfig(paths.config);
  const set = await loadPluginSet({ home: paths.home, config: config.value, configFile: config.file, bundled: opts.bundled });
  return { paths, config, set };
}

/** Warnings about the config itself are shown once per command, never fatal for read commands. */
export function reportConfigProblems(ds: readonly Diagnostic[]): void {
  const errors = ds.filter((d) => d.severity === "error");
  if (errors.length) err(`warning: ${errors.length} problem(s) in config.yaml; run \`hermes config validate\` for details`);
}

/** In a managed home, refuse edits of what the deployment owns (as recorded in the lock). */
export async function ownershipGuard(paths: HomePaths): Promise<OwnershipGuard> {
  const marker = await readManaged(paths);
  if (!marker) return () => undefined;
  const lock = await readLock(paths.lock).catch(() => undefined);
  const owned = { leaves: lock?.deployment.owned_leaves ?? [], items: lock?.deployment.owned_items ?? {} };
  return (path, item) => assertNotOwned(marker.kind, owned, path, item);
}
