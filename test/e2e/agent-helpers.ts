/**
 * Helpers for the agent end-to-end tests: a real OpenAI chat-completions server on 127.0.0.1
 * (node:http, streaming and not), a tracer plugin that appends every hook and middleware call
 * it sees to a JSON-lines file, and the homes that enable it (spawn with test/support/cli.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeText } from "../support/home.js";

// ---------------------------------------------------------------- the fake server

export interface ToolCallSpec {
  name: string;
  /** JSON text as the model would send it (anything, including not-JSON). */
  arguments: string;
  id?: string;
}

/** One answer of the server, consumed in order, one per request. */
export type Reply =
  | { say: string; stream?: boolean }
  | { tools: ToolCallSpec[]; stream?: boolean; say?: string }
  | { status: number; body?: string }
  | { raw: string; contentType?: string }
  /** Streams `chunks` SSE events of `say` (split in words), then destroys the socket. */
  | { drop: string; after: number }
  /** Never answers. */
  | { hang: true };

export interface FakeServer {
  url: string;
  /** Parsed JSON bodies of every request received, in order. */
  requests: Array<Record<string, unknown>>;
  headers: Array<Record<string, string | string[] | undefined>>;
  close(): Promise<void>;
}

function completion(msg: Record<string, unknown>, finish: string) {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: "chat.completion",
    created: 1,
    model: "fake-model",
    choices: [{ index: 0, message: msg, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function sse(res: ServerResponse, events: unknown[], done = true) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
  if (done) res.end("data: [DONE]\n\n");
}

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return {
    id: "chatcmpl-stream",
    object: "chat.completion.chunk",
    created: 1,
    model: "fake-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function words(s: string): string[] {
  return s.match(/\S+\s*|\s+/g) ?? [""];
}

/** Start a chat-completions server answering with `replies` in order (the last one repeats). */
export async function fakeOpenAI(replies: Reply[]): Promise<FakeServer> {
  const requests: Array<Record<string, unknown>> = [];
  const headers: Array<Record<string, string | string[] | undefined>> = [];
  let n = 0;
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
        return;
      }
      try {
        requests.push(JSON.parse(body) as Record<string, unknown>);
      } catch {
        requests.push({ unparsable: body });
      }
      headers.push(req.headers);
      const r = replies[Math.min(n++, replies.length - 1)]!;
      const streamWanted = (requests[requests.length - 1] as { stream?: boolean }).stream === true;
      if ("hang" in r) {
        hanging.add(res);
        return;
      }
      if ("status" in r) {
        res
          .writeHead(r.status, { "content-type": "application/json" })
          .end(r.body ?? JSON.stringify({ error: { message: `fake ${r.status}`, type: "server_error" } }));
        return;
      }
      if ("raw" in r) {
        res.writeHead(200, { "content-type": r.contentType ?? "application/json" }).end(r.raw);
        return;
      }
      if ("drop" in r) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        words(r.drop)
          .slice(0, r.after)
          .forEach((w, i) =>
            res.write(
              `data: ${JSON.stringify(chunk(i === 0 ? { role: "assistant", content: w } : { content: w }))}\n\n`,
            ),
          );
        setTimeout(() => res.socket?.destroy(), 30);
        return;
      }
      const stream = r.stream ?? streamWanted;
      if ("tools" in r) {
        const calls = r.tools.map((t, i) => ({
          id: t.id ?? `call_${n}_${i}`,
          type: "function",
          function: { name: t.name, arguments: t.arguments },
        }));
        if (!stream) {
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(
              JSON.stringify(
                completion({ role: "assistant", content: r.say ?? null, tool_calls: calls }, "tool_calls"),
              ),
            );
          return;
        }
        // Tool-call deltas: the id and name first, then the arguments in pieces.
        const events: unknown[] = [chunk({ role: "assistant", content: r.say ?? null })];
        calls.forEach((c, i) => {
          events.push(
            chunk({
              tool_calls: [
                { index: i, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } },
              ],
            }),
          );
          const a = c.function.arguments;
          const mid = Math.ceil(a.length / 2);
          for (const piece of [a.slice(0, mid), a.slice(mid)])
            if (piece) events.push(chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }));
        });
        events.push(chunk({}, "tool_calls"));
        sse(res, events);
        return;
      }
      if (!stream) {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(completion({ role: "assistant", content: r.say }, "stop")));
        return;
      }
      sse(res, [
        chunk({ role: "assistant", content: "" }),
        ...words(r.say).map((w) => chunk({ content: w })),
        chunk({}, "stop"),
      ]);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    close: () =>
      new Promise<void>((r) => {
        for (const h of hanging) h.socket?.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---------------------------------------------------------------- the tracer plugin

export const TRACED_HOOKS = [
  "on_session_start",
  "pre_llm_call",
  "pre_api_request",
  "post_api_request",
  "api_request_error",
  "transform_api_error_classification",
  "on_stream_start",
  "on_stream_delta",
  "on_stream_end",
  "pre_tool_call",
  "transform_terminal_output",
  "post_tool_call",
  "transform_tool_result",
  "transform_llm_output",
  "post_llm_call",
  "on_session_end",
  "pre_approval_request",
  "post_approval_response",
  "pre_auxiliary_call",
  "post_auxiliary_call",
  "pre_command",
] as const;

export interface TraceEvent {
  ev: string;
  [k: string]: unknown;
}

/**
 * A plugin (key `tracer`) that appends one JSON line per hook and middleware call to the file
 * named by its setting `trace_file`, with a payload summary. Settings (plugins.entries.tracer.settings):
 * `block_tool` (pre_tool_call blocks that tool), `context` (pre_llm_call returns it).
 */
export function writeTracer(pluginsDir: string): string {
  const dir = join(pluginsDir, "tracer");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "plugin.yaml"),
    `name: tracer\nversion: "1"\nhooks: [${TRACED_HOOKS.join(", ")}]\nprovides_middleware: [llm_request, ` +
      "llm_execution, tool_request, tool_execution]\n",
  );
  writeFileSync(
    join(dir, "index.js"),
    `import { appendFileSync } from "node:fs";
export function register(ctx) {
  const file = ` +
      `ctx.get_config("trace_file");
  const rec = (ev, data = {}) => appendFileSync(file, JSON.stringify({ ` +
      `ev, ...data }) + "\\n");
  const pick = (p, keys) => Object.fromEntries(keys.filter((k) => k in ` +
      `p).map((k) => [k, p[k]]));
  const summaries = {
    on_session_start: ["session_id", "model", ` +
      `"platform"],
    pre_llm_call: ["session_id", "turn_id", "user_message", "is_first_turn"],
    ` +
      `pre_api_request: ["api_request_id", "retry_count", "middleware_trace", "model", "provider", ` +
      `"message_count", "tool_count", "api_call_count"],
    post_api_request: ["api_request_id", ` +
      `"finish_reason", "assistant_tool_call_count", "response_model"],
    api_request_error: ` +
      `["api_request_id", "retry_count", "retryable", "reason", "status_code", "error"],
    ` +
      `transform_api_error_classification: ["status_code", "error_type", "error_message"],
    ` +
      `on_stream_start: ["iteration"],
    on_stream_delta: ["delta", "kind"],
    on_stream_end: ` +
      `["final_text", "finished", "error"],
    pre_tool_call: ["tool_name", "args", "tool_call_id", ` +
      `"middleware_trace"],
    transform_terminal_output: ["command", "output", "returncode"],
    ` +
      `post_tool_call: ["tool_name", "args", "result", "status", "error_type", "error_message", "duration_ms", ` +
      `"middleware_trace", "tool_call_id"],
    transform_tool_result: ["tool_name", "result", "status"],
    ` +
      `transform_llm_output: ["response_text"],
    post_llm_call: ["assistant_response", "user_message"],
    ` +
      `on_session_end: ["completed", "failed", "interrupted", "turn_exit_reason"],
    pre_approval_request: ` +
      `["command", "description", "surface", "request_id", "request_digest", "pattern_keys"],
    ` +
      `post_approval_response: ["choice", "surface", "decided_by"],
    pre_auxiliary_call: ["aux_task", ` +
      `"model"],
    post_auxiliary_call: ["error", "error_type"],
    pre_command: ["command", "args_raw"],
  ` +
      `};
  for (const [name, keys] of Object.entries(summaries)) {
    ctx.register_hook(name, (p) => {
      ` +
      `rec("hook:" + name, { ...pick(p, keys), schema: p.telemetry_schema_version });
      if (name === ` +
      `"pre_tool_call" && p.tool_name === ctx.get_config("block_tool")) return { action: "block", message: ` +
      `"tracer blocks " + p.tool_name };
      if (name === "pre_llm_call" && ctx.get_config("context")) ` +
      `return { context: ctx.get_config("context") };
      return null;
    });
  }
  ` +
      `ctx.register_middleware("llm_request", (kw) => {
    rec("mw:llm_request", { has_request: !!kw.request, ` +
      "mw_schema: kw.middleware_schema_version, extra_body: kw.request.extra_body ?? null, api_request_id: " +
      `kw.api_request_id });
    return null;
  });
  ctx.register_middleware("llm_execution", async (kw) => ` +
      `{
    rec("mw:llm_execution:enter");
    try {
      const r = await kw.next_call(kw.request);
      ` +
      `rec("mw:llm_execution:exit");
      return r;
    } catch (e) {
      rec("mw:llm_execution:error", { ` +
      `message: String(e && e.message) });
      throw e;
    }
  });
  ` +
      `ctx.register_middleware("tool_request", (kw) => {
    rec("mw:tool_request", { tool_name: kw.tool_name, ` +
      `args: kw.args });
    return null;
  });
  ctx.register_middleware("tool_execution", async (kw) => ` +
      `{
    rec("mw:tool_execution:enter", { tool_name: kw.tool_name, args: kw.args });
    const r = await ` +
      `kw.next_call(kw.args);
    rec("mw:tool_execution:exit", { tool_name: kw.tool_name });
    return r;
  ` +
      `});
}
`,
  );
  return dir;
}

