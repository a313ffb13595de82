import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { HermesError } from "../core/errors.js";
import { runArgvInGroup, type GroupRunResult } from "../core/process-group.js";

/** The requirements file written into each environment: what pip was asked to install, kept for debugging. */
export const VENV_REQUIREMENTS = "hermes-requirements.txt";

export interface VenvBuild {
  /** The plugin key, for messages. */
  key: string;
  /** The bridge's interpreter (HERMES_PYTHON or python3): the environment must match what runs the plugin. */
  python: string;
  /** A new, empty folder to build in. */
  dir: string;
  /** Requirement lines (pip_dependencies and `-r <plugin>/requirements.txt`). */
  requirements: string[];
  /** Where pip runs: the plugin folder, so relative paths in its requirements.txt mean what they say. */
  cwd: string;
  env: NodeJS.ProcessEnv;
}

// pip options that would send the install somewhere other than the environment.
const REDIRECTS = ["PIP_USER", "PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PYTHONHOME"];

/**
 * `<python> -m venv --system-site-packages --without-pip <dir>`, then pip into it. The interpreter's own
 * packages (a Nix-provided environment) count as installed, and its pip is used when it has one, so
 * an environment costs a copy of the packages pip fetched and nothing else. Throws a HermesError naming
 * the package pip could not find.
 */
export async function buildVenv(b: VenvBuild): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...b.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_NO_INPUT: "1" };
  for (const k of REDIRECTS) delete env[k];
  const run = (argv: string[], timeoutSeconds: number) => runArgvInGroup(argv, { env, cwd: b.cwd, timeoutSeconds });
  const made = await run([b.python, "-m", "venv", "--system-site-packages", "--without-pip", b.dir], 300);
  if (made.exitCode !== 0) throw failed(b.key, "could not create its virtual environment", made);
  const py = join(b.dir, "bin", "python");
  if ((await run([py, "-m", "pip", "--version"], 120)).exitCode !== 0) {
    // The interpreter has no pip of its own: the environment gets the one ensurepip ships.
    const pip = await run([py, "-m", "ensurepip", "--default-pip"], 300);
    if (pip.exitCode !== 0) throw failed(b.key, "has no pip (the interpreter has none and ensurepip failed)", pip);
  }
  const file = join(b.dir, VENV_REQUIREMENTS);
  await fsp.writeFile(file, `${b.requirements.join("\n")}\n`);
  const r = await run([py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-r", file], 1800);
  if (r.exitCode !== 0) throw pipFailure(b.key, r);
}

/** pip's lines that name the problem (ERROR: …), else its last lines. */
function pipSaid(r: GroupRunResult): string {
  if (r.startError) return `it could not start (${r.startError})`;
  if (r.timedOut) return "it did not finish in time";
  const lines = `${r.stderr}\n${r.stdout}`
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const errors = lines.filter((l) => l.startsWith("ERROR:")).map((l) => l.slice(6).trim());
  return (errors.length ? errors : lines.slice(-3)).join("; ") || `exit ${r.exitCode}`;
}

const NOT_FOUND = [
  /No matching distribution found for (\S+)/,
  /Could not find a version that satisfies the requirement (\S+)/,
];

/** The package pip could not find, when that is why it failed. */
export function missingPackage(output: string): string | undefined {
  for (const re of NOT_FOUND) {
    const m = re.exec(output);
    if (m) return m[1];
  }
  return undefined;
}

const UNREACHABLE = /NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution/;

function pipFailure(key: string, r: GroupRunResult): HermesError {
  const output = `${r.stderr}\n${r.stdout}`;
  const requirement = missingPackage(output);
  if (!requirement) return failed(key, "pip install failed", r);
  const name = requirement.split(/[<>=!~;[\s(@]/)[0] || requirement;
  return new HermesError("E_PYENV_PACKAGE_NOT_FOUND", {
    message:
      `pip found no distribution of '${name}'${name !== requirement ? ` (${requirement})` : ""}, which plugin ` +
      `${key} needs${UNREACHABLE.test(output) ? "; the package index could not be reached" : ""}`,
  });
}

function failed(key: string, what: string, r: GroupRunResult): HermesError {
  return new HermesError("E_PYENV_INSTALL_FAILED", {
    message: `the Python environment of plugin ${key}: ${what}: ${pipSaid(r)}`,
  });
}
