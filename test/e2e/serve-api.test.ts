import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import { sleep } from "../support/util.js";
import { echoModel, type EchoModel, serve, type Served, writeServeConfig } from "./serve-helpers.js";

/**
 * hermes serve's OpenAI-compatible API as its clients use it: the built CLI spawned as a user runs it,
 * the official `openai` package and curl as clients, the echo model of serve-helpers.ts behind it.
 * Three served homes: one shared by most tests (a plugin with a tool and an approval hook, CORS
 * configured), one with API_SERVER_KEY, one with a queue of one.
 */
const scratch = new Scratch("hermes-e2e-serve-api-");
let model: EchoModel;
const servers: Served[] = [];

beforeAll(async () => {
  model = await echoModel();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop("SIGKILL")));
  await model?.close();
  scratch.cleanup();
});

// ---------------------------------------------------------------- clients

interface CurlResult {
  status: number;
  /** Headers of the final response (interim 1xx ones skipped), names lower-cased. */
  headers: Record<string, string>;
  body: string;
}

/** Split `curl -i` output: 1xx responses (100 Continue) are skipped, the last one is returned. */
function parseCurl(out: string): CurlResult {
  let rest = out;
  for (;;) {
    const end = rest.indexOf("\r\n\r\n");
    const head = end < 0 ? rest : rest.slice(0, end);
    rest = end < 0 ? "" : rest.slice(end + 4);
    const [statusLine = "", ...lines] = head.split("\r\n");
    const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
    if (status >= 100 && status < 200 && rest.startsWith("HTTP/")) continue;
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(":");
      if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    return { status, headers, body: rest };
  }
}

/** curl `-sS -i …args`, asynchronously: the echo model lives in this process and must keep answering. */
function curl(...args: string[]): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    execFile(
      "curl",
      ["-sS", "-i", "-m", "20", ...args],
      { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`curl ${args.join(" ")} failed: ${stderr || err.message}`));
        else resolve(parseCurl(stdout));
      },
    );
  });
}

const JSON_TYPE = ["-H", "content-type: application/json"];

/** POST a JSON body (given as an object, or as raw text) with curl. */
function curlPost(url: string, body: unknown, ...extra: string[]): Promise<CurlResult> {
  return curl(...JSON_TYPE, ...extra, "-d", typeof body === "string" ? body : JSON.stringify(body), url);
}

interface SseFrame {
  event?: string;
  data: string;
}

/** The frames of a server-sent-events body in order; comment-only frames (keep-alives) are left out. */
function sseFrames(body: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of body.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length) frames.push({ ...(event ? { event } : {}), data: data.join("\n") });
  }
  return frames;
}

interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

/** A refusal as every route sends it: a 4xx, OpenAI's error object (four keys), no stack trace. */
function refusal(r: CurlResult, status: number, code: string): ErrorBody["error"] {
  expect(r.status, r.body).toBe(status);
  expect(r.headers["content-type"]).toMatch(/^application\/json/);
  expect(r.body).not.toMatch(STACK_RE);
  const body = JSON.parse(r.body) as ErrorBody;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(10);
  return body.error;
}

function client(url: string, apiKey = "not-checked"): OpenAI {
  // No retries: a 429 or 5xx must reach the test as it was sent.
  return new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0, timeout: 20_000 });
}

/** What the client gets back from a refused call (the openai package throws an APIError). */
async function apiError(call: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call();
  } catch (e) {
    if (e instanceof OpenAI.APIError) return e;
    throw e;
  }
  throw new Error("expected the API to refuse the call, but it answered");
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------- homes

/**
 * A home whose model is the echo model, plugins from `plugins` under plugins/, nothing bundled, and a
 * short shutdown grace (a turn that hangs must not hold afterAll).
 */
function serveHome(name: string, gatewayYaml: string, plugins: Record<string, [string, string]> = {}) {
  const home = scratch.dir(name);
  for (const [key, [manifest, index]] of Object.entries(plugins)) {
    mkdirSync(join(home, "plugins", key), { recursive: true });
    writeFileSync(join(home, "plugins", key, "plugin.yaml"), manifest);
    writeFileSync(join(home, "plugins", key, "index.js"), index);
  }
  const enabled = Object.keys(plugins);
  const spyFile = join(home, "spy.jsonl");
  const entries = enabled.map((k) => `    ${k}:\n      settings:\n        spy_file: ${JSON.stringify(spyFile)}\n`);
  writeServeConfig(
    home,
    model.url,
    `plugins:\n  enabled: [${enabled.join(", ")}]\n${entries.length ? `  entries:\n${entries.join("")}` : ""}` +
      `gateway:\n  shutdown_grace_seconds: 1\n${gatewayYaml}`,
  );
  return { home, spyFile, env: { HERMES_BUNDLED_PLUGINS: scratch.dir(`${name}-bundled`) } };
}