export function readTrace(file: string): TraceEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TraceEvent);
}

/** Event names without the streaming observers (asserted separately: they are delivered off the token path). */
export function names(trace: readonly TraceEvent[], opts: { streams?: boolean } = {}): string[] {
  return trace.map((t) => t.ev).filter((e) => opts.streams || !e.startsWith("hook:on_stream_"));
}

// ---------------------------------------------------------------- the seed's lists

/** One provider attempt, as the middleware seed orders it (tracer view). */
export const LLM_CALL = [
  "mw:llm_request",
  "hook:pre_api_request",
  "mw:llm_execution:enter",
  "mw:llm_execution:exit",
  "hook:post_api_request",
];

/** One tool call, as the middleware seed orders it (tracer view); terminal adds transform_terminal_output inside the
 * execution. */
export const TOOL_CALL = (terminal: boolean) => [
  "mw:tool_request",
  "hook:pre_tool_call",
  "mw:tool_execution:enter",
  ...(terminal ? ["hook:transform_terminal_output"] : []),
  "mw:tool_execution:exit",
  "hook:post_tool_call",
  "hook:transform_tool_result",
];

export const TURN_START = ["hook:on_session_start", "hook:pre_llm_call"];
export const TURN_END = ["hook:transform_llm_output", "hook:post_llm_call", "hook:on_session_end"];

