/**
 * What the fresh-clone tests share: the test files that read the shared fixtures, and a child
 * vitest that runs test files as a fresh clone would, with the shared folder missing.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { ROOT } from "../support/cli.js";

/** Files under `dir` (repo-relative, sorted) that `keep` accepts, leaving out generated and installed trees. */
export function walk(dir: string, keep: (rel: string) => boolean): string[] {
  const out: string[] = [];
  const visit = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const abs = join(d, name);
      const rel = relative(ROOT, abs);
      if (["node_modules", "dist", ".git"].includes(name)) continue;
      if (statSync(abs).isDirectory()) visit(abs);
      else if (keep(rel)) out.push(rel);
    }
  };
  visit(join(ROOT, dir));
  return out;
}

/** The code under test/ (sample plugins and scanner fixtures are data, not tests). */
export const testCode = (): string[] =>
  walk(
    "test",
    (rel) =>
      /\.(ts|mjs|js)$/.test(rel) && !rel.startsWith("test/compile/samples/") && !rel.startsWith("test/fixtures/scan/"),
  );

/** The test files that import test/shared-dir.ts, i.e. read the shared fixtures. */
export const sharedUsers = (): string[] =>
  testCode().filter(
    (rel) =>
      rel.endsWith(".test.ts") && /from "\.\.?\/(\.\.\/)*shared-dir\.js"/.test(readFileSync(join(ROOT, rel), "utf8")),
  );

export interface ChildRun {
  code: number | null;
  output: string;
  json?: { numFailedTests: number; numPendingTests: number; numPassedTests: number; success: boolean };
}

/**
 * Run `files` with the fast suite's config in a child vitest whose shared folder does not exist
 * (HERMES_TEST_SHARED_DIR → `missing`), without this worker's VITEST_*, CI or HERMES_TEST_* settings,
 * and with the dist/ this run already built.
 */
export function vitestWithoutShared(files: string[], missing: string, env: Record<string, string> = {}): ChildRun {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(VITEST|CI$|HERMES_TEST_)/.test(k) && k !== "TEST" && k !== "NODE_ENV") childEnv[k] = v;
  Object.assign(childEnv, { HERMES_TEST_SHARED_DIR: missing, HERMES_TEST_SKIP_BUILD: "1", NO_COLOR: "1" }, env);
  const out = mkdtempSync(join(tmpdir(), "hermes-fresh-run-"));
  try {
    const report = join(out, "report.json");
    const args = [
      join(ROOT, "node_modules", "vitest", "vitest.mjs"),
      "run",
      "--config",
      join(ROOT, "vitest.config.ts"),
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${report}`,
      ...files,
    ];
    const r = spawnSync(process.execPath, args, {
      cwd: ROOT,
      env: childEnv,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      timeout: 280_000,
    });
    let json: ChildRun["json"];
    try {
      json = JSON.parse(readFileSync(report, "utf8"));
    } catch {
      json = undefined;
    }
    return { code: r.status, output: `${r.stdout}\n${r.stderr}`, json };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
