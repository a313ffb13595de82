import { promises as fsp } from "node:fs";
import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";

/**
 * A read-only command never creates a home. One named by `--home` that does not exist is a typo
 * (an error); `explicitOnly` lets a command show the default or $HERMES_HOME home as brand new instead.
 */
export async function assertHomeExists(
  paths: HomePaths,
  opts: { explicitOnly?: boolean; explicitHome?: boolean } = {},
): Promise<void> {
  if (
    await fsp.stat(paths.home).then(
      (s) => s.isDirectory(),
      () => false,
    )
  )
    return;
  if (opts.explicitOnly && !opts.explicitHome) return;
  throw new HermesError("E_HOME_NOT_FOUND", { message: `${paths.home} does not exist` });
}
