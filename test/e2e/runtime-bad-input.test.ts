import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveToolDirective } from "../../src/runtime/hooks.js";
import { runAll, runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";

/**
 * Issue 4 "Bad input", through the built CLI: a plugin whose register throws, never returns,
 * registers an unknown hook, overrides a tool without the grant, has no register export (load
 * time); calls next_call twice, returns a malformed directive (call time). Each is contained to
 * that plugin or call, named in exactly one log line with the plugin key, and visible in
 * `hermes plugins why`.
 */
const scratch = new Scratch("hermes-e2e-runtime-bad-");
afterAll(() => scratch.cleanup());

function plugin(home: string, key: string, manifest: string, code: string | null): void {
  const dir = join(home, "plugins", key);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), `name: ${key}\nversion: "1"\n${manifest}`);
  if (code !== null) writeFileSync(join(dir, "index.js"), code);
}

interface LogLine {
  level: number;
  msg: string;
  plugin?: string;
}

function logLines(stderr: string): LogLine[] {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);
}

const LOAD_FAILURES: Record<string, { state: string; error: string }> = {
  thrower: { state: "failed", error: "register exploded" },
  hangs: { state: "timeout", error: "load timed out after 0.5s (import + register() never returned)" },
  typo: {
    state: "failed",
    error: "Plugin 'typo' registered unknown hook 'post_tool_cal'; did you mean 'post_tool_call'?",
  },
  greedy: {
    state: "failed",
    error:
      "Plugin 'greedy' cannot override built-in tool 'web_search'. Grant the tools.override capability " +
      "(hermes plugins enable greedy --grant tools.override) to allow this plugin to replace tools.",
  },
  noexport: { state: "failed", error: "no register() export" },
};

let home = "";
let cli: (...args: string[]) => ReturnType<typeof runCli>;

beforeAll(async () => {
  const root = scratch.dir("bad");
  home = join(root, "home");
  const bundled = join(root, "bundled");
  mkdirSync(bundled, { recursive: true });
  // load time
  plugin(
    home,
    "thrower",
    "hooks: [post_tool_call]\n",
    `export function register(ctx) {\n  ctx.register_hook("post_tool_call", () => {});\n  throw new ` +
      `Error("register exploded");\n}\n`,
  );
  plugin(
    home,
    "hangs",
    "hooks: [post_tool_call]\n",
    `export async function register(ctx) {\n  ctx.register_hook("post_tool_call", () => {});\n  await new ` +
      "Promise(() => {});\n}\n",
  );
  plugin(home, "typo", "", `export function register(ctx) {\n  ctx.register_hook("post_tool_cal", () => {});\n}\n`);
  plugin(
    home,
    "greedy",
    "capabilities: [tools.override]\n",
    `export function register(ctx) {\n  ctx.register_tool({ name: "web_search", override: true, handler: () ` +
      `=> "mine" });\n}\n`,
  );
  plugin(home, "noexport", "", `export const setup = () => {};\n`);
  // call time
  plugin(
    home,
    "twice",
    "provides_middleware: [tool_execution]\n",
    `export function register(ctx) {\n  ctx.register_middleware("tool_execution", async function retry({ ` +
      "args, next_call }) {\n    await next_call(args);\n    return next_call(args);\n  });\n}\n",
  );
  plugin(
    home,
    "sloppy",
    "hooks: [pre_tool_call]\n",
    `export function register(ctx) {\n  ctx.register_hook("pre_tool_call", function guard() { return { ` +
      `action: "block" }; });\n}\n`,
  );
  plugin(
    home,
    "healthy",
    "hooks: [pre_tool_call, post_tool_call]\nprovides_middleware: [tool_execution]\n",
    `export function register(ctx) {
  ctx.register_hook("pre_tool_call", () => ({ action: "modify", ` +
      `args: { checked: true } }));
  ctx.register_hook("post_tool_call", () => {});
  ` +
      `ctx.register_middleware("tool_execution", ({ args, next_call }) => next_call(args));
  ` +
      `ctx.register_cli_command({
    name: "bad-demo",
    help: "one tool call through the chains, ` +
      `twice",
    handler_fn: async ({ runtime }) => {
      let runs = 0;
      const out = [];
      ` +
      `for (let i = 0; i < 2; i++) {
        const directives = await ` +
      `runtime.hooks.invoke("pre_tool_call", { tool_name: "demo", args: {}, tool_call_id: "c" + i ` +
      `});
        const result = await runtime.middleware.runExecution("tool_execution", { n: i }, async ` +
      `() => { runs++; return "tool-ran-" + i; }, { tool_name: "demo" });
        out.push({ directives, ` +
      `result });
      }
      return JSON.stringify({ runs, out });
    },
  });
}
`,
  );
  writeText(
    join(home, "config.yaml"),
    "plugins:\n  load_timeout_seconds: 0.5\n  enabled: [thrower, hangs, typo, greedy, noexport, twice, " +
      "sloppy, healthy]\n",
  );
  const env = { HERMES_BUNDLED_PLUGINS: bundled, HERMES_LOG_LEVEL: "warn" };
  cli = (...args: string[]) => runCli(["--home", home, ...args], { env });
  const c = await cli("compile");
  expect(c.code, c.stderr).toBe(0);
});

