import { loadScanSettings, scanPluginDir, type ScanReport, type ScanSettings } from "../install/scan/index.js";

export interface ScanPluginOptions {
  dir: string;
  /** The home's config.yaml: where the waivers and `plugins.scan_on_install` are read. */
  configFile: string;
  /** With `revision`: apply the home's waivers for this plugin key at this revision. */
  pluginKey?: string;
  revision?: string;
  /** Called with the settings before the scan starts, so their problems are reported first. */
  onSettings?: (settings: ScanSettings) => void;
}

/** `hermes plugins scan <dir>`: the install-time scan on its own, with the home's waivers. */
export async function scanPlugin(o: ScanPluginOptions): Promise<{ settings: ScanSettings; report: ScanReport }> {
  const settings = await loadScanSettings(o.configFile);
  o.onSettings?.(settings);
  const report = await scanPluginDir(o.dir, {
    pluginKey: o.pluginKey,
    revision: o.revision,
    waivers: settings.waivers,
    waiverSource: settings.file,
  });
  return { settings, report };
}
