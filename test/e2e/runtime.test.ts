import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";

/**
 * Issue 4 acceptance: a compiled home with several plugins, the runtime started through the CLI
 * (a plugin's own `hermes <command>`), hooks and middleware in lock order, tampering refused in a
 * managed home and recompiled in an unmanaged one, an ungranted capability denied.
 */
const scratch = new Scratch("hermes-e2e-runtime-");
afterAll(() => scratch.cleanup());

/** A plugin that records into a shared trace its hook and middleware calls, tagged with its key. */
function tracer(dir: string, name: string, extra = "") {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "plugin.yaml"),
    `name: ${name}\nversion: "1"\nhooks: [post_tool_call]\nprovides_middleware: [tool_request, ` +
      `tool_execution]\n${extra}`,
  );
  writeFileSync(
    join(dir, "index.js"),
    `export function register(ctx) {
  const trace = { push: (x) => (globalThis.__trace ??= []).push(x) };
  ` +
      `ctx.register_hook("post_tool_call", () => { trace.push("hook:${name}"); });
  ` +
      `ctx.register_middleware("tool_request", ({ args }) => { trace.push("request:${name}"); return { args: { ` +
      `...args, seen: [...(args.seen ?? []), "${name}"] }, source: "${name}" }; });
  ` +
      `ctx.register_middleware("tool_execution", async ({ args, next_call }) => { trace.push("enter:${name}"); ` +
      `const r = await next_call(args); trace.push("leave:${name}"); return r; });
}
`,
  );
}

function setup() {
  const root = scratch.dir("rt");
  const home = join(root, "home");
  const bundled = join(root, "bundled");
  mkdirSync(bundled, { recursive: true });
  // Key order (alpha < beta < zeta) differs from load order: zeta is required by alpha.
  tracer(join(home, "plugins", "alpha"), "alpha", "requires_plugins: [zeta]\n");
  tracer(join(home, "plugins", "beta"), "beta");
  tracer(join(home, "plugins", "zeta"), "zeta");
  const driver = join(home, "plugins", "driver");
  mkdirSync(driver, { recursive: true });
  writeFileSync(join(driver, "plugin.yaml"), "name: driver\nversion: '1'\n");
  writeFileSync(
    join(driver, "index.js"),
    `export function register(ctx) {
  ctx.register_cli_command({
    name: "order-demo",
    help: "run ` +
      `one tool call through the hooks and middleware",
    handler_fn: async ({ runtime }) => {
      ` +
      `globalThis.__trace = [];
      const req = await runtime.middleware.applyRequest("tool_request", { ` +
      `seen: [] }, { tool_name: "demo" });
      const result = await ` +
      `runtime.middleware.runExecution("tool_execution", req.payload, async (a) => { ` +
      `globalThis.__trace.push("tool"); return "ok"; }, { tool_name: "demo" });
      await ` +
      `runtime.hooks.invoke("post_tool_call", { tool_name: "demo", args: req.payload, result });
      ` +
      "return JSON.stringify({ order: runtime.lock.load_order, trace: globalThis.__trace, seen: " +
      `req.payload.seen, sources: req.trace.map((t) => t.source), denied: runtime.status.get("greedy") ` +
      `});
    },
  });
}
`,
  );
  // Declares tools.override but nobody granted it: its override registration must be refused.
  const greedy = join(home, "plugins", "greedy");
  mkdirSync(greedy, { recursive: true });
  writeFileSync(join(greedy, "plugin.yaml"), "name: greedy\nversion: '1'\ncapabilities: [tools.override]\n");
  writeFileSync(
    join(greedy, "index.js"),
    `export function register(ctx) {
  ctx.register_tool({ name: "hello_world", override: true, handler: () => "mine", schema: { name: "hello_world" } });
}
`,
  );
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: [alpha, beta, zeta, driver, greedy]\n");
  const env = { HERMES_BUNDLED_PLUGINS: bundled, HERMES_LOG_LEVEL: "info" };
  return { root, home, cli: (...args: string[]) => runCli(["--home", home, ...args], { env }) };
}

interface Demo {
  order: string[];
  trace: string[];
  seen: string[];
  sources: string[];
  denied: { state: string; error: string };
}

