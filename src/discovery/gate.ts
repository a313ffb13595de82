import type { PluginLists, EnableState } from "../config/plugin-lists.js";
import { enableStateOf } from "../config/plugin-lists.js";
import { requiresHermesProblem } from "../manifest/requires-hermes.js";
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
    case "python":
      return "python plugin: not loadable by this runtime";
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
export function gate(c: Candidate, lists: PluginLists, conflict = false): Verdict {
  const v = gateLists(c, lists, conflict);
  if (v.action === "skip") return v;
  // As the original, checked before import: an unmet requires_hermes keeps a plugin that would load out.
  const tooNew = requiresHermesProblem(c.manifest?.requires_hermes);
  return tooNew ? { ...v, action: "skip", reason: tooNew } : v;
}

function gateLists(c: Candidate, lists: PluginLists, conflict: boolean): Verdict {
  const names = [c.key, c.name];
  const state = enableStateOf(names, lists);
  const broken = conflict ? `duplicate key '${c.key}': another plugin of the same source claims it` : statusReason(c);
  if (broken) return { state, action: "skip", reason: broken };
  if (state === "disabled") return { state, action: "skip", reason: "disabled via config (plugins.disabled)" };
  const kind = c.manifest!.kind;
  if (kind === "exclusive") {
    return {
      state,
      action: "skip",
      reason:
        "exclusive plugin — activate " +
        `via ${c.category === "context_engine" ? "context.engine" : "memory.provider"} config`,
    };
  }
  if (kind === "model-provider")
    return { state, action: "skip", reason: "model-provider plugin — selected through the model provider config" };
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