/** A tool (`add_one`) the model can call, and a hook that records what approval requests show plugins. */
const PROBE_PLUGIN: [string, string] = [
  "name: apiprobe\nversion: '1'\nprovides_tools: [add_one]\nhooks: [pre_approval_request]\n",
  `import { appendFileSync } from "node:fs";
export function register(ctx) {
  ctx.register_tool({
    name: "add_one",
    schema: { name: "add_one", description: "x + 1", parameters: { type: "object", properties: { x: { type: ` +
    `"number" } } } },
    handler: (args) => "sum=" + (Number(args.x) + 1),
  });
  ctx.register_hook("pre_approval_request", (p) => {
    appendFileSync(ctx.get_config("spy_file"), JSON.stringify({ session_key: p.session_key, command: p.command, ` +
    `surface: p.surface }) + "\\n");
  });
}
`,
];

// ---------------------------------------------------------------- one shared server

describe("hermes serve through the openai package and curl (one served home)", () => {
  let url: string;
  let served: Served;
  let spyFile: string;
  let openai: OpenAI;

  beforeAll(async () => {
    const h = serveHome("main", '  api_server:\n    cors_origins: ["http://ok.example"]\n', { apiprobe: PROBE_PLUGIN });
    spyFile = h.spyFile;
    served = await serve(h.home, [], h.env);
    servers.push(served);
    url = served.url;
    openai = client(url);
  });

  afterAll(async () => {
    if (!served) return;
    const { code } = await served.stop();
    expect(code).toBe(0);
    // Every refusal of this file was rendered, none crashed: no stack trace was logged.
    expect(served.proc.stderr()).not.toMatch(STACK_RE);
  });

  it("a plain completion answers with the model's text and names its session", async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: "hermes-agent", messages: [{ role: "user", content: "hello there" }] })
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.model).toBe("hermes-agent");
    // The system prompt and the user message: the echo model counts what it was sent.
    expect(data.choices[0]?.message).toMatchObject({ role: "assistant", content: "echo: hello there [2 messages]" });
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(response.headers.get("x-hermes-session-id")).toMatch(/^api-[0-9a-f]{16}$/);
    expect(response.headers.get("x-hermes-run-id")).toMatch(/^run_[0-9a-f]{32}$/);
  });

  it("a streamed completion sends the answer in deltas; the raw stream is role chunk first, [DONE] last", async () => {
    const { data: stream, response } = await openai.chat.completions
      .create({ model: "hermes-agent", messages: [{ role: "user", content: "stream me please" }], stream: true })
      .withResponse();
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("x-hermes-session-id")).toMatch(/^api-/);
    const deltas: string[] = [];
    const finishes: string[] = [];
    for await (const c of stream) {
      const choice = c.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finishes.push(choice.finish_reason);
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("echo: stream me please [2 messages]");
    expect(finishes).toEqual(["stop"]);

    const raw = await curlPost(`${url}/v1/chat/completions`, {
      stream: true,
      messages: [{ role: "user", content: "raw stream" }],
    });
    expect(raw.status).toBe(200);
    expect(raw.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(raw.headers["x-hermes-session-id"]).toMatch(/^api-/);
    const frames = sseFrames(raw.body);
    expect(frames.at(-1)).toEqual({ data: "[DONE]" });
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data) as OpenAI.ChatCompletionChunk);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant" });
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("echo: raw stream [2 messages]");
  });

  it("content as typed text parts is joined; an image part is refused with 400 unsupported_content_type", async () => {
    // input_text is the Responses API's text part; the server takes it beside text (the types of the package don't).
    const parts = [
      { type: "text", text: "a" },
      { type: "input_text", text: "b" },
    ] as unknown as OpenAI.ChatCompletionContentPartText[];
    const ok = await openai.chat.completions.create({
      model: "hermes-agent",
      messages: [{ role: "user", content: parts }],
    });
    expect(ok.choices[0]?.message.content).toBe("echo: a\nb [2 messages]");
    const image = [
      { type: "text", text: "what is this?" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ];
    const e = await apiError(() =>
      openai.chat.completions.create({
        model: "hermes-agent",
        messages: [{ role: "user", content: image as OpenAI.ChatCompletionContentPart[] }],
      }),
    );
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.status).toBe(400);
    expect(e.code).toBe("unsupported_content_type");
    expect(e.param).toBe("messages[0].content");
    const raw = await curlPost(`${url}/v1/chat/completions`, { messages: [{ role: "user", content: image }] });
    const err = refusal(raw, 400, "unsupported_content_type");
    expect(err).toMatchObject({ type: "invalid_request_error", param: "messages[0].content" });
    expect(err.message).toMatch(/image_url/);
  });

  it("X-Hermes-Session-Id continues a session: the model sees it grow; GET /v1/sessions/{id} has both", async () => {
    const key = "agent:main:api:alice";
    const first = await openai.chat.completions
      .create(
        { model: "hermes-agent", messages: [{ role: "user", content: "remember one" }] },
        { headers: { "X-Hermes-Session-Key": key } },
      )
      .withResponse();
    const id = first.response.headers.get("x-hermes-session-id")!;
    expect(first.data.choices[0]?.message.content).toBe("echo: remember one [2 messages]");
    const second = await openai.chat.completions
      .create(
        { model: "hermes-agent", messages: [{ role: "user", content: "remember two" }] },
        { headers: { "X-Hermes-Session-Id": id } },
      )
      .withResponse();
    expect(second.response.headers.get("x-hermes-session-id")).toBe(id);
    // System prompt, the first exchange, the new message.
    expect(second.data.choices[0]?.message.content).toBe("echo: remember two [4 messages]");

    const s = await curl(`${url}/v1/sessions/${id}`);
    expect(s.status).toBe(200);
    const session = JSON.parse(s.body) as { session_id: string; session_key: string; turns: number; messages: [] };
    expect(session).toMatchObject({ object: "hermes.session", session_id: id, session_key: key, turns: 2 });
    expect(session.messages).toEqual([
      { role: "user", content: "remember one" },
      { role: "assistant", content: "echo: remember one [2 messages]" },
      { role: "user", content: "remember two" },
      { role: "assistant", content: "echo: remember two [4 messages]" },
    ]);
  });

  it("an unknown session id is 404 session_not_found (streamed too); a malformed one is 400", async () => {
    const unknown = { headers: { "X-Hermes-Session-Id": "api-0000000000000000" } };
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "anyone there?" }];
    const e = await apiError(() => openai.chat.completions.create({ model: "hermes-agent", messages }, unknown));
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e.code).toBe("session_not_found");
    const es = await apiError(() =>
      openai.chat.completions.create({ model: "hermes-agent", messages, stream: true }, unknown),
    );
    expect(es).toBeInstanceOf(OpenAI.NotFoundError);
    expect(es.code).toBe("session_not_found");
    const bad = await apiError(() =>
      openai.chat.completions.create(
        { model: "hermes-agent", messages },
        { headers: { "X-Hermes-Session-Id": "no spaces/or slashes!" } },
      ),
    );
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.code).toBe("invalid_session_id");
    expect(bad.param).toBe("X-Hermes-Session-Id");
    refusal(await curl(`${url}/v1/sessions/api-0000000000000000`), 404, "session_not_found");
    refusal(await curl(`${url}/v1/sessions/bad%20id`), 400, "invalid_session_id");
  });

  it("a client resending the whole conversation keeps one derived session; the model gets it once", async () => {
    const system = { role: "system" as const, content: "You are terse." };
    const q1 = { role: "user" as const, content: "resent first" };
    const first = await openai.chat.completions
      .create({ model: "hermes-agent", messages: [system, q1] })
      .withResponse();
    const a1 = first.data.choices[0]!.message.content!;
    expect(a1).toBe("echo: resent first [2 messages]");
    const before = model.requests.length;
    const second = await openai.chat.completions
      .create({
        model: "hermes-agent",
        messages: [system, q1, { role: "assistant", content: a1 }, { role: "user", content: "resent second" }],
      })
      .withResponse();
    const id = first.response.headers.get("x-hermes-session-id");
    expect(id).toMatch(/^api-[0-9a-f]{16}$/);
    expect(second.response.headers.get("x-hermes-session-id")).toBe(id);
    expect(second.data.choices[0]?.message.content).toBe("echo: resent second [4 messages]");
    // The model's one request of that turn: the system prompt, then the conversation once, in order.
    expect(model.requests.length).toBe(before + 1);
    const sent = model.requests[before]!.messages;
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(sent.slice(1).map((m) => m.content)).toEqual(["resent first", a1, "resent second"]);
    const stored = JSON.parse((await curl(`${url}/v1/sessions/${id}`)).body) as { messages: unknown[] };
    expect(stored.messages).toHaveLength(4);
  });

  it("a plugin's tool runs (`done: <result>`); streamed, hermes.tool.progress frames precede the answer", async () => {
    const plain = await openai.chat.completions.create({
      model: "hermes-agent",
      messages: [{ role: "user", content: 'tool:add_one {"x":1}' }],
    });
    expect(plain.choices[0]?.message.content).toBe("done: sum=2");

    // Without the opt-in header an SDK client sees only chunks, so `chunk.choices[0]` never throws.
    const sdkStream = await openai.chat.completions.create({
      model: "hermes-agent",
      stream: true,
      messages: [{ role: "user", content: 'tool:add_one {"x":2}' }],
    });
    let sdkText = "";
    for await (const chunk of sdkStream) sdkText += chunk.choices[0]?.delta.content ?? "";
    expect(sdkText).toBe("done: sum=3");

    const raw = await curlPost(
      `${url}/v1/chat/completions`,
      { stream: true, messages: [{ role: "user", content: 'tool:add_one {"x":41}' }] },
      "-H",
      "X-Hermes-Tool-Progress: true",
    );
    expect(raw.status).toBe(200);
    const frames = sseFrames(raw.body);
    const progress = frames.filter((f) => f.event === "hermes.tool.progress").map((f) => JSON.parse(f.data));
    expect(progress).toEqual([
      { tool: "add_one", toolCallId: expect.any(String), status: "running" },
      { tool: "add_one", status: "completed" },
    ]);
    expect(frames.at(-1)).toEqual({ data: "[DONE]" });
    const text = frames
      .filter((f) => !f.event && f.data !== "[DONE]")
      .map((f) => (JSON.parse(f.data) as OpenAI.ChatCompletionChunk).choices[0]?.delta.content ?? "")
      .join("");
    expect(text).toBe("done: sum=42");
    const lastProgress = frames.map((f) => f.event).lastIndexOf("hermes.tool.progress");
    const firstText = frames.findIndex((f) => !f.event && f.data.includes('"content"'));
    expect(lastProgress).toBeLessThan(firstText);
  });

  it("an approval through the runs API: the plugin sees X-Hermes-Session-Key, a deny keeps the file", async () => {
    const victim = join(scratch.root, "victim");
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, "keep.txt"), "keep me");
    const command = `rm -rf ${victim}`;
    const started = await curlPost(
      `${url}/v1/runs`,
      { input: `tool:terminal ${JSON.stringify({ command })}` },
      "-H",
      "X-Hermes-Session-Key: agent:main:api:bob",
    );
    expect(started.status, started.body).toBe(202);
    const runId = (JSON.parse(started.body) as { run_id: string }).run_id;
    const pending = await until("the approval request", async () => {
      const r = JSON.parse((await curl(`${url}/v1/runs/${runId}`)).body) as {
        pending_approval?: { request_id: string; digest: string; command: string };
      };
      return r.pending_approval;
    });
    expect(pending.command).toBe(command);
    // pre_approval_request is an observer: what it wrote may land a moment after the request shows.
    const seen = await until("the plugin's record of the approval request", async () =>
      existsSync(spyFile)
        ? readFileSync(spyFile, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l))
        : undefined,
    );
    expect(seen).toContainEqual({ session_key: "agent:main:api:bob", command, surface: "gateway" });

    const answered = await curlPost(`${url}/v1/runs/${runId}/approval`, {
      request_id: pending.request_id,
      digest: pending.digest,
      choice: "deny",
    });
    expect(answered.status, answered.body).toBe(200);
    expect(JSON.parse(answered.body)).toMatchObject({ run_id: runId, choice: "deny" });
    const done = await until("the run to finish", async () => {
      const r = JSON.parse((await curl(`${url}/v1/runs/${runId}`)).body) as { status: string; output?: string };
      return r.status === "completed" ? r : undefined;
    });
    expect(done.output).toMatch(/^done: /);
    expect(readFileSync(join(victim, "keep.txt"), "utf8")).toBe("keep me");
    // Answered already: nothing is pending any more.
    const again = await curlPost(`${url}/v1/runs/${runId}/approval`, {
      request_id: pending.request_id,
      digest: pending.digest,
      choice: "once",
    });
    refusal(again, 409, "approval_not_pending");
  });

  it("bad requests are 4xx with a clear message, never a 500 or a stack", async () => {
    const cc = `${url}/v1/chat/completions`;
    const user = [{ role: "user", content: "hi" }];
    const big = join(scratch.root, "big.json");
    writeFileSync(big, JSON.stringify({ messages: [{ role: "user", content: "x".repeat(10_500_000) }] }));
    const [malformed, missing, notArray, empty, lastAssistant, tooBig, textPlain, form, unknownRoute] =
      await Promise.all([
        curlPost(cc, '{"messages": [{"role": "user", "content": "hi"}'),
        curlPost(cc, { model: "hermes-agent" }),
        curlPost(cc, { messages: "hi" }),
        curlPost(cc, { messages: [] }),
        curlPost(cc, { messages: [...user, { role: "assistant", content: "hello" }] }),
        curl(...JSON_TYPE, "--data-binary", `@${big}`, cc),
        curl("-H", "content-type: text/plain", "-d", JSON.stringify({ messages: user }), cc),
        curl("-d", JSON.stringify({ messages: user }), cc),
        curl(`${url}/v1/embeddings`),
      ]);
    expect(refusal(malformed, 400, "invalid_json").message).toMatch(/JSON/);
    expect(refusal(missing, 400, "invalid_request").message).toMatch(/messages/);
    expect(refusal(notArray, 400, "invalid_request").message).toMatch(/messages must be array/);
    expect(refusal(empty, 400, "invalid_request").message).toMatch(/messages/);
    expect(refusal(lastAssistant, 400, "no_user_message").message).toMatch(/last message must be a user message/);
    expect(refusal(tooBig, 413, "body_too_large").message).toMatch(/10000000 bytes/);
    expect(refusal(textPlain, 415, "unsupported_media_type").message).toMatch(/application\/json/);
    refusal(form, 415, "unsupported_media_type");
    expect(refusal(unknownRoute, 404, "not_found").message).toMatch(/GET \/v1\/embeddings/);

    const [run404, stop404, answer404] = await Promise.all([
      curl(`${url}/v1/runs/run_0123456789abcdef`),
      curl("-X", "POST", `${url}/v1/runs/run_0123456789abcdef/stop`),
      curlPost(`${url}/v1/runs/run_0123456789abcdef/approval`, { request_id: "r", digest: "d", choice: "once" }),
    ]);
    for (const r of [run404, stop404, answer404]) refusal(r, 404, "run_not_found");

    // A run that finished with nothing pending: an approval answer is a conflict, not a crash.
    const started = await curlPost(`${url}/v1/runs`, { input: "a quick run" });
    const runId = (JSON.parse(started.body) as { run_id: string }).run_id;
    await until("the run to finish", async () => {
      const r = JSON.parse((await curl(`${url}/v1/runs/${runId}`)).body) as { status: string };
      return r.status === "completed" ? r : undefined;
    });
    const conflict = await curlPost(`${url}/v1/runs/${runId}/approval`, {
      request_id: "r",
      digest: "d",
      choice: "once",
    });
    expect(refusal(conflict, 409, "approval_not_pending").message).toMatch(/not waiting for an approval/);
    refusal(await curl("-X", "POST", `${url}/v1/runs/${runId}/stop`), 409, "run_not_active");
    // A client that sends the JSON content type with no body is answered like one without it.
    refusal(await curl(...JSON_TYPE, "-X", "POST", `${url}/v1/runs/${runId}/stop`), 409, "run_not_active");
  });

  it("GET /v1/models lists hermes-agent; /health and /health/detailed report the service", async () => {
    await openai.chat.completions.create({ model: "hermes-agent", messages: [{ role: "user", content: "count me" }] });
    const models = await openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["hermes-agent"]);
    const health = await curl(`${url}/health`);
    expect(JSON.parse(health.body)).toEqual({ status: "ok", platform: "hermes-agent" });
    const detailed = JSON.parse((await curl(`${url}/health/detailed`)).body) as Record<string, unknown>;
    expect(detailed).toMatchObject({
      status: "ok",
      generation: expect.any(Number),
      plugins_loaded: ["apiprobe"],
      plugins_failed: [],
      sessions: { live: expect.any(Number), stored: expect.any(Number) },
      uptime_seconds: expect.any(Number),
      stopping: false,
      pid: served.proc.child.pid,
    });
    expect(detailed.generation).toBeGreaterThanOrEqual(1);
    expect((detailed.sessions as { stored: number }).stored).toBeGreaterThanOrEqual(1);
  });

  it("CORS: an unlisted origin is 403; a listed one gets access-control headers (preflight, streams)", async () => {
    const evil = await curl("-H", "Origin: http://evil.example", `${url}/v1/models`);
    expect(refusal(evil, 403, "origin_not_allowed").message).toMatch(/cors_origins/);
    expect(evil.headers["access-control-allow-origin"]).toBeUndefined();
    const evilPreflight = await curl(
      "-X",
      "OPTIONS",
      "-H",
      "Origin: http://evil.example",
      "-H",
      "Access-Control-Request-Method: POST",
      `${url}/v1/chat/completions`,
    );
    expect(evilPreflight.status).toBe(403);

    const ok = await curl("-H", "Origin: http://ok.example", `${url}/v1/models`);
    expect(ok.status).toBe(200);
    expect(ok.headers["access-control-allow-origin"]).toBe("http://ok.example");
    expect(ok.headers["access-control-expose-headers"]).toMatch(/X-Hermes-Session-Id/);
    const preflight = await curl(
      "-X",
      "OPTIONS",
      "-H",
      "Origin: http://ok.example",
      "-H",
      "Access-Control-Request-Method: POST",
      `${url}/v1/chat/completions`,
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe("http://ok.example");
    expect(preflight.headers["access-control-allow-headers"]).toMatch(/X-Hermes-Session-Id/);
    const streamed = await curlPost(
      `${url}/v1/chat/completions`,
      { stream: true, messages: [{ role: "user", content: "from a browser" }] },
      "-H",
      "Origin: http://ok.example",
    );
    expect(streamed.status).toBe(200);
    expect(streamed.headers["access-control-allow-origin"]).toBe("http://ok.example");
    expect(sseFrames(streamed.body).at(-1)).toEqual({ data: "[DONE]" });
  });
});

