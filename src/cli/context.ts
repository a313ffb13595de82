import type { Command } from "commander";
import type { Diagnostic } from "../core/errors.js";
import { homePaths, resolveHome, type HomePaths } from "../core/paths.js";
import { err } from "./output.js";

export interface GlobalOptions {
  home?: string;
  profile?: string;
}

export function homeOf(cmd: Command): HomePaths {
  const g = cmd.optsWithGlobals<GlobalOptions>();
  return homePaths(resolveHome({ home: g.home, profile: g.profile }));
}

/** The home was named with `--home` (a missing one is then a typo, not a brand new home). */
export function explicitHome(cmd: Command): boolean {
  return Boolean(cmd.optsWithGlobals<GlobalOptions>().home);
}

/** What the read-only `plugins` commands pass to the app layer: the home, and notes to stderr. */
export function inspectOptions(cmd: Command): {
  paths: HomePaths;
  explicitHome: boolean;
  warn: (line: string) => void;
} {
  return { paths: homeOf(cmd), explicitHome: explicitHome(cmd), warn: err };
}

/** Warnings about the config itself are shown once per command, never fatal for read commands. */
export function reportConfigProblems(ds: readonly Diagnostic[]): void {
  const errors = ds.filter((d) => d.severity === "error");
  if (errors.length)
    err(`warning: ${errors.length} problem(s) in config.yaml; run \`hermes config validate\` for details`);
}
