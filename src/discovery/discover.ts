import { join, resolve } from "node:path";
import type { Diagnostic } from "../core/errors.js";
import { envFlag } from "../core/env-flag.js";
import { homePaths, PACKAGE_ROOT } from "../core/paths.js";
import { resolveWinners, type Resolution } from "./precedence.js";
import type { PluginSource } from "../contracts/plugin-record.js";
import { BUNDLED_SKIP, scanNodeModules, scanRoot, type Candidate } from "./scan.js";

export interface DiscoverOptions {
  home: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Leave out the bundled source (`--no-bundled`). */
  bundled?: boolean;
  /** Rewrite the scanned candidates before precedence (the compiler swaps in a deploy spec's links). */
  adjust?: (candidates: Candidate[]) => Candidate[];
}

export interface SourceRoot {
  source: PluginSource;
  dir: string;
}

export interface Discovery {
  roots: SourceRoot[];
  candidates: Candidate[];
  resolution: Resolution;
  diagnostics: Diagnostic[];
}

/** The roots in scan order; later directory sources take precedence. */
export function sourceRoots(opts: DiscoverOptions): SourceRoot[] {
  const env = opts.env ?? process.env;
  const roots: SourceRoot[] = [];
  if (opts.bundled !== false) {
    roots.push({
      source: "bundled",
      dir: resolve(env.HERMES_BUNDLED_PLUGINS?.trim() || join(PACKAGE_ROOT, "plugins")),
    });
  }
  roots.push({ source: "user", dir: homePaths(opts.home).plugins });
  if (envFlag("HERMES_ENABLE_PROJECT_PLUGINS", env))
    roots.push({ source: "project", dir: join(resolve(opts.cwd ?? process.cwd()), ".hermes", "plugins") });
  roots.push({ source: "npm", dir: homePaths(opts.home).nodeModules });
  return roots;
}

/** Manifest-only discovery of every source; imports no plugin code. */
export async function discover(opts: DiscoverOptions): Promise<Discovery> {
  const roots = sourceRoots(opts);
  const scans = await Promise.all(
    roots.map((r) =>
      r.source === "npm"
        ? scanNodeModules(r.dir)
        : scanRoot(r.dir, r.source, { skipTop: r.source === "bundled" ? BUNDLED_SKIP : undefined }),
    ),
  );
  const scanned = scans.flatMap((s) => s.candidates);
  const candidates = opts.adjust ? opts.adjust(scanned) : scanned;
  const resolution = resolveWinners(candidates);
  return {
    roots,
    candidates,
    resolution,
    diagnostics: [...scans.flatMap((s) => s.diagnostics), ...resolution.diagnostics],
  };
}
