import { promises as fsp } from "node:fs";
import { resolve } from "node:path";
import { mkdirOwned, readTextIfExists, sweepStaleTemps, writeFileAtomic } from "../core/atomic-fs.js";
import { diagnostic, formatLocation, HermesError, type Diagnostic } from "../core/errors.js";
import { withFileLock } from "../core/file-lock.js";
import { homePaths, type HomePaths } from "../core/paths.js";
import { applyYamlEdits } from "../core/yaml-edit.js";
import { loadConfig, parseConfigText, type EditCheck, type LoadedConfig } from "../config/config-file.js";
import { ConfigCache } from "../config/config-cache.js";
import { ownershipOf, readManaged, writeManaged } from "../config/managed.js";
import { migrateEnabledList, migrationNotice, planMigration } from "../discovery/migrate.js";
import { gatherInputs, type GatherOptions } from "./gather.js";
import {
  assertLinkSlotsFree,
  currentGeneration,
  pruneGenerations,
  readGeneration,
  registerGcRoots,
  removeLinks,
  clearPendingRecord,
  writePendingRecord,
  writeRollbackRecord,
  switchTo,
  syncLinks,
  writeGeneration,
} from "./generations.js";
import { planOverlay } from "./overlay.js";
import { planCompile, type CompilePlan } from "./plan.js";
import { recordQuick } from "./quick-check.js";
import { compileBase, inputBytes, upToDate, withHomeLock } from "./noop.js";
import { faultHold } from "../core/fault.js";
import { logger } from "../core/log.js";

export { compileBase, inputBytes };

export interface CompileOptions extends GatherOptions {
  /** Plan only; write nothing. */
  dryRun?: boolean;
  /** Where the one-time migration is announced (default: a warning on stderr). */
  announce?: (line: string) => void;
  /** Sees the plan before it is applied (the runtime says why it recompiles); may refuse by throwing. */
  onPlan?: (plan: CompilePlan) => void;
}

export interface CompileResult {
  plan: CompilePlan;
  applied: boolean;
  generation?: number;
  home: string;
}

function refuse(plan: CompilePlan): never {
  const errors = plan.diagnostics.filter((d) => d.severity === "error");
  throw new HermesError("E_COMPILE_REFUSED", {
    message: `compile found ${errors.length} error(s); nothing was changed`,
    diagnostics: plan.diagnostics,
  });
}

/**
 * Apply a plan: a complete generation is written invisibly, config.yaml
 * and new links are put in place, then one rename makes the generation current; stale links
 * are removed last. Any step may be killed: the generation in force is the old or the new one.
 */
async function applyPlan(
  paths: HomePaths,
  plan: CompilePlan,
  expectConfig: string | undefined,
): Promise<number | undefined> {
  await assertLinkSlotsFree(paths, plan.links);
  // A kill from here on leaves config and links ahead of the lock: the record tells the next start what to re-run.
  await writePendingRecord(paths, {
    spec: plan.lock.deployment.spec,
    kind: plan.managedKind,
    at: new Date().toISOString(),
  });
  let generation = await currentGeneration(paths);
  if (plan.lockChanged || generation === undefined) {
    generation = await writeGeneration(
      paths,
      plan.lockText,
      plan.links,
      plan.declared,
      {
        created_at: new Date().toISOString(),
        reason: "compile",
        spec: plan.lock.deployment.spec,
        kind: plan.managedKind,
      },
      plan.files,
      plan.configChanged ? plan.configText : (expectConfig ?? null),
    );
    await registerGcRoots(paths, generation, plan.links);
  }
  if (plan.configChanged) {
    await withFileLock(paths.config, async () => {
      const now = await readTextIfExists(paths.config);
      if ((now ?? "") !== (expectConfig ?? "")) {
        throw new HermesError("E_FS_WRITE", {
          message: `${paths.config} changed while compiling; nothing was applied`,
          file: paths.config,
          hint: "run hermes compile again",
        });
      }
      await writeFileAtomic(paths.config, plan.configText);
    });
  }
  await syncLinks(paths, plan.links);
  await switchTo(paths, generation);
  await removeLinks(
    paths,
    plan.linkChanges.filter((c) => c.op === "remove").map((c) => c.link),
  );
  await pruneGenerations(paths);
  await clearPendingRecord(paths);
  return generation;
}

