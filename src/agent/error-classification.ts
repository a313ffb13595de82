import type { Logger } from "pino";
import type { FirstValid } from "../runtime/hooks.js";
import { errorMessage, errorTypeName, isProviderError } from "./providers/errors.js";

/**
 * Why a provider attempt failed, and what that means for the next step. Plugins steer this
 * through `transform_api_error_classification` by returning one of these reasons (any case).
 */
export const FAILOVER_REASONS = {
  auth: { retryable: false, should_fallback: true },
  auth_permanent: { retryable: false, should_fallback: true },
  billing: { retryable: false, should_fallback: true },
  rate_limit: { retryable: true, should_fallback: true },
  overloaded: { retryable: true, should_fallback: true },
  server_error: { retryable: true, should_fallback: true },
  timeout: { retryable: true, should_fallback: true },
  network: { retryable: true, should_fallback: true },
  stream_interrupted: { retryable: true, should_fallback: false },
  malformed_response: { retryable: true, should_fallback: true },
  context_overflow: { retryable: false, should_fallback: false },
  payload_too_large: { retryable: false, should_fallback: false },
  model_not_found: { retryable: false, should_fallback: true },
  format_error: { retryable: false, should_fallback: false },
  unknown: { retryable: false, should_fallback: false },
} as const satisfies Record<string, { retryable: boolean; should_fallback: boolean }>;

export type FailoverReason = keyof typeof FAILOVER_REASONS;

export interface Classification {
  reason: FailoverReason;
  retryable: boolean;
  should_fallback: boolean;
  should_compress: boolean;
  should_rotate_credential: boolean;
  message?: string;
  error_context?: Record<string, unknown>;
  /** "builtin" or "plugin". */
  classified_by: string;
}

function withDefaults(reason: FailoverReason, extra: Partial<Classification> = {}): Classification {
  const d = FAILOVER_REASONS[reason];
  return {
    reason,
    retryable: d.retryable,
    should_fallback: d.should_fallback,
    should_compress: reason === "context_overflow" || reason === "payload_too_large",
    should_rotate_credential: reason === "auth",
    classified_by: "builtin",
    ...extra,
  };
}

/** The built-in classifier: HTTP status first, then what kind of failure the provider named. */
export function classifyBuiltin(e: unknown): Classification {
  if (!isProviderError(e)) return withDefaults("unknown");
  switch (e.kind) {
    case "timeout":
      return withDefaults("timeout");
    case "network":
      return withDefaults("network");
    case "stream":
      return withDefaults("stream_interrupted");
    case "malformed":
      return withDefaults("malformed_response");
    case "script":
    case "interrupted":
      return withDefaults("unknown");
    case "no_key":
      return withDefaults("auth_permanent");
    case "http": {
      const s = e.status_code ?? 0;
      const text = `${e.message} ${e.error_code ?? ""}`.toLowerCase();
      if (s === 401) return withDefaults("auth");
      if (s === 403) return withDefaults("auth_permanent");
      if (s === 402) return withDefaults("billing");
      if (s === 404) return withDefaults("model_not_found");
      if (s === 408) return withDefaults("timeout");
      if (s === 413) return withDefaults("payload_too_large");
      if (s === 429) return withDefaults("rate_limit");
      if (s === 503 || s === 529) return withDefaults("overloaded");
      if (s >= 500) return withDefaults("server_error");
      if (s === 400 && /context|too many tokens|maximum.*length/.test(text)) return withDefaults("context_overflow");
      return withDefaults("format_error");
    }
  }
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Sanitise one hook result: a valid reason, booleans only where given. */
/** What a plugin's classification may set; the built-in classifier fills the rest. */
export type PluginClassification = Partial<Classification> & { reason: FailoverReason };

export function sanitizeClassification(r: unknown): PluginClassification | undefined {
  if (!isMapping(r) || typeof r.reason !== "string") return undefined;
  const reason = r.reason.trim().toLowerCase();
  if (!Object.hasOwn(FAILOVER_REASONS, reason)) return undefined;
  const out: Partial<Classification> & { reason: FailoverReason } = { reason: reason as FailoverReason };
  for (const k of ["retryable", "should_compress", "should_rotate_credential", "should_fallback"] as const)
    if (k in r) out[k] = Boolean(r[k]);
  if (typeof r.message === "string" && r.message.trim()) out.message = r.message.trim().slice(0, 500);
  if (isMapping(r.error_context)) out.error_context = r.error_context;
  return out;
}

/** The payload of `transform_api_error_classification`. */
export function classificationPayload(
  e: unknown,
  ctx: { provider: string; model: string; approx_tokens: number; num_messages: number },
): Record<string, unknown> {
  const pe = isProviderError(e) ? e : undefined;
  return {
    provider: ctx.provider,
    model: ctx.model,
    status_code: pe?.status_code ?? null,
    error_type: errorTypeName(e),
    error_code: pe?.error_code ?? null,
    error_message: errorMessage(e),
    error_body: isMapping(pe?.body) ? pe!.body : {},
    error: errorMessage(e),
    approx_tokens: ctx.approx_tokens,
    context_length: null,
    num_messages: ctx.num_messages,
  };
}

/**
 * Plugins first (all run, the first valid result wins, later valid ones are reported as skipped),
 * then the built-in classifier fills whatever the plugin left out.
 */
export function combineClassification(e: unknown, fold: FirstValid<PluginClassification>, log: Logger): Classification {
  if (fold.skipped > 0)
    log.warn(
      `transform_api_error_classification: used the first valid classification and skipped ${fold.skipped} ` +
        "valid classification(s) from later callbacks",
    );
  const winner = fold.value;
  if (!winner) return classifyBuiltin(e);
  return { ...withDefaults(winner.reason), ...winner, classified_by: "plugin" };
}