describe("bad plugins through the CLI", () => {
  it("load-time failures are contained: the runtime starts, the others load, one log line per bad plugin", async () => {
    const r = await cli("plugins", "chain", "--json");
    expect(r.code, r.stderr).toBe(0);
    const chains = JSON.parse(r.stdout) as { hooks: Record<string, string[]>; middleware: Record<string, string[]> };
    expect(chains.hooks.post_tool_call).toEqual(["healthy"]);
    expect(chains.hooks.pre_tool_call).toEqual(["healthy", "sloppy"]);
    expect(chains.middleware.tool_execution).toEqual(["healthy", "twice"]);
    const lines = logLines(r.stderr);
    for (const [key, want] of Object.entries(LOAD_FAILURES)) {
      const mine = lines.filter((l) => l.plugin === key);
      expect(
        mine.map((l) => l.msg),
        key,
      ).toEqual([`Failed to load plugin '${key}': ${want.error}`]);
      expect(mine[0]!.level).toBe(40);
    }
    // Nothing else is logged at warn: not for the healthy plugins, not without a plugin key.
    expect(lines.filter((l) => !(l.plugin && l.plugin in LOAD_FAILURES))).toEqual([]);
    expect(r.stderr).not.toMatch(STACK_RE);
  });

  it("`hermes plugins why` shows each load-time failure on its last-run line", async () => {
    await cli("plugins", "chain");
    const keys = [...Object.keys(LOAD_FAILURES), "healthy"];
    const whys = await runAll(keys.map((key) => () => cli("plugins", "why", key)));
    keys.forEach((key, i) => {
      const r = whys[i]!;
      expect(r.code, r.stderr).toBe(0);
      const line = r.stdout.split("\n").find((l) => l.includes("last run:"));
      const want = LOAD_FAILURES[key];
      expect(line, key).toBe(want ? `  last run:  ${want.state} — ${want.error}` : "  last run:  loaded");
    });
  });

  it(
    "call-time misbehaviour is contained to the call and " + "named once with the plugin key; `why --json` lists it",
    async () => {
      const r = await cli("bad-demo");
      expect(r.code, r.stderr).toBe(0);
      const demo = JSON.parse(r.stdout) as { runs: number; out: Array<{ directives: unknown[]; result: string }> };
      // next_call twice: the first downstream result is kept and the tool ran once per call.
      expect(demo.runs).toBe(2);
      expect(demo.out.map((o) => o.result)).toEqual(["tool-ran-0", "tool-ran-1"]);
      // The malformed block (no message) is ignored: the call is not blocked, the healthy modify applies.
      expect(resolveToolDirective(demo.out[0]!.directives, {})).toEqual({ modified_args: { checked: true } });
      const lines = logLines(r.stderr);
      expect(lines.filter((l) => l.plugin === "twice").map((l) => l.msg)).toEqual([
        "Middleware 'tool_execution' callback retry raised: Middleware 'tool_execution' callback retry called " +
          "next_call() more than once; downstream execution is single-use (middleware provides: args, " +
          "middleware_schema_version, nextCall, next_call, original_args, telemetry_schema_version, tool_name; " +
          "identical failures are logged at DEBUG from now on)",
      ]);
      expect(lines.filter((l) => l.plugin === "sloppy").map((l) => l.msg)).toEqual([
        "Hook 'pre_tool_call' callback guard returned a malformed result: action 'block' needs a non-empty " +
          "message; ignored (the call is not blocked by it) (identical problems are logged at DEBUG from now on)",
      ]);
      expect(lines.filter((l) => l.plugin === "healthy")).toEqual([]);
      const whys = await runAll(["twice", "sloppy"].map((key) => () => cli("plugins", "why", key, "--json")));
      for (const [i, key] of ["twice", "sloppy"].entries()) {
        const why = whys[i]!;
        const rt = (JSON.parse(why.stdout) as { runtime: { state: string; issues?: string[] } }).runtime;
        expect(rt.state, key).toBe("loaded");
        expect(rt.issues, key).toHaveLength(1);
        expect(rt.issues![0]).toContain(
          key === "twice" ? "called next_call() more than once" : "returned a malformed result",
        );
      }
    },
  );
});
