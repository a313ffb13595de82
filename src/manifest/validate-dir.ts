import { promises as fsp } from "node:fs";
import { basename, resolve } from "node:path";
import { diagnostic, type Diagnostic } from "../core/errors.js";
import { candidateFromFolder, type Candidate } from "../discovery/scan.js";

/** `hermes plugins validate <dir>`: one plugin folder, every problem at once. */
export async function validatePluginDir(dir: string): Promise<{ candidate?: Candidate; diagnostics: Diagnostic[] }> {
  const abs = resolve(dir);
  const st = await fsp.stat(abs).catch((e: NodeJS.ErrnoException) => e);
  if (st instanceof Error) {
    return { diagnostics: [diagnostic("E_FS_READ", `cannot read ${abs}: ${st.code === "ENOENT" ? "no such folder" : st.message}`, { file: abs })] };
  }
  if (!st.isDirectory()) return { diagnostics: [diagnostic("E_FS_READ", `${abs} is not a folder`, { file: abs })] };
  const candidate = await candidateFromFolder(abs, "user", { dirName: basename(abs) });
  if (!candidate) return { diagnostics: [diagnostic("E_DISCOVERY_NO_MANIFEST", `${abs} has no plugin.yaml or plugin.yml`, { file: abs })] };
  return { candidate, diagnostics: candidate.diagnostics };
}
