import type { ErrorCode } from "../../core/errors.js";
import { redactText, redactValue } from "../../core/redact.js";

/** What went wrong with one provider attempt, in words the error classifier acts on. */
export type ProviderErrorKind =
  | "http"
  | "timeout"
  | "network"
  | "malformed"
  | "stream"
  | "interrupted"
  | "script"
  | "no_key";

const CODES: Record<ProviderErrorKind, ErrorCode> = {
  http: "E_PROVIDER_HTTP",
  timeout: "E_PROVIDER_TIMEOUT",
  network: "E_PROVIDER_NETWORK",
  malformed: "E_PROVIDER_MALFORMED",
  stream: "E_PROVIDER_STREAM",
  interrupted: "E_AGENT_INTERRUPTED",
  script: "E_AGENT_SCRIPT",
  no_key: "E_PROVIDER_NO_KEY",
};

/** A failed provider attempt. Downstream code (middleware, classifier, hooks) reads these fields. */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly status_code: number | null;
  readonly error_code: string | null;
  readonly body: unknown;
  /** How long the server asked to wait before the next attempt (its Retry-After header), if it said. */
  readonly retry_after_ms: number | null;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    init: {
      status_code?: number | null;
      error_code?: string | null;
      body?: unknown;
      cause?: unknown;
      retry_after_ms?: number | null;
    } = {},
  ) {
    // Servers echo request headers in error bodies: the key must not reach stderr, logs or hooks.
    super(redactText(message), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "ProviderError";
    this.kind = kind;
    this.status_code = init.status_code ?? null;
    this.error_code = init.error_code ?? null;
    this.body = redactValue(init.body);
    this.retry_after_ms = init.retry_after_ms ?? null;
  }

  get code(): ErrorCode {
    return CODES[this.kind];
  }
}

export function isProviderError(e: unknown): e is ProviderError {
  return e instanceof ProviderError;
}

/** The error type name for hook payloads (`error.type`). */
export function errorTypeName(e: unknown): string {
  if (e instanceof ProviderError) return `ProviderError.${e.kind}`;
  if (e instanceof Error) return e.name || "Error";
  return typeof e;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A Retry-After header in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or
 * unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  const v = value?.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
