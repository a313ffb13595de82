import { diagnostic, type Diagnostic } from "../core/errors.js";
import type { ConfigValue } from "./config-file.js";

export type EnableState = "enabled" | "disabled" | "not-enabled";

export interface PluginLists {
  /** null = `plugins.enabled` absent or malformed ("nothing enabled yet"); [] = explicit empty allow-list. */
  enabled: string[] | null;
  disabled: string[];
  /** Whether the `enabled` key is present at all (drives the v21 migration). */
  enabledPresent: boolean;
  diagnostics: Diagnostic[];
}

function pluginsSection(config: ConfigValue): Record<string, unknown> {
  const p = config.plugins;
  return p && typeof p === "object" && !Array.isArray(p) ? (p as Record<string, unknown>) : {};
}

export function readPluginLists(config: ConfigValue, file?: string): PluginLists {
  const section = pluginsSection(config);
  const diagnostics: Diagnostic[] = [];
  const enabledPresent = Object.prototype.hasOwnProperty.call(section, "enabled");
  let enabled: string[] | null = null;
  if (Array.isArray(section.enabled)) enabled = section.enabled.filter((x): x is string => typeof x === "string");
  else if (enabledPresent && section.enabled !== null) {
    diagnostics.push(
      diagnostic("E_SCHEMA_INVALID", "plugins.enabled is not a list; treating it as 'nothing enabled'", {
        file,
        path: "plugins.enabled",
      }),
    );
  }
  const disabled = Array.isArray(section.disabled)
    ? section.disabled.filter((x): x is string => typeof x === "string")
    : [];
  return { enabled, disabled, enabledPresent, diagnostics };
}

/** Three states; `disabled` wins; the key or the manifest name matches. */
export function enableStateOf(names: readonly string[], lists: PluginLists): EnableState {
  if (names.some((n) => lists.disabled.includes(n))) return "disabled";
  if (lists.enabled && names.some((n) => lists.enabled!.includes(n))) return "enabled";
  return "not-enabled";
}

export function pluginEntry(config: ConfigValue, key: string): Record<string, unknown> {
  const entries = pluginsSection(config).entries;
  if (!entries || typeof entries !== "object" || Array.isArray(entries)) return {};
  const e = (entries as Record<string, unknown>)[key];
  return e && typeof e === "object" && !Array.isArray(e) ? (e as Record<string, unknown>) : {};
}

export function pluginsSetting<T>(config: ConfigValue, name: string): T | undefined {
  return pluginsSection(config)[name] as T | undefined;
}
