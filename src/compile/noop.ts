import { join, resolve } from "node:path";
import { readTextIfExists } from "../core/atomic-fs.js";
import { envFlag } from "../core/env-flag.js";
import { withFileLock } from "../core/file-lock.js";
import { kitVersion } from "../core/kit-version.js";
import { homePaths, type HomePaths } from "../core/paths.js";
import type { Lock } from "../contracts/lock.js";
import { sourceRoots } from "../discovery/roots.js";
import { currentGeneration } from "./current-generation.js";
import type { CompileInputs, GatherOptions } from "./gather.js";
import type { CompilePlan } from "./plan.js";
import { baseFingerprint, hasQuickRecord, quickUpToDate, type ReadBytes } from "./quick-check.js";

/**
 * The no-op compile in its own light module: deciding "nothing changed" reads stat data and a
 * few hashes (quick-check.ts), so it must not load what a real compile needs (the YAML parser,
 * discovery, the planner). compile.ts and app/compile-home.ts call it before anything heavy.
 */

/** The home-wide lock: one compile (or rollback) at a time per home. */
export function withHomeLock<T>(paths: HomePaths, fn: () => Promise<T>): Promise<T> {
  return withFileLock(join(paths.home, ".compile"), fn, { timeoutMs: 60_000 });
}

/** The fingerprint of everything but plugin trees, for the no-op fast path (quick-check.ts). */
export function compileBase(paths: HomePaths, opts: GatherOptions, read?: ReadBytes): string {
  const env = opts.env ?? process.env;
  return baseFingerprint(paths, {
    kit: kitVersion(),
    specFile: opts.specFile ? resolve(opts.specFile) : undefined,
    managed: opts.managed ?? null,
    roots: sourceRoots({ home: paths.home, cwd: opts.cwd, env }).map((r) => `${r.source}:${r.dir}`),
    env: { project: envFlag("HERMES_ENABLE_PROJECT_PLUGINS", env) },
    read,
  });
}

/** The bytes a compile planned from, so its no-op record describes exactly those inputs. */
export function inputBytes(inputs: CompileInputs): ReadBytes {
  return { config: inputs.configExists ? inputs.configText : null, metadata: inputs.metadataText ?? null };
}

/**
 * A plan that says "nothing to do", for a home the quick check found unchanged. The lock text is
 * parsed only when something reads the lock (`--json` does; the text output does not).
 */
export function upToDatePlan(lockOrText: Lock | string, lockText: string, configText: string): CompilePlan {
  let lock = typeof lockOrText === "string" ? undefined : lockOrText;
  const parsed = () => (lock ??= JSON.parse(lockText) as Lock);
  return {
    ok: true,
    diagnostics: [],
    get lock() {
      return parsed();
    },
    lockText,
    configText,
    configChanged: false,
    configChanges: [],
    declared: null,
    get links() {
      return parsed().deployment.links;
    },
    linkChanges: [],
    pluginChanges: [],
    lockChanged: false,
    repair: false,
    get managedKind() {
      return parsed().deployment.kind;
    },
    files: {},
    changed: false,
  };
}

export interface NoopResult {
  plan: CompilePlan;
  applied: false;
  generation?: number;
  home: string;
}

/**
 * The result of a compile whose inputs all match the last compile's record, or `undefined` (then
 * a real compile decides). A run that may write holds the home lock while it checks.
 */
export async function noopCompile(opts: GatherOptions & { dryRun?: boolean }): Promise<NoopResult | undefined> {
  if (opts.fullHash) return undefined;
  const paths = homePaths(resolve(opts.home));
  if (!hasQuickRecord(paths)) return undefined;
  return opts.dryRun ? upToDate(paths, opts) : withHomeLock(paths, () => upToDate(paths, opts));
}

/** The no-op result when the quick check holds; callers hold the home lock when they may write. */
export async function upToDate(paths: HomePaths, opts: GatherOptions): Promise<NoopResult | undefined> {
  if (!quickUpToDate(paths, compileBase(paths, opts))) return undefined;
  const text = await readTextIfExists(paths.lock);
  if (!text) return undefined;
  return {
    plan: upToDatePlan(text, text, (await readTextIfExists(paths.config)) ?? ""),
    applied: false,
    generation: await currentGeneration(paths),
    home: paths.home,
  };
}
