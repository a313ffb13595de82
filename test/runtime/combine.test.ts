/**
 * One test per row of the per-hook result table (docs/hooks.md),
 * each dispatching real callbacks through the HookBus and folding the results with the helper the
 * catalog names for that hook.
 */
import { describe, expect, it } from "vitest";
import { HOOK_CATALOG, type HookCombine, type HookName } from "../../src/contracts/hook-catalog.js";
import {
  firstNonEmpty,
  firstString,
  firstValid,
  HookBus,
  contextParts,
  joinContexts,
  lastWriterPerField,
  OBSERVER_SCHEMA_VERSION,
  resolveToolDirective,
} from "../../src/runtime/hooks.js";
import { FailureReporter } from "../../src/runtime/reporter.js";
import { captureLog } from "./helpers.js";

function bus() {
  const logs = captureLog();
  return { bus: new HookBus(new FailureReporter(logs.log)), logs };
}

/** Register one callback per value (each returns its value) and dispatch. */
async function results(name: string, values: unknown[], payload: Record<string, unknown> = {}): Promise<unknown[]> {
  const { bus: b } = bus();
  values.forEach((v, i) => b.add(name, () => v, `p${i}`));
  return b.invoke(name, payload);
}

function combineOf(...names: HookName[]): HookCombine[] {
  return names.map((n) => HOOK_CATALOG[n].combine);
}

