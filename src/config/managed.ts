import { promises as fsp } from "node:fs";
import { writeFileAtomic } from "../core/atomic-fs.js";
import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { formatJsonPath } from "../core/json-path.js";
import type { LockDeployment } from "../contracts/lock.js";

/** `$HERMES_HOME/.managed`: which deployer owns this home (nixos, home-manager, …). */
export interface ManagedMarker {
  kind: string;
}

export async function readManaged(paths: HomePaths): Promise<ManagedMarker | undefined> {
  let text: string;
  try {
    text = (await fsp.readFile(paths.managed, "utf8")).trim();
  } catch {
    return undefined;
  }
  // The original wrote the bare kind; ours writes JSON. Both are read.
  try {
    const v = JSON.parse(text) as { kind?: unknown };
    if (typeof v?.kind === "string") return { kind: v.kind };
  } catch {
    // not JSON: the original's plain-text marker
  }
  return { kind: text || "managed" };
}

export async function writeManaged(paths: HomePaths, kind: string): Promise<boolean> {
  const text = `${JSON.stringify({ kind })}\n`;
  const cur = await fsp.readFile(paths.managed, "utf8").catch(() => undefined);
  if (cur === text) return false;
  await writeFileAtomic(paths.managed, text);
  return true;
}

export interface Ownership {
  leaves: string[][];
  items: Record<string, string[]>;
}

/** How a lock's deployment records ownership. */
export type OwnershipRecord = Pick<LockDeployment, "owned_leaves" | "owned_items">;

/** The ownership a lock's deployment records; nothing owned when there is no lock. */
export function ownershipOf(d: OwnershipRecord | undefined): Ownership {
  return d ? { leaves: d.owned_leaves, items: d.owned_items } : { leaves: [], items: {} };
}

/** The lock's deployment fields for an ownership (the inverse of ownershipOf). */
export function ownershipRecord(o: Ownership): OwnershipRecord {
  return { owned_leaves: o.leaves, owned_items: o.items };
}

/**
 * Refuse an imperative change the deployment would undo at its next activation: a leaf it owns,
 * or an item it contributed to a list. Everything else stays writable, so a managed home stays usable.
 */
export function assertNotOwned(kind: string, owned: Ownership, path: string[], item?: string): void {
  const owns = owned.leaves.some((l) => l.length <= path.length && l.every((s, i) => path[i] === s));
  const listed = item !== undefined && (owned.items[JSON.stringify(path)] ?? []).includes(JSON.stringify(item));
  if (owns || listed) {
    throw new HermesError("E_CONFIG_MANAGED_KEY", {
      message:
        `${formatJsonPath(path)}${item !== undefined ? ` item '${item}'` : ""} is set by the ${kind} ` +
        "deployment of this home",
    });
  }
}
