import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HermesError } from "./errors.js";
import { didYouMean } from "./suggest.js";

/** The package root (holds schemas/, plugins/), found from this file in src/ or dist/. */
export const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "schemas"))) return dir;
    dir = dirname(dir);
  }
  throw new Error(
    "hermes-kit: internal error: cannot find the package root (schemas/ missing; the installation is incomplete)",
  );
})();

export const SCHEMAS_DIR = join(PACKAGE_ROOT, "schemas");

const PROFILE_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

export interface HomeOptions {
  home?: string;
  profile?: string;
  env?: NodeJS.ProcessEnv;
}

/** `--home` > `HERMES_HOME` > `~/.hermes`; a profile lives at `<home>/profiles/<name>`. */
export function resolveHome(opts: HomeOptions = {}): string {
  const env = opts.env ?? process.env;
  const base = resolve(opts.home ?? (env.HERMES_HOME?.trim() || join(homedir(), ".hermes")));
  if (opts.profile === undefined || opts.profile === "" || opts.profile === "default") return base;
  if (!PROFILE_RE.test(opts.profile)) {
    throw new HermesError("E_PROFILE_NAME", { message: `profile name ${JSON.stringify(opts.profile)} is not valid` });
  }
  return join(base, "profiles", opts.profile);
}

/**
 * A named profile must exist: `-p wrok` is a typo, not a new profile, unless `create` (the global
 * `--create`) asks for one. Returns the profile folder, created when asked.
 */
export function assertProfile(opts: HomeOptions & { create?: boolean }): string | undefined {
  if (opts.profile === undefined || opts.profile === "" || opts.profile === "default") return undefined;
  const dir = resolveHome(opts);
  if (existsSync(dir)) return dir;
  if (opts.create) {
    mkdirSync(dir, { recursive: true });
    return dir;
  }
  const profiles = dirname(dir);
  const known = existsSync(profiles)
    ? readdirSync(profiles, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort()
    : [];
  throw new HermesError("E_PROFILE_NOT_FOUND", {
    message:
      `profile '${opts.profile}' does not exist (no ${dir})${didYouMean(opts.profile, known)}; existing ` +
      `profiles: ${known.join(", ") || "(none)"}`,
  });
}

export function homePaths(home: string) {
  return {
    home,
    config: join(home, "config.yaml"),
    plugins: join(home, "plugins"),
    installMetadata: join(home, "plugins", ".install-metadata.json"),
    lock: join(home, "hermes.lock.json"),
    managed: join(home, ".managed"),
    generations: join(home, "generations"),
    cache: join(home, "cache"),
    nodeModules: join(home, "node_modules"),
  };
}

export type HomePaths = ReturnType<typeof homePaths>;
