/**
 * Shared by the test/nix files: real Nix (Debian's nix-bin, single-user, no daemon, no
 * substituters) and nixpkgs' `lib` from the vendored tarball beside the checkout.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe } from "vitest";
import { ROOT } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { hasShared, SHARED_DIR } from "../shared-dir.js";

/** Single-user, offline: never ask a substituter, never sandbox (Debian's Nix cannot). */
export const NIX_OPTS = ["--option", "sandbox", "false", "--option", "substituters", ""];

/** Why Nix cannot be used here, or undefined when it can (the store must be writable: root or single-user owner). */
export function nixUnavailable(): string | undefined {
  const v = spawnSync("nix-instantiate", ["--version"], { encoding: "utf8" });
  if (v.error || v.status !== 0)
    return (
      `nix-instantiate is not installed (${v.error?.message ?? v.stderr.trim()}); .ci/run installs Debian's ` +
      "nix-bin"
    );
  try {
    mkdirSync("/nix/store", { recursive: true });
    accessSync("/nix/store", constants.W_OK);
    accessSync("/nix/var/nix", constants.W_OK);
  } catch (e) {
    return (
      `the Nix store is not writable by this user (${(e as Error).message}); these tests need a single-user ` +
      "Nix they own"
    );
  }
  return undefined;
}

/** nixUnavailable(), except that in CI (which installs nix-bin) missing Nix is a failure, never a skip. */
export function checkNix(what: string): string | undefined {
  const unavailable = nixUnavailable();
  if (unavailable && process.env.CI) throw new Error(`${what}: Nix is required in CI: ${unavailable}`);
  if (unavailable) console.warn(`${what} skipped: ${unavailable}`);
  return unavailable;
}

export function nixEnv(userHome: string): NodeJS.ProcessEnv {
  return { ...process.env, NIX_PATH: "", HOME: userHome, NIX_CONFIG: "sandbox = false\nsubstituters =" };
}

export interface NixResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function nixRun(cmd: string, args: string[], userHome: string): NixResult {
  const r = spawnSync(cmd, [...args, ...NIX_OPTS], { encoding: "utf8", env: nixEnv(userHome), maxBuffer: 64 << 20 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** nixpkgs' lib/ (MIT), vendored in the shared folder beside the checkout; never part of the repository. */
export const NIXPKGS_LIB_TARBALL = join(SHARED_DIR, "vendor", "nixpkgs-lib.tar.gz");

/**
 * Unpack the vendored nixpkgs lib into `dir` and return the folder to import, or undefined when the
 * shared folder is absent (a fresh clone: hasShared prints why; in CI it throws).
 */
export function vendoredNixpkgsLib(dir: string, what: string): string | undefined {
  if (!hasShared(what)) return undefined;
  if (!existsSync(NIXPKGS_LIB_TARBALL)) {
    const why = `${NIXPKGS_LIB_TARBALL} is missing from the shared folder`;
    if (process.env.CI) throw new Error(`${what}: the vendored nixpkgs lib is required in CI: ${why}`);
    console.warn(`${what} skipped: ${why}; CI runs it`);
    return undefined;
  }
  mkdirSync(dir, { recursive: true });
  const r = spawnSync("tar", ["-xzf", NIXPKGS_LIB_TARBALL, "-C", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cannot unpack ${NIXPKGS_LIB_TARBALL}: ${r.stderr}`);
  return join(dir, "lib");
}

/**
 * nix/tests/eval-modules.nix over `configurations` (Nix text of `{ pkgs, drv }: { <name> = { kind; config; }; }`),
 * with nixpkgs' lib from `libDir` and optional further harness arguments (Nix text, e.g. `hostPython = "…";`).
 */
export function moduleHarness(libDir: string, configurations: string, args = ""): string {
  const harness = join(ROOT, "nix", "tests", "eval-modules.nix");
  return `import ${harness} { lib = import ${libDir}; ${args} configurations = ${configurations}; }`;
}

/** Write a harness expression to `file` and evaluate it strictly to JSON (read-write: sources go to the store). */
export function evalModuleFile(file: string, text: string, userHome: string): NixResult {
  writeText(file, text);
  return nixRun("nix-instantiate", ["--eval", "--strict", "--json", "--read-write-mode", file], userHome);
}

/**
 * The set-up of a Nix test file that evaluates with nixpkgs' lib: its scratch folder (removed after
 * the file), a HOME for nix, why Nix is unavailable (or undefined), the unpacked lib, and `suite`:
 * describe when the lib is there, describe.skip otherwise (with the reason printed).
 */
export function nixTestFile(file: string, purpose: string, prefix: string) {
  const scratch = new Scratch(prefix);
  afterAll(() => scratch.cleanup());
  const noNix = checkNix(file);
  const libDir = noNix ? undefined : vendoredNixpkgsLib(join(scratch.root, "nixpkgs-lib"), `${file} (${purpose})`);
  return {
    scratch,
    userHome: join(scratch.root, ".user-home"),
    noNix,
    libDir,
    suite: libDir ? describe : describe.skip,
  };
}
