/**
 * Two suites: `npm test` is the fast one (vitest.config.ts), `npm run test:slow` has
 * the kill matrices and other long suites (vitest.slow.config.ts). Every test file is in exactly one
 * of them, CI runs both, and the README says which is which.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/cli.js";

/** The test files vitest itself selects with `config` (no test is run). */
function listed(config: string): string[] {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^VITEST/.test(k)) env[k] = v;
  env.HERMES_TEST_SKIP_BUILD = "1";
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, "node_modules", "vitest", "vitest.mjs"),
      "list",
      "--filesOnly",
      "--json",
      "--config",
      join(ROOT, config),
    ],
    {
      cwd: ROOT,
      env,
      encoding: "utf8",
    },
  );
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as Array<{ file: string }>).map((x) => relative(ROOT, x.file)).sort();
}

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir)).sort()) {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...testFiles(rel));
    else if (rel.endsWith(".test.ts")) out.push(rel);
  }
  return out;
}

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };

describe("npm test (fast) and npm run test:slow", () => {
  let fast: string[] = [];
  let slow: string[] = [];
  beforeAll(() => {
    fast = listed("vitest.config.ts");
    slow = listed("vitest.slow.config.ts");
  });

  it("every test file is in exactly one suite", () => {
    const all = testFiles("test").filter(
      (f) => !f.startsWith("test/compile/samples/") && !f.startsWith("test/fixtures/scan/"),
    );
    expect(fast.filter((f) => slow.includes(f))).toEqual([]);
    expect([...fast, ...slow].sort()).toEqual(all.sort());
  });

  it("the kill matrices are in the slow suite, the fresh-clone checks in the fast one", () => {
    for (const f of [
      "test/compile/crash.test.ts",
      "test/install/crash.test.ts",
      "test/project/fresh-clone-run.test.ts",
    ]) {
      expect(slow).toContain(f);
      expect(fast).not.toContain(f);
    }
    for (const f of [
      "test/project/fresh-clone.test.ts",
      "test/project/suites.test.ts",
      "test/fixtures/shared-fixtures.test.ts",
    ])
      expect(fast).toContain(f);
  });

  it("package.json runs them: `npm test` the default (fast) config, `npm run test:slow` the slow one", () => {
    expect(pkg.scripts.test).toBe("vitest run");
    expect(pkg.scripts["test:slow"]).toBe("vitest run --config vitest.slow.config.ts");
  });
});

describe("CI and README", () => {
  it(".ci/run installs, then runs both suites, stopping at the first failure", () => {
    const run = readFileSync(join(ROOT, ".ci", "run"), "utf8");
    expect(run).toMatch(/^set -euo pipefail$/m);
    const lines = run.split("\n").map((l) => l.trim());
    const at = (cmd: RegExp) => lines.findIndex((l) => cmd.test(l));
    const ci = at(/^npm ci\b/);
    const fastAt = at(/^npm test$/);
    const slowAt = at(/^npm run test:slow$/);
    expect(ci).toBeGreaterThanOrEqual(0);
    expect(fastAt).toBeGreaterThan(ci);
    expect(slowAt).toBeGreaterThan(fastAt);
  });

  it("the README starts with the two commands a newcomer needs and says what each suite covers", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const first = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    expect(readme.indexOf("```sh")).toBeLessThan(readme.indexOf("\n## "));
    expect(first).toMatch(/^npm ci\b/m);
    expect(first).toMatch(/^npm test\b/m);
    const tests = /\n## Tests\n([\s\S]*?)(\n## |$)/.exec(readme)?.[1] ?? "";
    expect(tests).toContain("`npm test`");
    expect(tests).toContain("`npm run test:slow`");
    expect(tests).toMatch(/skip/);
    expect(tests).toContain("Nix");
  });

  it("the README's architecture link is docs/architecture.md, which maps every folder of src/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme).toContain("](docs/architecture.md)");
    const doc = join(ROOT, "docs", "architecture.md");
    expect(existsSync(doc)).toBe(true);
    const text = readFileSync(doc, "utf8");
    const folders = readdirSync(join(ROOT, "src")).filter((d) => statSync(join(ROOT, "src", d)).isDirectory());
    for (const d of folders) expect(text, d).toContain(`### \`${d}/\``);
    expect(text).toContain("npm run test:slow");
  });
});
