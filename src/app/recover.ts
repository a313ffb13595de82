import type { HomePaths } from "../core/paths.js";
import { recoverInterrupted } from "../install/stage.js";

/**
 * Roll back an install, update or remove that a killed process left half-placed, before
 * anything reads the plugins dir: every `plugins` command, compile, and each runtime start.
 * Each rollback is reported through `warn` as a `note:` line; a recovery that fails is not fatal.
 */
export async function recoverPluginsDir(paths: HomePaths, warn: (line: string) => void): Promise<void> {
  for (const note of await recoverInterrupted(paths).catch(() => [] as string[])) warn(`note: ${note}`);
}
