import { resolve } from "node:path";
import { diagnostic, type Diagnostic } from "../core/errors.js";
import { loadConfig } from "./config-file.js";

/** `hermes config validate`: parse, schema, and the value rules the schema cannot state. */
export async function validateConfigFile(file: string): Promise<Diagnostic[]> {
  const cfg = await loadConfig(resolve(file));
  if (!cfg.exists) return [diagnostic("E_FS_READ", `${cfg.file} does not exist`, { file: cfg.file })];
  const out = [...cfg.diagnostics];
  const plugins = cfg.value.plugins as Record<string, unknown> | undefined;
  if (plugins && typeof plugins === "object") {
    for (const k of ["hook_callback_timeout", "load_timeout_seconds"] as const) {
      const v = plugins[k];
      if (typeof v === "number" && v > 600) {
        out.push(diagnostic("W_CONFIG_CLAMPED", `plugins.${k} = ${v} is above 600 and will be clamped to 600`, cfg.source.locate(["plugins", k])));
      }
    }
  }
  return out;
}
