import { join, resolve } from "node:path";
import { envFlag } from "../core/env-flag.js";
import { homePaths, PACKAGE_ROOT } from "../core/paths.js";
import type { PluginSource } from "../contracts/plugin-record.js";

/** What decides the roots; `DiscoverOptions` extends it. */
export interface RootOptions {
  home: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Leave out the bundled source (`--no-bundled`). */
  bundled?: boolean;
}

export interface SourceRoot {
  source: PluginSource;
  dir: string;
}

/** The roots in scan order; later directory sources take precedence; apart, so the no-op compile needs no scanner. */
export function sourceRoots(opts: RootOptions): SourceRoot[] {
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
