import { createHmac, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scratch } from "../support/home.js";
import { sleep } from "../support/util.js";
import { api, echoModel, type EchoModel, serve, type Served, writeServeConfig } from "./serve-helpers.js";

/**
 * The bundled webhook platform (plugins/platforms/webhook, docs/gateway.md "Webhook") as an operator runs it:
 * `hermes serve` spawned with gateway.platforms.webhook enabled on a free port, the echo model behind it,
 * signed POSTs sent to it, and a receiver on 127.0.0.1 that gets the signed replies. Two routes: `alerts`
 * (replies POSTed to the receiver) and `logonly` (no url: replies are logged). The senders allowed are the
 * routes' default senders and `alice`.
 */
const scratch = new Scratch("hermes-e2e-webhook-");
const ALERTS_SECRET = randomBytes(24).toString("hex");
const LOG_SECRET = randomBytes(24).toString("hex");
let model: EchoModel;
let served: Served;
let receiver: Server;
let hookBase: string;
/** What the receiver got: raw body and the signature headers. */
const received: Array<{ path: string; body: string; ts: string; sig: string }> = [];

const sig = (secret: string, ts: string, body: string) =>
  `sha256=${createHmac("sha256", secret).update(`${ts}.${body}`).digest("hex")}`;
const now = () => String(Math.floor(Date.now() / 1000));

interface PostOptions {
  secret?: string;
  ts?: string;
  /** The X-Hermes-Signature header as sent (default: the right one); null leaves it out. */
  signature?: string | null;
}

/** POST `body` (an object as JSON, or raw text) to /webhook/<route>, signed with the route's secret. */
async function post(route: string, body: unknown, o: PostOptions = {}): Promise<{ status: number; body: unknown }> {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  const ts = o.ts ?? now();
  const signature = o.signature === undefined ? sig(o.secret ?? ALERTS_SECRET, ts, raw) : o.signature;
  const res = await fetch(`${hookBase}/webhook/${route}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-hermes-timestamp": ts,
      ...(signature === null ? {} : { "x-hermes-signature": signature }),
    },
    body: raw,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** The receiver's next reply after `count` replies, parsed (fails after 10 s). */
async function replyAfter(count: number): Promise<{ body: Record<string, unknown>; ts: string; sig: string }> {
  const deadline = Date.now() + 10_000;
  while (received.length <= count) {
    if (Date.now() > deadline) throw new Error(`no reply arrived:\n${served.proc.stderr().slice(-3000)}`);
    await sleep(25);
  }
  const r = received[count]!;
  return { body: JSON.parse(r.body) as Record<string, unknown>, ts: r.ts, sig: r.sig };
}

/** The user texts the model was sent, in order. */
const modelSaw = () =>
  model.requests.map((r) => [...r.messages].reverse().find((m) => m.role === "user")?.content ?? "");

beforeAll(async () => {
  model = await echoModel();
  receiver = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        body,
        ts: String(req.headers["x-hermes-timestamp"]),
        sig: String(req.headers["x-hermes-signature"]),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/replies`;
  const home = scratch.dir("home");
  writeServeConfig(
    home,
    model.url,
    "gateway:\n  platforms:\n    webhook:\n      enabled: true\n      port: 0\n" +
      '      allowed_users: ["webhook:alerts", "webhook:logonly", "alice"]\n' +
      "      routes:\n" +
      `        alerts: { secret_env: WEBHOOK_ALERTS_SECRET, url: "${receiverUrl}" }\n` +
      "        logonly: { secret_env: WEBHOOK_LOG_SECRET }\n",
  );
  served = await serve(home, [], {
    HERMES_LOG_LEVEL: "info",
    WEBHOOK_ALERTS_SECRET: ALERTS_SECRET,
    WEBHOOK_LOG_SECRET: LOG_SECRET,
  });
  const port = /webhook listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(served.proc.stderr())?.[1];
  expect(port, served.proc.stderr()).toBeDefined();
  hookBase = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await served?.stop("SIGKILL");
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  await model?.close();
  scratch.cleanup();
});

