import { availableParallelism } from "node:os";

/** `gateway.*` of config.yaml as hermes serve uses it. */
export interface GatewaySettings {
  host: string;
  port: number;
  /** Turns running at once across sessions (`gateway.max_concurrent_turns`, default: the core count). */
  maxConcurrent: number;
  /** Turns waiting before new ones get 429 (`gateway.max_queued_turns`, default 64). */
  maxQueued: number;
  /** A session idle this long is finalized (`gateway.session_idle_seconds`, default 1800). */
  sessionIdleSeconds: number;
  /** How long a stop waits for turns in flight (`gateway.shutdown_grace_seconds`, default 30). */
  shutdownGraceSeconds: number;
  /** The model name clients see (`gateway.api_server.model_name`, default `hermes-agent`). */
  modelName: string;
  /** Browser origins allowed to call the API (`gateway.api_server.cors_origins`); none by default. */
  corsOrigins: readonly string[];
  /** Seconds without a write before an SSE stream sends a keep-alive (`gateway.api_server.keepalive_seconds`). */
  keepAliveSeconds: number;
}

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function int(v: unknown, d: number, min: number): number {
  return typeof v === "number" && Number.isInteger(v) && v >= min ? v : d;
}

/** Defaults for what config.yaml leaves out; config.schema.json refuses wrong types before this runs. */
export function gatewaySettings(config: Record<string, unknown>): GatewaySettings {
  const g = obj(config.gateway);
  const api = obj(g.api_server);
  const cors = api.cors_origins;
  return {
    host: typeof api.host === "string" && api.host.trim() ? api.host.trim() : "127.0.0.1",
    port: int(api.port, 8642, 0),
    maxConcurrent: int(g.max_concurrent_turns, Math.max(1, availableParallelism()), 1),
    maxQueued: int(g.max_queued_turns, 64, 0),
    sessionIdleSeconds: int(g.session_idle_seconds, 1800, 1),
    shutdownGraceSeconds: int(g.shutdown_grace_seconds, 30, 0),
    modelName: typeof api.model_name === "string" && api.model_name.trim() ? api.model_name.trim() : "hermes-agent",
    keepAliveSeconds:
      typeof api.keepalive_seconds === "number" && api.keepalive_seconds > 0 ? api.keepalive_seconds : 30,
    corsOrigins: Array.isArray(cors)
      ? cors.filter((o): o is string => typeof o === "string")
      : typeof cors === "string"
        ? cors
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : [],
  };
}

/** Loopback addresses: the only ones hermes serve listens on without an API key. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}
