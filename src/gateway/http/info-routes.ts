import type { FastifyInstance } from "fastify";
import type { GatewayService } from "../service.js";
import { sessionIdHeader } from "./chat-request.js";
import { ApiError } from "./openai-error.js";

/** Models, health, and sessions (history, reset). */
export function infoRoutes(app: FastifyInstance, service: GatewayService): void {
  const started = Math.floor(Date.now() / 1000);
  app.get("/v1/models", async () => {
    const id = service.settings.modelName;
    return {
      object: "list",
      data: [{ id, object: "model", created: started, owned_by: "hermes", root: id, parent: null }],
    };
  });
  const ok = async () => ({ status: "ok", platform: "hermes-agent" });
  app.get("/health", ok);
  app.get("/v1/health", ok);
  app.get("/health/detailed", async () => service.health());

  app.get<{ Params: { id: string } }>("/v1/sessions/:id", async (req) => {
    const id = sessionIdHeader(req.params.id, "the session id in the path")!;
    const s = service.session(id);
    if (!s) throw new ApiError(404, `unknown session id '${id}'`, { code: "session_not_found" });
    return { object: "hermes.session", ...s };
  });

  app.post<{ Params: { id: string } }>("/v1/sessions/:id/reset", async (req) => {
    const id = sessionIdHeader(req.params.id, "the session id in the path")!;
    await service.reset(id);
    return { object: "hermes.session", session_id: id, reset: true };
  });
}