export async function compile(opts: CompileOptions): Promise<CompileResult> {
  const home = resolve(opts.home);
  const paths = homePaths(home);
  const run = async (): Promise<CompileResult> => {
    // Nothing changed since the last compile (which also ran the migration): the lock stands.
    const unchanged = opts.fullHash ? undefined : await upToDate(paths, opts);
    if (unchanged) return unchanged;
    let configText: string | undefined;
    let configParsed: LoadedConfig | undefined;
    if (!opts.dryRun) {
      // Temps of a compile that was killed mid-write; their writers are gone.
      for (const dir of [paths.home, paths.plugins, paths.cache, paths.nodeModules]) await sweepStaleTemps(dir);
      configParsed = (await migrateEnabledList(home, opts.env, opts.announce).catch(() => undefined))?.config;
    } else if (
      await fsp.stat(home).then(
        (s) => s.isDirectory(),
        () => false,
      )
    ) {
      // A dry run predicts the real run, so it plans on the config as the migration would leave it.
      const cur = await loadConfig(paths.config);
      const m = cur.diagnostics.some((d) => d.code === "E_YAML_PARSE" || d.code === "E_CONFIG_NOT_MAPPING")
        ? undefined
        : await planMigration(home, cur, opts.env);
      if (m?.edits.length) {
        configText = applyYamlEdits(cur.text, m.edits);
        if (m.grandfathers) (opts.announce ?? ((line: string) => logger().warn(line)))(migrationNotice(m.names, true));
      }
    }
    const since = Date.now();
    const inputs = await gatherInputs({ ...opts, home, configText, configParsed });
    faultHold("compile-gathered");
    const plan = planCompile(inputs);
    if (!plan.ok) refuse(plan);
    opts.onPlan?.(plan);
    if (opts.dryRun) return { plan, applied: false, home };
    let generation = await currentGeneration(paths);
    if (plan.changed) generation = await applyPlan(paths, plan, inputs.configExists ? inputs.configText : undefined);
    if (opts.managed) await writeManaged(paths, opts.managed);
    // Caches and the no-op record are separate files, each written atomically: one's disk wait overlaps another's work.
    await Promise.all([
      inputs.cache.save().catch(() => undefined),
      inputs.manifests.save().catch(() => undefined),
      // config.yaml as this compile left it, for the plugins commands (they only read this cache).
      ConfigCache.open(paths.cache)
        .keep(paths.config, plan.configRead)
        .catch(() => undefined),
      recordQuick(paths, compileBase(paths, opts, inputBytes(inputs)), inputs.watch, {
        since,
        lockText: plan.lockText,
      }).catch(() => undefined),
    ]);
    return { plan, applied: plan.changed, generation, home };
  };
  if (opts.dryRun) return run();
  await mkdirOwned(home);
  return withHomeLock(paths, run);
}

export interface RollbackResult {
  from?: number;
  to: number;
  recompiled: boolean;
  generation?: number;
  diagnostics: Diagnostic[];
}

/**
 * Return to generation `n` (default: the one before the current): its links and lock become
 * current and its declared overlay is re-applied to config.yaml. When the home changed since
 * (user edits, plugin files), a spec-less compile on top records that in a new generation.
 */