describe("per-hook result handling, one test per table row", () => {
  it("pre_tool_call: directive resolution", async () => {
    expect(combineOf("pre_tool_call")).toEqual(["directive"]);
    const r = await results("pre_tool_call", [
      { action: "modify", args: { a: 2 } },
      { action: "approve", message: "ask", rule_key: " k " },
      { action: "modify", args: { b: 3 } },
    ]);
    expect(resolveToolDirective(r, { a: 1, c: 1 })).toEqual({
      action: "approve",
      message: "ask",
      rule_key: "k",
      modified_args: { a: 2, b: 3, c: 1 },
    });
  });

  it("pre_tts_synthesis: fail-closed policy hook (timeouts and errors become blocks)", async () => {
    expect(HOOK_CATALOG.pre_tts_synthesis).toMatchObject({ combine: "tts-policy", timeout: "fail-closed" });
    const { bus: b } = bus();
    b.add(
      "pre_tts_synthesis",
      function guard() {
        throw new TypeError("bad voice");
      },
      "p",
    );
    expect(await b.invoke("pre_tts_synthesis", { text: "hi", provider: "x" })).toEqual([
      { action: "block", message: "pre_tts_synthesis plugin callback guard raised TypeError: bad voice" },
    ]);
  });

  it("post_tool_call: ignored (observer), fires with every result discarded by the caller", async () => {
    expect(combineOf("post_tool_call")).toEqual(["ignored"]);
    const seen: unknown[] = [];
    const { bus: b } = bus();
    b.add("post_tool_call", (p) => void seen.push(p.status), "p");
    expect(await b.invoke("post_tool_call", { tool_name: "t", status: "blocked" })).toEqual([]);
    expect(seen).toEqual(["blocked"]);
  });

  it('transform_tool_result: the first string wins, "" included', async () => {
    expect(combineOf("transform_tool_result")).toEqual(["first-string"]);
    expect(firstString(await results("transform_tool_result", [null, 42, "", "later"]))).toBe("");
    expect(firstString(await results("transform_tool_result", [{ x: 1 }, "first", "second"]))).toBe("first");
    expect(firstString(await results("transform_tool_result", [null, 1]))).toBeUndefined();
  });

  it('transform_terminal_output: the first string wins, "" included', async () => {
    expect(combineOf("transform_terminal_output")).toEqual(["first-string"]);
    expect(firstString(await results("transform_terminal_output", [undefined, "", "x"]))).toBe("");
    expect(firstString(await results("transform_terminal_output", [["not", "a string"], "clean"]))).toBe("clean");
  });

  it('transform_llm_output: the first NON-EMPTY string wins ("" is rejected)', async () => {
    expect(combineOf("transform_llm_output")).toEqual(["first-non-empty"]);
    expect(firstNonEmpty(await results("transform_llm_output", ["", 7, "rewritten", "later"]))).toBe("rewritten");
    expect(firstNonEmpty(await results("transform_llm_output", ["", ""]))).toBeUndefined();
  });

  it("pre_transcription: last writer wins per field, for prompt/language/model strings only", async () => {
    expect(combineOf("pre_transcription")).toEqual(["last-writer-per-field"]);
    const r = await results("pre_transcription", [
      { prompt: "first", language: "en", model: "m1" },
      { prompt: "", language: 5, file_path: "/etc/passwd", unknown: "x" },
      "not a mapping",
      ["array"],
      { model: "m2", language: null },
    ]);
    // "" clears the prompt (a string); non-string values, file_path and unknown keys are ignored.
    expect(lastWriterPerField(r)).toEqual({ prompt: "", language: "en", model: "m2" });
  });

  it('pre_llm_call: every {context} or non-empty string, joined with "\\n\\n" in callback order', async () => {
    expect(combineOf("pre_llm_call")).toEqual(["joined"]);
    const r = await results("pre_llm_call", [
      "alpha",
      { context: "beta" },
      "",
      { context: "" },
      { other: "x" },
      3,
      { context: 7 },
      "gamma",
    ]);
    expect(joinContexts(contextParts(r))).toBe("alpha\n\nbeta\n\ngamma");
    expect(joinContexts(contextParts(await results("pre_llm_call", ["", { nope: 1 }])))).toBeUndefined();
  });

  it("post_llm_call: ignored", async () => {
    expect(combineOf("post_llm_call")).toEqual(["ignored"]);
  });

  it("pre_verify: the first result that validates wins (firstValid), invalid earlier ones are skipped", async () => {
    expect(combineOf("pre_verify")).toEqual(["first-valid"]);
    // The rule: (action ?? decision) is continue|block and (message ?? reason) is non-empty.
    const validate = (r: unknown) => {
      if (!r || typeof r !== "object") return undefined;
      const o = r as Record<string, unknown>;
      const action = String(o.action ?? o.decision ?? "")
        .trim()
        .toLowerCase();
      const msg = o.message ?? o.reason;
      return (action === "continue" || action === "block") && typeof msg === "string" && msg.trim()
        ? { action, message: msg.trim() }
        : undefined;
    };
    const r = await results("pre_verify", [
      { action: "continue" },
      "text",
      { decision: " BLOCK ", reason: " tests fail " },
      { action: "continue", message: "later" },
    ]);
    expect(firstValid(r, validate).value).toEqual({ action: "block", message: "tests fail" });
    expect(
      firstValid(await results("pre_verify", [{ action: "maybe", message: "x" }]), validate).value,
    ).toBeUndefined();
  });

  it("pre_api_request / post_api_request / api_request_error: ignored", async () => {
    expect(combineOf("pre_api_request", "post_api_request", "api_request_error")).toEqual([
      "ignored",
      "ignored",
      "ignored",
    ]);
  });

  it("pre_auxiliary_call / post_auxiliary_call: ignored, fail-open (bounded)", async () => {
    expect(combineOf("pre_auxiliary_call", "post_auxiliary_call")).toEqual(["ignored", "ignored"]);
    expect([HOOK_CATALOG.pre_auxiliary_call.timeout, HOOK_CATALOG.post_auxiliary_call.timeout]).toEqual([
      "bounded",
      "bounded",
    ]);
    const { bus: b } = bus();
    b.add(
      "pre_auxiliary_call",
      () => {
        throw new Error("x");
      },
      "p",
    );
    expect(await b.invoke("pre_auxiliary_call", {})).toEqual([]);
  });

  it("transform_api_error_classification: all callbacks run, then the first valid result wins", async () => {
    expect(combineOf("transform_api_error_classification")).toEqual(["first-valid"]);
    const ran: number[] = [];
    const { bus: b } = bus();
    const values = [
      { reason: "not-a-reason" },
      { reason: "RATE_LIMIT", retryable: true },
      { reason: "context_overflow" },
    ];
    values.forEach((v, i) => b.add("transform_api_error_classification", () => (ran.push(i), v), `p${i}`));
    const reasons = new Set(["rate_limit", "context_overflow"]);
    const winner = await b.firstValid("transform_api_error_classification", {}, (r) =>
      typeof (r as { reason?: unknown }).reason === "string" &&
      reasons.has((r as { reason: string }).reason.toLowerCase())
        ? r
        : undefined,
    );
    expect(ran).toEqual([0, 1, 2]);
    expect(winner).toEqual({ value: { reason: "RATE_LIMIT", retryable: true }, skipped: 1 });
  });

  it(
    "on_stream_start / on_stream_delta / on_stream_end / " + "on_interim_message / on_room_member_activity: ignored",
    async () => {
      expect(
        combineOf(
          "on_stream_start",
          "on_stream_delta",
          "on_stream_end",
          "on_interim_message",
          "on_room_member_activity",
        ),
      ).toEqual(Array(5).fill("ignored"));
    },
  );

  it("on_session_start / on_session_end: ignored (bounded)", async () => {
    expect(combineOf("on_session_start", "on_session_end")).toEqual(["ignored", "ignored"]);
    expect(HOOK_CATALOG.on_session_start.timeout).toBe("bounded");
  });

  it("on_session_finalize / on_session_reset / agent_loop_stopped / on_skill_lifecycle: ignored", async () => {
    expect(combineOf("on_session_finalize", "on_session_reset", "agent_loop_stopped", "on_skill_lifecycle")).toEqual(
      Array(4).fill("ignored"),
    );
  });

  it("subagent_start / subagent_stop: ignored; subagent_stop runs on the caller (never raced)", async () => {
    expect(combineOf("subagent_start", "subagent_stop")).toEqual(["ignored", "ignored"]);
    expect(HOOK_CATALOG.subagent_stop.timeout).toBe("caller");
    const { bus: b } = bus();
    b.timeoutSeconds = 0.01;
    b.add("subagent_stop", () => new Promise((r) => setTimeout(() => r("late"), 50)), "p");
    expect(await b.invoke("subagent_stop", {})).toEqual(["late"]);
  });

  it("pre_gateway_dispatch: the first recognised action wins (skip / rewrite / allow)", async () => {
    expect(combineOf("pre_gateway_dispatch")).toEqual(["first-valid"]);
    const recognised = (r: unknown) => {
      const o = r as Record<string, unknown> | null;
      if (!o || typeof o !== "object") return undefined;
      if (o.action === "skip" || o.action === "allow" || (o.action === "rewrite" && typeof o.text === "string"))
        return o;
      return undefined;
    };
    const r = await results("pre_gateway_dispatch", [
      { action: "shout" },
      { action: "rewrite", text: "hi" },
      { action: "skip", reason: "spam" },
    ]);
    expect(firstValid(r, recognised).value).toEqual({ action: "rewrite", text: "hi" });
  });

  it("gateway_platform_event: ignored, and the only hook without telemetry_schema_version", async () => {
    expect(combineOf("gateway_platform_event")).toEqual(["ignored"]);
    const seen: Record<string, unknown>[] = [];
    const { bus: b } = bus();
    b.add("gateway_platform_event", (p) => void seen.push(p), "p");
    b.add("pre_command", (p) => void seen.push(p), "p");
    await b.invoke("gateway_platform_event", { platform: "x" });
    await b.invoke("pre_command", { command: "help" });
    expect(seen[0]).toEqual({ platform: "x" });
    expect(seen[1]).toEqual({ command: "help", telemetry_schema_version: OBSERVER_SCHEMA_VERSION });
  });

  it("pre_command: ignored (v1)", async () => {
    expect(combineOf("pre_command")).toEqual(["ignored"]);
  });

  it("pre_approval_request / post_approval_response: ignored (cannot veto)", async () => {
    expect(combineOf("pre_approval_request", "post_approval_response")).toEqual(["ignored", "ignored"]);
  });

  it("kanban hooks: ignored", async () => {
    const kanban = Object.keys(HOOK_CATALOG).filter((n) => n.includes("kanban")) as HookName[];
    expect(kanban.length).toBe(8);
    expect(new Set(combineOf(...kanban))).toEqual(new Set(["ignored"]));
  });
});

