import type { PluginLists, EnableState } from "../config/plugin-lists.js";
import { enableStateOf } from "../config/plugin-lists.js";
import { requiresHermesProblem } from "../manifest/requires-hermes.js";
import { SLOT_KEY, selects, slotOf, type Selection } from "../config/provider-selection.js";
import type { Candidate } from "./scan.js";

export type GateAction = "load" | "load_now" | "defer" | "skip";

export interface Verdict {
  state: EnableState;
  action: GateAction;
  /** Why it loads or not, in words a person can act on. */
  reason: string;
}

function statusReason(c: Candidate): string | undefined {
  switch (c.status) {
    case "ok":
      return undefined;
    case "dangling":
      return `broken symlink: ${c.path} → ${c.linkTarget ?? "?"} (target missing)`;
    case "portable":
      return "portable plugin.json package: not loadable by this runtime";
    case "unreadable":
      return c.diagnostics[0]?.message ?? "unreadable";
    case "invalid": {
      const first = c.diagnostics.find((d) => d.severity === "error");
      return `invalid manifest: ${first ? first.message : "see plugins validate"}`;
    }
  }
}

/**
 * Gate one winning plugin, in this order: broken → disabled → exclusive →
 * model-provider → bundled backend/platform → allow-list → load.
 */
export function gate(c: Candidate, lists: PluginLists, conflict = false, selection?: Selection): Verdict {
  const v = gateLists(c, lists, conflict, selection);
  if (v.action === "skip") return v;
  // As the original, checked before import: an unmet requires_hermes keeps a plugin that would load out.
  const tooNew = requiresHermesProblem(c.manifest?.requires_hermes);
  return tooNew ? { ...v, action: "skip", reason: tooNew } : v;
}

function gateLists(c: Candidate, lists: PluginLists, conflict: boolean, selection: Selection | undefined): Verdict {
  const names = [c.key, c.name];
  const state = enableStateOf(names, lists);
  const broken = conflict ? `duplicate key '${c.key}': another plugin of the same source claims it` : statusReason(c);
  if (broken) return { state, action: "skip", reason: broken };
  if (state === "disabled") return { state, action: "skip", reason: "disabled via config (plugins.disabled)" };
  const kind = c.manifest!.kind;
  if (kind === "exclusive") {
    const slot = slotOf(c.category);
    // Selecting it is the consent: the allow-list does not gate an exclusive plugin.
    if (selection && selects(selection[slot], c.key, c.name))
      return { state, action: "load", reason: `selected by ${SLOT_KEY[slot]}` };
    return { state, action: "skip", reason: `exclusive plugin — activate via ${SLOT_KEY[slot]} config` };
  }
  if (kind === "model-provider") return modelProviderVerdict(c, state);
  if (c.source === "bundled" && kind === "backend")
    return { state, action: "load_now", reason: "bundled backend: loads automatically" };
  if (c.source === "bundled" && kind === "platform")
    return { state, action: "defer", reason: "bundled platform: loads on first use" };
  if (state !== "enabled") {
    return {
      state,
      action: "skip",
      reason: `not enabled in config (run \`hermes plugins enable ${c.key}\` to activate)`,
    };
  }
  return { state, action: "load", reason: "enabled in config" };
}

/** Every model-provider plugin in `model-providers/` registers its profile (as the original's provider discovery). */
function modelProviderVerdict(c: Candidate, state: EnableState): Verdict {
  if (c.category === "model-providers")
    return { state, action: "load_now", reason: "model-provider plugin: registers its profile at every start" };
  return {
    state,
    action: "skip",
    reason: `model-provider plugin outside model-providers/: move it to plugins/model-providers/${c.dirName}/`,
  };
}
