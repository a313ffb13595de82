import type { Command } from "commander";
import { HermesError, isHermesError, type Diagnostic } from "../core/errors.js";
import { logger } from "../core/log.js";
import { homePaths, resolveHome, type HomePaths } from "../core/paths.js";
import { loadConfig, parseConfigText, type LoadedConfig } from "../config/config-file.js";
import { migrateEnabledList, planMigration } from "../discovery/migrate.js";
import { applyYamlEdits } from "../core/yaml-edit.js";
import { promises as fsp } from "node:fs";
import { assertNotOwned, readManaged } from "../config/managed.js";
import type { OwnershipGuard } from "../config/enable.js";
import { readLock } from "../contracts/lock.js";
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

/**
 * A read-only command never creates a home. One named by `--home` that does not exist is a typo
 * (an error); `explicitOnly` lets a command show the default or $HERMES_HOME home as brand new instead.
 */
export async function assertHomeExists(paths: HomePaths, cmd?: Command, explicitOnly = false): Promise<void> {
  if (await fsp.stat(paths.home).then((s) => s.isDirectory(), () => false)) return;
  if (explicitOnly && !cmd?.optsWithGlobals<GlobalOptions>().home) return;
  throw new HermesError("E_HOME_NOT_FOUND", { message: `${paths.home} does not exist` });
}

/**
 * Config plus discovery: what every `plugins` command reads. An editing command runs the one-time
 * v21 migration first; a read-only one (`readOnly`) never writes: it shows the state as the
 * migration would leave it, and refuses a home that does not exist.
 */
export async function pluginState(cmd: Command, opts: { bundled?: boolean; readOnly?: boolean } = {}): Promise<PluginState> {
  const paths = homeOf(cmd);
  if (opts.readOnly) await assertHomeExists(paths, cmd, true);
  await recoverPluginsDir(paths);
  if (!opts.readOnly) {
    try {
      await migrateEnabledList(paths.home, process.env, (line) => err(line));
    } catch (e) {
      // An unparsable config is reported below; the edit commands refuse it too.
      logger().debug({ err: isHermesError(e) ? e.message : String(e) }, "plugins.enabled migration skipped");
    }
  }
  let config = await loadConfig(paths.config);
  // Every plugin would read as "not enabled": refuse rather than show a wrong answer.
  const fatal = config.diagnostics.find((d) => d.code === "E_YAML_PARSE" || d.code === "E_CONFIG_NOT_MAPPING");
  if (fatal) throw new HermesError(fatal.code, { message: `${paths.config} cannot be read, so no enable state is known: ${fatal.message}`, file: fatal.file, line: fatal.line, col: fatal.col });
  if (opts.readOnly) {
    const m = await planMigration(paths.home, config, process.env);
    if (m.edits.length) config = parseConfigText(applyYamlEdits(config.text, m.edits), paths.config);
  }
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
