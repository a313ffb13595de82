import { afterAll, describe, expect, it } from "vitest";
import {
  classifyBuiltin,
  combineClassification,
  sanitizeClassification,
} from "../../src/agent/error-classification.js";
import { firstValid } from "../../src/runtime/hooks.js";
import { callModel, InterruptedError, LlmCallFailed } from "../../src/agent/llm-call.js";
import { ProviderError } from "../../src/agent/providers/errors.js";
import type { LlmRequest, Provider } from "../../src/agent/types.js";
import { captureLog, FakeProvider, llmContext as ctx, rig, say } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterAll(cleanupTemp);

describe("classification", () => {
  it("the built-in classifier maps HTTP statuses and failure kinds", () => {
    const http = (s: number, msg = "x") => classifyBuiltin(new ProviderError("http", msg, { status_code: s }));
    expect([401, 402, 403, 404, 408, 413, 429, 500, 503].map((s) => http(s).reason)).toEqual([
      "auth",
      "billing",
      "auth_permanent",
      "model_not_found",
      "timeout",
      "payload_too_large",
      "rate_limit",
      "server_error",
      "overloaded",
    ]);
    expect(http(400, "maximum context length exceeded")).toMatchObject({
      reason: "context_overflow",
      retryable: false,
      should_compress: true,
    });
    expect(http(400).reason).toBe("format_error");
    expect(http(429)).toMatchObject({ retryable: true, should_fallback: true });
    expect(classifyBuiltin(new ProviderError("stream", "x"))).toMatchObject({
      reason: "stream_interrupted",
      retryable: true,
    });
    expect(classifyBuiltin(new Error("plain"))).toMatchObject({ reason: "unknown", retryable: false });
  });

  it(
    "a plugin's result wins when valid (reason any case, booleans only where given, message trimmed to 500); " +
      "later valid ones are reported",
    () => {
      expect(
        sanitizeClassification({
          reason: "RATE_LIMIT",
          retryable: 0,
          message: `  ${"m".repeat(600)} `,
          error_context: { a: 1 },
          extra: 1,
        }),
      ).toEqual({
        reason: "rate_limit",
        retryable: false,
        message: "m".repeat(500),
        error_context: { a: 1 },
      });
      expect(sanitizeClassification({ reason: "nonsense" })).toBeUndefined();
      expect(sanitizeClassification("server_error")).toBeUndefined();
      const logs = captureLog();
      const fold = firstValid(
        [null, { reason: "bogus" }, { reason: "server_error", should_fallback: false }, { reason: "auth" }],
        sanitizeClassification,
      );
      const c = combineClassification(new ProviderError("http", "bad", { status_code: 400 }), fold, logs.log);
      expect(c).toMatchObject({
        reason: "server_error",
        retryable: true,
        should_fallback: false,
        classified_by: "plugin",
      });
      expect(logs.warnings().map((w) => w.msg)).toEqual([expect.stringMatching(/skipped 1 valid classification/)]);
    },
  );
});