describe("resolveToolDirective", () => {
  const orig = { path: "/a", mode: "r" };

  it(
    "modify merges shallowly and accumulates in order; a " + "later key wins; empty or non-mapping args are ignored",
    () => {
      const d = resolveToolDirective(
        [
          { action: "modify", args: { path: "/b", nested: { x: 1 } } },
          { action: "modify", args: {} },
          { action: "modify", args: ["x"] },
          { action: "modify", args: "x" },
          { action: "modify", args: { path: "/c", nested: { y: 2 } } },
        ],
        orig,
      );
      expect(d).toEqual({ modified_args: { path: "/c", mode: "r", nested: { y: 2 } } });
    },
  );

  it("block needs a non-empty string message; without one it is ignored", () => {
    expect(
      resolveToolDirective(
        [{ action: "block" }, { action: "block", message: "" }, { action: "block", message: 3 }],
        orig,
      ),
    ).toEqual({});
  });

  it("block beats approve regardless of order, and carries the args merged so far", () => {
    const before = resolveToolDirective(
      [
        { action: "block", message: "no" },
        { action: "approve", message: "ok?" },
      ],
      orig,
    );
    const after = resolveToolDirective(
      [
        { action: "modify", args: { mode: "w" } },
        { action: "approve" },
        { action: "block", message: "no" },
        { action: "modify", args: { late: 1 } },
      ],
      orig,
    );
    expect(before).toEqual({ action: "block", message: "no" });
    expect(after).toEqual({ action: "block", message: "no", modified_args: { path: "/a", mode: "w" } });
  });

  it("the first approve wins, with rule_key trimmed (blank → null) and an empty message → null", () => {
    expect(
      resolveToolDirective(
        [
          { action: "approve", message: "", rule_key: "  rm-rf  " },
          { action: "approve", message: "second", rule_key: "other" },
        ],
        orig,
      ),
    ).toEqual({ action: "approve", message: null, rule_key: "rm-rf" });
    expect(resolveToolDirective([{ action: "approve", message: "m", rule_key: "   " }], orig)).toEqual({
      action: "approve",
      message: "m",
      rule_key: null,
    });
  });

  it("unknown actions and non-mappings are ignored", () => {
    expect(
      resolveToolDirective(["block", null, 3, ["x"], { action: "deny", message: "x" }, { message: "no action" }], orig),
    ).toEqual({});
  });
});

