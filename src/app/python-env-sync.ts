import { randomBytes } from "node:crypto";
import { existsSync, promises as fsp, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { mkdirOwned, readTextIfExists, symlinkAtomic, writeFileAtomic } from "../core/atomic-fs.js";
import { canonicalJson } from "../core/canonical-json.js";
import { formatDiagnostic, HermesError } from "../core/errors.js";
import { withFileLock } from "../core/file-lock.js";
import { sha256Hex } from "../core/hash.js";
import type { Lock, LockPlugin } from "../contracts/lock.js";
import { readManifestFile } from "../manifest/files.js";
import { pythonCommand } from "../runtime/python/bridge-process.js";
import { isPythonPlugin } from "../contracts/plugin-record.js";
import { pluginVenvDir, probePython, type PythonProbe } from "../runtime/python/environment.js";
import { pluginEnvRecordFile, readPluginEnvRecord, type PluginEnvRecord } from "../runtime/python/env-record.js";
import type { PythonEnvOptions } from "./python-envs.js";
import { buildVenv } from "./venv-build.js";

/** Written into each built environment: what it was built for. */
const STAMP = "hermes-env.json";
/** The environments themselves; `python-envs/<key>` is a link into it, swapped in one rename. */
const STORE = ".store";

interface Requirements {
  lines: string[];
  /** Over the interpreter and the requirements: an environment built for the same one is reused. */
  sha256: string;
}

interface Sync extends PythonEnvOptions {
  lock: Lock;
  dir: string;
  command: string;
  probe?: PythonProbe;
}

/**
 * Bring `<home>/python-envs` in line with the lock: each Python plugin that loads gets the environment
 * its pip_dependencies and requirements.txt ask for, environments of plugins the lock no longer names
 * go. A plugin whose record says it was checked for the same tree and interpreter costs one read.
 */
export async function syncPythonEnvs(o: PythonEnvOptions & { lock: Lock }): Promise<void> {
  const s: Sync = { ...o, dir: join(o.home, "python-envs"), command: pythonCommand(o.env ?? process.env) };
  const wanted = o.lock.plugins.filter((p) => isPythonPlugin(p) && p.action !== "skip");
  const stray = await strayEntries(s);
  if (!stray.length && wanted.every((p) => !o.full && fresh(s, p))) return;
  await mkdirOwned(s.dir);
  await withFileLock(
    join(s.dir, ".build"),
    async () => {
      for (const name of stray) await fsp.rm(join(s.dir, name), { recursive: true, force: true });
      // Another compile may have built them while this one waited for the lock.
      for (const p of wanted) if (o.full || !fresh(s, p)) await syncOne(s, p);
      await sweepStore(s);
    },
    { timeoutMs: 60 * 60_000 },
  );
}

/** The last check was for this tree (lock integrity) and interpreter command, and did not fail. */
function fresh(s: Sync, p: LockPlugin): boolean {
  const r = readPluginEnvRecord(s.home, p.key);
  if (!r || r.integrity !== p.integrity || r.python !== s.command || r.status === "failed") return false;
  return r.status === "none" || existsSync(pluginVenvDir(s.home, p.key));
}

/** Links and records of plugins the lock does not name at all (removed plugins); disabled ones keep theirs. */
async function strayEntries(s: Sync): Promise<string[]> {
  const names = await fsp.readdir(s.dir).catch(() => [] as string[]);
  if (!names.length) return [];
  const known = new Set(s.lock.plugins.map((p) => basename(pluginVenvDir(s.home, p.key))));
  return names.filter((n) => !n.startsWith(".") && !known.has(n.replace(/\.json$/, "")));
}

async function syncOne(s: Sync, p: LockPlugin): Promise<void> {
  const link = pluginVenvDir(s.home, p.key);
  const record = (r: Omit<PluginEnvRecord, "integrity" | "python">) =>
    writeFileAtomic(
      pluginEnvRecordFile(s.home, p.key),
      `${JSON.stringify({ integrity: p.integrity, python: s.command, ...r }, null, 2)}\n`,
    );
  try {
    const req = await requirementsOf(s, p);
    if (!req) {
      await fsp.rm(link, { recursive: true, force: true });
      return await record({ status: "none", requirements_sha256: null });
    }
    if (stampOf(link) !== req.sha256) await build(s, p, link, req);
    await record({ status: "ready", requirements_sha256: req.sha256 });
  } catch (e) {
    const err =
      e instanceof HermesError
        ? e
        : new HermesError("E_PYENV_INSTALL_FAILED", { message: `plugin ${p.key}: ${(e as Error).message}` });
    await record({
      status: "failed",
      requirements_sha256: null,
      error: { code: err.code, message: err.message, hint: err.hint },
    });
    s.note(formatDiagnostic(err.toDiagnostic()));
    s.note(`plugin ${p.key} fails to load until its environment is built (\`hermes plugins why ${p.key}\`)`);
  }
}

/** The requirements of a plugin and their hash with the interpreter's, or undefined when it has none. */
async function requirementsOf(s: Sync, p: LockPlugin): Promise<Requirements | undefined> {
  const found = readManifestFile(p.target);
  // The YAML parser loads only for a plugin that changed: a no-op compile never needs it.
  const { parseManifestText } = await import("../manifest/parse.js");
  const deps = found ? (parseManifestText(found.text, found.file, p.name).manifest?.pip_dependencies ?? []) : [];
  const txtFile = join(p.target, "requirements.txt");
  const txt = await readTextIfExists(txtFile);
  if (!deps.length && txt === undefined) return undefined;
  for (const d of deps)
    if (d.startsWith("-") || /[\r\n]/.test(d))
      throw new HermesError("E_PYENV_INSTALL_FAILED", {
        message: `plugin ${p.key}: pip_dependencies entry ${JSON.stringify(d)} is not one requirement`,
        hint: "write one requirement per entry (e.g. httpx>=0.27); pip options belong in the plugin's requirements.txt",
      });
  s.probe ??= probePython(s.env ?? process.env);
  if (s.probe.problem)
    throw new HermesError("E_PYBRIDGE_NO_PYTHON", { message: `plugin ${p.key}: ${s.probe.problem}` });
  const python = { executable: s.probe.executable, version: s.probe.version };
  return {
    lines: [...deps, ...(txt !== undefined ? [`-r ${txtFile}`] : [])],
    sha256: sha256Hex(canonicalJson({ python, pip_dependencies: deps, requirements_txt: txt ?? null })),
  };
}

/** The requirements hash an existing environment was built for. */
function stampOf(link: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(link, STAMP), "utf8")) as { requirements_sha256?: string })
      .requirements_sha256;
  } catch {
    return undefined;
  }
}

