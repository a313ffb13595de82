import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { TurnResult } from "../../agent/agent.js";
import type { StreamEvent } from "../../agent/types.js";
import type { Run, RunEvent } from "../runs.js";
import type { GatewayService, TurnRequest } from "../service.js";
import { parseChatMessages, sessionIdHeader, sessionKeyHeader } from "./chat-request.js";
import { ApiError, errorBody } from "./openai-error.js";
import { SseStream } from "./sse.js";

interface ChatBody {
  messages: unknown[];
  model?: string;
  stream?: boolean;
}

const BODY_SCHEMA = {
  type: "object",
  required: ["messages"],
  properties: {
    messages: { type: "array", minItems: 1 },
    model: { type: "string" },
    stream: { type: "boolean" },
  },
} as const;

function completionId(): string {
  return `chatcmpl-${randomBytes(15).toString("hex")}`;
}

function finishReason(r: TurnResult | undefined): "stop" | "length" | "error" {
  if (!r) return "error";
  if (r.completed) return "stop";
  return r.exit_reason === "max_turns" ? "length" : "error";
}

/** What the response says beyond OpenAI's fields when the turn did not complete. */
function hermesOutcome(r: TurnResult | undefined, run: Run) {
  return {
    run_id: run.run_id,
    completed: r?.completed ?? false,
    interrupted: r?.interrupted ?? false,
    exit_reason: r?.exit_reason ?? "failed",
    error: r?.error ?? (run.error ? { code: "E_INTERNAL", message: run.error } : null),
  };
}

/** `/reset` as a message: the session's history is forgotten (on_session_finalize, on_session_reset). */
async function resetReply(service: GatewayService, sessionId: string | undefined) {
  if (!sessionId)
    throw new ApiError(400, "/reset needs X-Hermes-Session-Id: the session to reset", { code: "session_required" });
  await service.reset(sessionId);
  return "Session reset.";
}

function sessionHeaders(sessionId: string, run?: Run): Record<string, string> {
  return { "x-hermes-session-id": sessionId, ...(run ? { "x-hermes-run-id": run.run_id } : {}) };
}

/** POST /v1/chat/completions: one agent turn per request, streamed (SSE) or as one JSON object. */
export function chatCompletionRoutes(
  app: FastifyInstance,
  service: GatewayService,
  keepAliveMs: number,
  deriveSecret: Uint8Array,
): void {
  app.post<{ Body: ChatBody }>("/v1/chat/completions", { schema: { body: BODY_SCHEMA } }, async (req, reply) => {
    const sessionId = sessionIdHeader(req.headers["x-hermes-session-id"]);
    const sessionKey = sessionKeyHeader(req.headers["x-hermes-session-key"]);
    const parsed = parseChatMessages(req.body.messages, deriveSecret);
    const model = req.body.model ?? service.settings.modelName;
    const base = { id: completionId(), created: Math.floor(Date.now() / 1000), model };
    if (parsed.text.trim() === "/reset") {
      const text = await resetReply(service, sessionId);
      return reply.headers(sessionHeaders(sessionId!)).send({
        ...base,
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      });
    }
    const turn: TurnRequest = {
      text: parsed.text,
      model,
      ...(sessionId ? { sessionId } : { derivedId: parsed.derivedId, history: parsed.history }),
      ...(sessionKey ? { sessionKey } : {}),
    };
    if (req.body.stream === true) {
      const progress = /^(1|true|yes)$/i.test(String(req.headers["x-hermes-tool-progress"] ?? ""));
      return streamTurn(service, reply, turn, { base, keepAliveMs, progress });
    }
    const { run, session_id, result } = service.startTurn(turn);
    const r = await result;
    reply.headers(sessionHeaders(session_id, run));
    if (r?.answer == null) {
      const outcome = hermesOutcome(r, run);
      return reply.code(502).send({
        ...errorBody(outcome.error?.message ?? "the turn did not complete", {
          type: "server_error",
          code: r?.interrupted ? "interrupted" : "agent_incomplete",
        }),
        hermes: outcome,
      });
    }
    return reply.send({
      ...base,
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: r.answer }, finish_reason: finishReason(r) }],
      hermes: hermesOutcome(r, run),
    });
  });
}

/** SSE: a role chunk, content chunks as the model streams, tool progress events, a final chunk, [DONE]. */
async function streamTurn(
  service: GatewayService,
  reply: FastifyReply,
  turn: TurnRequest,
  o: { base: { id: string; created: number; model: string }; keepAliveMs: number; progress: boolean },
): Promise<void> {
  const { base, keepAliveMs } = o;
  let sse: SseStream | undefined;
  let streamed = false;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const onStream = (ev: StreamEvent) => {
    if (ev.type !== "delta" || ev.kind !== "text" || !ev.text) return;
    streamed = true;
    sse?.send(chunk({ content: ev.text }));
  };
  // Refusals (unknown session, full queue) happen here, before any byte of the stream is written.
  const started = service.startTurn({ ...turn, onStream });
  const { run } = started;
  reply.hijack();
  sse = new SseStream(reply.raw, { ...sessionHeaders(started.session_id, run), ...corsOf(reply) }, keepAliveMs, () =>
    run.stop("the client disconnected"),
  );
  const s = sse;
  s.send(chunk({ role: "assistant" }));
  // Named events only on request: SDK clients (the openai package) hand them to code expecting chunks.
  const sub = run.subscribe((ev: RunEvent) => {
    if (!o.progress) return;
    if (ev.event === "tool.started")
      s.send({ tool: ev.tool, toolCallId: ev.tool_call_id, status: "running" }, "hermes.tool.progress");
    else if (ev.event === "tool.completed")
      s.send({ tool: ev.tool, status: ev.error ? "failed" : "completed" }, "hermes.tool.progress");
  });
  try {
    const r = await started.result;
    if (!streamed && r?.answer) s.send(chunk({ content: r.answer }));
    const finish = finishReason(r);
    s.send({ ...chunk({}, finish), ...(finish === "stop" ? {} : { hermes: hermesOutcome(r, run) }) });
  } catch (e) {
    service.log.error({ code: "E_INTERNAL" }, `streamed turn failed: ${(e as Error).message}`);
    s.send(chunk({}, "error"));
  } finally {
    sub.off();
    s.send("[DONE]");
    s.end();
  }
}

/** Headers the CORS hook set on the reply, which a hijacked response must repeat. */
function corsOf(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (typeof v === "string") out[k] = v;
  return out;
}
