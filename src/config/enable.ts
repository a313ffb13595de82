import { HermesError } from "../core/errors.js";
import type { YamlEdit } from "../core/yaml-edit.js";
import { editConfig, type EditCheck, type LoadedConfig } from "./config-file.js";
import { readPluginLists } from "./plugin-lists.js";

export interface PluginRef {
  key: string;
  name: string;
}

/** Throws when the deployment owns `path` (or `item` in that list); see config/managed.ts. */
export type OwnershipGuard = (path: string[], item?: string) => void;

const noGuard: OwnershipGuard = () => undefined;

export interface ToggleResult {
  key: string;
  changed: boolean;
  message: string;
}

function assertList(cur: LoadedConfig, field: "enabled" | "disabled"): void {
  const plugins = cur.value.plugins;
  if (plugins !== undefined && plugins !== null && (typeof plugins !== "object" || Array.isArray(plugins))) {
    throw new HermesError("E_SCHEMA_INVALID", {
      message: "plugins must be a mapping",
      ...cur.source.locate(["plugins"]),
      hint: "make plugins: a mapping with enabled:/disabled: lists",
    });
  }
  const v = (plugins as Record<string, unknown> | undefined)?.[field];
  if (v !== undefined && v !== null && !Array.isArray(v)) {
    throw new HermesError("E_SCHEMA_INVALID", {
      message: `plugins.${field} must be a list of plugin names (got ${typeof v})`,
      ...cur.source.locate(["plugins", field]),
      hint: `write plugins.${field} as a YAML list, e.g. ${field}: [my-plugin]`,
    });
  }
}

/**
 * `enable`: add the key to the allow-list; drop key and name from the deny-list. (The original
 * also dropped the bare leaf of a category key, which can be another plugin's key.)
 */
/** One edit of the enable lists: both must be lists before anything is planned. */
function editLists(
  configFile: string,
  plan: (lists: ReturnType<typeof readPluginLists>, cur: LoadedConfig, edits: YamlEdit[]) => YamlEdit[],
  check?: EditCheck,
) {
  return editConfig(
    configFile,
    (cur) => {
      assertList(cur, "enabled");
      assertList(cur, "disabled");
      return plan(readPluginLists(cur.value), cur, []);
    },
    check,
  );
}

export async function enablePlugin(
  configFile: string,
  p: PluginRef,
  guard: OwnershipGuard = noGuard,
  /** More edits made in the same write (grants of `enable --grant`), so a kill never splits them. */
  extra?: (cur: LoadedConfig) => YamlEdit[],
  check?: EditCheck,
): Promise<ToggleResult> {
  const drop = new Set([p.key, p.name]);
  let toggled = false;
  const res = await editLists(
    configFile,
    (lists, cur, edits) => {
      const on = lists.enabled?.includes(p.key) || lists.enabled?.includes(p.name);
      toggled = !on || lists.disabled.some((d) => drop.has(d));
      if (!on) {
        guard(["plugins", "enabled"]);
        edits.push({ op: "append", path: ["plugins", "enabled"], value: p.key });
      }
      const undisable = lists.disabled.filter((d) => drop.has(d));
      for (const d of undisable) guard(["plugins", "disabled"], d);
      if (undisable.length)
        edits.push({ op: "remove", path: ["plugins", "disabled"], match: (v) => typeof v === "string" && drop.has(v) });
      if (extra) edits.push(...extra(cur));
      return edits;
    },
    check,
  );
  return {
    key: p.key,
    changed: res.changed,
    message: toggled && res.changed ? `✓ Plugin ${p.key} enabled.` : `Plugin '${p.key}' is already enabled.`,
  };
}

/** `disable`: remove key and name from the allow-list and add the key to the deny-list. */
export async function disablePlugin(
  configFile: string,
  p: PluginRef,
  guard: OwnershipGuard = noGuard,
  check?: EditCheck,
): Promise<ToggleResult> {
  const drop = new Set([p.key, p.name]);
  const res = await editLists(
    configFile,
    (lists, _cur, edits) => {
      // An item the deployment enabled stays in its list; the user's deny-list entry still wins.
      const unenable = (lists.enabled?.filter((e) => drop.has(e)) ?? []).filter((e) => {
        try {
          guard(["plugins", "enabled"], e);
          return true;
        } catch (err) {
          if (err instanceof HermesError && err.code === "E_CONFIG_MANAGED_KEY") return false;
          throw err;
        }
      });
      if (unenable.length)
        edits.push({
          op: "remove",
          path: ["plugins", "enabled"],
          match: (v) => typeof v === "string" && unenable.includes(v),
        });
      if (!lists.disabled.includes(p.key) && !lists.disabled.includes(p.name)) {
        guard(["plugins", "disabled"]);
        edits.push({ op: "append", path: ["plugins", "disabled"], value: p.key });
      }
      return edits;
    },
    check,
  );
  return {
    key: p.key,
    changed: res.changed,
    message: res.changed ? `⊘ Plugin ${p.key} disabled.` : `Plugin '${p.key}' is already disabled.`,
  };
}
