import { promises as fsp } from "node:fs";
import { basename, resolve } from "node:path";
import { diagnostic, type Diagnostic } from "../core/errors.js";
import { SourceDoc } from "../core/yaml-source.js";
import { candidateFromFolder, type Candidate } from "../discovery/scan.js";
import { isHookName, suggestHook } from "../contracts/hook-catalog.js";
import { readManifestFile } from "../manifest/parse.js";

/**
 * `hermes plugins validate <dir>`: one plugin folder, every problem at once: what discovery and
 * compile report for it (hook names included, with the nearest valid name), plus the unknown
 * fields a version-1 manifest may carry (ignored at load, as the original does, but worth fixing).
 */
export async function validatePluginDir(dir: string): Promise<{ candidate?: Candidate; diagnostics: Diagnostic[] }> {
  const abs = resolve(dir);
  const st = await fsp.stat(abs).catch((e: NodeJS.ErrnoException) => e);
  if (st instanceof Error) {
    return {
      diagnostics: [
        diagnostic("E_FS_READ", `cannot read ${abs}: ${st.code === "ENOENT" ? "no such folder" : st.message}`, {
          file: abs,
        }),
      ],
    };
  }
  if (!st.isDirectory()) return { diagnostics: [diagnostic("E_FS_READ", `${abs} is not a folder`, { file: abs })] };
  const candidate = await candidateFromFolder(abs, "user", { dirName: basename(abs) });
  if (!candidate)
    return {
      diagnostics: [diagnostic("E_DISCOVERY_NO_MANIFEST", `${abs} has no plugin.yaml or plugin.yml`, { file: abs })],
    };
  const diagnostics = [...candidate.diagnostics, ...(candidate.ignoredFields ?? [])];
  const m = candidate.manifest;
  if (m) {
    const read = readManifestFile(abs);
    const src = read ? new SourceDoc(read.text, read.file) : undefined;
    for (const field of ["hooks", "provides_hooks"] as const) {
      m[field].forEach((h, i) => {
        if (isHookName(h)) return;
        const near = suggestHook(h);
        const where = src?.locate([field, i]) ?? { file: candidate.manifestFile, path: `${field}[${i}]` };
        diagnostics.push(
          diagnostic(
            "W_MANIFEST_UNKNOWN_HOOK",
            `unknown hook '${h}' in ${field}${near ? `; did you mean '${near}'?` : " (see docs/hooks.md)"}`,
            where,
          ),
        );
      });
    }
  }
  return { candidate, diagnostics };
}
