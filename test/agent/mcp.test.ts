import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino, type Logger } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachMcp, McpPermissionError, type McpEnvelope, type McpManager } from "../../src/agent/mcp/index.js";
import type { PluginContext } from "../../src/runtime/context.js";
import type { Runtime } from "../../src/runtime/runtime.js";
import { startRuntime } from "../../src/app/start-runtime.js";
import { cleanupTemp, tempDir } from "../support/home.js";

/**
 * Issue 5 item 7: MCP servers from config.yaml over the official SDK, their tools beside the
 * built-ins, and `ctx.call_mcp`, against a real MCP server written in
 * test/fixtures/mcp (stdio, and Streamable HTTP on 127.0.0.1).
 */

const FIXTURE = fileURLToPath(new URL("../fixtures/mcp/echo-server.mjs", import.meta.url));
afterAll(cleanupTemp);

type Ctx = PluginContext & { callMcp: PluginContext["call_mcp"] };

interface Harness {
  runtime: Runtime;
  manager: McpManager;
  ctx: (key: string) => Ctx;
  logs: Array<Record<string, unknown>>;
  home: string;
}

function capture(): { log: Logger; logs: Array<Record<string, unknown>> } {
  const logs: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: "debug", base: undefined },
    { write: (s: string) => void logs.push(JSON.parse(s) as Record<string, unknown>) },
  );
  return { log, logs };
}

/** A home with plugins that hand their ctx to the test, MCP servers in config.yaml, a built-in tool. */
async function harness(mcpServersYaml: string, entries: Record<string, string[]>): Promise<Harness> {
  const root = tempDir("hermes-mcp-");
  const home = join(root, "home");
  const bundled = join(root, "bundled");
  mkdirSync(bundled, { recursive: true });
  const keys = Object.keys(entries);
  for (const key of keys) {
    const dir = join(home, "plugins", key);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "plugin.yaml"), `name: ${key}\nversion: "1"\n`);
    writeFileSync(
      join(dir, "index.js"),
      `export function register(ctx) { (globalThis.__mcpCtx ??= {})[${JSON.stringify(key)}] = ctx; }\n`,
    );
  }
  const entryYaml = keys.map((k) => `    ${k}:\n      mcp_allowlist: ${JSON.stringify(entries[k])}\n`).join("");
  writeFileSync(
    join(home, "config.yaml"),
    `plugins:\n  enabled: ${JSON.stringify(keys)}\n  entries:\n${entryYaml}mcp_servers:\n${mcpServersYaml}`,
  );
  mkdirSync(join(home, "work"), { recursive: true });
  const { log, logs } = capture();
  let manager: McpManager | undefined;
  const runtime = await startRuntime({
    home,
    log,
    env: { ...process.env, HERMES_BUNDLED_PLUGINS: bundled },
    beforeLoad: async (rt) => {
      rt.registerBuiltinTool({
        name: "read_file",
        toolset: "file",
        schema: { name: "read_file" },
        handler: () => "file",
        requires_env: [],
        description: "read",
        emoji: "",
      });
      manager = (await attachMcp(rt, { env: { MCP_TEST_VAR: "from-env" } })).manager;
    },
  });
  const all = (globalThis as unknown as { __mcpCtx: Record<string, Ctx> }).__mcpCtx;
  return { runtime, manager: manager!, ctx: (key) => all[key]!, logs, home };
}

const stdio = (name: string, extra = "") =>
  `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(FIXTURE)}]\n${extra}`;

