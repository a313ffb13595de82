/**
 * hermes serve loads a new generation beside the old one in one process: the new runtime must run the
 * plugin's current files (its helpers included), with module state of its own. Run in a plain node
 * process (the built package), as the service runs, since the test runner resolves imports itself.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, cliEnv, ROOT } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";

const scratch = new Scratch("hk-plugin-url-");
afterAll(() => scratch.cleanup());

const SCRIPT = `
import { writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
const [home, cli, util] = process.argv.slice(2);
const { startAgentRuntime } = await import(${JSON.stringify(join(ROOT, "dist", "app", "start-agent.js"))});
const provider = { name: "none", model: "none", baseUrl: "", apiMode: "chat", stream: false,
  complete: async () => { throw new Error("unused"); }, withModel() { return this; } };
const first = await startAgentRuntime({ home, provider });
const a = await first.runtime.tools.dispatch("which", {});
writeFileSync(util, 'export const word = "NEW";\\n');
execFileSync(process.execPath, [cli, "--home", home, "compile"], { stdio: "ignore" });
const second = await startAgentRuntime({ home, provider });
const b = await second.runtime.tools.dispatch("which", {});
const c = await first.runtime.tools.dispatch("which", {});
await second.close();
await first.close();
console.log(JSON.stringify([a, b, c]));
`;

describe("plugin modules of a second runtime in one process", () => {
  it("are evaluated afresh: a changed helper file is seen, and module state is not shared", () => {
    const home = scratch.dir("home");
    const plugin = join(home, "plugins", "which");
    writeText(join(plugin, "plugin.yaml"), "name: which\nversion: 1.0.0\n");
    writeText(join(plugin, "lib", "util.js"), 'export const word = "OLD";\n');
    writeText(
      join(plugin, "index.js"),
      'import { word } from "./lib/util.js";\nlet loads = 0;\n' +
        "export function register(ctx) {\n  loads++;\n" +
        '  ctx.register_tool({ name: "which", description: "which", handler: () => `${word}:${loads}` });\n}\n',
    );
    writeText(join(home, "config.yaml"), "plugins:\n  enabled: [which]\n");
    const script = writeText(join(scratch.root, "two-runtimes.mjs"), SCRIPT);
    const r = spawnSync(process.execPath, [script, home, CLI, join(plugin, "lib", "util.js")], {
      env: cliEnv({}),
      encoding: "utf8",
    });
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").at(-1)!)).toEqual(["OLD:1", "NEW:1", "OLD:1"]);
  });
});