export async function rollback(opts: {
  home: string;
  to?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}): Promise<RollbackResult> {
  const paths = homePaths(resolve(opts.home));
  return withHomeLock(paths, async () => {
    const cur = await currentGeneration(paths);
    const nums = (await fsp.readdir(paths.generations).catch(() => [] as string[]))
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => a - b);
    const target = opts.to ?? nums.filter((n) => cur === undefined || n < cur).pop();
    if (target === undefined)
      throw new HermesError("E_COMPILE_NO_GENERATION", { message: "there is no earlier generation to roll back to" });
    const gen = await readGeneration(paths, target);
    const curLock = cur !== undefined ? (await readGeneration(paths, cur)).lock : undefined;
    await assertLinkSlotsFree(paths, gen.lock.deployment.links);
    const snapshot = gen.config?.text;
    if (typeof snapshot === "string") {
      // The generation's own config.yaml: restoring it whole keeps the compile on top from undoing the rollback.
      await withFileLock(paths.config, async () => {
        if ((await readTextIfExists(paths.config)) !== snapshot) await writeFileAtomic(paths.config, snapshot);
      });
    } else if (gen.declared) {
      await withFileLock(paths.config, async () => {
        const text = (await readTextIfExists(paths.config)) ?? "";
        const parsed = parseConfigText(text, paths.config);
        const owned = ownershipOf(curLock?.deployment);
        const o = planOverlay(parsed.value, gen.declared!, gen.lock.deployment.list_policy, owned);
        const next = applyYamlEdits(text, o.edits);
        if (next !== text) await writeFileAtomic(paths.config, next);
      });
    }
    await syncLinks(paths, gen.lock.deployment.links);
    await switchTo(paths, target);
    await writeRollbackRecord(paths, { to: target, from: cur ?? null, at: new Date().toISOString() });
    const keep = new Set(gen.lock.deployment.links.map((l) => l.link));
    await removeLinks(
      paths,
      (curLock?.deployment.links ?? []).map((l) => l.link).filter((l) => !keep.has(l)),
    );
    // The rolled-back lock may be stale against today's files; compile on top if so.
    const inputs = await gatherInputs({ home: paths.home, cwd: opts.cwd, env: opts.env });
    const plan = planCompile(inputs);
    const diagnostics = plan.diagnostics;
    if (!plan.ok) {
      return {
        from: cur,
        to: target,
        recompiled: false,
        diagnostics: [
          ...diagnostics,
          diagnostic("E_COMPILE_STALE", `generation ${target} is in force but does not match the home as it is now`),
        ],
      };
    }
    let generation: number | undefined = target;
    if (plan.changed) generation = await applyPlan(paths, plan, inputs.configExists ? inputs.configText : undefined);
    await inputs.cache.save().catch(() => undefined);
    await inputs.manifests.save().catch(() => undefined);
    return { from: cur, to: target, recompiled: plan.changed, generation, diagnostics };
  });
}

const errorKey = (d: Diagnostic) => `${d.code}\0${d.message}\0${d.file ?? ""}\0${d.path ?? ""}`;

/**
 * A check for `editConfig`: refuse an imperative edit (enable, disable) that would make this
 * home fail to compile, before it is written, naming the owner of what it would break. Only
 * errors the edit adds count; a home that is already broken stays editable.
 */
export function editCompileCheck(home: string, opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): EditCheck {
  return async (before, nextText) => {
    const paths = homePaths(resolve(home));
    const plan = async (configText: string) =>
      planCompile(await gatherInputs({ home: paths.home, cwd: opts.cwd, env: opts.env, configText }));
    const after = await plan(nextText);
    const added = after.diagnostics.filter((d) => d.severity === "error");
    if (!added.length) return;
    const had = new Set((await plan(before.text)).diagnostics.filter((d) => d.severity === "error").map(errorKey));
    const fresh = added.filter((d) => !had.has(errorKey(d)));
    if (!fresh.length) return;
    const marker = await readManaged(paths);
    const spec = after.lock.deployment.spec;
    const owned = marker && spec ? fresh.find((d) => d.file === spec) : undefined;
    if (owned && marker) {
      throw new HermesError("E_CONFIG_MANAGED_KEY", {
        message:
          `${owned.message.replace(/ will not load: .*$/, "")} is declared by the ${marker.kind} deployment of ` +
          `this home (spec ${spec}); this change would stop every start, so nothing was written`,
        hint:
          `change the deployment: drop \`required\` (or the plugin) from ${spec} and re-run its ${marker.kind} ` +
          `activation (\`hermes compile --spec ${spec} --managed ${marker.kind}\`)`,
      });
    }
    // The diagnostics' own hints describe the broken state, which was not written: name where each is declared instead.
    throw new HermesError("E_CONFIG_EDIT_BREAKS_COMPILE", {
      message:
        "this change would make compile " +
        `fail: ${fresh.map((d) => `${d.message} (${formatLocation(d)})`).join("; ")}; nothing was written`,
    });
  };
}
