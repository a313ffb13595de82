import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE, type Diag } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

let s: Scratch;
let root: string;
const dir = (name: string) => join(root, name);
const manifest = (name: string) => join(root, name, "plugin.yaml");

beforeAll(() => {
  s = new Scratch();
  root = s.dir("plugins");
  writePlugin(dir("good"), "name: good\nversion: 1.0.0\ndescription: fine\nprovides_tools: [t]\n");
  writePlugin(dir("good-main"), { manifest: "name: good-main\nmain: lib/entry.js\n", entry: false });
  writeText(join(dir("good-main"), "lib", "entry.js"), "export function register() {}\n");
  writePlugin(dir("badyaml"), "name: x\nversion: [1\n");
  writePlugin(dir("types"), "version: 1.0.0\nname: [1]\n");
  writePlugin(dir("escape"), "name: esc\nmain: ../escape.js\n");
  writePlugin(dir("list"), "- a\n- b\n");
  writePlugin(dir("scalar"), "just a string\n");
  writePlugin(dir("unknown"), "name: unk\nversion: 1.0.0\ndescripton: typo\n");
  writePlugin(dir("no-entry"), { manifest: "name: no-entry\n", entry: false });
  writeText(join(dir("no-manifest"), "index.js"), "export function register() {}\n");
  // an alias "billion laughs": must be refused as bad YAML, not crash
  const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 8; i++)
    bomb.push(
      `${"abcdefgh"[i]}: &${"abcdefgh"[i]} [${Array(10)
        .fill(`*${"abcdefgh"[i - 1]}`)
        .join(", ")}]`,
    );
  writePlugin(dir("bomb"), `${bomb.join("\n")}\n`);
});
afterAll(() => s.cleanup());

const validate = (d: string, ...extra: string[]) => runCli(["plugins", "validate", d, ...extra]);