// ---------------------------------------------------------------- API_SERVER_KEY

describe("API_SERVER_KEY", () => {
  const key = `hk-test-${randomBytes(16).toString("hex")}`;
  const wrong = `hk-wrong-${randomBytes(16).toString("hex")}`;
  let served: Served;

  beforeAll(async () => {
    const h = serveHome("auth", "");
    // trace: the most the server ever logs, so a leak of the key would show.
    served = await serve(h.home, [], { ...h.env, API_SERVER_KEY: key, HERMES_LOG_LEVEL: "trace" });
    servers.push(served);
  });

  it("no key or a wrong one is 401 invalid_api_key; the right key answers; /health is open", async () => {
    const url = served.url;
    const [none, bad, health, detailed] = await Promise.all([
      curlPost(`${url}/v1/chat/completions`, { messages: [{ role: "user", content: "let me in" }] }),
      curl("-H", `Authorization: Bearer ${wrong}`, `${url}/v1/models`),
      curl(`${url}/health`),
      curl(`${url}/health/detailed`),
    ]);
    expect(refusal(none, 401, "invalid_api_key").type).toBe("authentication_error");
    refusal(bad, 401, "invalid_api_key");
    refusal(detailed, 401, "invalid_api_key");
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ status: "ok" });

    const e = await apiError(() => client(url, wrong).models.list());
    expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(e.code).toBe("invalid_api_key");
    const { data, response } = await client(url, key)
      .chat.completions.create({ model: "hermes-agent", messages: [{ role: "user", content: "the right key" }] })
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0]?.message.content).toBe("echo: the right key [2 messages]");
  });

  it("the key never appears in the server's stderr, also after 401s, down to its exit", async () => {
    const { code } = await served.stop();
    expect(code).toBe(0);
    const stderr = served.proc.stderr();
    // Trace logging was on: the requests above were logged.
    expect(stderr).toMatch(/\/v1\/models/);
    expect(stderr).not.toContain(key);
    expect(stderr).not.toContain(wrong);
    expect(stderr).not.toMatch(STACK_RE);
  });

  it("a non-loopback host without API_SERVER_KEY exits non-zero before listening (E_SERVE_KEY_REQUIRED)", async () => {
    const h = serveHome("exposed", "");
    const args = ["--home", h.home, "serve", "--host", "0.0.0.0", "--port", "0"];
    const [unset, blank] = await Promise.all([
      runCli(args, { env: { ...h.env, API_SERVER_KEY: undefined } }),
      runCli(args, { env: { ...h.env, API_SERVER_KEY: "   " } }),
    ]);
    for (const r of [unset, blank]) {
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(r.stderr).toContain("E_SERVE_KEY_REQUIRED");
      expect(r.stderr).toMatch(/0\.0\.0\.0/);
      expect(r.stderr).not.toMatch(STACK_RE);
      expect(r.stderr).not.toMatch(/listening on/);
    }
    // Refused before anything started: no session store was opened.
    expect(existsSync(join(h.home, "sessions"))).toBe(false);
  });
});

