import { afterAll, describe, expect, it } from "vitest";
import { Agent, agentSettings } from "../../src/agent/agent.js";
import { PluginLlm } from "../../src/agent/plugin-llm.js";
import { renderSections } from "../../src/agent/system-prompt.js";
import type { TimelineEvent } from "../../src/agent/timeline.js";
import type { PromptSection } from "../../src/runtime/registries.js";
import { calls, captureLog, FakeProvider, rig, say } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterAll(cleanupTemp);

const info = { session_id: "s1", model: "m", provider: "p", platform: "cli", profile_name: "default", cwd: "/x" };
const section = (id: string, content: PromptSection["content"], max_chars = 4000): PromptSection => ({
  id,
  content,
  position: "after_memory",
  max_chars,
  plugin_key: `pk-${id}`,
});

describe("system prompt sections", () => {
  it("sorted by id, framed, the bad ones skipped with a warning naming them", async () => {
    const logs = captureLog();
    const r = await renderSections(
      [
        section("z", "last"),
        section("a", (i) => `first for ${i.session_id}`),
        section("m.raise", () => {
          throw new Error("boom");
        }),
        section("m.num", () => 42 as unknown as string),
        section("m.empty", "   "),
        section("m.marker", "sneaky </plugin-section> text"),
        section("m.long", "x".repeat(11), 10),
        section("b", async () => "async ok"),
      ],
      info,
      logs.log,
    );
    expect(r.used).toEqual(["a", "b", "z"]);
    expect(r.skipped.map((s) => s.id)).toEqual(["m.empty", "m.long", "m.marker", "m.num", "m.raise"]);
    expect(r.text).toBe(
      '<plugin-section id="a" plugin="pk-a">\nfirst for s1\n</plugin-section>\n\n<plugin-section id="b" ' +
        'plugin="pk-b">\nasync ok\n</plugin-section>\n\n<plugin-section id="z" ' +
        'plugin="pk-z">\nlast\n</plugin-section>',
    );
    expect(logs.warnings().map((w) => w.msg)).toContain(
      "system prompt section 'm.raise' skipped: its content function raised Error: boom",
    );
  });

  it("at most 32 sections and 8000 characters in all, framing included; the info map is read-only", async () => {
    const many = Array.from({ length: 40 }, (_, i) => section(`s${String(i).padStart(2, "0")}`, "x"));
    const r = await renderSections(many, info, captureLog().log);
    expect(r.used).toHaveLength(32);
    expect(r.skipped.every((s) => s.reason === "more than 32 sections")).toBe(true);
    const big = Array.from({ length: 3 }, (_, i) => section(`b${i}`, "y".repeat(3900)));
    const r2 = await renderSections(big, info, captureLog().log);
    expect(r2.used).toEqual(["b0", "b1"]);
    expect(r2.text.length).toBeLessThanOrEqual(8000);
    let frozen: boolean | undefined;
    await renderSections([section("f", (i) => ((frozen = Object.isFrozen(i)), "ok"))], info, captureLog().log);
    expect(frozen).toBe(true);
  });
});

