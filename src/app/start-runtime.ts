import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { HermesError } from "../core/errors.js";
import { logger } from "../core/log.js";
import { homePaths, type HomePaths } from "../core/paths.js";
import { readManaged, type ManagedMarker } from "../config/managed.js";
import { compileBase, inputBytes } from "../compile/noop.js";
import { quickUpToDate, recordQuick } from "../compile/quick-check.js";
import { lockCatalogProblem, parseTrustedLockText, readLock, serializeLock, type Lock } from "../contracts/lock.js";
import type { CompilePlan, PluginChange } from "../compile/plan.js";
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
  return changes
    .map(
      (c) =>
        `${c.op === "add" ? "+" : c.op === "remove" ? "-" : "~"} ${c.key}` +
        `${c.details.length ? ` (${c.details.join("; ")})` : ""}`,
    )
    .join(", ");
}

/** The command that rewrites a managed home's lock: its deployment's compile. */
function deploymentFix(marker: ManagedMarker, spec: string | null | undefined): string {
  return spec ? `hermes compile --spec ${spec} --managed ${marker.kind}` : `the ${marker.kind} activation`;
}

/** A lock that differs from what its own inputs compile to was edited after the compile. */
function wasEdited(lock: Lock | undefined, plan: CompilePlan): boolean {
  return !!lock && plan.lock.inputs_hash === lock.inputs_hash && plan.lockText !== serializeLock(lock);
}

/**
 * A managed home is only compiled by its deployment: plan once against the disk and refuse a lock
 * that was edited or is stale, naming the command that fixes it; a current lock is recorded as checked.
 */
async function checkManagedLock(
  paths: HomePaths,
  marker: ManagedMarker,
  lock: Lock | undefined,
  opts: StartOptions,
  verify: VerifyMode,
): Promise<Lock> {
  // The compiler is loaded only when the quick check could not vouch for the lock.
  const [{ gatherInputs }, { planCompile }, { readPendingRecord }] = await Promise.all([
    import("../compile/gather.js"),
    import("../compile/plan.js"),
    import("../compile/generations.js"),
  ]);
  const since = Date.now();
  const inputs = await gatherInputs({ home: paths.home, cwd: opts.cwd, env: opts.env, fullHash: verify === "full" });
  const plan = planCompile(inputs);
  if (lock && wasEdited(lock, plan)) {
    throw new HermesError("E_LOCK_TAMPERED", {
      message: `the lock of this ${marker.kind}-managed home cannot be trusted: ${EDITED}`,
      hint:
        `run \`${deploymentFix(marker, lock.deployment.spec)}\` to write it again; a managed home is only ` +
        "compiled by its deployment",
    });
  }
  if (!lock || plan.lock.inputs_hash !== lock.inputs_hash) {
    const what = lock ? describe(plan.pluginChanges) : "no lock yet";
    const pending = await readPendingRecord(paths);
    if (pending) {
      const rerun = pending.spec
        ? `hermes compile --spec ${pending.spec} --managed ${pending.kind ?? marker.kind}`
        : "hermes compile";
      throw new HermesError("E_COMPILE_INTERRUPTED", {
        message:
          `a compile of this ${marker.kind}-managed home${pending.spec ? ` from ${pending.spec}` : ""} started ` +
          `at ${pending.at} did not finish (killed or failed mid-apply), so its config and links are ahead of ` +
          `the lock in force (${what})`,
        hint:
          `re-run that same compile: \`${rerun}\` (or the ${marker.kind} activation that ran it); nothing else ` +
          "needs fixing",
      });
    }
    const spec = lock?.deployment.spec;
    throw new HermesError("E_COMPILE_STALE", {
      message: `the lock of this ${marker.kind}-managed home does not match the disk: ${what}`,
      hint:
        `run \`${spec ? deploymentFix(marker, spec) : `re-run the ${marker.kind} activation`}\` (or re-run the ` +
        "deployment); a managed home is only compiled by its deployment",
    });
  }
  await inputs.cache.save().catch(() => undefined);
  await inputs.manifests.save().catch(() => undefined);
  await recordQuick(
    paths,
    compileBase(paths, { home: paths.home, cwd: opts.cwd, env: opts.env }, inputBytes(inputs)),
    inputs.watch,
    // The lock bytes this start checked: a compile that replaced the lock meanwhile gets no record of ours.
    { since, lockText: plan.lockText },
  ).catch(() => undefined);
  return lock;
}

/**
 * An unmanaged home keeps a developer's edit-run loop one step: compile (which plans once and
 * writes only when something changed), saying why whenever the lock it had is replaced.
 */
async function compileUnmanaged(
  paths: HomePaths,
  lock: Lock | undefined,
  opts: StartOptions,
  verify: VerifyMode,
  log: Logger,
): Promise<Lock> {
  const { compile } = await import("../compile/compile.js");
  const res = await compile({
    home: paths.home,
    cwd: opts.cwd,
    env: opts.env,
    fullHash: verify === "full",
    onPlan: (plan) => {
      if (wasEdited(lock, plan)) log.warn(`${EDITED}; recompiling`);
      else if (!lock) log.warn("lock is stale: no lock yet; recompiling");
      else if (plan.lock.inputs_hash !== lock.inputs_hash) {
        const what = describe(plan.pluginChanges);
        // Never silently: the default log level is warn.
        log.warn(
          "lock is " +
            `stale: ${plan.pluginChanges.length ? `plugin(s) changed since the last compile: ${what}` : what}; ` +
            "recompiling",
        );
      }
    },
  });
  if (res.applied) log.info(`recompiled: generation ${res.generation}`);
  return res.plan.lock;
}

const EDITED = "hermes.lock.json differs from what its inputs compile to (edited after the compile)";

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
  const unchanged =
    verify === "fast" && quickUpToDate(paths, compileBase(paths, { home: paths.home, cwd: opts.cwd, env: opts.env }));
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
  const otherCatalog = lock && lockCatalogProblem(lock);
  if (lock && otherCatalog) {
    if (marker) {
      throw new HermesError("E_LOCK_CATALOG", {
        message: `the lock of this ${marker.kind}-managed home cannot run here: ${otherCatalog}`,
        hint:
          `run \`${deploymentFix(marker, lock.deployment.spec)}\` with this hermes-kit to compile it for its ` +
          "catalog",
      });
    }
    log.warn(`${otherCatalog}; recompiling`);
    lock = undefined;
  }
  // `off` trusts a lock it could read; `fast` trusts one the quick check vouched for.
  const trusted = lock && (verify === "off" || unchanged) ? lock : undefined;
  const current =
    trusted ??
    (marker
      ? await checkManagedLock(paths, marker, lock, opts, verify)
      : await compileUnmanaged(paths, lock, opts, verify, log));
  const runtime = new Runtime(paths.home, current, { log });
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
