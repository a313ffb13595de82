import { homePaths, resolveHome } from "../core/paths.js";
import { readTextIfExists } from "../core/atomic-fs.js";
import type { CompileResult, RollbackResult } from "../compile/compile.js";
import { noopCompile } from "../compile/noop.js";
import { recoverPluginsDir } from "./recover.js";
import { withPythonEnvs } from "./python-envs.js";

/** `--home` > the spec's `home:` > $HERMES_HOME > ~/.hermes. */
export async function compileHomeDir(o: { home?: string; profile?: string; spec?: string }): Promise<string> {
  if (!o.home && o.spec) {
    const text = await readTextIfExists(o.spec);
    const { parseDeploySpec } = await import("../compile/deploy-spec.js");
    const parsed = text !== undefined ? parseDeploySpec(text, o.spec).spec : undefined;
    if (parsed?.home) return resolveHome({ home: parsed.home, profile: o.profile });
  }
  return resolveHome({ home: o.home, profile: o.profile });
}

export interface CompileHomeOptions {
  home: string;
  spec?: string;
  managed?: string;
  dryRun?: boolean;
  /** Plan only, like a dry run; the caller reports whether the home is up to date. */
  check?: boolean;
  fullHash?: boolean;
  /** Notes (recovered installs, the one-time migration), for stderr. */
  warn: (line: string) => void;
}

/**
 * `hermes compile`: recover the plugins dir, then plan and (unless a dry run or --check) apply.
 * An unchanged home is answered by the no-op check alone; the compiler loads only when it misses.
 */
export async function compileHome(o: CompileHomeOptions): Promise<CompileResult> {
  // A dry run or --check writes nothing, the plugins dir included.
  if (!o.dryRun && !o.check) await recoverPluginsDir(homePaths(o.home), o.warn);
  const opts = {
    home: o.home,
    specFile: o.spec,
    managed: o.managed,
    dryRun: o.dryRun || o.check,
    fullHash: o.fullHash,
    announce: o.warn,
  };
  const unchanged = await noopCompile(opts);
  const res = unchanged ?? (await (await import("../compile/compile.js")).compile(opts));
  return withPythonEnvs({ ...o, note: o.warn, full: o.fullHash }, res);
}

/** `hermes compile --rollback [generation]`: recover the plugins dir, then return to a generation. */
export async function rollbackHome(o: {
  home: string;
  to?: number;
  warn: (line: string) => void;
}): Promise<RollbackResult> {
  await recoverPluginsDir(homePaths(o.home), o.warn);
  const { rollback } = await import("../compile/compile.js");
  return rollback({ home: o.home, to: o.to });
}