describe("typed dispatch: the fold is chosen by the hook's name", () => {
  it("each fold method folds by its hook's rule", async () => {
    const { bus: b } = bus();
    b.add("transform_tool_result", () => "", "a");
    b.add("transform_tool_result", () => "later", "b");
    expect(await b.firstString("transform_tool_result", { result: "x" })).toBe("");
    b.add("transform_llm_output", () => "", "a");
    b.add("transform_llm_output", () => "kept", "b");
    expect(await b.firstNonEmpty("transform_llm_output", { response_text: "x" })).toBe("kept");
    b.add("pre_llm_call", () => ({ context: "one" }), "a");
    b.add("pre_llm_call", () => "  ", "b");
    b.add("pre_llm_call", () => "two", "c");
    expect(await b.contexts("pre_llm_call", { user_message: "hi" })).toEqual(["one", "two"]);
    b.add("pre_tool_call", () => ({ action: "modify", args: { a: 2 } }), "a");
    b.add("pre_tool_call", () => ({ action: "block", message: "no" }), "b");
    expect(await b.directive("pre_tool_call", { tool_name: "t" }, { a: 1, b: 1 })).toEqual({
      action: "block",
      message: "no",
      modified_args: { a: 2, b: 1 },
    });
    b.add("pre_transcription", () => ({ language: "en", file_path: "/etc/x" }), "a");
    b.add("pre_transcription", () => ({ language: "fr" }), "b");
    expect(await b.lastWriterPerField("pre_transcription", { file_path: "/a.wav" })).toEqual({ language: "fr" });
    let seen: unknown;
    b.add("post_tool_call", (p) => ((seen = p.tool_name), "ignored"), "a");
    expect(await b.observe("post_tool_call", { tool_name: "t" })).toBeUndefined();
    expect(seen).toBe("t");
  });

  it("with no callbacks a fold returns its empty value", async () => {
    const { bus: b } = bus();
    expect(await b.firstString("transform_tool_result", {})).toBeUndefined();
    expect(await b.contexts("pre_llm_call", {})).toEqual([]);
    expect(await b.directive("pre_tool_call", {}, { a: 1 })).toEqual({});
    expect(await b.firstValid("pre_verify", {}, (r) => r)).toEqual({ skipped: 0 });
  });

  it("refuses, at type-check time, a fold that is not the hook's and a payload field the catalog does not list", () => {
    const { bus: b } = bus();
    const wrong = () => [
      // @ts-expect-error pre_tool_call folds by directive, not first-string
      b.firstString("pre_tool_call", {}),
      // @ts-expect-error transform_tool_result is not an observer
      b.observe("transform_tool_result", {}),
      // @ts-expect-error post_tool_call has no field tool_nme
      b.observe("post_tool_call", { tool_nme: "x" }),
    ];
    expect(typeof wrong).toBe("function");
  });
});