describe("runtime core through the CLI", () => {
  it("hooks and middleware run in lock order; an ungranted capability is denied", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    const r = await t.cli("order-demo");
    expect(r.code, r.stderr).toBe(0);
    const demo = JSON.parse(r.stdout) as Demo;
    expect(demo.order).toEqual(["beta", "driver", "greedy", "zeta", "alpha"]);
    const tracers = demo.order.filter((k) => ["alpha", "beta", "zeta"].includes(k));
    // Request middleware is chained: each saw the previous rewrite.
    expect(demo.seen).toEqual(tracers);
    expect(demo.sources).toEqual(tracers);
    expect(demo.trace).toEqual([
      ...tracers.map((k) => `request:${k}`),
      ...tracers.map((k) => `enter:${k}`),
      "tool",
      ...[...tracers].reverse().map((k) => `leave:${k}`),
      ...tracers.map((k) => `hook:${k}`),
    ]);
    expect(demo.denied.state).toBe("failed");
    expect(demo.denied.error).toContain("cannot override built-in tool 'hello_world'");
    const why = await t.cli("plugins", "why", "greedy");
    expect(why.stdout).toMatch(/last run:\s+failed — Plugin 'greedy' cannot override/);
    const chain = await t.cli("plugins", "chain", "--json");
    const chains = JSON.parse(chain.stdout) as {
      middleware: Record<string, string[]>;
      hooks: Record<string, string[]>;
    };
    expect(chains.middleware.tool_execution).toEqual(tracers);
    expect(chains.hooks.post_tool_call).toEqual(tracers);
  });

  it("an unmanaged home recompiles after a plugin file changes, and says which plugin", async () => {
    const t = setup();
    await t.cli("compile");
    writeFileSync(
      join(t.home, "plugins", "beta", "index.js"),
      `${"// edited\n"}export function register(ctx) { ctx.register_hook("post_tool_call", () => { ` +
        `(globalThis.__trace ??= []).push("hook:beta-edited"); }); }\n`,
    );
    const r = await t.cli("order-demo");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "lock is stale: plugin(s) changed since the last compile: ~ beta (files changed); recompiling",
    );
    expect((JSON.parse(r.stdout) as Demo).trace).toContain("hook:beta-edited");
  });

  it("a managed home refuses a tampered plugin with the exact fix", async () => {
    const t = setup();
    const spec = writeText(join(t.root, "spec.yaml"), "plugins: []\n");
    expect((await t.cli("compile", "--spec", spec, "--managed", "nixos")).code).toBe(0);
    writeFileSync(join(t.home, "plugins", "zeta", "index.js"), "export function register(ctx) { /* tampered */ }\n");
    const r = await t.cli("plugins", "chain");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_COMPILE_STALE");
    expect(r.stderr).toContain("~ zeta (files changed)");
    expect(r.stderr).toContain(`hermes compile --spec ${spec} --managed nixos`);
    expect(r.stderr).not.toMatch(STACK_RE);
  });

  it(
    "a lock edited by hand after a verified start is schema-checked again: recompiled when unmanaged, refused " +
      "when managed",
    async () => {
      for (const managed of [false, true]) {
        const t = setup();
        const spec = writeText(join(t.root, "spec.yaml"), "plugins: []\n");
        expect((await t.cli("compile", ...(managed ? ["--spec", spec, "--managed", "nixos"] : []))).code).toBe(0);
        // A verified start first, so the lock's bytes are on record as checked.
        expect((await t.cli("plugins", "chain")).code).toBe(0);
        const lockFile = join(t.home, "hermes.lock.json");
        writeFileSync(
          lockFile,
          readFileSync(lockFile, "utf8").replace('"schema": "hermes.lock.v1"', '"schema": "hermes.lock.v9"'),
        );
        const r = await t.cli("plugins", "chain", "--json");
        expect(r.stderr).not.toMatch(STACK_RE);
        if (managed) {
          expect(r.code).toBe(1);
          expect(r.stdout + r.stderr).toContain("E_LOCK_INVALID");
        } else {
          expect(r.code, r.stderr).toBe(0);
          expect(r.stderr).toMatch(/recompiling/);
          expect(readFileSync(lockFile, "utf8")).toContain('"schema": "hermes.lock.v1"');
        }
      }
    },
  );
});
