import { describe, expect, it } from "vitest";
import { ChunkAssembler, SseParser } from "../../src/agent/providers/sse.js";
import { checkResponse } from "../../src/agent/providers/shape.js";
import { ProviderError } from "../../src/agent/providers/errors.js";
import { OpenAiCompatibleProvider } from "../../src/agent/providers/openai-compatible.js";
import { parseScript } from "../../src/agent/providers/scripted.js";
import { parseToolArgs } from "../../src/agent/tool-args.js";

describe("SSE parsing", () => {
  it(
    "splits events on blank lines, joins multi-line data, " + "ignores comments and other fields, survives any split",
    () => {
      const text = ': keep-alive\r\ndata: {"a":1}\r\n\r\nevent: x\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n';
      const whole = new SseParser().push(text);
      expect(whole).toEqual(['{"a":1}', "line1\nline2", "[DONE]"]);
      // Byte by byte gives the same events.
      const p = new SseParser();
      const events: string[] = [];
      for (const ch of text) events.push(...p.push(ch));
      expect(events).toEqual(whole);
      // A last event without its blank line counts at the end of the stream.
      const q = new SseParser();
      expect(q.push("data: tail")).toEqual([]);
      expect(q.end()).toEqual(["tail"]);
    },
  );

  it("assembles text and tool-call deltas (id and name first, arguments in pieces, several calls by index)", () => {
    const a = new ChunkAssembler();
    const c = (delta: object, finish: string | null = null) =>
      JSON.stringify({ id: "x", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
    expect(a.add(c({ role: "assistant", content: "Hel" }))).toEqual({ text: "Hel", reasoning: "" });
    a.add(c({ content: "lo" }));
    a.add(c({ tool_calls: [{ index: 1, id: "b", type: "function", function: { name: "second", arguments: "" } }] }));
    a.add(c({ tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "first", arguments: '{"x"' } }] }));
    a.add(c({ tool_calls: [{ index: 0, function: { arguments: ": 1}" } }] }));
    a.add(c({ tool_calls: [{ index: 1, function: { arguments: "{}" } }] }));
    a.add(JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }));
    a.add(c({}, "tool_calls"));
    const r = a.response("fallback");
    expect(r.model).toBe("m");
    expect(r.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    expect(r.choices[0]).toEqual({
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: "Hello",
        tool_calls: [
          { id: "a", type: "function", function: { name: "first", arguments: '{"x": 1}' } },
          { id: "b", type: "function", function: { name: "second", arguments: "{}" } },
        ],
      },
    });
  });

  it("a chunk that is not JSON is malformed; an error chunk is a stream error", () => {
    expect(() => new ChunkAssembler().add("{oops")).toThrow(ProviderError);
    try {
      new ChunkAssembler().add(JSON.stringify({ error: { message: "overloaded", code: 503 } }));
      expect.unreachable();
    } catch (e) {
      expect((e as ProviderError).kind).toBe("stream");
      expect((e as ProviderError).status_code).toBe(503);
      expect((e as ProviderError).message).toContain("overloaded");
    }
  });
});

describe("response shape", () => {
  it("normalises a chat.completion and refuses what is not one", () => {
    const r = checkResponse({
      id: "1",
      model: "m",
      choices: [
        {
          message: {
            role: "assistant",
            content: [
              { type: "text", text: "a" },
              { type: "text", text: "b" },
            ],
            tool_calls: [{ function: { name: "t", arguments: { k: 1 } } }],
          },
        },
      ],
    });
    expect(r.choices[0]!.message).toEqual({
      role: "assistant",
      content: "ab",
      tool_calls: [{ id: "call_0", type: "function", function: { name: "t", arguments: '{"k":1}' } }],
    });
    expect(r.choices[0]!.finish_reason).toBe("tool_calls");
    for (const bad of [null, "text", {}, { choices: [] }, { choices: [{}] }])
      expect(() => checkResponse(bad)).toThrow(/choices\[0\]\.message|not a chat\.completion/);
  });

  it("the body the server receives merges extra_body at the top level and drops timeout", () => {
    expect(
      OpenAiCompatibleProvider.body({
        model: "m",
        messages: [],
        timeout: 5,
        extra_body: { metadata: { tag: true }, top_k: 3 },
      }),
    ).toEqual({ model: "m", messages: [], metadata: { tag: true }, top_k: 3 });
  });
});

describe("tool arguments", () => {
  const params = {
    type: "object",
    properties: {
      n: { type: "integer" },
      f: { type: "number" },
      b: { type: "boolean" },
      s: { type: "string" },
      list: { type: "array" },
      obj: { type: "object" },
    },
  };
  it("parses JSON objects, '' as {}, unwraps double-encoded objects, and coerces to the schema's types", () => {
    expect(parseToolArgs("", params)).toEqual({ ok: true, args: {}, coerced: [] });
    expect(parseToolArgs('"{\\"n\\": \\"3\\"}"', params)).toEqual({ ok: true, args: { n: 3 }, coerced: ["n"] });
    const r = parseToolArgs(
      JSON.stringify({ n: "42", f: "1.5", b: "TRUE", s: 7, list: "[1,2]", obj: '{"a":1}', other: "x" }),
      params,
    );
    expect(r).toEqual({
      ok: true,
      args: { n: 42, f: 1.5, b: true, s: "7", list: [1, 2], obj: { a: 1 }, other: "x" },
      coerced: ["n", "f", "b", "s", "list", "obj"],
    });
    // Ambiguous values stay as they are.
    expect(parseToolArgs(JSON.stringify({ n: "4.5", b: "yes" }), params)).toEqual({
      ok: true,
      args: { n: "4.5", b: "yes" },
      coerced: [],
    });
  });

  it("refuses text that is not JSON, and JSON that is not an object, with the reason", () => {
    const bad = parseToolArgs('{"command": "ls"', params);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^the arguments are not valid JSON \(.+\); got "\{\\"command\\": \\"ls\\""$/);
    expect(parseToolArgs("[1,2]")).toEqual({ ok: false, error: "the arguments must be a JSON object, got an array" });
    expect(parseToolArgs("42")).toEqual({ ok: false, error: "the arguments must be a JSON object, got a number" });
    expect(parseToolArgs("null")).toEqual({ ok: true, args: {}, coerced: [] });
  });
});

describe("scripted provider scripts", () => {
  it("accepts a list or {model, turns}; say, call (one or several, args or raw arguments), fail", () => {
    const s = parseScript(
      "model: m2\nturns:\n  - say: hi\n  - call: {tool: t, args: {a: 1}}\n  - call: [{tool: a}, {tool: b, " +
        "arguments: 'not json'}]\n  - fail: {status: 503, message: busy}\n",
    );
    expect(s).toEqual({
      model: "m2",
      turns: [
        { say: "hi" },
        { call: [{ tool: "t", args: { a: 1 } }] },
        { call: [{ tool: "a" }, { tool: "b", arguments: "not json" }] },
        { fail: { status: 503, message: "busy" } },
      ],
    });
  });

  it("lists every problem at once", () => {
    expect(() => parseScript("- say: 1\n- {}\n- call: {tool: x, args: [1]}\n", "s.yaml")).toThrow(
      "s.yaml: turns[0].say: expected text; turns[1]: give exactly one of say:, call:, fail: (got nothing); " +
        "turns[2].call.args: expected a mapping",
    );
    expect(() => parseScript("{a: 1}")).toThrow(/expected a list of turns/);
    expect(() => parseScript("[]")).toThrow(/no turns/);
    expect(() => parseScript("- say: [unclosed")).toThrow(/not valid YAML/);
  });
});
