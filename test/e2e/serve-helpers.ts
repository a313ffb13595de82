/**
 * Helpers for the `hermes serve` tests: a model server on 127.0.0.1 whose answers depend on the last
 * user message (so concurrent sessions get predictable answers), a home that uses it, and the built
 * CLI spawned as `hermes serve --port 0` with its address read from the line it prints.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { spawnCli, type Spawned } from "../support/cli.js";
import { writeText } from "../support/home.js";
import { sleep } from "../support/util.js";

interface Msg {
  role: string;
  content: string | null;
  tool_calls?: unknown[];
}

export interface EchoModel {
  url: string;
  /** Requests received, in order. */
  requests: Array<{ messages: Msg[]; stream?: boolean; tools?: unknown[] }>;
  close(): Promise<void>;
}

function completion(message: Record<string, unknown>, finish: string) {
  return {
    id: "chatcmpl-echo",
    object: "chat.completion",
    created: 1,
    model: "echo",
    choices: [{ index: 0, message, finish_reason: finish }],
  };
}

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return {
    id: "chatcmpl-echo",
    object: "chat.completion.chunk",
    created: 1,
    model: "echo",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

/**
 * What the model answers, by the last user message:
 * - `tool:<name> <json args>`: calls that tool once; after the tool result it says `done: <result>`;
 * - `slow:<ms> <text>`: streams the words of `echo: <text>`, one every <ms> milliseconds;
 * - `hang`: never answers;
 * - anything else: `echo: <text> [<n> messages]` (n counts the whole conversation it was sent).
 */
function answer(body: { messages: Msg[] }): {
  text?: string;
  tool?: { name: string; args: string };
  delayMs?: number;
  hang?: boolean;
} {
  const msgs = body.messages;
  const last = msgs[msgs.length - 1]!;
  const lastUser = [...msgs].reverse().find((m) => m.role === "user");
  const text = String(lastUser?.content ?? "").split("\n\n")[0]!;
  if (last.role === "tool") return { text: `done: ${String(last.content)}` };
  const tool = /^tool:(\S+)\s*(.*)$/s.exec(text);
  if (tool) return { tool: { name: tool[1]!, args: tool[2] || "{}" } };
  const slow = /^slow:(\d+)\s+(.*)$/s.exec(text);
  if (slow) return { text: `echo: ${slow[2]}`, delayMs: Number(slow[1]) };
  if (text === "hang") return { hang: true };
  return { text: `echo: ${text} [${msgs.length} messages]` };
}

async function reply(res: ServerResponse, body: { messages: Msg[]; stream?: boolean }, hanging: Set<ServerResponse>) {
  const a = answer(body);
  if (a.hang) return void hanging.add(res);
  if (a.tool) {
    const call = {
      id: `call_${Date.now()}`,
      type: "function",
      function: { name: a.tool.name, arguments: a.tool.args },
    };
    if (!body.stream)
      return void res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(completion({ role: "assistant", content: null, tool_calls: [call] }, "tool_calls")));
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(`data: ${JSON.stringify(chunk({ role: "assistant", tool_calls: [{ index: 0, ...call }] }))}\n\n`);
    res.write(`data: ${JSON.stringify(chunk({}, "tool_calls"))}\n\n`);
    return void res.end("data: [DONE]\n\n");
  }
  const text = a.text ?? "";
  if (!body.stream)
    return void res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(completion({ role: "assistant", content: text }, "stop")));
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const w of text.match(/\S+\s*/g) ?? []) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk({ content: w }))}\n\n`);
    if (a.delayMs) await sleep(a.delayMs);
  }
  res.write(`data: ${JSON.stringify(chunk({}, "stop"))}\n\n`);
  res.end("data: [DONE]\n\n");
}

export async function echoModel(): Promise<EchoModel> {
  const requests: EchoModel["requests"] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw) as EchoModel["requests"][number];
      requests.push(body);
      void reply(res, body, hanging);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const h of hanging) h.socket?.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** config.yaml of a home whose model is `modelUrl`; `extra` is appended as YAML. */
export function writeServeConfig(home: string, modelUrl: string, extra = ""): void {
  writeText(
    join(home, "config.yaml"),
    `model:\n  provider: openai-compatible\n  base_url: ${modelUrl}\n  default: echo\n` +
      `agent:\n  api_max_retries: 0\n${extra}`,
  );
}

export interface Served {
  url: string;
  proc: Spawned;
  /** Send a signal and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const LISTENING = /listening on (http:\/\/\S+)/;

/** Spawn `hermes --home <home> serve --port 0 …args` and wait until it prints its address. */
export async function serve(home: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const proc = spawnCli(["--home", home, "serve", "--port", "0", ...args], { env });
  const deadline = Date.now() + 30_000;
  let exited: unknown;
  void proc.done.then((r) => (exited = r));
  for (;;) {
    const m = LISTENING.exec(proc.stderr());
    if (m) {
      return {
        url: m[1]!,
        proc,
        async stop(signal = "SIGTERM") {
          if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
          return proc.done;
        },
      };
    }
    if (exited) throw new Error(`hermes serve exited before listening: ${JSON.stringify(exited)}\n${proc.stderr()}`);
    if (Date.now() > deadline) {
      proc.child.kill("SIGKILL");
      throw new Error(`hermes serve did not listen within 30 s:\n${proc.stderr()}`);
    }
    await sleep(25);
  }
}

// ---------------------------------------------------------------- HTTP, SSE and plugins of the serve tests

export interface ApiReply<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** A JSON request to the server: GET without `body`, POST with it. */
export async function api<T = Record<string, unknown>>(
  base: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiReply<T>> {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: kept as text */
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** One frame of a server-sent-events stream: `data` as sent, `json` when it parses, `event` when named. */
export interface SseFrame {
  event?: string;
  data: string;
  json?: Record<string, unknown>;
}

export interface SseStreamRead {
  status: number;
  headers: Headers;
  /** Frames so far (grows while the stream is open). */
  frames: SseFrame[];
  /** `: …` comment lines so far, without the colon and space. */
  comments: string[];
  /** Resolves when the server ends the stream; rejects after `timeoutMs`, naming what was read. */
  done: Promise<{ frames: SseFrame[]; comments: string[] }>;
  /** Close the stream from the client side. */
  abort(): void;
}

/** Open a server-sent-events stream (GET, or POST with `body`) and parse it as it arrives. */
export async function openSse(
  url: string,
  opts: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<SseStreamRead> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("timeout")), opts.timeoutMs ?? 30_000);
  const res = await fetch(url, {
    method: opts.body === undefined ? "GET" : "POST",
    headers: { ...(opts.body === undefined ? {} : { "content-type": "application/json" }), ...opts.headers },
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  let buffer = "";
  const take = (block: string) => {
    const data: string[] = [];
    let event: string | undefined;
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) comments.push(line.slice(1).trim());
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      else if (line.startsWith("event:")) event = line.slice(6).trim();
    }
    if (!data.length) return;
    const frame: SseFrame = { data: data.join("\n"), ...(event ? { event } : {}) };
    try {
      const j = JSON.parse(frame.data) as unknown;
      if (j && typeof j === "object") frame.json = j as Record<string, unknown>;
    } catch {
      /* [DONE] and other text */
    }
    frames.push(frame);
  };
  const done = (async () => {
    const decoder = new TextDecoder();
    try {
      if (!res.body) return { frames, comments };
      for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(bytes, { stream: true });
        for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n")) {
          take(buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
        }
      }
      if (buffer.trim()) take(buffer);
      return { frames, comments };
    } catch (e) {
      throw new Error(
        `SSE ${url}: ${(e as Error).message} after ${frames.length} frame(s): ${frames.map((f) => f.data).join(" | ")}`,
      );
    } finally {
      clearTimeout(timer);
    }
  })();
  done.catch(() => undefined);
  return { status: res.status, headers: res.headers, frames, comments, done, abort: () => controller.abort() };
}

/** Poll GET /v1/runs/{id} until `until` holds for it (default: the run finished); fails after `ms`. */
export async function pollRun(
  base: string,
  runId: string,
  until: (run: Record<string, unknown>) => boolean = (r) =>
    ["completed", "failed", "cancelled"].includes(String(r.status)),
  ms = 20_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await api(base, `/v1/runs/${runId}`);
    if (r.status === 200 && until(r.body)) return r.body;
    if (Date.now() > deadline)
      throw new Error(`run ${runId}: condition not met within ${ms} ms: ${JSON.stringify(r.body)}`);
    await sleep(50);
  }
}

export interface RecorderOptions {
  /** Hooks whose calls it appends to `file` as `{ev: "hook:<name>", plugin, ...scalar payload fields}`. */
  hooks?: readonly string[];
  /** The JSON-lines file it appends to (shared with the tracer of agent-helpers.ts is fine: lines are whole). */
  file: string;
  /** A tool of that name answering `{"tool": <name>, "plugin": <key>, "generation_marker": <marker>}`. */
  tool?: string;
  /** Appends `{ev: "unload", plugin, marker, instance}` to `file` when the plugin is unloaded (ctx.on_unload). */
  onUnload?: boolean;
  /** Written into every record, to tell two versions of the plugin apart. */
  marker?: string;
  /** register() throws this message (after registering its hooks). */
  registerThrows?: string;
  /** `required: true` in plugin.yaml: the plugin fails closed. */
  required?: boolean;
  /** register() waits while this file exists (polling; at most 30 s): a load a test holds open. */
  registerWaitsWhile?: string;
  /**
   * Each hook callback records `{ev: "hook:<name>:called"}`, then waits while this file exists (polling; at
   * most 30 s) before it records the call.
   */
  hooksWaitWhile?: string;
}

/** The recorder's index.js; `__OPTIONS__` becomes its options as JSON. */
const RECORDER_SOURCE = `import { appendFileSync, existsSync } from "node:fs";
import { randomUUID } from "node:crypto";
const O = __OPTIONS__;
const pause = () => new Promise((r) => setTimeout(r, 20));
async function hold(file) {
  for (let i = 0; file && i < 1500 && existsSync(file); i++) await pause();
}
const scalars = (p) =>
  Object.fromEntries(Object.entries(p ?? {}).filter(([, v]) => v === null || typeof v !== "object"));