/** Build in a new folder of the store, then swap the link: a failed build leaves the previous environment. */
async function build(s: Sync, p: LockPlugin, link: string, req: Requirements): Promise<void> {
  const name = `${basename(link)}-${req.sha256.slice(0, 12)}-${randomBytes(4).toString("hex")}`;
  const dir = join(s.dir, STORE, name);
  await mkdirOwned(join(s.dir, STORE));
  s.note(`python env ${p.key}: installing ${req.lines.join(", ")} with pip …`);
  try {
    await buildVenv({
      key: p.key,
      python: s.command,
      dir,
      requirements: req.lines,
      cwd: p.target,
      env: s.env ?? process.env,
    });
    const stamp = {
      key: p.key,
      requirements_sha256: req.sha256,
      python: s.probe?.executable,
      version: s.probe?.version,
    };
    await writeFileAtomic(join(dir, STAMP), `${JSON.stringify(stamp, null, 2)}\n`);
  } catch (e) {
    await fsp.rm(dir, { recursive: true, force: true });
    throw e;
  }
  // A folder where the link goes (made by hand) is replaced; the link is relative, so a moved home keeps it.
  if ((await fsp.lstat(link).catch(() => undefined))?.isDirectory()) await fsp.rm(link, { recursive: true });
  await symlinkAtomic(join(STORE, name), link);
  s.note(`python env ${p.key}: ready (${link})`);
}

/** Store folders no link points at: replaced environments, and builds a killed compile left. */
async function sweepStore(s: Sync): Promise<void> {
  const store = join(s.dir, STORE);
  const names = await fsp.readdir(store).catch(() => [] as string[]);
  if (!names.length) return;
  const used = new Set<string>();
  for (const n of await fsp.readdir(s.dir))
    if (!n.startsWith(".") && !n.endsWith(".json"))
      used.add(basename(await fsp.readlink(join(s.dir, n)).catch(() => "")));
  for (const n of names) if (!used.has(n)) await fsp.rm(join(store, n), { recursive: true, force: true });
}
