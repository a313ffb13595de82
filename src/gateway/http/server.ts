import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { QueueFullError } from "../turn-scheduler.js";
import { SessionNotFoundError, StoppingError, type GatewayService } from "../service.js";
import { chatCompletionRoutes } from "./chat-completions.js";
import { infoRoutes } from "./info-routes.js";
import { ApiError, errorBody, sendError } from "./openai-error.js";
import { runRoutes } from "./run-routes.js";

/** Request bodies larger than this are refused with 413 before they are parsed. */
export const MAX_BODY_BYTES = 10_000_000;

export interface ServerOptions {
  /** API_SERVER_KEY: required as `Authorization: Bearer <key>` on every route but /health. */
  apiKey?: string;
  /** Seconds without a write before an SSE stream sends a keep-alive comment. */
  keepAliveSeconds?: number;
  /** The key session ids of resent conversations are derived with (random per process when absent). */
  deriveSecret?: Uint8Array;
}

const OPEN_ROUTES = new Set(["/health", "/v1/health"]);

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
function sameKey(given: string, key: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(key).digest();
  return timingSafeEqual(a, b);
}

function checkAuth(req: FastifyRequest, reply: FastifyReply, key: string | undefined, done: () => void): void {
  const path = req.url.split("?")[0] ?? "";
  if (!key || OPEN_ROUTES.has(path) || req.method === "OPTIONS") return done();
  const header = req.headers.authorization ?? "";
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (m && sameKey(m[1]!.trim(), key)) return done();
  void sendError(reply, 401, "missing or invalid API key: send Authorization: Bearer <API_SERVER_KEY>", {
    type: "authentication_error",
    code: "invalid_api_key",
  });
}

/** Browsers: refused unless their origin is listed in gateway.api_server.cors_origins (`*` allows all). */
function checkCors(req: FastifyRequest, reply: FastifyReply, origins: readonly string[], done: () => void): void {
  const origin = req.headers.origin;
  if (!origin) return done();
  const allowed = origins.includes("*") || origins.includes(origin);
  if (!allowed) {
    void sendError(reply, 403, `origin ${origin} is not allowed: list it in gateway.api_server.cors_origins`, {
      code: "origin_not_allowed",
    });
    return;
  }
  reply.header("access-control-allow-origin", origins.includes("*") ? "*" : origin);
  reply.header("vary", "Origin");
  reply.header("access-control-expose-headers", "X-Hermes-Session-Id, X-Hermes-Run-Id");
  if (req.method === "OPTIONS") {
    void reply
      .code(204)
      .header("access-control-allow-methods", "GET, POST, OPTIONS")
      .header("access-control-allow-headers", "Authorization, Content-Type, X-Hermes-Session-Id, X-Hermes-Session-Key")
      .header("access-control-max-age", "600")
      .send();
    return;
  }
  done();
}

/** Every failure becomes an OpenAI-style error with a 4xx where the client can fix it; never a stack. */
function renderError(service: GatewayService) {
  return (err: FastifyError | Error, _req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ApiError) {
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
      return sendError(reply, err.status, err.message, err.init);
    }
    if (err instanceof QueueFullError)
      return reply
        .code(429)
        .header("retry-after", String(err.retryAfterSeconds))
        .send(errorBody(err.message, { type: "rate_limit_error", code: "rate_limit_exceeded" }));
    if (err instanceof SessionNotFoundError) return sendError(reply, 404, err.message, { code: "session_not_found" });
    if (err instanceof StoppingError)
      return sendError(reply, 503, err.message, { type: "server_error", code: "stopping" });
    const f = err as FastifyError;
    if (f.code === "FST_ERR_CTP_BODY_TOO_LARGE")
      return sendError(reply, 413, `the request body is larger than ${MAX_BODY_BYTES} bytes`, {
        code: "body_too_large",
      });
    if (f.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE")
      return sendError(reply, 415, "send the body as application/json", { code: "unsupported_media_type" });
    if (f.validation)
      return sendError(reply, 400, `invalid request: ${f.message}`, { code: "invalid_request", param: null });
    if (typeof f.statusCode === "number" && f.statusCode >= 400 && f.statusCode < 500)
      return sendError(reply, f.statusCode, `invalid request: ${f.message}`, {
        code:
          f.code === "FST_ERR_CTP_INVALID_JSON_BODY" || f instanceof SyntaxError ? "invalid_json" : "invalid_request",
      });
    service.log.error({ code: "E_INTERNAL" }, `request failed: ${err.message}`);
    return sendError(reply, 500, "internal error: the request failed on the server (see its log)", {
      type: "server_error",
      code: "internal_error",
    });
  };
}

/** The HTTP face of the service: OpenAI-compatible routes, runs, health; auth, CORS and limits first. */
export function buildServer(service: GatewayService, opts: ServerOptions = {}): FastifyInstance {
  const app = Fastify({
    loggerInstance: service.log.child({ component: "serve" }) as FastifyBaseLogger,
    bodyLimit: MAX_BODY_BYTES,
    // Session and run ids travel in paths: no case folding, no trailing-slash surprises.
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
    // Fastify's default coerces types ("x" becomes ["x"], "true" becomes true): a body of the wrong
    // type is refused as it was sent instead of failing later with a message about an element it never had.
    ajv: { customOptions: { coerceTypes: false } },
  });
  // Fastify parses text/plain bodies by default; only JSON is accepted (415 otherwise).
  app.removeContentTypeParser("text/plain");
  // An empty JSON body is no body (clients send the header on POST /stop too); the rest is Fastify's parser.
  const json = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) =>
    body === "" ? done(null, undefined) : json(req, body as string, done),
  );
  app.addHook("onRequest", (req, reply, done) => {
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
    checkCors(req, reply, service.settings.corsOrigins, () => checkAuth(req, reply, opts.apiKey, done));
  });
  app.setErrorHandler(renderError(service));
  app.setNotFoundHandler((req, reply) =>
    sendError(reply, 404, `no route ${req.method} ${req.url.split("?")[0]}`, { code: "not_found" }),
  );
  const keepAliveMs = (opts.keepAliveSeconds ?? 30) * 1000;
  chatCompletionRoutes(app, service, keepAliveMs, opts.deriveSecret ?? randomBytes(32));
  runRoutes(app, service, keepAliveMs);
  infoRoutes(app, service);
  return app;
}
