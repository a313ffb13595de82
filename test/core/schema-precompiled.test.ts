/**
 * The build precompiles every schema to code (scripts/precompile-schemas.mjs). These tests run
 * the built validators against the real fixtures next to Ajv compiling the same schemas at run
 * time, and show that a schema edited after the build is never judged by stale code.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/cli.js";
import { hasShared, SHARED_FIXTURES as FIXTURES } from "../shared-dir.js";
import { cleanupTemp, tempDir } from "../support/home.js";

const SHARED = hasShared("test/core/schema-precompiled.test.ts: the comparison on the shared fixtures");

afterAll(cleanupTemp);

/** Validate files with the schema module of `pkg` in a fresh node process; prints diagnostics and which validators were
 * precompiled. */
function validateWith(
  pkg: string,
  jobs: Array<{ schema: string; file: string }>,
  env: Record<string, string> = {},
): { results: unknown[]; precompiled: string[] } {
  const script = `
    const { readFileSync } = await import("node:fs");
    const YAML = (await import(${JSON.stringify(join(ROOT, "node_modules", "yaml", "dist", "index.js"))})).default;
    const schema = await import(${JSON.stringify(join(pkg, "dist", "core", "schema.js"))});
    const jobs = JSON.parse(process.argv[1]);
    const results = jobs.map(({ schema: s, file }) => {
      const text = readFileSync(file, "utf8");
      const data = file.endsWith(".json") ? JSON.parse(text) : YAML.parse(text);
      return { file, diagnostics: schema.validateSchema(s, data, { file }) };
    });
    process.stdout.write(JSON.stringify({ results, precompiled: schema.precompiledIds() }));
  `;
  const p = spawnSync(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(jobs)], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(p.stderr).toBe("");
  expect(p.status).toBe(0);
  return JSON.parse(p.stdout) as { results: unknown[]; precompiled: string[] };
}

function fixtureJobs(): Array<{ schema: string; file: string }> {
  const jobs: Array<{ schema: string; file: string }> = [];
  const add = (dir: string, schema: string, filter: (f: string) => boolean) => {
    for (const f of readdirSync(join(FIXTURES, dir)).sort())
      if (filter(f)) jobs.push({ schema, file: join(FIXTURES, dir, f) });
  };
  add("manifests", "plugin-manifest", (f) => /\.ya?ml$/.test(f));
  add("configs", "config", (f) => /\.ya?ml$/.test(f));
  add("packs", "pack", (f) => /\.ya?ml$/.test(f));
  add("index", "index", (f) => f.endsWith(".json"));
  add("index/plugin-catalog", "https://hermes-kit.dev/schemas/index.schema.json#/$defs/catalogEntry", (f) =>
    /\.ya?ml$/.test(f),
  );
  return jobs;
}

describe("precompiled schema validators", () => {
  it("the build wrote one per schema and fragment, each tied to the digest of schemas/", () => {
    const dir = join(ROOT, "dist", "core", "schema-validators");
    const files = readdirSync(dir).sort();
    const schemas = readdirSync(join(ROOT, "schemas")).filter((f) => f.endsWith(".schema.json"));
    for (const s of schemas) expect(files).toContain(`${s}.cjs`);
    expect(files).toContain("index.schema.json_defs_entry.cjs");
    expect(files).toContain("index.schema.json_defs_catalogEntry.cjs");
    const digests = new Set(
      files.map((f) => /exports\.digest = "([0-9a-f]{64})"/.exec(readFileSync(join(dir, f), "utf8"))?.[1]),
    );
    expect(digests.size).toBe(1);
    expect([...digests][0]).toMatch(/^[0-9a-f]{64}$/);
  });

  it.skipIf(!SHARED)("give the same diagnostics as Ajv compiling the schemas at run time, on every fixture", () => {
    const jobs = fixtureJobs();
    expect(jobs.length).toBeGreaterThan(70);
    const pre = validateWith(ROOT, jobs);
    const compiled = validateWith(ROOT, jobs, { HERMES_SCHEMA_PRECOMPILED: "0" });
    expect(pre.precompiled).toEqual(
      expect.arrayContaining([
        "https://hermes-kit.dev/schemas/plugin-manifest.schema.json",
        "https://hermes-kit.dev/schemas/config.schema.json",
      ]),
    );
    expect(compiled.precompiled).toEqual([]);
    expect(pre.results).toEqual(compiled.results);
    // The comparison covers real findings, not only clean documents.
    const withFindings = (pre.results as Array<{ diagnostics: unknown[] }>).filter((r) => r.diagnostics.length > 0);
    expect(withFindings.length).toBeGreaterThan(5);
  });

  it("and on documents with errors of every kind the renderer handles", () => {
    const dir = tempDir("hermes-schema-");
    const docs: Record<string, [string, string]> = {
      "enum.yaml": ["plugin-manifest", 'name: x\nversion: "1"\nhooks: [pre_tool_cal]\nkind: weird\n'],
      "types.yaml": ["plugin-manifest", "name: [1]\nversion: {a: 1}\nrequires_env: 3\n"],
      "unknown.yaml": ["config", "plugins:\n  enabeld: [a]\n  entries:\n    a: {settings: 1}\n"],
      "spec.json": ["deploy-spec", JSON.stringify({ home: 1, plugins: [{ enable: "yes" }], extra: true })],
      "lock.json": ["lock", JSON.stringify({ schema: "hermes.lock.v2", plugins: [{}] })],
    };
    const jobs = Object.entries(docs).map(([f, [schema, text]]) => {
      writeFileSync(join(dir, f), text);
      return { schema, file: join(dir, f) };
    });
    const pre = validateWith(ROOT, jobs);
    const compiled = validateWith(ROOT, jobs, { HERMES_SCHEMA_PRECOMPILED: "0" });
    expect(pre.results).toEqual(compiled.results);
    for (const r of pre.results as Array<{ diagnostics: unknown[] }>) expect(r.diagnostics.length).toBeGreaterThan(0);
  });

  it("are not used once a schema changed after the build: the schema is compiled instead", () => {
    // A copy of the package whose manifest schema now requires `description`.
    const pkg = tempDir("hermes-schema-pkg-");
    cpSync(join(ROOT, "package.json"), join(pkg, "package.json"));
    cpSync(join(ROOT, "dist"), join(pkg, "dist"), { recursive: true });
    cpSync(join(ROOT, "schemas"), join(pkg, "schemas"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(pkg, "node_modules"));
    const file = join(pkg, "schemas", "plugin-manifest.schema.json");
    const doc = JSON.parse(readFileSync(file, "utf8")) as { required?: string[] };
    doc.required = [...(doc.required ?? []), "description"];
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const manifest = join(pkg, "plugin.yaml");
    writeFileSync(manifest, 'name: x\nversion: "1"\n');
    const out = validateWith(pkg, [{ schema: "plugin-manifest", file: manifest }]);
    expect(out.precompiled).toEqual([]);
    expect(JSON.stringify(out.results)).toContain("missing required field 'description'");
  });
});
