/**
 * ctx.dispatch_tool runs a tool through the session's pipeline (middleware, pre/post_tool_call,
 * transform_tool_result, approvals) with the session's ids, as the seed says ("the parent agent's
 * context wired in"), refuses a tool that would dispatch itself, and refuses plainly with no session.
 * Real plugin folders loaded by a real runtime, an Agent over a replaying provider.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { plugin, start } from "../runtime/helpers.js";
import { cleanupTemp } from "../support/home.js";
import { rejection } from "../support/util.js";
import { calls, FakeProvider, say } from "./helpers.js";

afterAll(cleanupTemp);

type Seen = { ev: string; tool?: string; session_id?: unknown; turn_id?: unknown; extra?: unknown };
const seen = (): Seen[] => ((globalThis as Record<string, unknown>).__dispatchSeen ??= []) as Seen[];

const DISPATCHER = plugin(
  "disp",
  `
  const seen = (globalThis.__dispatchSeen ??= []);
  const runs = (globalThis.__dispatchRuns ??= {});
  const count = (n) => (runs[n] = (runs[n] ?? 0) + 1);
  ctx.register_tool({ name: "inner", description: "inner", handler: (args, extra) => {
    count("inner");
    seen.push({ ev: "run:inner", session_id: extra.session, turn_id: extra.turn_id,
      extra: { caller: extra.caller_plugin, note: extra.note } });
    return JSON.stringify({ inner: args });
  } });
  ctx.register_tool({ name: "outer", description: "outer", handler: async () => {
    count("outer");
    return "outer got " + (await ctx.dispatch_tool("inner", { x: 1 }, { note: "n" }));
  } });
  ctx.register_tool({ name: "loop", description: "loop", handler: async () => {
    count("loop");
    return ctx.dispatch_tool("loop", {});
  } });
  const relay = (from, to) => () => (count(from), ctx.dispatch_tool(to, {}));
  ctx.register_tool({ name: "ping", description: "ping", handler: relay("ping", "pong") });
  ctx.register_tool({ name: "pong", description: "pong", handler: relay("pong", "ping") });
  for (const h of ["pre_tool_call", "post_tool_call", "transform_tool_result"])
    ctx.register_hook(h, (p) => {
      seen.push({ ev: h, tool: p.tool_name, session_id: p.session_id, turn_id: p.turn_id });
      if (h === "transform_tool_result" && p.tool_name === "inner") return "T(" + p.result + ")";
      if (h === "pre_tool_call" && p.tool_name === "inner" && p.args.guarded)
        return { action: "approve", message: "guarded inner" };
      return null;
    });
  ctx.register_middleware("tool_execution", async (kw) => {
    seen.push({ ev: "mw:tool_execution", tool: kw.tool_name });
    return kw.next_call(kw.args);
  });
`,
);

async function session() {
  (globalThis as Record<string, unknown>).__dispatchSeen = [];
  (globalThis as Record<string, unknown>).__dispatchRuns = {};
  return start([DISPATCHER]);
}
const runs = () => (globalThis as Record<string, unknown>).__dispatchRuns as Record<string, number>;

describe("ctx.dispatch_tool", () => {
  it("runs through the session's pipeline with the session and turn ids, nested in the calling tool", async () => {
    const { rt } = await session();
    const agent = new Agent({ runtime: rt, provider: new FakeProvider([calls(["outer", {}]), say("done")]) });
    const detach = agent.attach();
    const r = await agent.runTurn("go");
    detach();
    expect(r.tool_calls[0]!.result).toBe('outer got T({"inner":{"x":1}})');
    const ids = { session_id: agent.session.session_id, turn_id: r.turn_id };
    expect(seen()).toEqual([
      { ev: "pre_tool_call", tool: "outer", ...ids },
      { ev: "mw:tool_execution", tool: "outer" },
      { ev: "pre_tool_call", tool: "inner", ...ids },
      { ev: "mw:tool_execution", tool: "inner" },
      { ev: "run:inner", ...ids, extra: { caller: "disp", note: "n" } },
      { ev: "post_tool_call", tool: "inner", ...ids },
      { ev: "transform_tool_result", tool: "inner", ...ids },
      { ev: "post_tool_call", tool: "outer", ...ids },
      { ev: "transform_tool_result", tool: "outer", ...ids },
    ]);
  });

  it("a dispatched call gets the approval gate: without a terminal it is denied and never runs", async () => {
    const { rt } = await session();
    const agent = new Agent({ runtime: rt, provider: new FakeProvider([]) });
    const detach = agent.attach();
    const out = await rt.dispatchTool("inner", { guarded: true }, { caller_plugin: "disp" });
    detach();
    expect(JSON.parse(out).error).toMatch(/^BLOCKED: this action needs a person's approval \(guarded inner\)/);
    expect(runs().inner).toBeUndefined();
    // Between turns: the session's id, no turn id.
    expect(seen().find((s) => s.ev === "pre_tool_call")).toEqual({
      ev: "pre_tool_call",
      tool: "inner",
      session_id: agent.session.session_id,
      turn_id: null,
    });
  });

  it("a tool dispatching itself, directly or through another tool, is refused once; the turn goes on", async () => {
    const { rt, logs } = await session();
    const provider = new FakeProvider([calls(["loop", {}], ["ping", {}]), say("done")]);
    const agent = new Agent({ runtime: rt, provider });
    const detach = agent.attach();
    const r = await agent.runTurn("go");
    detach();
    expect(r.completed).toBe(true);
    const [loop, ping] = r.tool_calls;
    expect(loop!.status).toBe("error");
    expect(loop!.result).toMatch(
      /ctx\.dispatch_tool\('loop'\) of plugin 'disp' was refused: 'loop' is already running/,
    );
    expect(ping!.result).toMatch(/'ping' is already running in this call chain \(ping → pong → ping\)/);
    expect(runs()).toEqual({ loop: 1, ping: 1, pong: 1 });
    expect(logs.warnings().filter((w) => w.code === "E_PLUGIN_DISPATCH_RECURSION")).toHaveLength(2);
  });

  it("with no agent session there is no pipeline: refused plainly, the tool never runs", async () => {
    const { rt } = await session();
    const err = await rejection(() => rt.dispatchTool("inner", {}, { caller_plugin: "disp" }));
    expect(err).toMatchObject({ code: "E_PLUGIN_DISPATCH_NO_SESSION" });
    expect((err as Error).message).toMatch(/ctx\.dispatch_tool\('inner'\) of plugin 'disp': no agent session/);
    expect(runs().inner).toBeUndefined();
  });

  it("arguments that are not JSON are refused with a code", async () => {
    const { rt } = await session();
    const agent = new Agent({ runtime: rt, provider: new FakeProvider([]) });
    const detach = agent.attach();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(await rejection(() => rt.dispatchTool("inner", cyclic, { caller_plugin: "disp" }))).toMatchObject({
      code: "E_PLUGIN_DISPATCH_ARGS",
    });
    detach();
    expect(runs().inner).toBeUndefined();
  });
});
