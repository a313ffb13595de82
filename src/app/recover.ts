import { readdirSync } from "node:fs";
import { basename } from "node:path";
import type { HomePaths } from "../core/paths.js";

/**
 * Roll back an install, update or remove that a killed process left half-placed, before
 * anything reads the plugins dir: every `plugins` command, compile, and each runtime start.
 * Each rollback is reported through `warn` as a `note:` line; a recovery that fails is not fatal.
 */
export async function recoverPluginsDir(paths: HomePaths, warn: (line: string) => void): Promise<void> {
  if (!leftovers(paths)) return;
  const { recoverInterrupted } = await import("../install/stage.js");
  for (const note of await recoverInterrupted(paths).catch(() => [] as string[])) warn(`note: ${note}`);
}

/**
 * Whether plugins/ may hold what recovery acts on: staging folders, the metadata lock and temp files all
 * have dot names, and a folder without any (most starts) needs neither the install code nor more reads.
 */
function leftovers(paths: HomePaths): boolean {
  const metadata = basename(paths.installMetadata);
  try {
    return readdirSync(paths.plugins).some((n) => n.startsWith(".") && n !== metadata);
  } catch {
    return false; // no plugins/ folder: nothing was placed
  }
}
