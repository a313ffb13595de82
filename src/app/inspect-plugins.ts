import { isPythonPlugin } from "../contracts/plugin-record.js";
import type { PythonProbe } from "../runtime/python/environment.js";
import type { ConfigRead } from "../config/config-cache.js";
import type { HomePaths } from "../core/paths.js";
import type { CapabilityRow } from "../consent/flow.js";
import type { Explanation } from "../discovery/explain.js";
import { findPlugin, type PluginView } from "../discovery/plugin-set.js";
import type { PluginStatus } from "../runtime/runtime.js";
import { loadPluginState } from "./plugin-state.js";
import { providerRole, type ProviderRole } from "./provider-plugins.js";

/** What the read-only `plugins` commands share: they never write and refuse a missing `--home`. */
export interface InspectOptions {
  paths: HomePaths;
  /** The home was named by `--home`. */
  explicitHome?: boolean;
  /** Notes about recovered installs, for stderr. */
  warn: (line: string) => void;
}

/**
 * `hermes plugins list`: every discovered plugin (or only the enabled ones), with the config read and, per
 * provider-type plugin, the key that selects it and whether it is the active one.
 */
export async function listPlugins(
  o: InspectOptions & { bundled: boolean; enabledOnly?: boolean },
): Promise<{ views: PluginView[]; config: ConfigRead; roles: Map<PluginView, ProviderRole> }> {
  const { set, config } = await loadPluginState({ ...o, readOnly: true });
  const views = o.enabledOnly ? set.views.filter((v) => v.verdict.state === "enabled") : set.views;
  const roles = new Map<PluginView, ProviderRole>();
  for (const v of views) {
    const role = providerRole(v, config.value);
    if (role) roles.set(v, role);
  }
  return { views, config, roles };
}

/** `hermes plugins show <name>`: one plugin, shadowed ones included. */
export async function showPlugin(o: InspectOptions & { name: string }): Promise<PluginView> {
  const { set } = await loadPluginState({ ...o, readOnly: true });
  return findPlugin(set, o.name, { includeLosers: true });
}

/** `hermes plugins why <name>`: why a plugin does or does not load, with its last run's state. */
export async function explainPlugin(o: InspectOptions & { name: string }): Promise<{
  explanation: Explanation;
  runtime?: PluginStatus;
  provider: ProviderRole | null;
  python?: PythonPluginInfo;
}> {
  const { set, config, paths } = await loadPluginState({ ...o, readOnly: true });
  const v = findPlugin(set, o.name, { includeLosers: true });
  const { explain } = await import("../discovery/explain.js");
  const explanation = explain(set, v, config.value);
  // Only `why` reads the last run: the other queries never load the runtime's modules.
  const { readRuntimeStatus } = await import("../runtime/runtime.js");
  const runtime = readRuntimeStatus(paths.home)?.plugins[explanation.key];
  const python = isPythonPlugin(explanation) ? await pythonInfo(paths.home, explanation.key) : undefined;
  return {
    explanation,
    ...(runtime ? { runtime } : {}),
    provider: providerRole(v, config.value),
    ...(python ? { python } : {}),
  };
}

export interface PythonPluginInfo extends PythonProbe {
  /** The plugin's virtual environment, when it has one (pip_dependencies). */
  environment: string | null;
  /** Why the last compile could not build its environment (the plugin fails to load with it). */
  environment_error?: string;
}

/** A Python plugin: the interpreter the bridge would run it with, and its environment. */
async function pythonInfo(home: string, key: string): Promise<PythonPluginInfo> {
  const { probePython, pluginVenvDir, venvSitePackages } = await import("../runtime/python/environment.js");
  const { readPluginEnvRecord } = await import("../runtime/python/env-record.js");
  const venv = pluginVenvDir(home, key);
  const record = readPluginEnvRecord(home, key);
  const failed = record?.status === "failed" ? { environment_error: record.error?.message ?? "not built" } : {};
  return { ...probePython(), environment: venvSitePackages(venv).length ? venv : null, ...failed };
}

/** `hermes plugins capabilities [name]`: declared against granted; without a name, only plugins with either. */
export async function capabilityRows(o: InspectOptions & { name?: string }): Promise<CapabilityRow[]> {
  const { set, config } = await loadPluginState({ ...o, readOnly: true });
  // Loaded here: the consent flow edits config.yaml, so it brings the YAML editor that list does not need.
  const { capabilityRow } = await import("../consent/flow.js");
  const views = o.name ? [findPlugin(set, o.name, { includeLosers: true })] : set.views;
  const rows = views.map((v) =>
    capabilityRow(
      {
        key: v.candidate.key,
        name: v.candidate.name,
        source: v.candidate.origin,
        declared: v.candidate.manifest?.capabilities ?? [],
      },
      config.value,
    ),
  );
  return o.name ? rows : rows.filter((r) => r.declared.length || r.undeclared.length);
}
