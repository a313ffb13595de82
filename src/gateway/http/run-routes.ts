import type { FastifyInstance } from "fastify";
import { ApprovalAnswerError, type Run, type RunEvent } from "../runs.js";
import type { GatewayService } from "../service.js";
import { contentText, sessionIdHeader, sessionKeyHeader } from "./chat-request.js";
import { ApiError } from "./openai-error.js";
import { SseStream } from "./sse.js";

interface RunBody {
  input: unknown;
  session_id?: string;
  model?: string;
}

const RUN_SCHEMA = {
  type: "object",
  required: ["input"],
  properties: {
    input: { anyOf: [{ type: "string" }, { type: "array" }] },
    session_id: { type: "string" },
    model: { type: "string" },
  },
} as const;

const APPROVAL_SCHEMA = {
  type: "object",
  required: ["request_id", "digest", "choice"],
  properties: { request_id: { type: "string" }, digest: { type: "string" }, choice: { type: "string" } },
} as const;

/** `input`: a string, or messages whose last one's content is the input. */
function runInput(input: unknown): string {
  if (typeof input === "string") {
    if (!input.trim()) throw new ApiError(400, "input must not be empty", { param: "input", code: "empty_input" });
    return input;
  }
  const list = input as unknown[];
  const last = list[list.length - 1] as { content?: unknown } | undefined;
  const text = contentText(
    typeof last === "string" ? last : last?.content,
    `input[${Math.max(0, list.length - 1)}].content`,
  );
  if (!text.trim()) throw new ApiError(400, "input has no text", { param: "input", code: "empty_input" });
  return text;
}

function findRun(service: GatewayService, id: string): Run {
  const run = service.runs.get(id);
  if (!run)
    throw new ApiError(404, `unknown run id '${id}' (finished runs are kept for an hour)`, { code: "run_not_found" });
  return run;
}

/** POST /v1/runs, GET /v1/runs/{id}, its events (SSE), its approval and stop. */
export function runRoutes(app: FastifyInstance, service: GatewayService, keepAliveMs: number): void {
  app.post<{ Body: RunBody }>("/v1/runs", { schema: { body: RUN_SCHEMA } }, async (req, reply) => {
    const sessionId = req.body.session_id ?? sessionIdHeader(req.headers["x-hermes-session-id"]);
    if (req.body.session_id !== undefined) sessionIdHeader(req.body.session_id, "session_id");
    const sessionKey = sessionKeyHeader(req.headers["x-hermes-session-key"]);
    const { run, session_id, result } = service.startTurn({
      text: runInput(req.body.input),
      model: req.body.model ?? service.settings.modelName,
      ...(sessionId ? { sessionId } : {}),
      ...(sessionKey ? { sessionKey } : {}),
    });
    result.catch(() => undefined);
    return reply
      .code(202)
      .header("x-hermes-session-id", session_id)
      .send({ object: "hermes.run", run_id: run.run_id, status: run.status, session_id });
  });

  app.get<{ Params: { id: string } }>("/v1/runs/:id", async (req) => findRun(service, req.params.id).toJSON());

  app.get<{ Params: { id: string }; Querystring: { after?: string } }>("/v1/runs/:id/events", async (req, reply) => {
    const run = findRun(service, req.params.id);
    const after = Number.parseInt(req.query.after ?? "0", 10);
    reply.hijack();
    const sse = new SseStream(reply.raw, {}, keepAliveMs, () => sub.off());
    const close = () => {
      sub.off();
      sse.comment("stream closed");
      sse.end();
    };
    const sub = run.subscribe(
      (ev: RunEvent) => {
        sse.send(ev);
        if (run.finished) queueMicrotask(close);
      },
      Number.isFinite(after) ? after : 0,
    );
    if (sub.dropped) sse.send({ event: "events_dropped", run_id: run.run_id, count: sub.dropped });
    for (const ev of sub.backlog) sse.send(ev);
    if (run.finished) close();
  });

  app.post<{ Params: { id: string }; Body: { request_id: string; digest: string; choice: string } }>(
    "/v1/runs/:id/approval",
    { schema: { body: APPROVAL_SCHEMA } },
    async (req) => {
      const run = findRun(service, req.params.id);
      try {
        const choice = run.answer(req.body);
        return { object: "hermes.run.approval_response", run_id: run.run_id, request_id: req.body.request_id, choice };
      } catch (e) {
        if (!(e instanceof ApprovalAnswerError)) throw e;
        throw new ApiError(e.code === "invalid_approval_choice" ? 400 : 409, e.message, { code: e.code });
      }
    },
  );

  app.post<{ Params: { id: string } }>("/v1/runs/:id/stop", async (req) => {
    const run = findRun(service, req.params.id);
    if (run.finished)
      throw new ApiError(409, `run ${run.run_id} has already finished (${run.status})`, { code: "run_not_active" });
    run.stop();
    return { object: "hermes.run", run_id: run.run_id, status: run.status };
  });
}
