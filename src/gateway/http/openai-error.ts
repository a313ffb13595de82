import type { FastifyReply } from "fastify";

export type OpenAiErrorType = "invalid_request_error" | "authentication_error" | "rate_limit_error" | "server_error";

export interface OpenAiErrorInit {
  type?: OpenAiErrorType;
  code?: string | null;
  param?: string | null;
}

/** The body every refusal of the API has: OpenAI's `{error: {message, type, code, param}}`. */
export function errorBody(message: string, init: OpenAiErrorInit = {}) {
  return {
    error: {
      message,
      type: init.type ?? "invalid_request_error",
      code: init.code ?? null,
      param: init.param ?? null,
    },
  };
}

export function sendError(reply: FastifyReply, status: number, message: string, init: OpenAiErrorInit = {}) {
  return reply.code(status).send(errorBody(message, init));
}

/** A request the route refuses, thrown from a handler and rendered by the server's error handler. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly init: OpenAiErrorInit = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