describe("one model call", () => {
  it(
    "per attempt: llm_request → pre_api_request → llm_execution → post_api_request; a retry rebuilds the " +
      "kwargs and re-applies llm_request",
    async () => {
      const r = await rig();
      let n = 0;
      r.mw("llm_request", (kw) => ({
        request: { ...(kw.request as LlmRequest), extra_body: { attempt: ++n } },
        source: "tagger",
        reason: "count",
      }));
      r.mw("llm_execution", (kw) => (kw.next_call as (p: unknown) => Promise<unknown>)(kw.request));
      for (const h of [
        "pre_api_request",
        "post_api_request",
        "api_request_error",
        "transform_api_error_classification",
      ])
        r.hook(h);
      const p = new FakeProvider([new ProviderError("http", "busy", { status_code: 503 }), say("ok")]);
      const c = ctx(r, p);
      const res = await callModel(c);
      expect(res.response.choices[0]!.message.content).toBe("ok");
      expect(res.middleware_trace).toEqual([{ source: "tagger", reason: "count" }]);
      expect(r.order).toEqual([
        "mw:llm_request",
        "hook:pre_api_request",
        "mw:llm_execution",
        "hook:transform_api_error_classification",
        "hook:api_request_error",
        "mw:llm_request",
        "hook:pre_api_request",
        "mw:llm_execution",
        "hook:post_api_request",
      ]);
      // Each attempt started from fresh kwargs (the rewrite of attempt 1 did not leak into attempt 2).
      expect(p.requests.map((q) => q.extra_body)).toEqual([{ attempt: 1 }, { attempt: 2 }]);
      expect(c.counters.api_call_count).toBe(2);
    },
  );

  it("gives up after max_retries with the last failure; a non-retryable failure is not retried", async () => {
    const r = await rig();
    const p = new FakeProvider([
      new ProviderError("timeout", "slow"),
      new ProviderError("timeout", "slow"),
      new ProviderError("timeout", "slow again"),
    ]);
    const err = await callModel(ctx(r, p, { retry: { maxRetries: 2, backoffMs: 1 } })).catch((e) => e);
    expect(err).toBeInstanceOf(LlmCallFailed);
    expect(err).toMatchObject({ code: "E_PROVIDER_TIMEOUT", message: "slow again" });
    expect(p.requests).toHaveLength(3);
    const q = new FakeProvider([new ProviderError("http", "no", { status_code: 401 }), say("never")]);
    expect(await callModel(ctx(r, q)).catch((e) => e.code)).toBe("E_PROVIDER_HTTP");
    expect(q.requests).toHaveLength(1);
  });

  it(
    "transform_api_error_classification steers: a plugin makes a 400 retryable; should_fallback switches to " +
      "the fallback provider",
    async () => {
      const r = await rig();
      r.hook("transform_api_error_classification", (p) =>
        p.status_code === 400
          ? { reason: "server_error" }
          : p.status_code === 402
            ? { reason: "billing", should_fallback: true }
            : null,
      );
      const p = new FakeProvider([new ProviderError("http", "bad", { status_code: 400 }), say("retried")]);
      expect((await callModel(ctx(r, p))).response.choices[0]!.message.content).toBe("retried");
      const main = new FakeProvider([new ProviderError("http", "pay", { status_code: 402 })], "main-model", "main");
      const backup = new FakeProvider([say("from backup")], "backup-model", "backup");
      const c = ctx(r, main, { provider: { current: main, fallback: async () => backup } });
      const res = await callModel(c);
      expect(res.response.choices[0]!.message.content).toBe("from backup");
      expect(c.provider.current).toBe(backup);
      expect(backup.requests[0]!.model).toBe("backup-model");
      expect(c.events.filter((e) => e.type === "llm_error").map((e) => (e as { next: string }).next)).toEqual([
        "fall back",
      ]);
    },
  );

  it("a malformed result of llm_execution middleware is a malformed response, not a crash", async () => {
    const r = await rig();
    r.mw("llm_execution", () => ({ wrapped: "envelope" }));
    const err = await callModel(ctx(r, new FakeProvider([say("x")]), { retry: { maxRetries: 0, backoffMs: 1 } })).catch(
      (e) => e,
    );
    expect(err).toMatchObject({ code: "E_PROVIDER_MALFORMED" });
    expect(String(err.message)).toMatch(
      /the llm_execution middleware chain returned an object without choices\[0\]\.message/,
    );
  });

  it("a required plugin's llm_request failure fails the call before anything is sent", async () => {
    const r = await rig();
    r.mw(
      "llm_request",
      () => {
        throw new Error("policy down");
      },
      { required: true, owner: "policy" },
    );
    const p = new FakeProvider([say("x")]);
    const err = await callModel(ctx(r, p)).catch((e) => e);
    expect(err).toMatchObject({ code: "E_AGENT_MIDDLEWARE_FAILED" });
    expect(p.requests).toHaveLength(0);
  });

  it(
    "an interrupt during the call ends it with InterruptedError and api_request_error(reason interrupted); no " +
      "retry",
    async () => {
      const r = await rig();
      const seen: unknown[] = [];
      r.hook("api_request_error", (p) => void seen.push([p.reason, p.retryable]));
      const ctl = new AbortController();
      const p = new FakeProvider([
        (_req, o) =>
          new Promise((_res, rej) => {
            o.signal.addEventListener("abort", () => rej(new ProviderError("interrupted", "cancelled")));
            setTimeout(() => ctl.abort(), 10);
          }),
        say("never"),
      ]);
      await expect(callModel(ctx(r, p, { signal: ctl.signal }))).rejects.toBeInstanceOf(InterruptedError);
      expect(seen).toEqual([["interrupted", false]]);
      expect(p.requests).toHaveLength(1);
    },
  );

  it("streamed deltas reach on_stream_* off the token path: the provider never waits for a slow observer", async () => {
    const r = await rig();
    const got: string[] = [];
    r.rt.hooks.add(
      "on_stream_delta",
      async (p) => {
        await new Promise((res) => setTimeout(res, 120));
        got.push(String(p.delta));
      },
      "slow",
    );
    r.rt.hooks.add("on_stream_end", (p) => void got.push(`end:${p.final_text}`), "slow");
    let providerDone = 0;
    const streaming: Provider = {
      ...new FakeProvider([]),
      name: "s",
      model: "m",
      baseUrl: "",
      apiMode: "x",
      stream: true,
      withModel() {
        return this;
      },
      async complete(_req, o) {
        o.onStream?.({ type: "start" });
        for (const w of ["a", "b", "c"]) o.onStream?.({ type: "delta", text: w, kind: "text" });
        o.onStream?.({ type: "delta", text: "(thinking)", kind: "reasoning" });
        o.onStream?.({ type: "end", final_text: "abc", finished: true });
        providerDone = Date.now();
        return say("abc");
      },
    };
    const t0 = Date.now();
    await callModel(ctx(r, streaming));
    // Inline delivery would take at least 3 × 120 ms before the provider returned.
    expect(providerDone - t0).toBeLessThan(300);
    // Delivered in order before the call returned (flushed at the end of the attempt); reasoning not opted in.
    expect(got).toEqual(["a", "b", "c", "end:abc"]);
  });
});
