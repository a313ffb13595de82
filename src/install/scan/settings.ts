/**
 * The scanner's settings in the home's config.yaml:
 *
 *   plugins:
 *     scan_on_install: false      # skip the scan on install and update (default true)
 *     scan_waivers:               # operator waivers, pinned to (plugin, revision, finding[, file])
 *       - {plugin: my-plugin, revision: <40-hex>, finding: env_exfil_fetch, file: index.js, reason: "…"}
 */
import type { Diagnostic } from "../../core/errors.js";
import { loadConfig, type LoadedConfig } from "../../config/config-file.js";
import type { ScanWaiver } from "./types.js";
import { parseScanWaivers } from "./waivers.js";

function pluginsSection(config: unknown): Record<string, unknown> | undefined {
  const c =
    config && typeof config === "object" && "value" in config && "file" in config
      ? (config as LoadedConfig).value
      : config;
  if (!c || typeof c !== "object" || Array.isArray(c)) return undefined;
  const p = (c as Record<string, unknown>).plugins;
  return p && typeof p === "object" && !Array.isArray(p) ? (p as Record<string, unknown>) : undefined;
}

/**
 * Whether install and update run the scan. Only an explicit `plugins.scan_on_install: false`
 * turns it off: a missing key, another value, or a config that failed to load keeps it on.
 * Accepts the parsed config mapping or a LoadedConfig.
 */
export function scanEnabled(config: unknown): boolean {
  return pluginsSection(config)?.scan_on_install !== false;
}

export interface ScanSettings {
  enabled: boolean;
  waivers: ScanWaiver[];
  /** The config file the settings came from. */
  file: string;
  /** W_SCAN_WAIVER_INVALID for ignored entries. */
  diagnostics: Diagnostic[];
}

/** Scanner settings from an already loaded config. */
export function scanSettingsOf(config: LoadedConfig): ScanSettings {
  const parsed = parseScanWaivers(config.value, {
    file: config.file,
    source: config.exists && config.source.ok ? config.source : undefined,
  });
  return {
    enabled: scanEnabled(config.value),
    waivers: parsed.waivers,
    file: config.file,
    diagnostics: parsed.diagnostics,
  };
}

/** Load config.yaml and return the scanner settings (never throws for bad content). */
export async function loadScanSettings(configFile: string): Promise<ScanSettings> {
  return scanSettingsOf(await loadConfig(configFile));
}
