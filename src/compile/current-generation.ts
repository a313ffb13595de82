import { promises as fsp } from "node:fs";
import { join } from "node:path";
import type { HomePaths } from "../core/paths.js";

/** The name of the one switch: `generations/current` → `<n>`. */
export const CURRENT = "current";

/** The generation `generations/current` points to (its own module: a no-op compile reads no lock contract). */
export async function currentGeneration(paths: HomePaths): Promise<number | undefined> {
  const v = await fsp.readlink(join(paths.generations, CURRENT)).catch(() => undefined);
  return v && /^\d+$/.test(v) ? Number(v) : undefined;
}
