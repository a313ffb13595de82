import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

let s: Scratch;
let home: string;
const DEBUG_LINE = /unknown manifest field\(s\) ignored: weird/;

beforeAll(() => {
  s = new Scratch();
  home = s.dir("home");
  // A version-1 manifest's unknown field is logged at debug level only: a probe for the level in force.
  writePlugin(join(home, "plugins", "memo"), "name: memo\nversion: 1.0.0\nweird: 1\n");
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: [memo]\n");
});
afterAll(() => s.cleanup());

describe.concurrent("--verbose, --quiet and HERMES_LOG_LEVEL", () => {
  it(
    "--verbose shows debug records, --quiet hides them even when HERMES_LOG_LEVEL=debug; both together are a " +
      "usage error",
    async () => {
      const [plain, verbose, quiet, both] = await Promise.all([
        runCli(["plugins", "why", "memo"], { home }),
        runCli(["plugins", "why", "memo", "--verbose"], { home }),
        runCli(["--quiet", "plugins", "why", "memo"], { home, env: { HERMES_LOG_LEVEL: "debug" } }),
        runCli(["plugins", "why", "memo", "--verbose", "--quiet"], { home }),
      ]);
      expect(plain.code).toBe(0);
      expect(plain.stderr).not.toMatch(DEBUG_LINE);
      expect(verbose.code).toBe(0);
      expect(verbose.stderr).toMatch(DEBUG_LINE);
      expect(quiet.code).toBe(0);
      expect(quiet.stderr).not.toMatch(DEBUG_LINE);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain("--verbose and --quiet contradict each other");
    },
  );

  it(
    "an unknown HERMES_LOG_LEVEL is an error (exit 2, E_LOG_LEVEL naming the levels), not silently ignored; a " +
      "flag overrides it",
    async () => {
      const [bad, overridden, upper] = await Promise.all([
        runCli(["plugins", "list"], { home, env: { HERMES_LOG_LEVEL: "verbose" } }),
        runCli(["plugins", "list", "--quiet"], { home, env: { HERMES_LOG_LEVEL: "verbose" } }),
        runCli(["plugins", "list"], { home, env: { HERMES_LOG_LEVEL: " INFO " } }),
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stdout).toBe("");
      expect(bad.stderr).toContain(
        'error E_LOG_LEVEL: HERMES_LOG_LEVEL="verbose" is not a log level (use trace, debug, info, warn, ' +
          "error, fatal, silent)",
      );
      expect(bad.stderr).not.toMatch(STACK_RE);
      expect(overridden.code).toBe(0);
      expect(upper.code).toBe(0);
    },
  );

  it("every command accepts both flags", async () => {
    const cmds = [
      ["plugins", "list"],
      ["plugins", "show", "memo"],
      ["plugins", "capabilities"],
      ["config", "validate"],
      ["compile", "--dry-run"],
      ["lock", "verify"],
      ["plugins", "validate", join(home, "plugins", "memo")],
    ];
    const rs = await Promise.all(
      cmds.flatMap((c) => [runCli([...c, "--verbose"], { home }), runCli([...c, "--quiet"], { home })]),
    );
    rs.forEach((r, i) => {
      expect(r.stderr, cmds[Math.floor(i / 2)]!.join(" ")).not.toMatch(/unknown option/);
      expect(r.code, cmds[Math.floor(i / 2)]!.join(" ")).not.toBe(2);
    });
  });
});
