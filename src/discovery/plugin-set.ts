import type { Diagnostic } from "../core/errors.js";
import { resolve } from "node:path";
import { HermesError } from "../core/errors.js";
import { nearest } from "../core/suggest.js";
import type { ConfigValue } from "../config/config-file.js";
import { readPluginLists, type PluginLists } from "../config/plugin-lists.js";
import { discover, type DiscoverOptions, type Discovery } from "./discover.js";
import { readSelection } from "../config/provider-selection.js";
import { selectionDiagnostics } from "./exclusive.js";
import { gate, type Verdict } from "./gate.js";
import { resolveLoadOrder } from "./order.js";
import type { Shadow } from "./precedence.js";
import type { Candidate } from "./scan.js";

export interface PluginView {
  candidate: Candidate;
  verdict: Verdict;
  /** Other names this plugin answers to (manifest name when it differs from the key). */
  aliases: string[];
  /** Set when this candidate lost to another one (or is one of a conflicting pair). */
  shadowedBy?: Shadow;
  conflict: boolean;
  /** 1-based position in the load order, for plugins that would load. */
  loadPosition?: number;
}

export interface PluginSet {
  discovery: Discovery;
  lists: PluginLists;
  /** Winners (and conflicting candidates), sorted by key. */
  views: PluginView[];
  /** Candidates that lost on precedence, for `why`. */
  losers: PluginView[];
  /** Keys in the order they load: bundled backends first, then the dependency-ordered pass. */
  loadOrder: string[];
  diagnostics: Diagnostic[];
}

function aliasesOf(c: Candidate): string[] {
  return c.name !== c.key ? [c.name] : [];
}

export async function loadPluginSet(
  opts: DiscoverOptions & { config: ConfigValue; configFile?: string },
): Promise<PluginSet> {
  return buildPluginSet(await discover(opts), opts.config, opts.configFile);
}

/** Gate, shadow and order a discovery against a config; pure, so the compiler can plan with it. */
export function buildPluginSet(discovery: Discovery, config: ConfigValue, configFile?: string): PluginSet {
  const opts = { config };
  const lists = readPluginLists(config, configFile);
  const selection = readSelection(config);
  const { resolution } = discovery;
  const views: PluginView[] = resolution.winners.map((c) => ({
    candidate: c,
    verdict: gate(c, lists, false, selection),
    aliases: aliasesOf(c),
    conflict: false,
  }));
  for (const [, list] of resolution.conflicts) {
    for (const c of list)
      views.push({ candidate: c, verdict: gate(c, lists, true, selection), aliases: aliasesOf(c), conflict: true });
  }
  views.sort((a, b) =>
    a.candidate.key < b.candidate.key
      ? -1
      : a.candidate.key > b.candidate.key
        ? 1
        : a.candidate.path < b.candidate.path
          ? -1
          : 1,
  );
  const losers = resolution.shadowed.map((s) => ({
    candidate: s.candidate,
    verdict: gate(s.candidate, lists, false, selection),
    aliases: aliasesOf(s.candidate),
    shadowedBy: s,
    conflict: false,
  }));
  for (const l of losers) l.verdict = { ...l.verdict, action: "skip", reason: shadowReason(l.shadowedBy!) };
  const loading = views.filter((v) => v.verdict.action === "load");
  const order = resolveLoadOrder(
    loading.map((v) => ({
      key: v.candidate.key,
      name: v.candidate.name,
      requires: v.candidate.manifest?.requires_plugins.map((r) => r.id) ?? [],
    })),
    orderList(opts.config),
  );
  const eager = views.filter((v) => v.verdict.action === "load_now").map((v) => v.candidate.key);
  const sequence = [...eager, ...order.order];
  for (const v of views) {
    const i = sequence.indexOf(v.candidate.key);
    if (i >= 0 && !v.conflict) v.loadPosition = i + 1;
  }
  return {
    discovery,
    lists,
    views,
    losers,
    loadOrder: sequence,
    diagnostics: [
      ...discovery.diagnostics,
      ...lists.diagnostics,
      ...order.diagnostics,
      ...selectionDiagnostics(selection, resolution.winners, configFile),
    ],
  };
}

export function orderList(config: ConfigValue): string[] {
  const p = config.plugins as Record<string, unknown> | undefined;
  const o = p && typeof p === "object" ? p.order : undefined;
  return Array.isArray(o) ? o.filter((x): x is string => typeof x === "string") : [];
}

function shadowReason(s: Shadow): string {
  switch (s.reason) {
    case "impostor":
      return (
        `ignored: uses the bundled key '${s.by.key}' from a differently named folder (rename it to ` +
        `'${s.by.dirName}' to override)`
      );
    case "directory-wins":
      return `shadowed by the ${s.by.source} plugin at ${s.by.path}`;
    case "shadowed":
      return `shadowed by the ${s.by.source} plugin at ${s.by.path} (project > user > bundled)`;
  }
}

/**
 * Resolve a user-typed name: exact key or manifest name; else a unique leaf of a category key
 * (`langfuse` → `observability/langfuse`). Never a guess: near misses are suggested, not used.
 */
export function findPlugin(set: PluginSet, name: string, opts: { includeLosers?: boolean } = {}): PluginView {
  const pool = opts.includeLosers ? [...set.views, ...set.losers] : set.views;
  // A plugin's folder path addresses it even when its key is claimed twice.
  if (name.includes("/") || name.startsWith(".")) {
    const abs = resolve(name);
    const byPath = pool.filter((v) => v.candidate.path === abs);
    if (byPath.length === 1) return byPath[0]!;
  }
  const exactKey = pool.filter((v) => v.candidate.key === name);
  if (exactKey.length === 1) return exactKey[0]!;
  const exact = pool.filter((v) => v.candidate.key === name || v.candidate.name === name);
  const winnersFirst = exact.filter((v) => !v.shadowedBy);
  if (winnersFirst.length === 1) return winnersFirst[0]!;
  if (exact.length === 1) return exact[0]!;
  if (exact.length > 1) {
    throw new HermesError("E_PLUGIN_AMBIGUOUS", {
      message:
        `'${name}' matches ${exact.length} ` +
        `plugins: ${exact.map((v) => `${v.candidate.key} at ${v.candidate.path}`).join(", ")}`,
      hint:
        "name one by its " +
        `folder: ${exact.map((v) => `\`hermes plugins why ${v.candidate.path}\``).join(" or ")}; to keep one, ` +
        `rename the other's \`name:\` in its plugin.yaml or remove its folder`,
    });
  }
  const leaf = pool.filter(
    (v) => !v.shadowedBy && v.candidate.key.includes("/") && v.candidate.key.split("/").pop() === name,
  );
  if (leaf.length === 1) return leaf[0]!;
  if (leaf.length > 1) {
    throw new HermesError("E_PLUGIN_AMBIGUOUS", {
      message: `'${name}' matches ${leaf.map((v) => v.candidate.key).join(", ")}`,
    });
  }
  const close = nearest(
    name,
    pool.flatMap((v) => [v.candidate.key, v.candidate.name]),
    { fragments: true },
  );
  throw new HermesError("E_PLUGIN_NOT_FOUND", {
    message: `plugin '${name}' is not installed or bundled${close ? `; did you mean '${close}'?` : ""}`,
  });
}
