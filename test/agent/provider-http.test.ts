import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callModel, LlmCallFailed, retryDelay } from "../../src/agent/llm-call.js";
import { OpenAiCompatibleProvider } from "../../src/agent/providers/openai-compatible.js";
import type { Provider, StreamEvent } from "../../src/agent/types.js";
import { llmContext, rig, type Rig } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

// A real HTTP server on 127.0.0.1; each test sets how it answers and sees when each request came.
let url = "";
let handler: (res: ServerResponse, req: IncomingMessage) => void = () => undefined;
const arrivals: number[] = [];
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    arrivals.push(Date.now());
    handler(res, req);
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  cleanupTemp();
});

const ctx = (r: Rig, provider: Provider, backoffMs: number, maxRetries = 2) =>
  llmContext(r, provider, { retry: { maxRetries, backoffMs } });

const ok = (res: ServerResponse) =>
  res.writeHead(200, { "content-type": "application/json" }).end(
    JSON.stringify({
      id: "1",
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
    }),
  );

describe("SSE over HTTP", () => {
  it(
    "reads a stream whose lines end in bare CR (valid per the SSE spec), split anywhere, ending without a " +
      "blank line",
    async () => {
      const chunk = (delta: object, finish: string | null = null) =>
        JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
      const text =
        `: hello\rdata: ${chunk({ role: "assistant", content: "Hel" })}\r\rdata: ${chunk({ content: "lo" })}` +
        `\r\rdata: ${chunk({}, "stop")}\r`;
      handler = (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        // Split inside lines and between the CRs, so no line ending arrives in one piece with its line.
        for (let i = 0; i < text.length; i += 7) res.write(text.slice(i, i + 7));
        res.end();
      };
      const evs: StreamEvent[] = [];
      const p = new OpenAiCompatibleProvider({ baseUrl: url, model: "m" });
      const r = await p.complete(
        { model: "m", messages: [], stream: true },
        { signal: new AbortController().signal, onStream: (e) => evs.push(e) },
      );
      expect(r.choices[0]!.message.content).toBe("Hello");
      expect(r.choices[0]!.finish_reason).toBe("stop");
      expect(evs.filter((e) => e.type === "delta").map((e) => (e as { text: string }).text)).toEqual(["Hel", "lo"]);
    },
  );
});

describe("retries against a real server", () => {
  it("a 429 with Retry-After: 1 waits at least a second before the retry, although the backoff is 1 ms", async () => {
    arrivals.length = 0;
    let n = 0;
    handler = (res) => {
      if (n++ === 0)
        res
          .writeHead(429, { "content-type": "application/json", "retry-after": "1" })
          .end(JSON.stringify({ error: { message: "slow down" } }));
      else ok(res);
    };
    const r = await rig();
    const c = ctx(r, new OpenAiCompatibleProvider({ baseUrl: url, model: "m", stream: false }), 1);
    const res = await callModel(c);
    expect(res.response.choices[0]!.message.content).toBe("done");
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(950);
    expect(c.events.filter((e) => e.type === "llm_error").map((e) => (e as { next: string }).next)).toEqual([
      expect.stringMatching(/^retry 1\/2 in 1000 ms \(Retry-After\)$/),
    ]);
  });

  it("a Retry-After given as an HTTP date is honoured too; one over 60 s gives up at once and says why", async () => {
    arrivals.length = 0;
    let n = 0;
    handler = (res) => {
      if (n++ === 0) res.writeHead(503, { "retry-after": new Date(Date.now() + 2000).toUTCString() }).end("busy");
      else ok(res);
    };
    const r = await rig();
    await callModel(ctx(r, new OpenAiCompatibleProvider({ baseUrl: url, model: "m", stream: false }), 1));
    // HTTP dates have one-second resolution: at least ~1 s, not the 1 ms backoff.
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(900);

    arrivals.length = 0;
    handler = (res) => res.writeHead(429, { "retry-after": "3600" }).end("later");
    const c = ctx(r, new OpenAiCompatibleProvider({ baseUrl: url, model: "m", stream: false }), 1);
    const err = await callModel(c).catch((e) => e);
    expect(err).toBeInstanceOf(LlmCallFailed);
    expect(arrivals).toHaveLength(1);
    expect(c.events.filter((e) => e.type === "llm_error").map((e) => (e as { next: string }).next)).toEqual([
      "give up (the server asked to wait 3600 s, over the 60 s limit)",
    ]);
  });

  it("backoff doubles per retry with jitter between half and all of it; Retry-After is a floor", () => {
    expect([0, 1, 2].map((i) => retryDelay(100, i, null, () => 0))).toEqual([50, 100, 200]);
    expect([0, 1, 2].map((i) => retryDelay(100, i, null, () => 1))).toEqual([100, 200, 400]);
    const spread = new Set(Array.from({ length: 50 }, () => retryDelay(1000, 0, null)));
    expect(spread.size).toBeGreaterThan(10);
    expect(retryDelay(100, 0, 5000, () => 0.5)).toBe(5000);
    expect(retryDelay(1_000_000, 5, null, () => 1)).toBe(30_000);
  });
});
