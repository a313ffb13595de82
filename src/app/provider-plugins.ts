import type { ConfigValue } from "../config/config-file.js";
import { readSelection, SLOT_KEY, selects, slotOf } from "../config/provider-selection.js";
import type { PluginView } from "../discovery/plugin-set.js";
import { PROVIDER_KINDS, selectedName, type ProviderKind } from "../runtime/registries.js";

/** What a provider-type plugin is to the config: the key that selects it, what that key holds, and whether it is
 * the active one. */
export interface ProviderRole {
  kind: ProviderKind;
  /** The config key that selects one plugin of this kind (`model.provider` also takes `--provider`). */
  select: string;
  /** What that key holds now (null: unset, or the built-in). */
  selected: string | null;
  /** Selected and loading. */
  active: boolean;
}

/** Category folders of provider-type plugins, named as the original names them. */
const CATEGORY_KIND: Readonly<Record<string, ProviderKind>> = {
  memory: "memory",
  context_engine: "context_engine",
  "model-providers": "model",
  image_gen: "image_gen",
  video_gen: "video_gen",
  tts: "tts",
  stt: "transcription",
  transcription: "transcription",
  terminal_environment: "terminal_environment",
};

function kindOf(v: PluginView): ProviderKind | undefined {
  const c = v.candidate;
  const kind = c.manifest?.kind;
  if (kind === "exclusive") return slotOf(c.category);
  if (kind === "model-provider") return "model";
  return c.category !== undefined ? CATEGORY_KIND[c.category] : undefined;
}

/** The selection of `kind` in `config`; memory and context engines read the same helper their gate reads. */
function selection(kind: ProviderKind, config: ConfigValue): { select: string; selected: string | null } {
  if (kind === "memory" || kind === "context_engine")
    return { select: SLOT_KEY[kind], selected: readSelection(config)[kind] };
  return { select: PROVIDER_KINDS[kind].select, selected: selectedName(kind, config) ?? null };
}

/** The provider role of a plugin, or null for plugins that are no provider (tools, hooks, platforms). */
export function providerRole(v: PluginView, config: ConfigValue): ProviderRole | null {
  const kind = kindOf(v);
  if (!kind) return null;
  const { select, selected } = selection(kind, config);
  const c = v.candidate;
  const chosen = selected !== null && selects(kind === "model" ? selected.toLowerCase() : selected, c.key, c.name);
  return { kind, select, selected, active: chosen && v.verdict.action !== "skip" && !v.shadowedBy && !v.conflict };
}

/** The names `model.provider` may take from the model-provider plugins that load: folder and manifest name. */
export function modelProviderNames(views: readonly PluginView[]): string[] {
  const names = new Set<string>();
  for (const v of views) {
    if (kindOf(v) !== "model" || v.verdict.action === "skip" || v.conflict) continue;
    names.add(v.candidate.key.split("/").pop()!.toLowerCase());
    names.add(v.candidate.name.toLowerCase());
  }
  return [...names].sort();
}
