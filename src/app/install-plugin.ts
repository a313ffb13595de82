import { installPlugin, type InstallOptions, type InstallResult } from "../install/install.js";
import { removePlugin, type RemoveOptions, type RemoveResult } from "../install/remove.js";
import { updatePlugin, type UpdateOptions, type UpdateResult } from "../install/update.js";
import { installPack, type PackCommandOptions, type PackInstallSummary } from "../pack/install.js";
import { ownershipGuard } from "./plugin-state.js";
import { withPythonEnvs } from "./python-envs.js";

/*
 * The commands that place or remove plugin trees. Each refuses, in a managed home, to edit what the
 * deployment owns: the guard is read from the home's marker and lock before the work starts.
 */

/** `hermes plugins install <identifier>`. */
export async function installIntoHome(o: Omit<InstallOptions, "guard">): Promise<InstallResult> {
  const res = await installPlugin({ ...o, guard: await ownershipGuard(o.paths) });
  if (res.compile) await withPythonEnvs({ home: o.paths.home, env: o.env, note: (l) => o.io.warn(l) }, res.compile);
  return res;
}

/** `hermes plugins update <name>`. */
export async function updateInHome(o: Omit<UpdateOptions, "guard">): Promise<UpdateResult> {
  const res = await updatePlugin({ ...o, guard: await ownershipGuard(o.paths) });
  if (res.compile) await withPythonEnvs({ home: o.paths.home, env: o.env, note: (l) => o.io.warn(l) }, res.compile);
  return res;
}

/** `hermes plugins remove <name>`. */
export async function removeFromHome(o: Omit<RemoveOptions, "guard">): Promise<RemoveResult> {
  return removePlugin({ ...o, guard: await ownershipGuard(o.paths) });
}

/** `hermes plugins pack install <src>`. */
export async function installPackIntoHome(o: Omit<PackCommandOptions, "guard">): Promise<PackInstallSummary> {
  return installPack({ ...o, guard: await ownershipGuard(o.paths) });
}