export async function register(ctx) {
  const instance = randomUUID();
  const rec = (ev, data = {}) =>
    appendFileSync(O.file, JSON.stringify({ ev, plugin: O.key, marker: O.marker, instance, ...data }) + "\\n");
  rec("register", { pid: process.pid });
  for (const name of O.hooks)
    ctx.register_hook(name, async (p) => {
      if (O.hooksWaitWhile) {
        rec("hook:" + name + ":called");
        await hold(O.hooksWaitWhile);
      }
      rec("hook:" + name, scalars(p));
      return null;
    });
  if (O.tool) {
    const schema = { name: O.tool, description: "test tool", parameters: { type: "object", properties: {} } };
    const answer = JSON.stringify({ tool: O.tool, plugin: O.key, marker: O.marker });
    ctx.register_tool({ name: O.tool, description: "test tool", schema, handler: () => answer });
  }
  if (O.onUnload) ctx.on_unload(() => rec("unload"));
  await hold(O.registerWaitsWhile);
  if (O.registerThrows) throw new Error(O.registerThrows);
}
`;

/**
 * A plugin `<pluginsDir>/<key>` that records hook calls, registers a tool, and says when it unloads. Each
 * load (each register() call) is an instance with its own id: every record carries it, and the first
 * record of an instance is `{ev: "register", instance, pid}`.
 */
export function writeRecorder(pluginsDir: string, key: string, o: RecorderOptions): string {
  const dir = join(pluginsDir, key);
  const hooks = o.hooks ?? [];
  writeText(
    join(dir, "plugin.yaml"),
    `name: ${key}\nversion: "1"\nhooks: [${hooks.join(", ")}]\n` +
      `${o.tool ? `provides_tools: [${o.tool}]\n` : ""}${o.required ? "required: true\n" : ""}`,
  );
  const options = JSON.stringify({ ...o, key, hooks, marker: o.marker ?? "" });
  writeText(
    join(dir, "index.js"),
    RECORDER_SOURCE.replace("__OPTIONS__", () => options),
  );
  return dir;
}