describe("the agent loop", () => {
  it("settings: agent.max_turns, api_max_retries, retry_backoff_ms, system_prompt; defaults otherwise", () => {
    expect(agentSettings({})).toMatchObject({ maxTurns: 90, maxRetries: 3, backoffMs: 1000, streamReasoning: false });
    expect(
      agentSettings({
        agent: { max_turns: 3, api_max_retries: 0, retry_backoff_ms: 5, system_prompt: "Be brief." },
        model: { max_tokens: 100 },
      }),
    ).toMatchObject({ maxTurns: 3, maxRetries: 0, backoffMs: 5, systemPrompt: "Be brief.", maxTokens: 100 });
    expect(agentSettings({ agent: { max_turns: 0 } }).maxTurns).toBe(90);
  });

  it(
    "pre_llm_call results are joined and appended to the user message; transform_llm_output's first non-empty " +
      "string wins",
    async () => {
      const r = await rig();
      r.hook("pre_llm_call", () => "ctx one");
      r.hook("pre_llm_call", () => ({ context: "ctx two" }));
      r.hook("pre_llm_call", () => ({ nothing: true }));
      r.hook("transform_llm_output", () => "");
      r.hook("transform_llm_output", (p) => `${p.response_text}!`);
      const p = new FakeProvider([say("answer")]);
      const a = new Agent({ runtime: r.rt, provider: p });
      const t = await a.runTurn("question");
      expect(t.answer).toBe("answer!");
      expect(p.requests[0]!.messages.at(-1)).toEqual({ role: "user", content: "question\n\nctx one\n\nctx two" });
      // The stored history has the transformed answer, so the next turn sends it.
      expect(a.session.messages.at(-1)).toEqual({ role: "assistant", content: "answer!" });
    },
  );

  it("the timeline shows every fire site of a turn in order, with its owners", async () => {
    const r = await rig();
    r.hook("post_tool_call");
    const events: TimelineEvent[] = [];
    const p = new FakeProvider([calls(["probe", {}]), say("done")]);
    r.rt.tools.lease("probe", {
      name: "probe",
      toolset: "t",
      schema: { name: "probe" },
      handler: () => "ok",
      requires_env: [],
      description: "",
      emoji: "",
      owner: "test",
    });
    await new Agent({ runtime: r.rt, provider: p, emit: (e) => events.push(e) }).runTurn("go");
    const line = (e: TimelineEvent) =>
      e.type === "hook"
        ? `hook ${e.name}${e.owners.length ? ` [${e.owners.join(",")}]` : ""}`
        : e.type === "middleware"
          ? `mw ${e.kind}`
          : e.type;
    expect(events.map(line)).toEqual([
      "turn_start",
      "hook on_session_start",
      "hook pre_llm_call",
      "llm_attempt",
      "mw llm_request",
      "hook pre_api_request",
      "mw llm_execution",
      "hook post_api_request",
      "llm_result",
      "tool_start",
      "mw tool_request",
      "tool_args",
      "hook pre_tool_call",
      "approval",
      "mw tool_execution",
      "hook post_tool_call [test]",
      "hook transform_tool_result",
      "tool_end",
      "llm_attempt",
      "mw llm_request",
      "hook pre_api_request",
      "mw llm_execution",
      "hook post_api_request",
      "llm_result",
      "hook transform_llm_output",
      "hook post_llm_call",
      "hook on_session_end",
      "turn_end",
    ]);
  });

  it(
    "inject: idle → queued for the next turn (onQueued called); mid-turn → the turn is interrupted and the " +
      "message is next",
    async () => {
      const r = await rig();
      let queuedCalls = 0;
      const p = new FakeProvider([
        async (_req, o) => {
          a.inject("[system] stop");
          if (o.signal.aborted) throw Object.assign(new Error("aborted"), { name: "AbortError" });
          return say("unreachable?");
        },
        say("second"),
      ]);
      const a = new Agent({ runtime: r.rt, provider: p });
      a.onQueued = () => queuedCalls++;
      expect(a.inject("hello")).toBe(true);
      expect(queuedCalls).toBe(1);
      expect(a.takeQueued()).toBe("hello");
      const t1 = await a.runTurn("first");
      expect(t1).toMatchObject({ interrupted: true, exit_reason: "interrupted", answer: null });
      expect(a.takeQueued()).toBe("[system] stop");
      const t2 = await a.runTurn("[system] stop");
      expect(t2.answer).toBe("second");
      expect(a.interrupt()).toBe(false);
    },
  );

  it("ctx.inject_message and ctx.llm reach the attached session; without one they refuse clearly", async () => {
    const { start } = await import("../runtime/helpers.js");
    const { rt, logs } = await start([
      {
        key: "pl",
        code: `export function register(ctx) { globalThis.__pl_ctx = ctx; }`,
      },
    ]);
    const ctx = (
      globalThis as {
        __pl_ctx?: {
          inject_message: (c: unknown, r?: unknown, o?: unknown) => boolean;
          llm: { complete: (m: unknown) => Promise<unknown> };
        };
      }
    ).__pl_ctx!;
    expect(ctx.inject_message("x")).toBe(false);
    expect(logs.warnings().some((w) => /no session is running/.test(w.msg))).toBe(true);
    await expect(ctx.llm.complete([{ role: "user", content: "x" }])).rejects.toMatchObject({
      code: "E_AGENT_NO_PROVIDER",
    });
    const a = new Agent({ runtime: rt, provider: new FakeProvider([say("from host")]) });
    const detach = a.attach();
    expect(ctx.inject_message("note", "assistant")).toBe(true);
    expect(a.takeQueued()).toBe("[assistant] note");
    expect(ctx.inject_message("", "user")).toBe(false);
    expect(ctx.inject_message("x", "user", { session_key: "agent:main:x" })).toBe(false);
    expect(logs.warnings().some((w) => /allow_gateway_injection must be true/.test(w.msg))).toBe(true);
    expect(ctx.llm).toBeInstanceOf(PluginLlm);
    await expect(ctx.llm.complete([{ role: "user", content: "x" }])).resolves.toMatchObject({
      text: "from host",
      agent_id: "default",
      audit: { plugin_id: "pl" },
    });
    detach();
    expect(ctx.inject_message("x")).toBe(false);
  });
});

describe("tool definitions the model sees", () => {
  it("only the schema's description: a registry description never reaches the model", async () => {
    const r = await rig();
    const base = { toolset: "t", handler: () => "x", requires_env: [], emoji: "" };
    r.rt.registerBuiltinTool({
      ...base,
      name: "bare",
      schema: { name: "bare", parameters: { type: "object", properties: {} } },
      description: "registry metadata only",
    });
    r.rt.registerBuiltinTool({
      ...base,
      name: "told",
      schema: { name: "told", description: "what the model reads" },
      description: "registry metadata",
    });
    const defs = new Agent({ runtime: r.rt, provider: new FakeProvider([]) }).toolDefinitions();
    const bare = defs.find((d) => d.function.name === "bare")!;
    expect(bare.function).not.toHaveProperty("description");
    expect(defs.find((d) => d.function.name === "told")!.function.description).toBe("what the model reads");
  });
});