// ---------------------------------------------------------------- a full queue

describe("a full queue (gateway.max_concurrent_turns: 1, max_queued_turns: 1)", () => {
  let served: Served;

  beforeAll(async () => {
    const h = serveHome("queue", "  max_concurrent_turns: 1\n  max_queued_turns: 1\n");
    served = await serve(h.home, [], h.env);
    servers.push(served);
  });

  afterAll(async () => {
    if (served) expect((await served.stop()).code).toBe(0);
  });

  it("429 rate_limit_exceeded with Retry-After; stopping the hanging run lets the queued turn answer", async () => {
    const url = served.url;
    const openai = client(url);
    // POST /v1/runs answers at once with the run id: the hanging turn holds the one slot.
    const hanging = await curlPost(`${url}/v1/runs`, { input: "hang" });
    expect(hanging.status, hanging.body).toBe(202);
    const runId = (JSON.parse(hanging.body) as { run_id: string }).run_id;
    const turns = async () =>
      (JSON.parse((await curl(`${url}/health/detailed`)).body) as { turns: { running: number; waiting: number } })
        .turns;
    await until("the hanging turn to run", async () => ((await turns()).running === 1 ? true : undefined));
    // The next turn waits for the slot (the one place in the queue)...
    const queued = openai.chat.completions
      .create({ model: "hermes-agent", messages: [{ role: "user", content: "queued turn" }] })
      .withResponse();
    await until("a turn to wait", async () => ((await turns()).waiting === 1 ? true : undefined));
    // ...and the ones after it are refused at once: curl, the openai package, a streamed request.
    const [raw, run] = await Promise.all([
      curlPost(`${url}/v1/chat/completions`, { messages: [{ role: "user", content: "one too many" }] }),
      curlPost(`${url}/v1/runs`, { input: "a run too many" }),
    ]);
    for (const r of [raw, run]) {
      expect(refusal(r, 429, "rate_limit_exceeded").type).toBe("rate_limit_error");
      expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    }
    const e = await apiError(() =>
      openai.chat.completions.create({
        model: "hermes-agent",
        messages: [{ role: "user", content: "streamed, too many" }],
        stream: true,
      }),
    );
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.code).toBe("rate_limit_exceeded");
    expect(e.headers?.get("retry-after")).toMatch(/^\d+$/);

    const stop = await curl("-X", "POST", `${url}/v1/runs/${runId}/stop`);
    expect(stop.status, stop.body).toBe(200);
    const { data } = await queued;
    expect(data.choices[0]?.message.content).toBe("echo: queued turn [2 messages]");
    const stopped = JSON.parse((await curl(`${url}/v1/runs/${runId}`)).body) as { status: string };
    expect(stopped.status).toBe("cancelled");
    expect(await turns()).toEqual({ running: 0, waiting: 0 });
  });
});
