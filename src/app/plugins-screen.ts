import { editConfig } from "../config/config-file.js";
import { disablePlugin, enablePlugin, type OwnershipGuard } from "../config/enable.js";
import { type PluginLists, readPluginLists } from "../config/plugin-lists.js";
import { BUILTIN_ENGINE, readSelection } from "../config/provider-selection.js";
import { compile, editCompileCheck, type CompileResult } from "../compile/compile.js";
import type { Io } from "../consent/flow.js";
import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { findPlugin, type PluginView } from "../discovery/plugin-set.js";
import { PROVIDER_KINDS, selectedName, type ProviderKind } from "../runtime/registries.js";
import { loadPluginState, ownershipGuard } from "./plugin-state.js";
import { providerRole } from "./provider-plugins.js";
import { consentOnEnable } from "./toggle-plugin.js";

/** One checkbox of "General Plugins": checked = in `plugins.enabled`. */
export interface ScreenPlugin {
  key: string;
  description: string;
  bundled: boolean;
  enabled: boolean;
  /** Why this row cannot be toggled here (the deployment of a managed home owns it). */
  locked?: string;
}

/** One choice of a provider picker; `value` null is the built-in (no plugin). */
export interface ProviderChoice {
  value: string | null;
  label: string;
}

/** One row of "Provider Plugins": a single-choice kind, the key that selects it and its current choice. */
export interface ScreenProvider {
  kind: ProviderKind;
  label: string;
  select: string;
  current: string | null;
  choices: ProviderChoice[];
  locked?: string;
}

export interface ScreenModel {
  general: ScreenPlugin[];
  providers: ScreenProvider[];
}

/** What the person chose on the screen: only rows that differ from the model are applied. */
export interface ScreenChoices {
  enabled: ReadonlySet<string>;
  selections: ReadonlyMap<ProviderKind, string | null>;
}

/** The changes a set of choices makes against the model it was made on. */
export interface ScreenChanges {
  enable: string[];
  disable: string[];
  select: { kind: ProviderKind; select: string; value: string | null }[];
}

const LABELS: Partial<Record<ProviderKind, string>> = {
  memory: "Memory Provider",
  context_engine: "Context Engine",
  image_gen: "Image Generation",
  video_gen: "Video Generation",
  tts: "Text to Speech",
  transcription: "Transcription",
  terminal_environment: "Terminal Backend",
};

/** Memory and context engine always show; the other single-choice kinds only when a plugin provides one. */
const ALWAYS: readonly ProviderKind[] = ["memory", "context_engine"];

/** Exclusive kinds are selected, never enabled: `plugins.enabled` does not gate them. */
const EXCLUSIVE: ReadonlySet<ProviderKind> = new Set(ALWAYS);

function builtinLabel(kind: ProviderKind): string {
  return kind === "context_engine" ? `${BUILTIN_ENGINE} (built-in)` : "(built-in)";
}

/** The value a selection key holds for a plugin: its folder name, as `selects()` matches it. */
function choiceValue(v: PluginView, kind: ProviderKind): string {
  const leaf = v.candidate.key.split("/").pop()!;
  return kind === "terminal_environment" || kind === "tts" || kind === "transcription" ? leaf.toLowerCase() : leaf;
}

function currentOf(kind: ProviderKind, config: Record<string, unknown>): string | null {
  if (kind === "memory" || kind === "context_engine") return readSelection(config)[kind];
  return selectedName(kind, config) ?? null;
}

/** The config path a kind's selection is written to. */
function selectPath(kind: ProviderKind): string[] {
  return PROVIDER_KINDS[kind].select.split(".");
}

/** The message of an ownership refusal, or undefined when the edit is allowed. */
function refusal(guard: OwnershipGuard, path: string[], item?: string): string | undefined {
  try {
    guard(path, item);
    return undefined;
  } catch (e) {
    if (e instanceof HermesError && e.code === "E_CONFIG_MANAGED_KEY") return e.message;
    throw e;
  }
}

/** Whether the allow-list already names a plugin: enabling it then only drops its deny entry, as `enablePlugin`. */
function allowListed(lists: PluginLists, v: PluginView): boolean {
  return [v.candidate.key, v.candidate.name].some((n) => lists.enabled?.includes(n));
}

/** Whether toggling a plugin would touch a list (or item) the deployment owns, as `plugins enable|disable` guard. */
function toggleRefusal(guard: OwnershipGuard, p: ScreenPlugin, listed: boolean): string | undefined {
  // Disabling a deployment-enabled plugin is allowed (the user's deny-list entry wins), as in `plugins disable`.
  return p.enabled
    ? refusal(guard, ["plugins", "disabled"])
    : ((listed ? undefined : refusal(guard, ["plugins", "enabled"])) ?? refusal(guard, ["plugins", "disabled"], p.key));
}

