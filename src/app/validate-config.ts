import { resolve } from "node:path";
import type { Diagnostic } from "../core/errors.js";
import { loadConfig } from "../config/config-file.js";
import { validateConfigFile } from "../config/validate.js";
import { loadPluginSet } from "../discovery/plugin-set.js";
import { modelProviderNames } from "./provider-plugins.js";

/**
 * `hermes config validate`: the config checks, with the home's model-provider plugins (as that config would
 * gate them) counted as providers `model.provider` may name.
 */
export async function validateConfig(file: string, home: string): Promise<Diagnostic[]> {
  let pluginProviders: string[] = [];
  try {
    const cfg = await loadConfig(resolve(file));
    const set = await loadPluginSet({ home, config: cfg.value, configFile: cfg.file });
    pluginProviders = modelProviderNames(set.views);
  } catch {
    // An unreadable config or plugin folder: validateConfigFile reports the config; plugins add no names.
  }
  return validateConfigFile(file, { pluginProviders });
}
