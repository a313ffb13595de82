import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CompileResult } from "../compile/compile.js";
import { isPythonPlugin, PYTHON_ENTRY } from "../contracts/plugin-record.js";

/*
 * The Python plugins' virtual environments follow each compile that writes or keeps a lock
 * (`hermes compile`, `plugins install`, `plugins enable`), never a start. This module is the light
 * door: a lock with no Python plugin and a home with no environments load nothing more.
 */

export interface PythonEnvOptions {
  home: string;
  /** The environment pip runs with (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX …); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Re-probe the interpreter and re-check every environment (`compile --full-hash`). */
  full?: boolean;
  /** Progress and failures, one line each (stderr). */
  note: (line: string) => void;
}

/** After a compile: build what its lock's Python plugins need. Returns the compile result unchanged. */
export async function withPythonEnvs(
  o: PythonEnvOptions & { dryRun?: boolean; check?: boolean },
  res: CompileResult,
): Promise<CompileResult> {
  if (o.dryRun || o.check || !res.plan.ok) return res;
  // A lock whose text never names the Python entry has no Python plugin: a no-op compile need not parse it.
  const maybePython = res.plan.lockText.includes(PYTHON_ENTRY) && res.plan.lock.plugins.some(isPythonPlugin);
  if (!maybePython && !existsSync(join(o.home, "python-envs"))) return res;
  const { syncPythonEnvs } = await import("./python-env-sync.js");
  await syncPythonEnvs({ ...o, lock: res.plan.lock });
  return res;
}
