import { homePaths } from "../core/paths.js";
import type { Runtime } from "../runtime/runtime.js";
import { assertHomeExists } from "./home-exists.js";
import { recoverPluginsDir } from "./recover.js";
import { startRuntime, type VerifyMode } from "./start-runtime.js";

export interface OpenRuntimeOptions {
  home: string;
  verify?: VerifyMode;
  /** Refuse a home that does not exist instead of starting an empty one. */
  mustExist?: boolean;
  /** Notes about recovered installs, for stderr. */
  warn: (line: string) => void;
}

/** A runtime for a command: the plugins dir is recovered from an interrupted install before anything loads. */
export async function openRuntime(o: OpenRuntimeOptions): Promise<Runtime> {
  const paths = homePaths(o.home);
  if (o.mustExist) await assertHomeExists(paths);
  await recoverPluginsDir(paths, o.warn);
  return startRuntime({ home: o.home, ...(o.verify ? { verify: o.verify } : {}) });
}
