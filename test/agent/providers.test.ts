import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookSite } from "../../src/agent/hook-site.js";
import { PluginLlm } from "../../src/agent/plugin-llm.js";
import type { ProviderError } from "../../src/agent/providers/errors.js";
import { OpenAiCompatibleProvider } from "../../src/agent/providers/openai-compatible.js";
import { modelSettings, resolveProvider } from "../../src/agent/providers/resolve.js";
import { parseScript, ScriptedProvider } from "../../src/agent/providers/scripted.js";
import type { StreamEvent } from "../../src/agent/types.js";
import { captureLog, FakeProvider, rig, say } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

let url = "";
let handler: (res: ServerResponse, body: string) => void = () => undefined;
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => handler(res, body));
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  cleanupTemp();
});

const signal = () => new AbortController().signal;

describe("openai-compatible provider", () => {
  it("posts to <base>/chat/completions with the key, and reads a JSON completion", async () => {
    let got: Record<string, unknown> = {};
    handler = (res, body) => {
      got = JSON.parse(body);
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "1",
          model: "served",
          choices: [{ message: { role: "assistant", content: "hey" }, finish_reason: "stop" }],
        }),
      );
    };
    const p = new OpenAiCompatibleProvider({ baseUrl: url, model: "m", apiKey: "k" });
    expect(p.endpoint).toBe(`${url.replace(/\/$/, "")}/chat/completions`);
    const r = await p.complete(
      { model: "m", messages: [{ role: "user", content: "hi" }], stream: false, extra_body: { top_k: 2 } },
      { signal: signal() },
    );
    expect(r.choices[0]!.message.content).toBe("hey");
    expect(got).toEqual({ model: "m", messages: [{ role: "user", content: "hi" }], stream: false, top_k: 2 });
  });

  it("streams: start, deltas, end; a JSON answer to a stream request is read as JSON", async () => {
    handler = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const w of ["a", "b"]) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: w } }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
    };
    const evs: StreamEvent[] = [];
    const p = new OpenAiCompatibleProvider({ baseUrl: url, model: "m" });
    const r = await p.complete(
      { model: "m", messages: [], stream: true },
      { signal: signal(), onStream: (e) => evs.push(e) },
    );
    expect(r.choices[0]!.message.content).toBe("ab");
    expect(evs.map((e) => e.type)).toEqual(["start", "delta", "delta", "end"]);
    handler = (res) =>
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ choices: [{ message: { content: "plain" } }] }));
    expect(
      (await p.complete({ model: "m", messages: [], stream: true }, { signal: signal() })).choices[0]!.message.content,
    ).toBe("plain");
  });

  it(
    "names every failure: HTTP status with the server's message, not JSON, timeout, unreachable, stream " +
      "without an end",
    async () => {
      const p = new OpenAiCompatibleProvider({ baseUrl: url, model: "m", timeoutSeconds: 0.3 });
      const fail = (req = { model: "m", messages: [], stream: false }) =>
        p.complete(req, { signal: signal() }).then(
          () => undefined,
          (e: ProviderError) => e,
        );
      handler = (res) =>
        res
          .writeHead(429, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: "slow down", type: "rate_limit" } }));
      expect(await fail()).toMatchObject({
        kind: "http",
        status_code: 429,
        error_code: "rate_limit",
        message: expect.stringContaining("HTTP 429"),
      });
      handler = (res) => res.writeHead(200).end("<html>");
      expect(await fail()).toMatchObject({ kind: "malformed", code: "E_PROVIDER_MALFORMED" });
      handler = () => undefined;
      expect(await fail()).toMatchObject({ kind: "timeout", code: "E_PROVIDER_TIMEOUT" });
      handler = (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: "half" } }] })}\n\n`);
      };
      expect(await fail({ model: "m", messages: [], stream: true })).toMatchObject({
        kind: "stream",
        code: "E_PROVIDER_STREAM",
      });
      const dead = new OpenAiCompatibleProvider({ baseUrl: "http://127.0.0.1:9/v1", model: "m" });
      expect(await dead.complete({ model: "m", messages: [] }, { signal: signal() }).catch((e) => e)).toMatchObject({
        kind: "network",
        code: "E_PROVIDER_NETWORK",
      });
      const ctl = new AbortController();
      handler = () => setTimeout(() => ctl.abort(), 20);
      expect(
        await new OpenAiCompatibleProvider({ baseUrl: url, model: "m" })
          .complete({ model: "m", messages: [] }, { signal: ctl.signal })
          .catch((e) => e),
      ).toMatchObject({ kind: "interrupted" });
    },
  );
});

describe("provider selection", () => {
  it("flags first, then config.yaml model:; model may be a plain name", async () => {
    expect(modelSettings({ model: "gpt-x" })).toEqual({ default: "gpt-x" });
    const p = await resolveProvider(
      {},
      { model: { provider: "openai-compatible", base_url: url, default: "cfg", timeout: 9, stream: false } },
      { home: "/h", env: {} },
    );
    expect(p).toMatchObject({ name: "openai-compatible", model: "cfg", stream: false });
    const q = await resolveProvider(
      { baseUrl: url, model: "flag" },
      { model: { default: "cfg" } },
      { home: "/h", env: { OPENAI_API_KEY: "k" } },
    );
    expect(q.model).toBe("flag");
    await expect(resolveProvider({ baseUrl: url }, {}, { home: "/h", env: {} })).rejects.toMatchObject({
      code: "E_PROVIDER_CONFIG",
      path: "model.default",
    });
    await expect(resolveProvider({ provider: "scripted" }, {}, { home: "/h", env: {} })).rejects.toMatchObject({
      code: "E_PROVIDER_CONFIG",
      path: "model.script",
    });
  });

  it(
    "the scripted provider streams words, serves tool calls " + "and failures, and says when the script is used up",
    async () => {
      const p = new ScriptedProvider(
        parseScript("- fail: {status: 503}\n- call: {tool: t, args: {a: 1}}\n- say: two words\n"),
      );
      expect(await p.complete({ model: "x", messages: [] }, { signal: signal() }).catch((e) => e)).toMatchObject({
        kind: "http",
        status_code: 503,
      });
      expect(
        (await p.complete({ model: "x", messages: [] }, { signal: signal() })).choices[0]!.message.tool_calls,
      ).toEqual([{ id: "call_2_1", type: "function", function: { name: "t", arguments: '{"a":1}' } }]);
      const evs: StreamEvent[] = [];
      await p
        .withModel("other")
        .complete({ model: "other", messages: [], stream: true }, { signal: signal(), onStream: (e) => evs.push(e) });
      expect(evs).toEqual([
        { type: "start" },
        { type: "delta", text: "two ", kind: "text" },
        { type: "delta", text: "words", kind: "text" },
        { type: "end", final_text: "two words", finished: true },
      ]);
      expect(await p.complete({ model: "x", messages: [] }, { signal: signal() }).catch((e) => e)).toMatchObject({
        kind: "script",
        message: expect.stringContaining("all were used"),
      });
    },
  );
});

describe("ctx.llm", () => {
  async function llm(entry: Record<string, unknown> = {}, granted: string[] = [], outcomes = [say("hello")]) {
    const r = await rig();
    r.hook("pre_auxiliary_call");
    r.hook("post_auxiliary_call");
    r.hook("pre_api_request");
    const provider = new FakeProvider(outcomes, "host-model", "fake");
    const l = new PluginLlm({
      pluginKey: "p",
      provider: () => provider,
      hooks: new HookSite(r.rt.hooks, () => undefined),
      middleware: r.rt.middleware,
      log: captureLog().log,
      granted: (c) => granted.includes(c),
      entry: () => entry,
      ids: () => ({ session_id: "s", task_id: "t", turn_id: null }),
      platform: "cli",
    });
    return { l, r, provider };
  }

  it("complete: the host's provider and model, usage and audit; auxiliary hooks only", async () => {
    const { l, r, provider } = await llm();
    const res = await l.complete([{ role: "user", content: "hi" }], { purpose: "titles", temperature: 0.1 });
    expect(res).toEqual({
      text: "hello",
      provider: "fake",
      model: "fake",
      agent_id: "default",
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0 },
      audit: { plugin_id: "p", purpose: "titles", profile: null },
    });
    expect(provider.requests[0]).toMatchObject({ model: "host-model", temperature: 0.1, stream: false });
    expect(r.order).toEqual(["hook:pre_auxiliary_call", "hook:post_auxiliary_call"]);
    await expect(l.complete([])).rejects.toMatchObject({ name: "ValueError", code: "E_AGENT_LLM_INVALID" });
  });

  it("overrides need the capability or the legacy key, and the allowed_* list when given", async () => {
    const denied = await llm();
    await expect(denied.l.complete([{ role: "user", content: "x" }], { model: "big" })).rejects.toMatchObject({
      name: "PermissionError",
      code: "E_AGENT_LLM_TRUST",
    });
    await expect(denied.l.complete([{ role: "user", content: "x" }], { agent_id: "other" })).rejects.toMatchObject({
      name: "PermissionError",
    });
    // Naming the host's own model or provider is not an override.
    await expect(
      denied.l.complete([{ role: "user", content: "x" }], { model: "host-model", provider: "fake" }),
    ).resolves.toMatchObject({ text: "hello" });
    const cap = await llm({}, ["llm.model_override"], [say("big one")]);
    await expect(cap.l.complete([{ role: "user", content: "x" }], { model: "big" })).resolves.toMatchObject({
      text: "big one",
    });
    expect(cap.provider.requests[0]!.model).toBe("big");
    const legacy = await llm({ llm: { allow_model_override: true, allowed_models: ["Small "] } }, [], [say("small")]);
    await expect(legacy.l.complete([{ role: "user", content: "x" }], { model: "big" })).rejects.toThrow(
      /not in plugins\.entries\.p\.llm\.allowed_models/,
    );
    await expect(legacy.l.complete([{ role: "user", content: "x" }], { model: "small" })).resolves.toMatchObject({
      text: "small",
    });
  });

  it(
    "complete_structured: schema-checked JSON (fences stripped), content_type, schema_name; bad input and bad " +
      "output refused",
    async () => {
      const schema = {
        type: "object",
        properties: { n: { type: "integer" } },
        required: ["n"],
        additionalProperties: false,
      };
      const ok = await llm({}, [], [say('```json\n{"n": 3}\n```')]);
      const r = await ok.l.complete_structured({
        instructions: "count",
        input: ["a", { b: 1 }],
        json_schema: schema,
        schema_name: "count",
      });
      expect(r).toMatchObject({ parsed: { n: 3 }, content_type: "json", audit: { schema_name: "count" } });
      expect(ok.provider.requests[0]!.response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "count", schema },
      });
      expect(ok.provider.requests[0]!.messages[1]!.content).toContain('Input:\na\n{"b":1}');
      const bad = await llm({}, [], [say('{"n": "three"}')]);
      await expect(
        bad.l.complete_structured({ instructions: "count", input: ["a"], json_schema: schema }),
      ).rejects.toThrow(/does not match the schema: \/n must be integer/);
      const notJson = await llm({}, [], [say("three")]);
      await expect(
        notJson.l.complete_structured({ instructions: "count", input: ["a"], json_mode: true }),
      ).rejects.toThrow(/not JSON/);
      const text = await llm({}, [], [say("free text")]);
      await expect(text.l.complete_structured({ instructions: "say", input: "x" })).resolves.toMatchObject({
        parsed: null,
        content_type: "text",
      });
      await expect(text.l.complete_structured({ instructions: " ", input: ["x"] })).rejects.toMatchObject({
        name: "ValueError",
      });
      await expect(text.l.complete_structured({ instructions: "x", input: [] })).rejects.toMatchObject({
        name: "ValueError",
      });
    },
  );
});
