import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pythonCommand } from "./bridge-process.js";

/** A plugin's virtual environment (its pip_dependencies), under the home: never inside the plugin folder. */
export function pluginVenvDir(home: string, key: string): string {
  return join(home, "python-envs", key.replace(/\//g, "__"));
}

/** The site-packages folders of a virtual environment, when it exists. */
export function venvSitePackages(venv: string): string[] {
  const lib = join(venv, "lib");
  if (!existsSync(lib)) return [];
  return readdirSync(lib)
    .filter((d) => /^python3\.\d+$/.test(d))
    .map((d) => join(lib, d, "site-packages"))
    .filter((d) => existsSync(d));
}

export interface PythonProbe {
  command: string;
  executable?: string;
  version?: string;
  /** Why Python plugins cannot run with it; absent when they can. */
  problem?: string;
}

/** Which interpreter the bridge would use, and whether it can (Python 3.10+). Spawns it: for `plugins why`. */
export function probePython(env: NodeJS.ProcessEnv = process.env): PythonProbe {
  const command = pythonCommand(env);
  const r = spawnSync(command, ["-c", "import sys; print(sys.executable); print(*sys.version_info[:3], sep='.')"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (r.error)
    return {
      command,
      problem:
        (r.error as NodeJS.ErrnoException).code === "ENOENT"
          ? `no '${command}' on PATH (install Python 3.10+ or set HERMES_PYTHON)`
          : r.error.message,
    };
  const [executable, version] = r.stdout.trim().split("\n");
  if (r.status !== 0 || !version) return { command, problem: `'${command}' did not run: ${r.stderr.trim()}` };
  const [major, minor] = version.split(".").map(Number);
  const tooOld = major! < 3 || (major === 3 && minor! < 10);
  return { command, executable, version, ...(tooOld ? { problem: `Python ${version} is too old (3.10+)` } : {}) };
}
