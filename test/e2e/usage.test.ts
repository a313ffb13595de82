import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runAll, runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

let s: Scratch;
let home: string;
let bundled: string;

beforeAll(() => {
  s = new Scratch();
  home = s.dir("home");
  bundled = s.dir("bundled");
  writePlugin(join(home, "plugins", "flat"), "name: flat\n");
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: []\n");
});
afterAll(() => s.cleanup());

const run = (args: string[]) => runCli(args, { home, env: { HERMES_BUNDLED_PLUGINS: bundled } });

describe.concurrent("usage errors exit 2", () => {
  const cases: Array<[string, string[], RegExp]> = [
    ["unknown command", ["bogus"], /unknown command 'bogus'/],
    ["unknown plugins subcommand", ["plugins", "bogus"], /unknown command 'bogus'/],
    ["unknown config subcommand", ["config", "bogus"], /unknown command 'bogus'/],
    ["unknown option", ["plugins", "list", "--bogus"], /unknown option '--bogus'/],
    ["unknown global option", ["--bogus", "plugins", "list"], /unknown option '--bogus'/],
    ["missing argument to enable", ["plugins", "enable"], /missing required argument 'name'/],
    ["missing argument to disable", ["plugins", "disable"], /missing required argument 'name'/],
    ["missing argument to show", ["plugins", "show"], /missing required argument 'name'/],
    ["missing argument to why", ["plugins", "why"], /missing required argument 'name'/],
    ["missing argument to validate", ["plugins", "validate"], /missing required argument 'dir'/],
    ["missing option value", ["--home"], /argument missing/],
    [
      "bad --format choice",
      ["config", "validate", "x.yaml", "--format", "xml"],
      /Allowed choices are text, json, github/,
    ],
    ["too many arguments", ["plugins", "enable", "a", "b"], /too many arguments/],
    // a command group without its subcommand is incomplete usage: help on stderr, exit 2
    ["no command at all", [], /Usage: hermes \[options\] \[command\]/],
    ["config without a subcommand", ["config"], /Usage: hermes config/],
  ];
  for (const [title, args, message] of cases) {
    it(`${title}: hermes ${args.join(" ")}`, async () => {
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain("--help");
      expect(r.stderr).not.toMatch(STACK_RE);
      expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe("plugins:\n  enabled: []\n");
    });
  }
});

describe.concurrent("help and version exit 0", () => {
  it("--help at every level", async () => {
    const rs = await runAll([
      () => run(["--help"]),
      () => run(["plugins", "--help"]),
      () => run(["plugins", "enable", "--help"]),
      () => run(["config", "validate", "--help"]),
      () => run(["help", "plugins"]),
    ]);
    for (const r of rs) {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: hermes/);
      expect(r.stderr).toBe("");
    }
    expect(rs[0]!.stdout).toMatch(/^\s+plugins\s/m);
    expect(rs[0]!.stdout).toMatch(/^\s+config\s/m);
    expect(rs[1]!.stdout).toMatch(/^\s+list\|ls \[options\]/m);
    expect(rs[2]!.stdout).toContain("--json");
  });

  it("-V prints the package version", async () => {
    const r = await run(["-V"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version,
    );
  });
});

describe("no stack traces for bad input", () => {
  it("prints coded errors, never a stack, for a battery of bad inputs", async () => {
    const fileAsHome = writeText(join(s.root, "a-file"), "x");
    const dirAsConfig = s.dir("dir-config");
    writeText(join(dirAsConfig, "config.yaml", "x"), "");
    const unreadable = s.dir("yaml-dir");
    writeText(join(unreadable, "plugin.yaml", "x"), "");
    const cases: Array<[string[], Record<string, string> | undefined]> = [
      [["plugins", "list"], { HERMES_HOME: fileAsHome }],
      [["plugins", "enable", "flat"], { HERMES_HOME: fileAsHome }],
      [["plugins", "list"], { HERMES_HOME: dirAsConfig }],
      [["plugins", "enable", "flat"], { HERMES_HOME: dirAsConfig }],
      [["config", "validate"], { HERMES_HOME: dirAsConfig }],
      [["config", "validate", s.root], undefined],
      [["plugins", "validate", unreadable], undefined],
      [["plugins", "validate", fileAsHome], undefined],
      [["plugins", "enable", ""], undefined],
      [["plugins", "why", "../../etc/passwd"], undefined],
      [["--profile", "../x", "plugins", "list", "--json"], undefined],
      [["plugins", "list"], { HERMES_BUNDLED_PLUGINS: fileAsHome }],
      [["plugins", "list"], { HERMES_ENABLE_PROJECT_PLUGINS: "maybe" }],
    ];
    const rs = await runAll(
      cases.map(
        ([args, env]) =>
          () =>
            runCli(args, { home, env: { HERMES_BUNDLED_PLUGINS: bundled, ...env } }),
      ),
    );
    rs.forEach((r, i) => {
      const label = `hermes ${cases[i]![0].join(" ")} ${JSON.stringify(cases[i]![1] ?? {})}`;
      expect(r.stderr, label).not.toMatch(STACK_RE);
      expect(r.stderr + r.stdout, label).not.toContain("E_INTERNAL");
      expect(r.signal, label).toBeNull();
      expect([0, 1], label).toContain(r.code);
    });
    // the clear failures
    expect(rs[0]!.code).toBe(1);
    expect(rs[0]!.stderr).toContain("E_FS_READ");
    expect(rs[3]!.code).toBe(1);
    expect(rs[3]!.stderr).toContain("E_FS_READ");
    expect(rs[8]!.code).toBe(1);
    expect(rs[8]!.stderr).toContain("E_PLUGIN_NOT_FOUND");
    expect(JSON.parse(rs[10]!.stdout)).toMatchObject({ error: { code: "E_PROFILE_NAME" } });
  });
});
