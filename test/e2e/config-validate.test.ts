import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasShared, SHARED_FIXTURES } from "../shared-dir.js";
import { runCli, STACK_RE, type Diag } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";

const CONFIG_FIXTURES = join(SHARED_FIXTURES, "configs");
const SHARED = hasShared("test/e2e/config-validate.test.ts: the real configs of the shared fixtures");

let s: Scratch;
let d: string;
const f = (name: string) => join(d, name);

beforeAll(() => {
  s = new Scratch();
  d = s.dir("configs");
  writeText(f("notalist.yaml"), "# mine\nmodel: x\nplugins:\n  enabled: notalist\n");
  writeText(f("typo.yaml"), "plugins:\n  enabeld:\n    - a\n");
  writeText(f("malformed.yaml"), "model: x\nplugins:\n  enabled: [a\n");
  writeText(f("not-mapping.yaml"), "- a\n- b\n");
  writeText(f("clamped.yaml"), "plugins:\n  hook_callback_timeout: 900\n");
  writeText(f("empty.yaml"), "");
  writeText(
    f("agent-types.yaml"),
    "model:\n  default: m\n  timeout: 0\n  vendor_flag: kept\nagent:\n  max_turns: ten\n  reasoning_effort: " +
      "high\nterminal:\n  output_limit: 2.5\n",
  );
  writeText(f("model-string.yaml"), "model: gpt-4o-mini\nagent:\n  max_turns: 12\nterminal:\n  timeout: 30\n");
  const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 8; i++)
    bomb.push(
      `${"abcdefgh"[i]}: &${"abcdefgh"[i]} [${Array(10)
        .fill(`*${"abcdefgh"[i - 1]}`)
        .join(", ")}]`,
    );
  writeText(f("bomb.yaml"), `${bomb.join("\n")}\n`);
});
afterAll(() => s.cleanup());

const validate = (file: string | undefined, ...extra: string[]) =>
  runCli(["config", "validate", ...(file ? [file] : []), ...extra]);

