import { diagnostic, type Diagnostic } from "../core/errors.js";
import { didYouMean } from "../core/suggest.js";

export interface OrderInput {
  key: string;
  name: string;
  requires: readonly string[];
}

export interface OrderResult {
  order: string[];
  /** Topological batches (each sorted); with a fallback, one batch per forced step. */
  batches: string[][];
  diagnostics: Diagnostic[];
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function kahn(keys: readonly string[], edges: Map<string, Set<string>>): { batches: string[][]; left: Set<string> } {
  const indeg = new Map(keys.map((k) => [k, 0]));
  for (const [, tos] of edges) for (const t of tos) indeg.set(t, (indeg.get(t) ?? 0) + 1);
  const batches: string[][] = [];
  let ready = keys.filter((k) => indeg.get(k) === 0).sort(byKey);
  const done = new Set<string>();
  while (ready.length) {
    batches.push(ready);
    const next: string[] = [];
    for (const k of ready) {
      done.add(k);
      for (const t of edges.get(k) ?? []) {
        const d = indeg.get(t)! - 1;
        indeg.set(t, d);
        if (d === 0) next.push(t);
      }
    }
    ready = next.sort(byKey);
  }
  return { batches, left: new Set(keys.filter((k) => !done.has(k))) };
}

/**
 * A cycle among the nodes Kahn could not place. Each of them has a predecessor among them, so
 * walking predecessors from any start must revisit a node; the loop found is a real cycle.
 */
function findCycle(left: Set<string>, edges: Map<string, Set<string>>): string[] {
  const preds = new Map<string, string[]>();
  for (const [from, tos] of edges) {
    if (!left.has(from)) continue;
    for (const t of tos) if (left.has(t)) preds.set(t, [...(preds.get(t) ?? []), from]);
  }
  const seen = new Map<string, number>();
  const path: string[] = [];
  let cur = [...left].sort(byKey)[0]!;
  while (!seen.has(cur)) {
    seen.set(cur, path.length);
    path.push(cur);
    cur = (preds.get(cur) ?? []).sort(byKey)[0]!;
  }
  const loop = path.slice(seen.get(cur)!).reverse();
  // Start the reported cycle at its smallest key, so the same cycle always reads the same.
  const at = loop.indexOf([...loop].sort(byKey)[0]!);
  const rotated = [...loop.slice(at), ...loop.slice(0, at)];
  return [...rotated, rotated[0]!];
}

type Edges = Map<string, Set<string>>;

/** Edges from each dependency to the plugins that require it; unknown and self dependencies only warn. */
function dependencyEdges(
  plugins: readonly OrderInput[],
  keySet: ReadonlySet<string>,
  byName: ReadonlyMap<string, string>,
  diagnostics: Diagnostic[],
): Edges {
  const depEdges = new Map<string, Set<string>>();
  for (const p of plugins) {
    for (const dep of p.requires) {
      const target = keySet.has(dep) ? dep : byName.get(dep);
      if (!target) {
        diagnostics.push(
          diagnostic(
            "W_ORDER_MISSING_DEPENDENCY",
            `plugin ${p.key} requires plugin '${dep}' which is not enabled/installed; loading anyway (probe ` +
              "with ctx.has_plugin)",
            { path: `${p.key}.requires_plugins` },
          ),
        );
        continue;
      }
      if (target === p.key) {
        diagnostics.push(
          diagnostic("W_ORDER_MISSING_DEPENDENCY", `plugin ${p.key} requires itself; ignored`, {
            path: `${p.key}.requires_plugins`,
          }),
        );
        continue;
      }
      (depEdges.get(target) ?? depEdges.set(target, new Set()).get(target)!).add(p.key);
    }
  }
  return depEdges;
}

/** The keys `plugins.order` names, in its order; unknown names and repeats are reported and dropped. */
function listedOrder(
  explicitOrder: readonly string[],
  keys: readonly string[],
  keySet: ReadonlySet<string>,
  byName: ReadonlyMap<string, string>,
  diagnostics: Diagnostic[],
): string[] {
  const listed: string[] = [];
  explicitOrder.forEach((k, i) => {
    const key = keySet.has(k) ? k : byName.get(k);
    if (!key) {
      diagnostics.push(
        diagnostic(
          "W_ORDER_UNKNOWN_KEY",
          `plugins.order names '${k}', which is not a loading plugin${didYouMean(k, keys, { fragments: true })}`,
          { path: `plugins.order[${i}]` },
        ),
      );
      return;
    }
    if (listed.includes(key)) {
      diagnostics.push(
        diagnostic("E_ORDER_CYCLE", `plugins.order lists '${key}' twice`, { path: `plugins.order[${i}]` }),
      );
      return;
    }
    listed.push(key);
  });
  return listed;
}

/** Edges between consecutive listed plugins, then from the last listed one to every plugin not needed earlier. */
function explicitOrderEdges(listed: readonly string[], depEdges: Edges, keys: readonly string[]): Edges {
  const orderEdges = new Map<string, Set<string>>();
  for (let i = 1; i < listed.length; i++) {
    (orderEdges.get(listed[i - 1]!) ?? orderEdges.set(listed[i - 1]!, new Set()).get(listed[i - 1]!)!).add(listed[i]!);
  }
  // Plugins not listed follow the listed ones, unless a listed plugin needs them first.
  if (listed.length) {
    const preds = new Map<string, string[]>();
    for (const [from, tos] of depEdges) for (const t of tos) preds.set(t, [...(preds.get(t) ?? []), from]);
    const needed = new Set<string>();
    const stack = [...listed];
    while (stack.length)
      for (const p of preds.get(stack.pop()!) ?? []) if (!needed.has(p)) needed.add(p), stack.push(p);
    const last = listed[listed.length - 1]!;
    for (const k of keys) {
      if (listed.includes(k) || needed.has(k)) continue;
      (orderEdges.get(last) ?? orderEdges.set(last, new Set()).get(last)!).add(k);
    }
  }
  return orderEdges;
}

/**
 * Load order (dependencies plus `plugins.order`): Kahn's algorithm in sorted batches over
 * `requires_plugins` edges and the consecutive pairs of the explicit order list. A cycle made
 * only of dependencies falls back to key order with a warning, as the original does; a cycle
 * that the explicit order forces is an error naming the cycle.
 */
export function resolveLoadOrder(plugins: readonly OrderInput[], explicitOrder: readonly string[] = []): OrderResult {
  const diagnostics: Diagnostic[] = [];
  const keys = plugins.map((p) => p.key).sort(byKey);
  const keySet = new Set(keys);
  const byName = new Map<string, string>();
  for (const p of [...plugins].sort((a, b) => byKey(a.key, b.key))) if (!byName.has(p.name)) byName.set(p.name, p.key);
  const depEdges = dependencyEdges(plugins, keySet, byName, diagnostics);
  const listed = listedOrder(explicitOrder, keys, keySet, byName, diagnostics);
  const orderEdges = explicitOrderEdges(listed, depEdges, keys);
  const all = new Map<string, Set<string>>();
  for (const src of [depEdges, orderEdges])
    for (const [f, ts] of src) for (const t of ts) (all.get(f) ?? all.set(f, new Set()).get(f)!).add(t);
  const first = kahn(keys, all);
  if (first.left.size === 0) return { order: first.batches.flat(), batches: first.batches, diagnostics };
  const cycle = findCycle(first.left, all);
  const forced = cycle
    .slice(1)
    .some((to, i) => orderEdges.get(cycle[i]!)?.has(to) && !depEdges.get(cycle[i]!)?.has(to));
  if (forced) {
    diagnostics.push(
      diagnostic("E_ORDER_CYCLE", `plugins.order contradicts requires_plugins: cycle ${cycle.join(" -> ")}`, {
        path: "plugins.order",
      }),
    );
    return { order: keys, batches: [keys], diagnostics };
  }
  diagnostics.push(
    diagnostic(
      "W_ORDER_DEPENDENCY_CYCLE",
      `dependency cycle detected (${cycle.join(" -> ")}); falling back to key order for all plugins`,
      { path: "requires_plugins" },
    ),
  );
  const fallback = kahn(keys, orderEdges);
  return { order: fallback.batches.flat(), batches: fallback.batches, diagnostics };
}
