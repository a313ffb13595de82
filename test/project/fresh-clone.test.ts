/**
 * A fresh clone tests green. The real-world fixtures beside the checkout exist only on
 * the project's own machines and in CI, so:
 * - no test finds them except through test/shared-dir.ts, and every test file that uses it asks
 *   `hasShared(…)` (the guard that skips with a printed reason, or fails in CI);
 * - with CI set, a missing shared folder fails the file, naming the folder;
 * - nothing in the project (README, docs, sources) points outside the repo.
 * test/project/fresh-clone-run.test.ts (slow suite) runs every such file with the folder missing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/cli.js";
import { sharedUsers, testCode, vitestWithoutShared, walk } from "./helpers.js";

/** Code that builds a path to the sibling folder: a quoted relative path into it, or a join of ".." and "shared" (as
 * separate strings). */
const PATH_IN_CODE = /["'`](\.\.\/)+shared(?![\w.-])|["'`]\.\.["'`]\s*,\s*["'`]shared["'`]/;
/** Any mention of the sibling folder (what README, docs and sources must not point at). */
const MENTION = /\.\.\/shared(?![\w.-])/;
const HELPER = "test/shared-dir.ts";

describe("the shared fixtures are found in one place only", () => {
  const users = sharedUsers();

  it("the helper is used by the test files that read the shared fixtures", () => {
    expect(users.length).toBeGreaterThanOrEqual(7);
    expect(users).toEqual(
      expect.arrayContaining([
        "test/fixtures/shared-fixtures.test.ts",
        "test/install/index-search.test.ts",
        "test/pack/pack-show.test.ts",
      ]),
    );
  });

  it("no test file spells out a path to it except test/shared-dir.ts", () => {
    const offenders = testCode().filter(
      (rel) => rel !== HELPER && PATH_IN_CODE.test(readFileSync(join(ROOT, rel), "utf8")),
    );
    expect(offenders).toEqual([]);
  });

  it("every file that imports the helper asks hasShared() before reading", () => {
    const unguarded = users.filter((rel) => !/\bhasShared\(/.test(readFileSync(join(ROOT, rel), "utf8")));
    expect(unguarded).toEqual([]);
  });

  it("nothing outside test/ points at it: README, docs, sources, scripts, Nix", () => {
    const files = [
      "README.md",
      ...["docs", "src", "scripts", "nix", "bench", "schemas", "plugins", "data", ".ci"].flatMap((d) =>
        walk(d, () => true),
      ),
    ];
    const offenders = files.filter((rel) => MENTION.test(readFileSync(join(ROOT, rel), "utf8")));
    expect(offenders).toEqual([]);
  });

  it("in CI (CI set) a missing shared folder fails the file, naming the folder", () => {
    const missing = join(ROOT, "node_modules", ".hermes-no-shared-here");
    const r = vitestWithoutShared(["test/install/index-search.test.ts"], missing, { CI: "1" });
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/\.\.\/shared is required in CI/);
    expect(r.output).toContain(missing);
  }, 120_000);
});