function providerRows(views: readonly PluginView[], config: Record<string, unknown>): ScreenProvider[] {
  const byKind = new Map<ProviderKind, PluginView[]>(ALWAYS.map((k) => [k, []]));
  for (const v of views) {
    const kind = providerRole(v, config)?.kind;
    if (!kind || !LABELS[kind]) continue;
    byKind.set(kind, [...(byKind.get(kind) ?? []), v]);
  }
  return [...byKind].map(([kind, vs]) => ({
    kind,
    label: LABELS[kind]!,
    select: PROVIDER_KINDS[kind].select,
    current: currentOf(kind, config),
    choices: [
      { value: null, label: builtinLabel(kind) },
      ...vs.map((v) => ({ value: choiceValue(v, kind), label: choiceValue(v, kind) })),
    ],
  }));
}

/** The screen's rows: every general plugin with its enable state, then each single-choice provider kind. */
export async function loadScreenModel(o: { paths: HomePaths; warn: (line: string) => void }): Promise<ScreenModel> {
  const { set, config, paths } = await loadPluginState({ paths: o.paths, warn: o.warn });
  const guard = await ownershipGuard(paths);
  const lists = readPluginLists(config.value);
  const views = set.views.filter((v) => !v.shadowedBy);
  const general = views
    .filter((v) => {
      const kind = providerRole(v, config.value)?.kind;
      return !(kind && EXCLUSIVE.has(kind));
    })
    .map((v): ScreenPlugin => {
      const p: ScreenPlugin = {
        key: v.candidate.key,
        description: v.candidate.manifest?.description.split("\n")[0] ?? "",
        bundled: v.candidate.source === "bundled",
        enabled: v.verdict.state === "enabled",
      };
      const locked = toggleRefusal(guard, p, allowListed(lists, v));
      return locked ? { ...p, locked } : p;
    });
  const providers = providerRows(views, config.value).map((r) => {
    const locked = refusal(guard, selectPath(r.kind));
    return locked ? { ...r, locked } : r;
  });
  return { general, providers };
}

/** The rows whose choice differs from the model. */
export function screenChanges(model: ScreenModel, choices: ScreenChoices): ScreenChanges {
  const general = model.general.filter((p) => !p.locked);
  return {
    enable: general.filter((p) => !p.enabled && choices.enabled.has(p.key)).map((p) => p.key),
    disable: general.filter((p) => p.enabled && !choices.enabled.has(p.key)).map((p) => p.key),
    select: model.providers.flatMap((r) => {
      const value = choices.selections.get(r.kind);
      return value === undefined || value === r.current || r.locked ? [] : [{ kind: r.kind, select: r.select, value }];
    }),
  };
}

/** What a selection writes: memory's built-in is the empty string, the engine's is `compressor`. */
function selectionValue(kind: ProviderKind, value: string | null): string {
  if (value !== null) return value;
  return kind === "context_engine" ? BUILTIN_ENGINE : "";
}

export interface ApplyScreenResult {
  compiled?: CompileResult;
}

/**
 * Apply the screen's changes: the enable-list edits and selections (each a comment-keeping config edit, refused
 * before any write when the deployment owns one), consent for newly enabled plugins, then one compile.
 */
export async function applyScreenChanges(o: {
  paths: HomePaths;
  changes: ScreenChanges;
  io: Io;
  /** One line per change, as it is made (before any consent question of it). */
  report: (line: string) => void;
}): Promise<ApplyScreenResult> {
  const { paths, changes, io, report } = o;
  const { set, config } = await loadPluginState({ paths, warn: (line) => io.warn(line) });
  const guard = await ownershipGuard(paths);
  const lists = readPluginLists(config.value);
  // Every ownership refusal comes before the first write, so a refused confirm changes nothing.
  for (const key of changes.enable) {
    if (!allowListed(lists, findPlugin(set, key))) guard(["plugins", "enabled"]);
    guard(["plugins", "disabled"], key);
  }
  if (changes.disable.length) guard(["plugins", "disabled"]);
  for (const s of changes.select) guard(selectPath(s.kind));
  const check = editCompileCheck(paths.home);
  let changed = false;
  let compiled: CompileResult | undefined;
  try {
    const enabled: PluginView[] = [];
    for (const key of changes.enable) {
      const view = findPlugin(set, key);
      const res = await enablePlugin(paths.config, { key, name: view.candidate.name }, guard, undefined, check);
      changed ||= res.changed;
      report(res.message);
      enabled.push(view);
    }
    for (const key of changes.disable) {
      const res = await disablePlugin(paths.config, { key, name: findPlugin(set, key).candidate.name }, guard, check);
      changed ||= res.changed;
      report(res.message);
    }
    for (const s of changes.select) {
      const value = selectionValue(s.kind, s.value);
      const res = await editConfig(paths.config, () => [{ op: "set", path: selectPath(s.kind), value }], check);
      changed ||= res.changed;
      report(`✓ ${s.select}: ${value === "" ? "'' (built-in)" : value}`);
    }
    for (const view of enabled) changed = (await consentOnEnable(paths, view, undefined, guard, io)) || changed;
  } finally {
    // One truth: the lock follows whatever part of the edit was written, even when a later step refused.
    if (changed) compiled = await compile({ home: paths.home });
  }
  return compiled ? { compiled } : {};
}
