import { formatJsonPath } from "../core/json-path.js";
import { holdsSecret, MASK, redactValue } from "../core/redact.js";
import type { OverlayChange } from "./overlay.js";
import type { CompilePlan } from "./plan.js";

const show = (v: unknown) => (v === undefined ? "(unset)" : JSON.stringify(v));

/** A change as it may be shown: values under a secret-named key, or secret-shaped, are masked. */
function shown(c: OverlayChange): OverlayChange {
  const secret = c.path.some((seg) => holdsSecret(seg));
  const mask = (v: unknown) => (v === undefined ? undefined : secret ? MASK : redactValue(v));
  const out: OverlayChange = { ...c };
  if ("from" in c) out.from = mask(c.from);
  if ("to" in c) out.to = mask(c.to);
  if (c.items) out.items = c.items.map((i) => mask(i));
  return out;
}

/** The plan as a person reads it: links, config.yaml and lock changes, one line each. */
export function renderPlan(plan: CompilePlan): string {
  const out: string[] = [];
  if (plan.linkChanges.length) {
    out.push("links:");
    for (const c of plan.linkChanges) {
      if (c.op === "add") out.push(`  + ${c.link} → ${c.target}`);
      else if (c.op === "replace") out.push(`  ~ ${c.link} → ${c.target} (was ${c.from})`);
      else if (c.op === "repair") out.push(`  ! ${c.link} → ${c.target} (repair)`);
      else out.push(`  - ${c.link}${c.from ? ` (was ${c.from})` : ""}`);
    }
  }
  if (plan.configChanges.length) {
    out.push("config.yaml:");
    for (const change of plan.configChanges) {
      const c = shown(change);
      const p = formatJsonPath(c.path);
      if (c.op === "set") out.push(`  ~ ${p}: ${show(c.from)} → ${show(c.to)}`);
      else if (c.op === "delete") out.push(`  - ${p} (was ${show(c.from)})`);
      else if (c.op === "add-items") out.push(`  + ${p} += ${show(c.items)}`);
      else out.push(`  - ${p} -= ${show(c.items)}`);
    }
  }
  if (plan.pluginChanges.length) {
    out.push("lock:");
    for (const c of plan.pluginChanges) {
      const sign = c.op === "add" ? "+" : c.op === "remove" ? "-" : "~";
      out.push(`  ${sign} ${c.key}${c.details.length ? `: ${c.details.join("; ")}` : ""}`);
    }
  } else if (plan.lockChanged) out.push("lock: settings or order changed");
  if (plan.repair) out.push("repair: hermes.lock.json / generations/current pointers");
  if (!out.length) out.push("nothing to do: the home is up to date");
  return out.join("\n");
}

/** The plan as data for scripts (`--json`). */
export function planToJson(plan: CompilePlan) {
  return {
    ok: plan.ok,
    changed: plan.changed,
    links: plan.linkChanges,
    config: plan.configChanges.map((c) => ({ ...shown(c), path: formatJsonPath(c.path) })),
    plugins: plan.pluginChanges,
    lock_changed: plan.lockChanged,
    repair: plan.repair,
    inputs_hash: plan.lock.inputs_hash,
    load_order: plan.lock.load_order,
    diagnostics: plan.diagnostics,
  };
}
