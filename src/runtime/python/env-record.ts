import { readFileSync } from "node:fs";
import { ERROR_CATALOG, HermesError, type ErrorCode } from "../../core/errors.js";
import type { LockPlugin } from "../../contracts/lock.js";
import { pluginVenvDir } from "./environment.js";

/**
 * What the last compile found for one Python plugin's environment, in `<home>/python-envs/<key>.json`
 * beside the environment's link. Written by app/python-envs.ts; read by the runtime and `plugins why`.
 */
export interface PluginEnvRecord {
  /** The lock integrity of the plugin tree the record was made for. */
  integrity: string;
  /** The bridge's interpreter command then (HERMES_PYTHON or python3). */
  python: string;
  /** none: no pip_dependencies nor requirements.txt; ready: the environment is built; failed: it could not be. */
  status: "none" | "ready" | "failed";
  /** sha256 of the interpreter (executable, version) and the requirements; null without any. */
  requirements_sha256: string | null;
  error?: { code: ErrorCode; message: string; hint: string };
}

export function pluginEnvRecordFile(home: string, key: string): string {
  return `${pluginVenvDir(home, key)}.json`;
}

/** The record, or undefined when there is none or it is not one (a record is only a cache of the last check). */
export function readPluginEnvRecord(home: string, key: string): PluginEnvRecord | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(pluginEnvRecordFile(home, key), "utf8"));
  } catch {
    return undefined;
  }
  const r = raw as Partial<PluginEnvRecord> | null;
  if (!r || typeof r.integrity !== "string" || typeof r.python !== "string") return undefined;
  if (r.status !== "none" && r.status !== "ready" && r.status !== "failed") return undefined;
  return { requirements_sha256: null, ...r } as PluginEnvRecord;
}

/** The failure a plugin loads with when the compile of the tree the lock names could not build its environment. */
export function pluginEnvFailure(home: string, p: Pick<LockPlugin, "key" | "integrity">): HermesError | undefined {
  const r = readPluginEnvRecord(home, p.key);
  if (r?.status !== "failed" || r.integrity !== p.integrity) return undefined;
  const code: ErrorCode = r.error && r.error.code in ERROR_CATALOG ? r.error.code : "E_PYENV_INSTALL_FAILED";
  return new HermesError(code, {
    message: r.error?.message || "its Python environment could not be built",
    ...(r.error?.hint ? { hint: r.error.hint } : {}),
  });
}