describe.concurrent("hermes plugins validate <dir>", () => {
  it("a good plugin exits 0 and says ok", async () => {
    const [a, b] = await Promise.all([validate(dir("good")), validate(dir("good-main"))]);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe("good: ok\n");
    expect(a.stderr).toBe("");
    expect(b.code).toBe(0);
    expect(b.stdout).toBe("good-main: ok\n");
  });

  it("a relative folder argument works (resolved against cwd)", async () => {
    const r = await runCli(["plugins", "validate", "good"], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("good: ok\n");
  });

  it("malformed YAML: exit 1, E_YAML_PARSE at file:line:col", async () => {
    const r = await validate(dir("badyaml"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`error E_YAML_PARSE ${esc(manifest("badyaml"))}:\\d+:\\d+: `));
    expect(r.stderr).toContain(`${dir("badyaml")}: 1 error(s)`);
    expect(r.stderr).not.toMatch(STACK_RE);
  });

  it("a wrong type (name: [1]): exit 1, E_SCHEMA_INVALID at file:2:7 with the JSON path", async () => {
    const r = await validate(dir("types"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error E_SCHEMA_INVALID ${manifest("types")}:2:7 name: must be string`);
  });

  it("main: ../escape.js: exit 1, E_MANIFEST_PATH_ESCAPE at file:2:7", async () => {
    const r = await validate(dir("escape"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error E_MANIFEST_PATH_ESCAPE ${manifest("escape")}:2:7 main: `);
    expect(r.stderr).toContain("../escape.js");
  });

  it("a manifest that is not a mapping: exit 1, E_MANIFEST_NOT_MAPPING at file:1:1", async () => {
    const [l, sc] = await Promise.all([validate(dir("list")), validate(dir("scalar"))]);
    expect(l.code).toBe(1);
    expect(l.stderr).toContain(
      `error E_MANIFEST_NOT_MAPPING ${manifest("list")}:1:1: plugin.yaml must be a mapping (got a list)`,
    );
    expect(sc.code).toBe(1);
    expect(sc.stderr).toContain(`error E_MANIFEST_NOT_MAPPING ${manifest("scalar")}:1:1:`);
  });

  it("a missing entry module, a folder without plugin.yaml and a missing folder are errors", async () => {
    const [ne, nm, missing] = await Promise.all([
      validate(dir("no-entry")),
      validate(dir("no-manifest")),
      validate(dir("does-not-exist")),
    ]);
    expect(ne.code).toBe(1);
    expect(ne.stderr).toContain("E_PLUGIN_NO_ENTRY");
    expect(nm.code).toBe(1);
    expect(nm.stderr).toContain("E_DISCOVERY_NO_MANIFEST");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("E_FS_READ");
    for (const r of [ne, nm, missing]) expect(r.stderr).not.toMatch(STACK_RE);
  });

  it("an unknown field is a warning (exit 0) at file:line:col", async () => {
    const r = await validate(dir("unknown"));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("unk: ok (1 warning(s))\n");
    expect(r.stderr).toContain(
      `warning W_SCHEMA_UNKNOWN_FIELD ${manifest("unknown")}:3:1 descripton: unknown field 'descripton'`,
    );
  });

  it("an unknown field suggests the nearest known field ('did you mean')", async () => {
    const r = await validate(dir("unknown"));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("did you mean 'description'");
  });

  it("--format github prints ::error / ::warning workflow commands on stdout", async () => {
    const [t, u, g] = await Promise.all([
      validate(dir("types"), "--format", "github"),
      validate(dir("unknown"), "--format", "github"),
      validate(dir("good"), "--format", "github"),
    ]);
    expect(t.code).toBe(1);
    expect(t.stdout).toMatch(
      new RegExp(
        `^::error file=${esc(manifest("types"))},line=2,col=7,title=E_SCHEMA_INVALID::name: must be string`,
        "m",
      ),
    );
    expect(
      t.stdout
        .trim()
        .split("\n")
        .every((l) => l.startsWith("::")),
    ).toBe(true);
    expect(u.code).toBe(0);
    expect(u.stdout).toMatch(
      new RegExp(`^::warning file=${esc(manifest("unknown"))},line=3,col=1,title=W_SCHEMA_UNKNOWN_FIELD::`, "m"),
    );
    expect(g.code).toBe(0);
    expect(g.stdout).toBe("");
  });

  it("--format json prints an array of diagnostics with code/severity/message/file/line/col/path", async () => {
    const [t, e, u, g] = await Promise.all([
      validate(dir("types"), "--format", "json"),
      validate(dir("escape"), "--format=json"),
      validate(dir("unknown"), "--format", "json"),
      validate(dir("good"), "--format", "json"),
    ]);
    expect(t.code).toBe(1);
    const td = JSON.parse(t.stdout) as Diag[];
    expect(td).toEqual([
      expect.objectContaining({
        code: "E_SCHEMA_INVALID",
        severity: "error",
        file: manifest("types"),
        line: 2,
        col: 7,
        path: "name",
      }),
    ]);
    expect(td[0]!.message).toMatch(/must be string/);
    expect(e.code).toBe(1);
    expect(JSON.parse(e.stdout) as Diag[]).toContainEqual(
      expect.objectContaining({
        code: "E_MANIFEST_PATH_ESCAPE",
        severity: "error",
        file: manifest("escape"),
        line: 2,
        col: 7,
        path: "main",
      }),
    );
    expect(u.code).toBe(0);
    expect(JSON.parse(u.stdout)).toEqual([
      expect.objectContaining({
        code: "W_SCHEMA_UNKNOWN_FIELD",
        severity: "warning",
        file: manifest("unknown"),
        line: 3,
        col: 1,
        path: "descripton",
      }),
    ]);
    expect(g.code).toBe(0);
    expect(JSON.parse(g.stdout)).toEqual([]);
  });

  it("an alias bomb is refused as invalid YAML with a position, not an internal error", async () => {
    const r = await validate(dir("bomb"));
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain("E_INTERNAL");
    expect(r.stderr).toContain("E_YAML_PARSE");
    expect(r.stderr).toContain(manifest("bomb"));
    expect(r.stderr).not.toMatch(STACK_RE);
  });
});

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
