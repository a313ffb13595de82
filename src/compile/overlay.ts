import { isDeepStrictEqual } from "node:util";
import type { YamlEdit } from "../core/yaml-edit.js";
import type { Ownership } from "../config/managed.js";
import type { ListPolicy } from "./deploy-spec.js";

export type { Ownership };

/**
 * The deployment's share of config.yaml. A deploy spec declares leaves (scalars, mappings'
 * leaves) and lists; the deployment owns exactly those. Under `union`, a list keeps the user's
 * items and gains the deployment's; items the deployment added before and no longer declares are
 * taken out again. Under `replace`, the deployment's list is the list. Leaves the deployment
 * owned before and no longer declares are removed: they were never the user's.
 */

export interface OverlayPlan {
  edits: YamlEdit[];
  /** Readable changes for the plan: `set model.default: "a" → "b"`. */
  changes: OverlayChange[];
  owned: Ownership;
}

export interface OverlayChange {
  path: string[];
  op: "set" | "delete" | "add-items" | "remove-items";
  from?: unknown;
  to?: unknown;
  items?: unknown[];
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function getIn(root: unknown, path: readonly string[]): unknown {
  let cur = root;
  for (const p of path) {
    if (!isMapping(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

function hasPath(root: unknown, path: readonly string[]): boolean {
  let cur = root;
  for (const p of path) {
    if (!isMapping(cur) || !Object.prototype.hasOwnProperty.call(cur, p)) return false;
    cur = cur[p];
  }
  return true;
}

/** Deep-merge declared overlays; later mappings merge into earlier ones, lists concatenate uniquely. */
export function mergeDeclared(target: Record<string, unknown>, add: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(add)) {
    const cur = target[k];
    if (isMapping(cur) && isMapping(v)) mergeDeclared(cur, v);
    else if (Array.isArray(cur) && Array.isArray(v))
      target[k] = [...cur, ...v.filter((x) => !cur.some((c) => isDeepStrictEqual(c, x)))];
    else target[k] = structuredClone(v);
  }
  return target;
}

/** Deletes for the mappings that only the deployment's deleted leaves kept non-empty (no `model: {}` left behind). */
function pruneEmptied(config: Record<string, unknown>, deleted: readonly string[][]): YamlEdit[] {
  if (!deleted.length) return [];
  const after = structuredClone(config);
  const edits: YamlEdit[] = [];
  const remove = (path: readonly string[]) => {
    const parent = getIn(after, path.slice(0, -1));
    if (isMapping(parent)) delete parent[path[path.length - 1]!];
  };
  for (const leaf of deleted) remove(leaf);
  for (const leaf of deleted) {
    for (let n = leaf.length - 1; n >= 1; n--) {
      const path = leaf.slice(0, n);
      const node = getIn(after, path);
      if (!isMapping(node) || Object.keys(node).length > 0) break;
      remove(path);
      edits.push({ op: "delete", path });
    }
  }
  return edits;
}

const itemKey = (v: unknown) => JSON.stringify(v);
export const listId = (path: readonly string[]) => JSON.stringify(path);

export function planOverlay(
  config: Record<string, unknown>,
  declared: Record<string, unknown>,
  policy: ListPolicy,
  previous: Ownership,
): OverlayPlan {
  const edits: YamlEdit[] = [];
  const changes: OverlayChange[] = [];
  const owned: Ownership = { leaves: [], items: {} };

  const visit = (node: Record<string, unknown>, base: string[]): void => {
    for (const [k, v] of Object.entries(node)) {
      const path = [...base, k];
      if (isMapping(v) && Object.keys(v).length > 0) {
        visit(v, path);
        continue;
      }
      const current = getIn(config, path);
      if (Array.isArray(v) && policy === "union") {
        const mine = v.map(itemKey);
        const before = (previous.items[listId(path)] ?? []).filter((x) => !mine.includes(x));
        const cur = Array.isArray(current) ? current : [];
        const keep = cur.filter((x) => !before.includes(itemKey(x)));
        const add = v.filter((x) => !keep.some((c) => itemKey(c) === itemKey(x)));
        // Only items the deployment put there are its own: one the user already had stays the user's.
        const had = previous.items[listId(path)] ?? [];
        owned.items[listId(path)] = mine.filter((k) => had.includes(k) || add.some((a) => itemKey(a) === k));
        if (current !== undefined && current !== null && !Array.isArray(current)) {
          edits.push({ op: "set", path, value: [...v] });
          changes.push({ op: "set", path, from: current, to: v });
          continue;
        }
        const removed = cur.filter((x) => before.includes(itemKey(x)));
        if (removed.length) {
          edits.push({ op: "remove", path, match: (x) => before.includes(itemKey(x)) });
          changes.push({ op: "remove-items", path, items: removed });
        }
        if (add.length) {
          if (!Array.isArray(current)) edits.push({ op: "set", path, value: add });
          else for (const a of add) edits.push({ op: "append", path, value: a });
          changes.push({ op: "add-items", path, items: add });
        }
        continue;
      }
      owned.leaves.push(path);
      if (!hasPath(config, path) || !isDeepStrictEqual(current, v)) {
        edits.push({ op: "set", path, value: structuredClone(v) });
        changes.push({ op: "set", path, from: current, to: v });
      }
    }
  };
  visit(declared, []);

  const stillOwned = new Set(owned.leaves.map((p) => listId(p)));
  const deleted: string[][] = [];
  for (const leaf of previous.leaves) {
    if (stillOwned.has(listId(leaf)) || owned.items[listId(leaf)]) continue;
    // A leaf that became an inner mapping of a newer declaration is still the deployment's.
    if (owned.leaves.some((p) => p.length > leaf.length && leaf.every((s, i) => p[i] === s))) continue;
    if (hasPath(config, leaf)) {
      edits.push({ op: "delete", path: leaf });
      changes.push({ op: "delete", path: leaf, from: getIn(config, leaf) });
      deleted.push(leaf);
    }
  }
  edits.push(...pruneEmptied(config, deleted));
  for (const [id, items] of Object.entries(previous.items)) {
    if (owned.items[id] || stillOwned.has(id)) continue;
    const path = JSON.parse(id) as string[];
    const cur = getIn(config, path);
    if (!Array.isArray(cur)) continue;
    const gone = cur.filter((x) => items.includes(itemKey(x)));
    if (gone.length) {
      edits.push({ op: "remove", path, match: (x) => items.includes(itemKey(x)) });
      changes.push({ op: "remove-items", path, items: gone });
    }
  }
  return { edits, changes, owned };
}
