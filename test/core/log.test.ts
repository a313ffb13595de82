import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/cli.js";

/**
 * core/log.ts: the process logger loads pino only for a line at an enabled level; until then a
 * logger and its children answer `level` and drop disabled lines themselves, a child following its
 * parent's level as a pino child does. The built module in a fresh Node (its stderr is pino's destination).
 */
function run(script: string, env: Record<string, string> = {}): { stderr: string; pino: boolean } {
  const log = pathToFileURL(join(ROOT, "dist", "core", "log.js")).href;
  const r = spawnSync(
    process.execPath,
    [
      "--no-warnings",
      "--input-type=module",
      "-e",
      `import { createRequire } from "node:module";
const { logger, setLogLevel } = await import(${JSON.stringify(log)});
${script}
const loaded = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("/node_modules/pino/"));
process.stdout.write(loaded ? "pino" : "no pino");`,
    ],
    { encoding: "utf8", env: { ...process.env, HERMES_LOG_LEVEL: "", ...env } },
  );
  expect(r.status, r.stderr).toBe(0);
  return { stderr: r.stderr, pino: r.stdout === "pino" };
}

describe("the lazy process logger", () => {
  it("disabled lines and children load no pino; the levels read as pino's would", () => {
    const r = run(`const c = logger().child({ plugin: "memo" });
c.info("not written"); c.child({ part: 1 }).debug("nor this");
const ok = c.level === "warn" && !c.isLevelEnabled("info") && c.isLevelEnabled("error");
if (!ok) throw new Error("level " + c.level);`);
    expect(r).toEqual({ stderr: "", pino: false });
  });

  it("a line at an enabled level is written with every binding of its chain", () => {
    const r = run(`logger().child({ plugin: "memo" }).child({ part: 1 }).warn("written");`);
    expect(r.pino).toBe(true);
    expect(JSON.parse(r.stderr)).toMatchObject({ level: 40, plugin: "memo", part: 1, msg: "written" });
  });

  it("a level set on a child reaches the children made from it before; --verbose reaches all", () => {
    const own = run(`const c = logger().child({ plugin: "memo" }); const g = c.child({ part: 1 });
c.level = "debug"; g.debug("grandchild at debug"); logger().child({ plugin: "other" }).debug("not this");`);
    expect(own.stderr).toContain("grandchild at debug");
    expect(own.stderr).not.toContain("not this");
    const verbose = run(`const g = logger().child({ plugin: "memo" }).child({ part: 1 });
setLogLevel("debug"); g.debug("after --verbose");`);
    expect(verbose.stderr).toContain("after --verbose");
  });
});
