import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { HermesError } from "../core/errors.js";
import { logger } from "../core/log.js";
import { homePaths } from "../core/paths.js";
import { readManaged } from "../config/managed.js";
import { compile, compileBase, inputBytes } from "../compile/compile.js";
import { quickUpToDate, recordQuick } from "../compile/quick-check.js";
import { gatherInputs } from "../compile/gather.js";
import { readPendingRecord } from "../compile/generations.js";
import { parseTrustedLockText, readLock, serializeLock, type Lock } from "../contracts/lock.js";
import { planCompile, type PluginChange } from "../compile/plan.js";
import { HOOK_CATALOG_VERSION } from "../contracts/hook-catalog.js";
import { Runtime } from "../runtime/runtime.js";

/**
 * How much startup re-checks the lock against the disk:
 * - full: hash every plugin file (also immutable /nix/store paths);
 * - fast (default): hash only files whose size, mtime or inode changed since the last hash
 *   (a stat-fingerprint cache), trust store paths by path — see bench/ for what it costs;
 * - off: trust the lock as written.
 */
export type VerifyMode = "full" | "fast" | "off";

export interface StartOptions {
  home: string;
  verify?: VerifyMode;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  /**
   * Runs after the runtime is built and before any plugin loads: the agent registers its
   * built-in and MCP tools here so a plugin can replace them only with `tools.override`.
   */
  beforeLoad?: (runtime: Runtime) => unknown;
}

function describe(changes: readonly PluginChange[]): string {
  if (!changes.length) return "config or settings changed";
  return changes.map((c) => `${c.op === "add" ? "+" : c.op === "remove" ? "-" : "~"} ${c.key}${c.details.length ? ` (${c.details.join("; ")})` : ""}`).join(", ");
}

/**
 * Read and verify the lock, recompiling first where that is allowed (an unmanaged home: a
 * developer's edit-run loop stays one step) and refusing where it is not (a managed home: the
 * deployment is the only writer), then load the plugins.
 */
export async function startRuntime(opts: StartOptions): Promise<Runtime> {
  const log = opts.log ?? logger();
  const paths = homePaths(opts.home);
  const verify = opts.verify ?? "fast";
  const marker = await readManaged(paths);
  let lock: Lock | undefined;
  // Nothing changed since the last compile or verified start, the lock's bytes included: those
  // bytes were checked then, so they are parsed without a second schema pass (bench: startup).
  // Read once: what the disk looked like before anything was gathered is what a record may vouch for.
  let base: string | undefined;
  const baseNow = () => (base ??= compileBase(paths, { home: paths.home, cwd: opts.cwd, env: opts.env }));
  const unchanged = verify === "fast" && quickUpToDate(paths, baseNow());
  if (unchanged) lock = parseTrustedLockText(await readFile(paths.lock, "utf8").catch(() => ""));
  if (!lock) {
    try {
      lock = await readLock(paths.lock);
    } catch (e) {
      if (marker) throw e;
      log.warn(`${(e as Error).message}; recompiling`);
    }
  }
  // A lock written for another hook catalog names hooks this runtime may not have: never run it.
  if (lock && lock.hook_catalog !== HOOK_CATALOG_VERSION) {
    const why = `hermes.lock.json was compiled for hook catalog ${lock.hook_catalog}; this hermes-kit runs ${HOOK_CATALOG_VERSION}`;
    if (marker) {
      const spec = lock.deployment.spec;
      throw new HermesError("E_LOCK_CATALOG", {
        message: `the lock of this ${marker.kind}-managed home cannot run here: ${why}`,
        hint: `run \`${spec ? `hermes compile --spec ${spec} --managed ${marker.kind}` : `the ${marker.kind} activation`}\` with this hermes-kit to compile it for its catalog`,
      });
    }
    log.warn(`${why}; recompiling`);
    lock = undefined;
  }
  if ((verify !== "off" || !lock) && !(unchanged && lock)) {
    const inputs = await gatherInputs({ home: paths.home, cwd: opts.cwd, env: opts.env, fullHash: verify === "full" });
    const plan = planCompile(inputs);
    // Same inputs must compile to the same bytes: a lock that differs was edited (its checksum recomputed).
    if (lock && plan.lock.inputs_hash === lock.inputs_hash && plan.lockText !== serializeLock(lock)) {
      const edited = "hermes.lock.json differs from what its inputs compile to (edited after the compile)";
      if (marker) {
        const spec = lock.deployment.spec;
        throw new HermesError("E_LOCK_TAMPERED", {
          message: `the lock of this ${marker.kind}-managed home cannot be trusted: ${edited}`,
          hint: `run \`${spec ? `hermes compile --spec ${spec} --managed ${marker.kind}` : `the ${marker.kind} activation`}\` to write it again; a managed home is only compiled by its deployment`,
        });
      }
      log.warn(`${edited}; recompiling`);
      lock = undefined;
    }
    if (!lock || plan.lock.inputs_hash !== lock.inputs_hash) {
      const what = lock ? describe(plan.pluginChanges) : "no lock yet";
      if (marker) {
        const pending = await readPendingRecord(paths);
        if (pending) {
          const rerun = pending.spec ? `hermes compile --spec ${pending.spec} --managed ${pending.kind ?? marker.kind}` : "hermes compile";
          throw new HermesError("E_COMPILE_INTERRUPTED", {
            message: `a compile of this ${marker.kind}-managed home${pending.spec ? ` from ${pending.spec}` : ""} started at ${pending.at} did not finish (killed or failed mid-apply), so its config and links are ahead of the lock in force (${what})`,
            hint: `re-run that same compile: \`${rerun}\` (or the ${marker.kind} activation that ran it); nothing else needs fixing`,
          });
        }
        const spec = lock?.deployment.spec;
        const fix = spec ? `hermes compile --spec ${spec} --managed ${marker.kind}` : `re-run the ${marker.kind} activation`;
        throw new HermesError("E_COMPILE_STALE", {
          message: `the lock of this ${marker.kind}-managed home does not match the disk: ${what}`,
          hint: `run \`${fix}\` (or re-run the deployment); a managed home is only compiled by its deployment`,
        });
      }
      // A changed plugin in an unmanaged home is recompiled, but never silently (default level is warn).
      log.warn(`lock is stale: ${plan.pluginChanges.length ? `plugin(s) changed since the last compile: ${what}` : what}; recompiling`);
      const res = await compile({ home: paths.home, cwd: opts.cwd, env: opts.env, fullHash: verify === "full" });
      lock = res.plan.lock;
      log.info(`recompiled: generation ${res.generation}`);
    } else {
      await inputs.cache.save().catch(() => undefined);
      await recordQuick(paths, compileBase(paths, { home: paths.home, cwd: opts.cwd, env: opts.env }, inputBytes(inputs)), inputs.watch).catch(() => undefined);
    }
  }
  const runtime = new Runtime(paths.home, lock!, { log });
  if (opts.beforeLoad) await opts.beforeLoad(runtime);
  try {
    await runtime.loadAll();
  } catch (e) {
    // A refused start must not leave MCP server processes behind.
    await runtime.mcp?.close().catch(() => undefined);
    throw e;
  }
  await runtime.writeStatus();
  return runtime;
}