describe("hermes serve: the webhook platform", () => {
  it("/health/detailed lists the webhook platform, connected, from the bundled plugin", async () => {
    const h = await api<{ platforms: Array<Record<string, unknown>> }>(served.url, "/health/detailed");
    expect(h.status).toBe(200);
    expect(h.body.platforms).toEqual([
      expect.objectContaining({ name: "webhook", state: "connected", plugin: "platforms/webhook" }),
    ]);
  });

  it("a signed message's answer is POSTed, signed, to the route's url; the chat keeps its session", async () => {
    const before = received.length;
    const r = await post("alerts", { text: "first", chat_id: "c1", message_id: "m-1" });
    expect(r).toEqual({ status: 202, body: { accepted: true } });
    const a = await replyAfter(before);
    expect(received[before]!.path).toBe("/replies");
    expect(a.sig).toBe(sig(ALERTS_SECRET, a.ts, received[before]!.body));
    expect(Math.abs(Number(a.ts) - Date.now() / 1000)).toBeLessThan(60);
    expect(a.body).toEqual({ route: "alerts", chat_id: "c1", text: expect.any(String), reply_to: "m-1" });
    const n1 = Number(/^echo: first \[(\d+) messages\]$/.exec(String(a.body.text))?.[1]);

    expect((await post("alerts", { text: "second", chat_id: "c1" })).status).toBe(202);
    const b = await replyAfter(before + 1);
    const n2 = Number(/^echo: second \[(\d+) messages\]$/.exec(String(b.body.text))?.[1]);
    expect(n1).toBeGreaterThan(0);
    expect(n2).toBe(n1 + 2);

    // Another chat of the route is another session: its count starts over.
    expect((await post("alerts", { text: "other chat", sender_id: "alice" })).status).toBe(202);
    const c = await replyAfter(before + 2);
    expect(c.body).toEqual({ route: "alerts", chat_id: "default", text: `echo: other chat [${n1} messages]` });

    // Chat commands work over the webhook: /reset forgets the chat's conversation.
    expect((await post("alerts", { text: "/reset", chat_id: "c1" })).status).toBe(202);
    expect((await replyAfter(before + 3)).body).toEqual({ route: "alerts", chat_id: "c1", text: "Session reset." });
    expect((await post("alerts", { text: "third", chat_id: "c1" })).status).toBe(202);
    expect((await replyAfter(before + 4)).body.text).toBe(`echo: third [${n1} messages]`);
  });

  it("refuses bad signatures, stale or future timestamps, replays, unknown routes; none starts a turn", async () => {
    const body = JSON.stringify({ text: "forged", chat_id: "c2" });
    const ts = now();
    const cases: Array<[Promise<{ status: number; body: unknown }>, number, string]> = [
      [post("alerts", body, { secret: "not-the-secret" }), 401, "bad_signature"],
      [post("alerts", body, { secret: LOG_SECRET }), 401, "bad_signature"],
      [post("alerts", body, { signature: null }), 401, "missing_signature"],
      [post("alerts", body, { signature: `sha256=${"0".repeat(64)}` }), 401, "bad_signature"],
      [post("alerts", body, { signature: "sha256=abc" }), 401, "bad_signature"],
      [post("alerts", body, { ts: "not-a-number" }), 401, "missing_signature"],
      [post("alerts", body, { ts: String(Number(ts) - 400) }), 401, "stale_timestamp"],
      [post("alerts", body, { ts: String(Number(ts) + 400) }), 401, "stale_timestamp"],
      [post("nope", body), 404, "unknown_route"],
    ];
    for (const [p, status, error] of cases) expect(await p).toEqual({ status, body: { error } });
    // The signature covers the timestamp: a fresh timestamp with an old signature is refused.
    const old = String(Number(ts) - 400);
    expect((await post("alerts", body, { ts, signature: sig(ALERTS_SECRET, old, body) })).status).toBe(401);

    const before = received.length;
    const good = JSON.stringify({ text: "genuine", chat_id: "c2" });
    expect(await post("alerts", good, { ts })).toEqual({ status: 202, body: { accepted: true } });
    expect(await post("alerts", good, { ts })).toEqual({ status: 409, body: { error: "replayed" } });
    expect((await replyAfter(before)).body.text).toMatch(/^echo: genuine \[/);
    await sleep(200);
    expect(received.length).toBe(before + 1);
    expect(modelSaw().filter((t) => t === "forged" || t === "genuine")).toEqual(["genuine"]);
    expect(served.proc.stderr()).toMatch(/webhook route alerts: refused a request \(bad_signature\)/);
  });

  it("a sender not in allowed_users is accepted by the route but starts no turn", async () => {
    const before = received.length;
    expect(await post("alerts", { text: "let me in", chat_id: "c3", sender_id: "mallory" })).toEqual({
      status: 202,
      body: { accepted: true },
    });
    expect((await post("alerts", { text: "after mallory", chat_id: "c3", sender_id: "alice" })).status).toBe(202);
    expect((await replyAfter(before)).body.text).toMatch(/^echo: after mallory \[/);
    await sleep(200);
    expect(received.length).toBe(before + 1);
    expect(modelSaw()).not.toContain("let me in");
    expect(served.proc.stderr()).toContain("ignored a message from mallory (not in allowed_users)");
  });

  it("bad bodies: no text → 400, not JSON → 400, over 1 MiB → 413, GET → 405", async () => {
    expect(await post("alerts", { chat_id: "c4" })).toEqual({ status: 400, body: { error: "missing_text" } });
    expect(await post("alerts", "{not json")).toEqual({ status: 400, body: { error: "invalid_json" } });
    expect((await post("alerts", { text: "x", chat_id: { nested: 1 } })).status).toBe(400);
    const big = JSON.stringify({ text: "x".repeat(1024 * 1024) });
    expect(await post("alerts", big)).toEqual({ status: 413, body: { error: "body_too_large", max_bytes: 1048576 } });
    const get = await fetch(`${hookBase}/webhook/alerts`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("a route without a url logs the answer", async () => {
    const r = await post("logonly", { text: "log me" }, { secret: LOG_SECRET });
    expect(r.status).toBe(202);
    const deadline = Date.now() + 10_000;
    while (!/webhook reply to logonly:default \(route logonly has no url\): echo: log me/.test(served.proc.stderr())) {
      if (Date.now() > deadline) throw new Error(`no logged reply:\n${served.proc.stderr().slice(-3000)}`);
      await sleep(25);
    }
  });

  it("a route whose secret variable is not set fails the platform, named in /health/detailed", async () => {
    const home = scratch.dir("home-no-secret");
    writeServeConfig(
      home,
      model.url,
      "gateway:\n  platforms:\n    webhook:\n      enabled: true\n      port: 0\n      allow_all_users: true\n" +
        "      routes:\n        alerts: { secret_env: WEBHOOK_UNSET_SECRET }\n",
    );
    const s = await serve(home);
    try {
      const h = await api<{ platforms: Array<Record<string, unknown>> }>(s.url, "/health/detailed");
      expect(h.body.platforms).toEqual([
        expect.objectContaining({
          name: "webhook",
          state: "failed",
          error: expect.stringContaining("WEBHOOK_UNSET_SECRET (its secret) is not set"),
        }),
      ]);
    } finally {
      await s.stop("SIGKILL");
    }
  });
});
