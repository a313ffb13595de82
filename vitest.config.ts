import { configDefaults, defineConfig } from "vitest/config";

/**
 * Two suites over one set of settings:
 * - `npm test` (this file): the fast suite, every test file except SLOW_TESTS; a few minutes on 2 cores.
 * - `npm run test:slow` (vitest.slow.config.ts): SLOW_TESTS, the kill matrices and the other long suites.
 * CI (.ci/run) runs both. test/project/suites.test.ts checks that every test file is in exactly one.
 */
export const SLOW_TESTS = [
  // Kill matrices: a SIGKILL at every fault point of compile, and of install/update/remove, each
  // followed by recovery checks.
  "test/compile/crash.test.ts",
  "test/install/crash.test.ts",
  // Writers of the session store of hermes serve killed at random moments, the file checked after each.
  "test/gateway/sqlite-session-store.crash.test.ts",
  // hermes serve killed (kill -9) fifty times with turns in flight, restarted, every session checked.
  "test/e2e/serve-crash.test.ts",
  // hermes serve reloading generations beside turns in flight, and stopping under SIGTERM: spawned services
  // that each wait for streams and grace periods.
  "test/e2e/serve-reload.test.ts",
  // Matrices of hostile input run through the CLI, one spawned process per case: a tampered lock in every
  // field, hostile values in every config and manifest field, --json output of every command.
  "test/e2e/lock-tamper.test.ts",
  "test/e2e/hostile-values.test.ts",
  "test/e2e/json-output.test.ts",
  // Property tests: many permutations of a deploy spec, each compiled and started.
  "test/compile/spec-order.test.ts",
  // Stress: twenty CLI processes enabling plugins in one config.yaml at once (the --profile checks
  // of the same file come along).
  "test/e2e/plugins-profile-concurrency.test.ts",
  // Many real git installs, exports and bundle round trips.
  "test/pack/pack-install.test.ts",
  // Batteries of bad input, each case its own CLI process (clones, agent turns, plugin loads, usage).
  "test/install/bad-input.test.ts",
  "test/e2e/agent-bad-input.test.ts",
  "test/e2e/runtime-bad-input.test.ts",
  "test/e2e/usage.test.ts",
  // Suites of many CLI runs each (40 s and more under load on 2 cores): the scanner's catalog (a
  // plugin folder scanned per case), local-path installs, home hardening.
  "test/install/scanner.test.ts",
  "test/install/local-source.test.ts",
  // Many CLI runs each: config get/set/unset (comments, schema, managed homes, concurrent writers), and the
  // interactive plugins screen driven through a pseudo-terminal (15–20 s each).
  "test/e2e/config-keys.test.ts",
  "test/e2e/plugins-screen.test.ts",
  // Real git: update and remove of installed plugins against bare repos and a git daemon (15–20 s each).
  "test/install/update.test.ts",
  "test/install/remove.test.ts",
  "test/e2e/home-hardening.test.ts",
  // Real pip building Python plugins' virtual environments from wheels made by the test (40 s on 2 cores).
  "test/e2e/python-envs.test.ts",
  // Real Nix: evaluation, builtins.path, store links, activation (skipped where Nix is missing).
  "test/nix/**/*.test.ts",
  // Every test file that reads ../shared, run again in a child vitest with the folder missing.
  "test/project/fresh-clone-run.test.ts",
];

/** What both suites share. */
export const baseTest = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: "forks" as const,
  // Most files wait on spawned CLIs, git and servers rather than compute: two files at a time keep
  // a 2-core machine busy (vitest's default on 2 cores is one).
  maxWorkers: 2,
  globalSetup: ["test/global-setup.ts"],
};

export default defineConfig({
  test: {
    ...baseTest,
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...SLOW_TESTS],
  },
});
