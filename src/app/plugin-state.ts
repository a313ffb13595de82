import { HermesError, isHermesError } from "../core/errors.js";
import { logger } from "../core/log.js";
import type { HomePaths } from "../core/paths.js";
import { ConfigCache, unreadableConfig, type ConfigRead } from "../config/config-cache.js";
import type { OwnershipGuard } from "../config/enable.js";
import { assertNotOwned, ownershipOf, readManaged } from "../config/managed.js";
import { migrateEnabledList, planMigration } from "../discovery/migrate.js";
import { loadPluginSet, type PluginSet } from "../discovery/plugin-set.js";
import { ManifestCache } from "../manifest/parse-cache.js";
import { recoverPluginsDir } from "./recover.js";
import { assertHomeExists } from "./home-exists.js";

export interface PluginState {
  paths: HomePaths;
  config: ConfigRead;
  set: PluginSet;
}

export interface PluginStateOptions {
  paths: HomePaths;
  /** Also discover the bundled plugins (the default). */
  bundled?: boolean;
  /** Never write: show the state as the v21 migration would leave it, and refuse a missing `--home`. */
  readOnly?: boolean;
  /** The home was named by `--home` (a missing one is then a typo, not a brand new home). */
  explicitHome?: boolean;
  /** Notes about recovered installs and the migration, for stderr. */
  warn: (line: string) => void;
}

/**
 * Config plus discovery: what every `plugins` command reads. An editing command runs the one-time
 * v21 migration first; a read-only one (`readOnly`) never writes: it shows the state as the
 * migration would leave it, and refuses a home that does not exist.
 */
export async function loadPluginState(opts: PluginStateOptions): Promise<PluginState> {
  const { paths } = opts;
  if (opts.readOnly) await assertHomeExists(paths, { explicitOnly: true, explicitHome: opts.explicitHome });
  await recoverPluginsDir(paths, opts.warn);
  if (!opts.readOnly) {
    try {
      await migrateEnabledList(paths.home, process.env, (line) => opts.warn(line));
    } catch (e) {
      // An unparsable config is reported below; the edit commands refuse it too.
      logger().debug({ err: isHermesError(e) ? e.message : String(e) }, "plugins.enabled migration skipped");
    }
  }
  // Parses kept by content hash: read, never written here (compile keeps them current).
  let config: ConfigRead = await ConfigCache.open(paths.cache).read(paths.config);
  // Every plugin would read as "not enabled": refuse rather than show a wrong answer.
  const fatal = unreadableConfig(config);
  if (fatal)
    throw new HermesError(fatal.code, {
      message: `${paths.config} cannot be read, so no enable state is known: ${fatal.message}`,
      file: fatal.file,
      line: fatal.line,
      col: fatal.col,
    });
  if (opts.readOnly) {
    const m = await planMigration(paths.home, config, process.env);
    if (m.edits.length) {
      const [{ applyYamlEdits }, { parseConfigText }] = await Promise.all([
        import("../core/yaml-edit.js"),
        import("../config/config-file.js"),
      ]);
      config = parseConfigText(applyYamlEdits(config.text, m.edits), paths.config);
    }
  }
  const set = await loadPluginSet({
    home: paths.home,
    config: config.value,
    configFile: config.file,
    bundled: opts.bundled,
    manifests: ManifestCache.open(paths.cache),
  });
  return { paths, config, set };
}

/** In a managed home, refuse edits of what the deployment owns (as recorded in the lock). */
export async function ownershipGuard(paths: HomePaths): Promise<OwnershipGuard> {
  const marker = await readManaged(paths);
  if (!marker) return () => undefined;
  const { readLock } = await import("../contracts/lock.js");
  const lock = await readLock(paths.lock).catch(() => undefined);
  const owned = ownershipOf(lock?.deployment);
  return (path, item) => assertNotOwned(marker.kind, owned, path, item);
}
