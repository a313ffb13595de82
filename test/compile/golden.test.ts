import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { compile } from "../../src/compile/compile.js";
import { formatDiagnostic, HermesError, type Diagnostic } from "../../src/core/errors.js";
import { cleanupTemp, tempDir } from "../support/home.js";

afterAll(cleanupTemp);

/**
 * Golden tests: each `samples/<case>/input` is a home (`home/`), optional bundled plugins
 * (`bundled/`), optional plugin folders for a spec (`store/`), an optional `spec.yaml` and an
 * optional `args.json` ({"managed": "nixos"}). `expected/` holds `hermes.lock.json` (compared byte
 * for byte), optionally `config.yaml`, or `errors.txt` when compile must refuse and change nothing.
 * Paths are written as $HOME, $STORE and $BUNDLED (and $ROOT for the temp root holding them and
 * spec.yaml, e.g. the lock's deployment.spec). UPDATE_GOLDEN=1 rewrites `expected/`.
 */
const SAMPLES = fileURLToPath(new URL("./samples/", import.meta.url));
const update = process.env.UPDATE_GOLDEN === "1";

function subst(text: string, vars: Record<string, string>): string {
  let out = text;
  for (const [k, v] of Object.entries(vars)) out = out.split(`$${k}`).join(v);
  return out;
}

function unsubst(text: string, vars: Record<string, string>): string {
  let out = text;
  // Longest path first: $HOME may be a prefix of the others.
  for (const [k, v] of Object.entries(vars).sort((a, b) => b[1].length - a[1].length)) out = out.split(v).join(`$${k}`);
  return out;
}

function snapshot(dir: string): string {
  if (!existsSync(dir)) return "";
  const walk = (d: string, rel: string): string[] =>
    readdirSync(d, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .flatMap((e) =>
        e.isDirectory() && !e.isSymbolicLink()
          ? walk(join(d, e.name), `${rel}${e.name}/`)
          : [`${rel}${e.name}:${e.isSymbolicLink() ? "link" : readFileSync(join(d, e.name), "utf8")}`],
      );
  return walk(dir, "").join("\n");
}

const errorLine = (d: Diagnostic) => `${d.code} ${d.path ?? "-"} ${d.message}`;

describe("compile golden samples", () => {
  const cases = existsSync(SAMPLES)
    ? readdirSync(SAMPLES)
        .filter((c) => existsSync(join(SAMPLES, c, "input")))
        .sort()
    : [];
  it("has samples", () => expect(cases.length).toBeGreaterThan(0));
  for (const name of cases) {
    it(name, async () => {
      const input = join(SAMPLES, name, "input");
      const expected = join(SAMPLES, name, "expected");
      const root = tempDir(`hk-golden-${name}-`);
      const vars = { HOME: join(root, "home"), STORE: join(root, "store"), BUNDLED: join(root, "bundled"), ROOT: root };
      for (const d of ["home", "store", "bundled"]) {
        if (existsSync(join(input, d)))
          cpSync(join(input, d), join(root, d), { recursive: true, verbatimSymlinks: true });
        else mkdirSync(join(root, d), { recursive: true });
      }
      let spec: string | undefined;
      if (existsSync(join(input, "spec.yaml"))) {
        spec = join(root, "spec.yaml");
        writeFileSync(spec, subst(readFileSync(join(input, "spec.yaml"), "utf8"), vars));
      }
      const args = existsSync(join(input, "args.json"))
        ? (JSON.parse(readFileSync(join(input, "args.json"), "utf8")) as { managed?: string })
        : {};
      const env = { HERMES_BUNDLED_PLUGINS: vars.BUNDLED, PATH: process.env.PATH };
      const before = snapshot(vars.HOME);
      let lockText: string | undefined;
      let errors: string | undefined;
      try {
        const res = await compile({ home: vars.HOME, specFile: spec, managed: args.managed, env, cwd: root });
        lockText = res.plan.lockText;
      } catch (e) {
        if (!(e instanceof HermesError) || e.code !== "E_COMPILE_REFUSED") throw e;
        errors = `${e.diagnostics
          .filter((d) => d.severity === "error")
          .map(errorLine)
          .sort()
          .join("\n")}\n`;
        expect(snapshot(vars.HOME), "a refused compile changes nothing").toBe(before);
      }
      const results: Record<string, string | undefined> = {
        // The inputs hash covers absolute temp paths; everything derived from content is compared.
        "hermes.lock.json":
          lockText &&
          unsubst(lockText, vars)
            .replace(/"inputs_hash": "sha256:[0-9a-f]{64}"/, '"inputs_hash": "$INPUTS_HASH"')
            .replace(/"checksum": "sha256:[0-9a-f]{64}"/, '"checksum": "$CHECKSUM"'),
        "errors.txt": errors && unsubst(errors, vars),
        "config.yaml":
          lockText && existsSync(join(expected, "config.yaml"))
            ? unsubst(readFileSync(join(vars.HOME, "config.yaml"), "utf8"), vars)
            : undefined,
      };
      if (update) {
        mkdirSync(expected, { recursive: true });
        for (const [f, v] of Object.entries(results)) if (v !== undefined) writeFileSync(join(expected, f), v);
        return;
      }
      for (const [f, v] of Object.entries(results)) {
        if (v === undefined) {
          expect(
            existsSync(join(expected, f)) && f !== "config.yaml",
            `${name}: expected ${f} but compile ${lockText ? "succeeded" : `refused:\n${errors}`}`,
          ).toBe(false);
          continue;
        }
        expect(existsSync(join(expected, f)), `${name}: no expected/${f}; got:\n${v}`).toBe(true);
        expect(v, `${name}/${f}`).toBe(readFileSync(join(expected, f), "utf8"));
      }
      if (lockText) {
        // Same inputs again: byte-identical lock and nothing written.
        const again = await compile({ home: vars.HOME, specFile: spec, managed: args.managed, env, cwd: root });
        expect(again.plan.lockText).toBe(lockText);
        expect(again.applied).toBe(false);
      }
      void formatDiagnostic;
    });
  }
});
