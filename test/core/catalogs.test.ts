import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderErrorsDoc } from "../../src/core/errors-doc.js";
import { ERROR_CATALOG, formatDiagnostic, formatGithub, HermesError } from "../../src/core/errors.js";
import { PACKAGE_ROOT, SCHEMAS_DIR } from "../../src/core/paths.js";
import { validateSchema } from "../../src/core/schema.js";
import { CAPABILITY_IDS } from "../../src/contracts/capabilities.js";
import { PLUGIN_KINDS, PLUGIN_ORIGINS, PLUGIN_SOURCES } from "../../src/contracts/plugin-record.js";

describe("error catalog", () => {
  it("docs/errors.md is generated from the catalog and current (npm run docs)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs/errors.md"), "utf8")).toBe(renderErrorsDoc());
  });

  it("every code is E_/W_ AREA_WHAT with a title and a hint", () => {
    for (const [code, spec] of Object.entries(ERROR_CATALOG)) {
      expect(code).toMatch(/^[EW]_[A-Z]+(_[A-Z0-9]+)*$/);
      expect(spec.title.length).toBeGreaterThan(5);
      expect(spec.hint.length).toBeGreaterThan(5);
    }
  });

  it("every code used in src/ exists in the catalog", () => {
    const used = new Set<string>();
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (e.name.endsWith(".ts"))
          for (const m of readFileSync(join(d, e.name), "utf8").matchAll(/"([EW]_[A-Z0-9_]+)"/g)) used.add(m[1]!);
      }
    };
    walk(join(PACKAGE_ROOT, "src"));
    for (const c of used) expect(Object.keys(ERROR_CATALOG), c).toContain(c);
  });

  it("every catalog code is raised somewhere in src/ (no code documents a refusal nothing makes)", () => {
    const seen = new Set<string>();
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (e.name.endsWith(".ts") && join(d, e.name) !== join(PACKAGE_ROOT, "src", "core", "errors.ts")) {
          for (const m of readFileSync(join(d, e.name), "utf8").matchAll(/\b([EW]_[A-Z0-9_]+)\b/g)) seen.add(m[1]!);
        }
      }
    };
    walk(join(PACKAGE_ROOT, "src"));
    expect(Object.keys(ERROR_CATALOG).filter((c) => !seen.has(c))).toEqual([]);
  });

  it("renders file:line:col json.path and GitHub annotations", () => {
    const e = new HermesError("E_SCHEMA_INVALID", {
      message: "must be array",
      file: "config.yaml",
      line: 3,
      col: 12,
      path: "plugins.enabled",
    });
    expect(formatDiagnostic(e.toDiagnostic())).toBe(
      "error E_SCHEMA_INVALID config.yaml:3:12 plugins.enabled: must be array\n  " +
        `hint: ${ERROR_CATALOG.E_SCHEMA_INVALID.hint}`,
    );
    expect(formatGithub(e.toDiagnostic())).toBe(
      "::error file=config.yaml,line=3,col=12,title=E_SCHEMA_INVALID::plugins.enabled: must be array " +
        `(${ERROR_CATALOG.E_SCHEMA_INVALID.hint})`,
    );
    expect(new HermesError("E_USAGE").exitCode).toBe(2);
    expect(e.exitCode).toBe(1);
  });
});

describe("schemas", () => {
  const files = readdirSync(SCHEMAS_DIR).filter((f) => f.endsWith(".schema.json"));

  it("each schema has a $id matching its file name and a title", () => {
    for (const f of files) {
      const s = JSON.parse(readFileSync(join(SCHEMAS_DIR, f), "utf8")) as { $id: string; title: string };
      expect(s.$id).toBe(`https://hermes-kit.dev/schemas/${f}`);
      expect(s.title).toBeTruthy();
    }
  });

  it("capability and kind enums equal the code constants", () => {
    const m = JSON.parse(readFileSync(join(SCHEMAS_DIR, "plugin-manifest.schema.json"), "utf8")) as {
      $defs: { capabilityId: { enum: string[] } };
    };
    expect([...m.$defs.capabilityId.enum].sort()).toEqual([...CAPABILITY_IDS].sort());
    for (const k of PLUGIN_KINDS) expect(validateSchema("plugin-manifest", { name: "x", kind: k })).toEqual([]);
    expect(validateSchema("plugin-manifest", { name: "x", kind: "plugin" })[0]?.message).toMatch(
      /must be one of|does not match/,
    );
  });

  it("the lock schema's plugin kind, source and origin are the plugin record's unions", () => {
    const lock = JSON.parse(readFileSync(join(SCHEMAS_DIR, "lock.schema.json"), "utf8")) as {
      $defs: { plugin: { properties: Record<"kind" | "source" | "origin", { enum: string[] }> } };
    };
    const p = lock.$defs.plugin.properties;
    expect(p.kind.enum).toEqual([...PLUGIN_KINDS]);
    expect(p.source.enum).toEqual([...PLUGIN_SOURCES]);
    expect(p.origin.enum).toEqual([...PLUGIN_ORIGINS]);
  });

  it("positions, enum suggestions and unknown fields", () => {
    const d = validateSchema("config", { plugins: { enabeld: [] } });
    expect(d[0]).toMatchObject({ code: "W_SCHEMA_UNKNOWN_FIELD", severity: "warning", path: "plugins.enabeld" });
    expect(d[0]!.message).toContain("did you mean 'enabled'");
    const caps = validateSchema("config", { plugins: { entries: { a: { granted_capabilities: ["tools.overide"] } } } });
    expect(caps.map((x) => x.message).join()).toContain("did you mean 'tools.override'");
  });
});