describe.concurrent("hermes config validate [file]", () => {
  it.skipIf(!SHARED)("every real config in the shared fixtures is valid (exit 0)", async () => {
    const files = readdirSync(CONFIG_FIXTURES).filter((n) => n.endsWith(".yaml") || n.endsWith(".yml"));
    expect(files).toContain("HermeTeam__hermes-sdlc-agents__profiles_hermes-builder_config.yaml");
    const rs = await Promise.all(files.map((n) => validate(join(CONFIG_FIXTURES, n))));
    rs.forEach((r, i) => {
      expect(r.code, `${files[i]}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/: ok( \(\d+ warning\(s\)\))?\n$/);
      expect(r.stderr).not.toMatch(/\berror\b/);
    });
  });

  it(
    "the model, agent and terminal fields the agent reads are type-checked at their line; the original's other " +
      "keys pass",
    async () => {
      const r = await validate(f("agent-types.yaml"), "--format", "json");
      expect(r.code).toBe(1);
      const got = (JSON.parse(r.stdout) as Diag[]).map((x) => `${x.severity} ${x.line}:${x.col} ${x.path}`);
      expect(got).toEqual([
        "error 3:12 model.timeout",
        "error 6:14 agent.max_turns",
        "error 9:17 terminal.output_limit",
      ]);
      const ok = await validate(f("model-string.yaml"));
      expect(ok.code, ok.stderr).toBe(0);
    },
  );

  it("plugins.enabled: notalist → exit 1 with line:col and the JSON path plugins.enabled", async () => {
    const r = await validate(f("notalist.yaml"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error E_SCHEMA_INVALID ${f("notalist.yaml")}:4:12 plugins.enabled: `);
    expect(r.stderr).toContain(`${f("notalist.yaml")}: 1 error(s)`);
    expect(r.stderr).not.toMatch(STACK_RE);
  });

  it("an unknown key under plugins (enabeld) is a warning with \"did you mean 'enabled'\"", async () => {
    const r = await validate(f("typo.yaml"));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${f("typo.yaml")}: ok (1 warning(s))\n`);
    expect(r.stderr).toContain(
      `warning W_SCHEMA_UNKNOWN_FIELD ${f("typo.yaml")}:2:3 plugins.enabeld: unknown field 'enabeld'`,
    );
    expect(r.stderr).toContain("did you mean 'enabled'");
  });

  it("malformed YAML → exit 1, E_YAML_PARSE with line:col", async () => {
    const r = await validate(f("malformed.yaml"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`error E_YAML_PARSE ${esc(f("malformed.yaml"))}:\\d+:\\d+: `));
    expect(r.stderr).not.toMatch(STACK_RE);
  });

  it("a top level that is not a mapping → exit 1, E_CONFIG_NOT_MAPPING at 1:1", async () => {
    const r = await validate(f("not-mapping.yaml"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error E_CONFIG_NOT_MAPPING ${f("not-mapping.yaml")}:1:1:`);
  });

  it("an out-of-range timeout is a clamping warning; an empty file is valid", async () => {
    const [c, e] = await Promise.all([validate(f("clamped.yaml")), validate(f("empty.yaml"))]);
    expect(c.code).toBe(0);
    expect(c.stderr).toContain(`warning W_CONFIG_CLAMPED ${f("clamped.yaml")}:2:26 plugins.hook_callback_timeout:`);
    expect(e.code).toBe(0);
  });

  it("--format github prints ::error lines with file, line and col on stdout", async () => {
    const [n, t, m] = await Promise.all([
      validate(f("notalist.yaml"), "--format", "github"),
      validate(f("typo.yaml"), "--format", "github"),
      validate(f("malformed.yaml"), "--format", "github"),
    ]);
    expect(n.code).toBe(1);
    expect(n.stdout).toMatch(
      new RegExp(
        `^::error file=${esc(f("notalist.yaml"))},line=4,col=12,title=E_SCHEMA_INVALID::plugins\\.enabled: `,
        "m",
      ),
    );
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(
      new RegExp(
        `^::warning file=${esc(f("typo.yaml"))},line=2,col=3,title=W_SCHEMA_UNKNOWN_FIELD::plugins\\.enabeld: `,
        "m",
      ),
    );
    expect(m.code).toBe(1);
    expect(m.stdout).toMatch(/^::error file=.*,line=\d+,col=\d+,title=E_YAML_PARSE::/m);
  });

  it.skipIf(!SHARED)("--format json prints an array of diagnostics", async () => {
    const [n, ok] = await Promise.all([
      validate(f("notalist.yaml"), "--format", "json"),
      validate(
        join(CONFIG_FIXTURES, "HermeTeam__hermes-sdlc-agents__profiles_hermes-builder_config.yaml"),
        "--format",
        "json",
      ),
    ]);
    expect(n.code).toBe(1);
    expect(JSON.parse(n.stdout) as Diag[]).toEqual([
      expect.objectContaining({
        code: "E_SCHEMA_INVALID",
        severity: "error",
        file: f("notalist.yaml"),
        line: 4,
        col: 12,
        path: "plugins.enabled",
      }),
    ]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([]);
  });

  it("without a file it validates the home's config.yaml (--home, HERMES_HOME, --profile)", async () => {
    const h = s.dir("home");
    writeText(join(h, "config.yaml"), "plugins:\n  enabled: notalist\n");
    writeText(join(h, "profiles", "p1", "config.yaml"), "plugins:\n  enabled: [a]\n");
    const [a, b, p] = await Promise.all([
      runCli(["--home", h, "config", "validate"]),
      runCli(["config", "validate"], { home: h }),
      runCli(["--profile", "p1", "config", "validate"], { home: h }),
    ]);
    for (const r of [a, b]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${join(h, "config.yaml")}:2:12 plugins.enabled`);
    }
    expect(p.code).toBe(0);
    expect(p.stdout).toBe(`${join(h, "profiles", "p1", "config.yaml")}: ok\n`);
  });

  it("a missing file → exit 1, E_FS_READ", async () => {
    const r = await validate(f("nope.yaml"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_FS_READ");
    expect(r.stderr).not.toMatch(STACK_RE);
  });

  it("an alias bomb is refused as invalid YAML with a position, not an internal error", async () => {
    const r = await validate(f("bomb.yaml"));
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain("E_INTERNAL");
    expect(r.stderr).toContain("E_YAML_PARSE");
    expect(r.stderr).toContain(f("bomb.yaml"));
  });
});

function esc(x: string): string {
  return x.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