describe("MCP over stdio: tools beside the built-ins and ctx.call_mcp", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(
      stdio("echo", "    timeout: 2\n    cwd: work\n    env:\n      FIXTURE_VAR: ${MCP_TEST_VAR}\n") +
        "  off:\n    command: node\n    enabled: false\n" +
        "  broken:\n    command: /nonexistent/mcp-server-binary\n    connect_timeout: 5\n",
      { caller: ["echo", "ghost", "off", "broken"], wildcard: ["*"], nobody: [] },
    );
  });
  afterAll(async () => {
    await h?.manager.close();
  });

  it("registers each server tool as mcp_<server>_<tool> (owner mcp:<server>) beside the built-ins", () => {
    const names = h.runtime.tools.list().map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "read_file",
        "mcp_echo_echo",
        "mcp_echo_big",
        "mcp_echo_slow",
        "mcp_echo_crash",
        "mcp_echo_pid",
        "mcp_echo_structured",
      ]),
    );
    expect(names.filter((n) => n.startsWith("mcp_off_") || n.startsWith("mcp_broken_"))).toEqual([]);
    const echo = h.runtime.tools.get("mcp_echo_echo")!;
    expect(echo.owner).toBe("mcp:echo");
    expect(echo.toolset).toBe("mcp-echo");
    expect(echo.description).toBe("Echo the message back");
    expect(echo.schema.parameters).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    });
    expect(h.runtime.tools.get("read_file")!.owner).toBe("builtin");
    // The unreachable server is logged with its code, and did not stop the others.
    expect(h.logs.some((l) => l.code === "E_MCP_CONNECT_FAILED" && l.mcp_server === "broken")).toBe(true);
  });

  it("dispatches a model tool call through the client", async () => {
    expect(await h.runtime.tools.dispatch("mcp_echo_echo", { message: "hi" })).toBe('{"result":"echo: hi"}');
    expect(JSON.parse(await h.runtime.tools.dispatch("mcp_echo_fail", {}))).toEqual({ error: "it failed on purpose" });
  });

  it("call_mcp returns the envelope: ok/result, structuredContent, ok:false/error", async () => {
    const ctx = h.ctx("caller");
    expect(await ctx.call_mcp("echo", "echo", { message: "hello" })).toEqual({ ok: true, result: "echo: hello" });
    expect(await ctx.callMcp("echo", "echo", { message: "camel" })).toEqual({ ok: true, result: "echo: camel" });
    expect(await ctx.call_mcp("echo", "structured", { n: 21 })).toEqual({
      ok: true,
      result: '{"doubled":42}',
      structuredContent: { doubled: 42 },
    });
    expect(await ctx.call_mcp("echo", "fail")).toEqual({ ok: false, error: "it failed on purpose" });
    const bad = await ctx.call_mcp("echo", "echo", {});
    expect(bad.ok).toBe(false);
    const unknownTool = await ctx.call_mcp("echo", "no_such_tool", {});
    expect(unknownTool).toMatchObject({ ok: false, error: expect.stringContaining("no_such_tool") });
    expect(
      await ctx.call_mcp("echo", "echo", ["not", "an", "object"] as unknown as Record<string, unknown>),
    ).toMatchObject({ ok: false, error: expect.stringContaining("must be an object") });
    // env (with ${VAR} from the environment) and cwd (relative to the home) reach the server process.
    const env = (await ctx.call_mcp("echo", "env", { name: "FIXTURE_VAR" })) as { ok: true; result: string };
    expect(JSON.parse(env.result)).toEqual({ value: "from-env", cwd: join(h.home, "work") });
    // A plugin's call is logged with the caller and outcome.
    expect(
      h.logs.some((l) => l.msg === "mcp call" && l.caller === "caller" && l.tool === "echo" && l.outcome === "ok"),
    ).toBe(true);
  });

  it("refuses a server outside the allowlist, naming the exact config key; '*' is not a wildcard", async () => {
    const expected =
      "Plugin 'nobody' is not allowed to call MCP server 'echo'. Add it to " +
      "plugins.entries.nobody.mcp_allowlist in config.yaml to grant access (default is no MCP access).";
    const err = await h
      .ctx("nobody")
      .call_mcp("echo", "echo", { message: "x" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpPermissionError);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe("PermissionError");
    expect((err as Error).message).toBe(expected);
    expect((err as McpPermissionError).code).toBe("E_MCP_NOT_ALLOWED");
    await expect(h.ctx("wildcard").call_mcp("echo", "echo", { message: "x" })).rejects.toThrow(
      "Plugin 'wildcard' is not allowed to call MCP server 'echo'. Add it to plugins.entries.wildcard.mcp_allowlist",
    );
    // The allowlist comes first: before the timeout is parsed and before the server is looked up.
    await expect(h.ctx("nobody").call_mcp("ghost", "x", {}, "not a number")).rejects.toBeInstanceOf(McpPermissionError);
    // Exact match only: no case folding.
    await expect(h.ctx("caller").call_mcp("ECHO", "echo", { message: "x" })).rejects.toBeInstanceOf(McpPermissionError);
  });

  it("allowed but not configured, disabled or unreachable servers give error envelopes", async () => {
    const ctx = h.ctx("caller");
    expect(await ctx.call_mcp("ghost", "x")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/MCP server 'ghost' is not configured .*configured: echo, off, broken/),
    });
    expect(await ctx.call_mcp("off", "x")).toMatchObject({ ok: false, error: expect.stringContaining("disabled") });
    const broken = await ctx.call_mcp("broken", "x");
    expect(broken).toMatchObject({
      ok: false,
      error: expect.stringContaining("could not start '/nonexistent/mcp-server-binary'"),
    });
  });

  it("truncates results past 64 KiB with the marker and truncated: true", async () => {
    const env = (await h.ctx("caller").call_mcp("echo", "big", { size: 70000 })) as McpEnvelope & { result: string };
    expect(env.ok).toBe(true);
    expect(env.truncated).toBe(true);
    // The raw result is cut, so it no longer parses: result is the raw truncated string.
    expect(env.result.startsWith('{"result":"xxxx')).toBe(true);
    expect(env.result.endsWith("… [truncated]")).toBe(true);
    expect(env.result.length).toBe(65536 + "… [truncated]".length);
    const small = await h.ctx("caller").call_mcp("echo", "big", { size: 100 });
    expect(small).toEqual({ ok: true, result: "x".repeat(100) });
    expect("truncated" in small).toBe(false);
  });

  it("clamps the timeout to at least 1 s and reports a hang without blocking other calls", async () => {
    const ctx = h.ctx("caller");
    const started = Date.now();
    let slowSettled = false;
    // 0 → clamped to 1 s
    const slow = ctx.call_mcp("echo", "slow", { ms: 8000 }, 0).finally(() => (slowSettled = true));
    const quick = await ctx.call_mcp("echo", "echo", { message: "meanwhile" });
    expect(quick).toEqual({ ok: true, result: "echo: meanwhile" });
    expect(slowSettled).toBe(false);
    const res = await slow;
    const elapsed = Date.now() - started;
    expect(res).toMatchObject({ ok: false, error: expect.stringContaining("did not answer within 1s") });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(5000);
    // Unparseable → 30 (the call finishes well within it).
    expect(await ctx.call_mcp("echo", "slow", { ms: 50 }, "soon")).toEqual({ ok: true, result: "slow done" });
    expect(h.logs.some((l) => l.code === "E_MCP_TIMEOUT" && l.tool === "slow")).toBe(true);
  });

  it("bounds a model tool call by the server's timeout", async () => {
    const started = Date.now();
    const out = JSON.parse(await h.runtime.tools.dispatch("mcp_echo_slow", { ms: 10000 })) as { error: string };
    expect(out.error).toContain("did not answer within 2s");
    expect(Date.now() - started).toBeLessThan(6000);
  });

  it("a model tool call fails (rejects) on a hang and stops at once when the agent interrupts it", async () => {
    const slow = h.runtime.tools.get("mcp_echo_slow")!;
    const ac = new AbortController();
    const started = Date.now();
    const pending = Promise.resolve(slow.handler({ ms: 10000 }, { signal: ac.signal }));
    setTimeout(() => ac.abort(), 100);
    await expect(pending).rejects.toThrow("the call of MCP tool 'slow' of server 'echo' was interrupted");
    // Well before the server's 2 s timeout.
    expect(Date.now() - started).toBeLessThan(1900);
    // The server is still usable.
    expect(await slow.handler({ ms: 10 }, {})).toBe('{"result":"slow done"}');
  });

  it("a crashing server gives an error envelope, and the next call starts it again", async () => {
    const ctx = h.ctx("caller");
    const before = (await ctx.call_mcp("echo", "pid")) as { ok: true; result: string };
    const crash = await ctx.call_mcp("echo", "crash");
    expect(crash).toMatchObject({
      ok: false,
      error: expect.stringContaining("closed the connection while calling 'crash'"),
    });
    expect((crash as { error: string }).error).toContain("process exited");
    const after = (await ctx.call_mcp("echo", "pid")) as { ok: true; result: string };
    expect(after.ok).toBe(true);
    expect(after.result).not.toBe(before.result);
    expect(await h.runtime.tools.dispatch("mcp_echo_echo", { message: "back" })).toBe('{"result":"echo: back"}');
    expect(h.logs.some((l) => l.code === "E_MCP_SERVER_CLOSED")).toBe(true);
    expect(h.logs.some((l) => String(l.msg).includes("MCP server 'echo' reconnected"))).toBe(true);
  });

  it("recycles a server that keeps timing out", async () => {
    const ctx = h.ctx("caller");
    const before = ((await ctx.call_mcp("echo", "pid")) as { result: string }).result;
    const hung = await Promise.all([1, 2, 3].map(() => ctx.call_mcp("echo", "slow", { ms: 3000 }, 1)));
    for (const r of hung) expect(r.ok).toBe(false);
    const after = ((await ctx.call_mcp("echo", "pid")) as { result: string }).result;
    expect(after).not.toBe(before);
  });

  it("close() stops the servers, unregisters their tools and refuses later calls", async () => {
    const pid = Number(((await h.ctx("caller").call_mcp("echo", "pid")) as { result: string }).result);
    await h.manager.close();
    expect(h.runtime.tools.get("mcp_echo_echo")).toBeUndefined();
    expect(h.runtime.tools.get("read_file")).toBeDefined();
    expect(await h.ctx("caller").call_mcp("echo", "echo", { message: "x" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("shut down"),
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe("MCP edge cases", () => {
  it("without attachMcp, call_mcp answers with an error envelope (after the allowlist)", async () => {
    const root = tempDir("hermes-mcp-none-");
    const home = join(root, "home");
    const dir = join(home, "plugins", "lonely");
    mkdirSync(dir, { recursive: true });
    mkdirSync(join(root, "bundled"));
    writeFileSync(join(dir, "plugin.yaml"), "name: lonely\nversion: '1'\n");
    writeFileSync(join(dir, "index.js"), "export function register(ctx) { globalThis.__lonely = ctx; }\n");
    writeFileSync(
      join(home, "config.yaml"),
      "plugins:\n  enabled: [lonely]\n  entries:\n    lonely:\n      mcp_allowlist: [echo]\n",
    );
    await startRuntime({
      home,
      log: capture().log,
      env: { ...process.env, HERMES_BUNDLED_PLUGINS: join(root, "bundled") },
    });
    const ctx = (globalThis as unknown as { __lonely: PluginContext }).__lonely;
    expect(await ctx.call_mcp("echo", "echo", {})).toMatchObject({
      ok: false,
      error: expect.stringContaining("no MCP servers are attached"),
    });
    await expect(ctx.call_mcp("other", "echo", {})).rejects.toBeInstanceOf(McpPermissionError);
  });

  it("a plugin tool cannot take an MCP tool's name without tools.override", async () => {
    const h = await harness(stdio("echo"), { caller: ["echo"] });
    try {
      const ctx = h.ctx("caller");
      expect(ctx.register_tool({ name: "mcp_echo_echo", handler: () => "mine" })).toBeNull();
      expect(h.runtime.tools.get("mcp_echo_echo")!.owner).toBe("mcp:echo");
      // Default server timeout is 120 s; a call works.
      expect(await ctx.call_mcp("echo", "echo", { message: "x" })).toEqual({ ok: true, result: "echo: x" });
    } finally {
      await h.manager.close();
    }
  });
});

describe("MCP over Streamable HTTP", () => {
  let server: ChildProcess;
  let url: string;
  beforeAll(async () => {
    server = spawn(process.execPath, [FIXTURE, "--http"], {
      env: { ...process.env, FIXTURE_TOKEN: "s3cret" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      server.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /listening (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      server.once("exit", (code) => reject(new Error(`fixture exited ${code}`)));
    });
  });
  afterAll(() => {
    server?.kill();
  });

  it("registers and calls the tools of an HTTP server; a refused connection is an error envelope", async () => {
    const h = await harness(
      `  remote:\n    url: ${url}\n    headers:\n      x-fixture-token: \${MCP_TEST_VAR}\n` +
        `  locked:\n    url: ${url}\n    headers:\n      x-fixture-token: wrong\n`,
      { caller: ["remote", "locked"] },
    );
    try {
      // attachMcp was given MCP_TEST_VAR=from-env; the fixture expects s3cret → remote is refused, so re-attach with
      // the token.
      await h.manager.close();
      const { manager } = await attachMcp(h.runtime, { env: { MCP_TEST_VAR: "s3cret" } });
      h.manager = manager;
      expect(h.runtime.tools.get("mcp_remote_echo")?.owner).toBe("mcp:remote");
      expect(h.runtime.tools.get("mcp_locked_echo")).toBeUndefined();
      const ctx = h.ctx("caller");
      expect(await ctx.call_mcp("remote", "echo", { message: "over http" })).toEqual({
        ok: true,
        result: "echo: over http",
      });
      expect(await h.runtime.tools.dispatch("mcp_remote_echo", { message: "model" })).toBe('{"result":"echo: model"}');
      const big = await ctx.call_mcp("remote", "big", { size: 80000 });
      expect(big).toMatchObject({ ok: true, truncated: true });
      const locked = await ctx.call_mcp("locked", "echo", { message: "x" });
      expect(locked).toMatchObject({ ok: false, error: expect.stringContaining(`could not connect to ${url}`) });
    } finally {
      await h.manager.close();
    }
  });
});