// ---------------------------------------------------------------- homes and processes

export interface AgentHome {
  home: string;
  trace: string;
  bundled: string;
}

/**
 * A home with the tracer enabled (plus `enabled` extra plugin keys) and a config.yaml built from
 * `config` lines appended under the given sections.
 */
export function agentHome(
  root: string,
  opts: { enabled?: string[]; settings?: Record<string, unknown>; extraYaml?: string; bundled?: string } = {},
): AgentHome {
  const home = join(root, "home");
  const trace = join(root, "trace.jsonl");
  writeTracer(join(home, "plugins"));
  const settings = { trace_file: trace, ...(opts.settings ?? {}) };
  const yamlSettings = Object.entries(settings)
    .map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`)
    .join("\n");
  writeText(
    join(home, "config.yaml"),
    `plugins:
  enabled: [${["tracer", ...(opts.enabled ?? [])].join(", ")}]
  entries:
    tracer:
      settings:
${yamlSettings}
agent:
  retry_backoff_ms: 10
${opts.extraYaml ?? ""}`,
  );
  const bundled = opts.bundled ?? join(root, "bundled-empty");
  mkdirSync(bundled, { recursive: true });
  return { home, trace, bundled };
}

/** Wait until `pred` holds (polling), or fail after `ms`. */
export async function waitFor(pred: () => boolean, ms = 15_000, what = "condition"): Promise<void> {
  const until = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Pino JSON log lines of a run's stderr. */
export function logLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
}

/** What `hermes chat --query … --json` prints. */
export interface ChatJson {
  answer: string | null;
  exit_reason: string;
  completed: boolean;
  failed: boolean;
  interrupted: boolean;
  api_calls: number;
  tool_calls: Array<{
    tool_name: string;
    status: string;
    error_type: string | null;
    args: Record<string, unknown>;
    result: string;
    middleware_trace: unknown[];
  }>;
  error: { code: string; message: string } | null;
}
