import type { Logger } from "pino";
import type { HookBus } from "../runtime/hooks.js";
import { RequiredMiddlewareError, type MiddlewareEngine, type TraceEntry } from "../runtime/middleware.js";
import {
  classificationPayload,
  combineClassification,
  sanitizeClassification,
  type Classification,
} from "./error-classification.js";
import type { HookSite } from "./hook-site.js";
import { newId } from "./ids.js";
import { errorMessage, errorTypeName, isProviderError, ProviderError } from "./providers/errors.js";
import { checkResponse } from "./providers/shape.js";
import { brief, sanitize } from "./sanitize.js";
import { StreamObservers } from "./stream-observers.js";
import type { TimelineSink } from "./timeline.js";
import type { ChatMessage, LlmRequest, LlmResponse, Provider, StreamEvent, ToolDefinition } from "./types.js";

export interface RetryPolicy {
  maxRetries: number;
  backoffMs: number;
}

/** What one model call (all its attempts) needs from the turn. */
export interface LlmCallContext {
  hooks: HookSite;
  hookBus: HookBus;
  middleware: MiddlewareEngine;
  log: Logger;
  emit: TimelineSink;
  signal: AbortSignal;
  /** The provider in use; a fallback replaces it for the rest of the call. */
  provider: { current: Provider; fallback?: () => Promise<Provider | undefined>; fellBack?: boolean };
  ids: { session_id: string; task_id: string; turn_id: string };
  platform: string;
  user_message: unknown;
  history: () => ChatMessage[];
  /** The conversation to send (system prompt first); read fresh for every attempt. */
  messages: () => ChatMessage[];
  tools: () => ToolDefinition[];
  retry: RetryPolicy;
  counters: { api_call_count: number };
  extraKwargs?: Partial<LlmRequest>;
  streamReasoning: boolean;
  /** Which iteration of the tool loop this call is (on_stream_* `iteration`). */
  iteration: number;
  /** Who the turn serves (`cli`, `gateway`): on_stream_* `surface`. */
  surface: string;
  /** Streamed text as it arrives, for a caller that relays it (hermes serve's SSE). */
  onStream?: (ev: StreamEvent) => void;
}

export interface LlmCallResult {
  response: LlmResponse;
  api_request_id: string;
  middleware_trace: TraceEntry[];
}

/** The turn was interrupted during a model call. */
export class InterruptedError extends Error {
  readonly code = "E_AGENT_INTERRUPTED";
  constructor(message = "interrupted") {
    super(message);
    this.name = "InterruptedError";
  }
}

/** The model call failed for good (after retries and fallback); the turn ends as failed. */
export class LlmCallFailed extends Error {
  constructor(
    override readonly cause: unknown,
    readonly classification: Classification,
    readonly code: string,
  ) {
    super(errorMessage(cause));
    this.name = "LlmCallFailed";
  }
}

/** The longest Retry-After honoured; a longer one ends the call (retrying sooner would only be refused again). */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Exponential backoff (capped at 30 s) with equal jitter, so clients that failed together do not
 * retry together; never sooner than the server's Retry-After.
 */
export function retryDelay(
  backoffMs: number,
  retry: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  const base = Math.min(backoffMs * 2 ** retry, 30_000);
  const jittered = Math.round(base / 2 + (random() * base) / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Provider kwargs from the current conversation (rebuilt for every attempt). */
export function buildKwargs(
  provider: Provider,
  messages: ChatMessage[],
  tools: ToolDefinition[],
  extra: Partial<LlmRequest> = {},
): LlmRequest {
  return {
    model: provider.model,
    messages: structuredClone(messages),
    ...(tools.length ? { tools: structuredClone(tools), tool_choice: "auto" } : {}),
    stream: provider.stream,
    ...structuredClone(extra),
  };
}

function requestStats(req: LlmRequest) {
  const messages = Array.isArray(req.messages) ? req.messages : [];
  const chars = JSON.stringify(messages).length;
  return {
    request_messages: sanitize(messages),
    message_count: messages.length,
    tool_count: Array.isArray(req.tools) ? req.tools.length : 0,
    approx_input_tokens: Math.ceil(chars / 4),
    request_char_count: chars,
    max_tokens: typeof req.max_tokens === "number" ? req.max_tokens : null,
  };
}

/**
 * One model call, in this order per attempt:
 * build the kwargs → `llm_request` middleware → `pre_api_request` (effective request and
 * middleware_trace) → `llm_execution` middleware around the real provider call (streamed events
 * queued for on_stream_* off the token path) → `post_api_request`, or on failure the
 * classification (`transform_api_error_classification` first, then the built-in classifier) and
 * `api_request_error`. A retry or fallback starts again from the kwargs, so `llm_request` runs
 * once per attempt.
 */
export async function callModel(c: LlmCallContext): Promise<LlmCallResult> {
  for (let retry = 0; ; retry++) {
    if (c.signal.aborted) throw new InterruptedError();
    const provider = c.provider.current;
    const api_request_id = newId("req");
    c.counters.api_call_count++;
    const api_call_count = c.counters.api_call_count;
    c.emit({
      type: "llm_attempt",
      api_call_count,
      retry_count: retry,
      api_request_id,
      provider: provider.name,
      model: provider.model,
    });
    const kwargs = buildKwargs(provider, c.messages(), c.tools(), c.extraKwargs);
    const mwContext = {
      ...c.ids,
      api_request_id,
      platform: c.platform,
      model: kwargs.model,
      provider: provider.name,
      base_url: provider.baseUrl,
      api_mode: provider.apiMode,
      api_call_count,
    };
    const { request, trace } = await applyRequestMiddleware(c, kwargs, mwContext);
    const started_at = Date.now() / 1000;
    const ids = {
      ...c.ids,
      api_request_id,
      platform: c.platform,
      model: request.model,
      provider: provider.name,
      base_url: provider.baseUrl,
      api_mode: provider.apiMode,
      api_call_count,
    };
    const sanitizedRequest = sanitize(request);
    await firePreApiRequest(c, ids, request, trace, retry, started_at, sanitizedRequest);
    const { response, failure } = await executeRequest(c, provider, request, kwargs, mwContext);
    const ended_at = Date.now() / 1000;
    const attempt: Attempt = { retry, api_request_id, provider, request, ids, started_at, ended_at, sanitizedRequest };
    if (response) {
      await reportResponse(c, attempt, response);
      return { response, api_request_id, middleware_trace: trace };
    }
    const plan = await planAfterFailure(c, attempt, failure);
    await reportFailure(c, attempt, failure, plan);
    if (plan.interrupted) throw new InterruptedError();
    logFailure(c, attempt, failure, plan);
    if (plan.canRetry) {
      await sleep(plan.delay, c.signal);
      continue;
    }
    if (plan.canFallback && (await switchToFallback(c))) {
      retry = -1;
      continue;
    }
    throw new LlmCallFailed(failure, plan.cls, plan.code);
  }
}

/** One attempt's identity and timing, shared by the reporting steps. */
interface Attempt {
  retry: number;
  api_request_id: string;
  provider: Provider;
  request: LlmRequest;
  ids: Record<string, unknown>;
  started_at: number;
  ended_at: number;
  sanitizedRequest: unknown;
}

/** What to do after a failed attempt, and the code and classification to report. */
interface FailurePlan {
  interrupted: boolean;
  cls: Classification;
  code: string;
  canRetry: boolean;
  canFallback: boolean;
  delay: number;
  next: string;
}

/** Run `llm_request` middleware; a broken chain or a request without messages falls back to the kwargs. */
async function applyRequestMiddleware(
  c: LlmCallContext,
  kwargs: LlmRequest,
  mwContext: Record<string, unknown>,
): Promise<{ request: LlmRequest; trace: TraceEntry[] }> {
  let request = kwargs;
  let trace: TraceEntry[] = [];
  const owners = c.middleware.owners("llm_request");
  try {
    const r = await c.middleware.applyRequest("llm_request", kwargs, mwContext);
    request = r.payload;
    trace = r.trace;
  } catch (e) {
    if (e instanceof RequiredMiddlewareError) {
      c.emit({ type: "middleware", kind: "llm_request", owners, detail: `failed: ${e.message}` });
      c.log.error({ code: "E_AGENT_MIDDLEWARE_FAILED", plugin: e.plugin }, e.message);
      throw new LlmCallFailed(e, combineClassification(e, { skipped: 0 }, c.log), "E_AGENT_MIDDLEWARE_FAILED");
    }
    c.log.warn(`llm_request middleware failed as a whole (${errorMessage(e)}); the unmodified request is sent`);
  }
  if (!request || typeof request !== "object" || !Array.isArray((request as LlmRequest).messages)) {
    c.log.warn("llm_request middleware produced a request without messages; the unmodified request is sent");
    request = kwargs;
    trace = [];
  }
  c.emit({ type: "middleware", kind: "llm_request", owners, trace });
  return { request, trace };
}

async function firePreApiRequest(
  c: LlmCallContext,
  ids: Record<string, unknown>,
  request: LlmRequest,
  trace: TraceEntry[],
  retry: number,
  started_at: number,
  sanitizedRequest: unknown,
): Promise<void> {
  await c.hooks.observe(
    "pre_api_request",
    {
      ...ids,
      user_message: c.user_message,
      conversation_history: c.history(),
      retry_count: retry,
      ...requestStats(request),
      started_at,
      middleware_trace: structuredClone(trace),
      request: sanitizedRequest,
    },
    trace.length ? `middleware_trace=${trace.map((t) => t.source ?? t.name).join(",")}` : undefined,
  );
}

/** The provider call inside `llm_execution` middleware, with streamed events queued for observers. */
async function executeRequest(
  c: LlmCallContext,
  provider: Provider,
  request: LlmRequest,
  kwargs: LlmRequest,
  mwContext: Record<string, unknown>,
): Promise<{ response: LlmResponse | undefined; failure: unknown }> {
  const streams = new StreamObservers(
    c.hookBus,
    {
      turn_id: c.ids.turn_id,
      iteration: c.iteration,
      session_id: c.ids.session_id,
      model: request.model,
      provider: provider.name,
      surface: c.surface,
    },
    c.log,
    {
      reasoning: c.streamReasoning,
    },
  );
  const relay = c.onStream;
  const observing = request.stream === true && streams.listening;
  const listening = request.stream === true && (observing || relay !== undefined);
  const onStream = (ev: StreamEvent) => {
    if (observing) streams.push(ev);
    relay?.(ev);
  };
  c.emit({
    type: "middleware",
    kind: "llm_execution",
    owners: c.middleware.owners("llm_execution"),
    detail: `→ ${provider.name}${request.stream ? " (streaming)" : ""}`,
  });
  let response: LlmResponse | undefined;
  let failure: unknown;
  try {
    const raw = await c.middleware.runExecution(
      "llm_execution",
      request,
      (r: LlmRequest) => provider.complete(r, { signal: c.signal, ...(listening ? { onStream } : {}) }),
      { ...mwContext, model: request.model, original_request: structuredClone(kwargs) },
    );
    response = checkResponse(
      raw,
      c.middleware.has("llm_execution") ? "the llm_execution middleware chain" : provider.name,
    );
  } catch (e) {
    failure = e;
  }
  if (observing && streams.started)
    c.emit({
      type: "hook",
      name: "on_stream_start/delta/end",
      owners: [
        ...new Set([
          ...c.hookBus.owners("on_stream_start"),
          ...c.hookBus.owners("on_stream_delta"),
          ...c.hookBus.owners("on_stream_end"),
        ]),
      ],
      detail: `queued off the token path (${streams.deltas} delta(s))`,
    });
  await streams.flush();
  return { response, failure };
}

/** The timing fields post_api_request and api_request_error share. */
function attemptTiming(a: Attempt): { api_duration: number; started_at: number; ended_at: number } {
  return { api_duration: a.ended_at - a.started_at, started_at: a.started_at, ended_at: a.ended_at };
}

async function reportResponse(c: LlmCallContext, a: Attempt, response: LlmResponse): Promise<void> {
  const msg = response.choices[0]!.message;
  await c.hooks.observe(
    "post_api_request",
    {
      ...a.ids,
      ...attemptTiming(a),
      finish_reason: response.choices[0]!.finish_reason,
      message_count: Array.isArray(a.request.messages) ? a.request.messages.length : 0,
      response_model: response.model,
      response: sanitize(response),
      usage: response.usage ?? null,
      assistant_message: sanitize(msg),
      assistant_content_chars: typeof msg.content === "string" ? msg.content.length : 0,
      assistant_tool_call_count: msg.tool_calls?.length ?? 0,
    },
    `finish_reason=${response.choices[0]!.finish_reason}`,
  );
  c.emit({
    type: "llm_result",
    finish_reason: response.choices[0]!.finish_reason,
    tool_calls: (msg.tool_calls ?? []).map((t) => `${t.function.name} ${brief(t.function.arguments, 60)}`),
    text: msg.content,
  });
}

/** Classify the failure (plugins first) and decide between retry, fallback and giving up. */
async function planAfterFailure(c: LlmCallContext, a: Attempt, failure: unknown): Promise<FailurePlan> {
  const { request, retry } = a;
  const interrupted = c.signal.aborted || (isProviderError(failure) && failure.kind === "interrupted");
  let cls: Classification;
  if (interrupted)
    cls = {
      reason: "unknown",
      retryable: false,
      should_fallback: false,
      should_compress: false,
      should_rotate_credential: false,
      classified_by: "builtin",
    };
  else {
    const approx = Math.ceil(JSON.stringify(request.messages ?? []).length / 4);
    const payload = classificationPayload(failure, {
      provider: a.provider.name,
      model: request.model,
      approx_tokens: approx,
      num_messages: request.messages?.length ?? 0,
    });
    cls = combineClassification(
      failure,
      await c.hooks.firstValid("transform_api_error_classification", payload, sanitizeClassification),
      c.log,
    );
  }
  const retryAfter = isProviderError(failure) ? failure.retry_after_ms : null;
  // A server asking for a longer pause than a person would wait at a prompt gets a clear give-up instead.
  const waitTooLong = retryAfter !== null && retryAfter > MAX_RETRY_AFTER_MS;
  const canRetry = !interrupted && cls.retryable && retry < c.retry.maxRetries && !waitTooLong;
  const canFallback = !interrupted && !canRetry && cls.should_fallback && !!c.provider.fallback && !c.provider.fellBack;
  const code = interrupted
    ? "E_AGENT_INTERRUPTED"
    : failure instanceof RequiredMiddlewareError
      ? "E_AGENT_MIDDLEWARE_FAILED"
      : isProviderError(failure)
        ? failure.code
        : "E_PROVIDER_MALFORMED";
  const delay = canRetry ? retryDelay(c.retry.backoffMs, retry, retryAfter) : 0;
  const next = interrupted
    ? "turn interrupted"
    : canRetry
      ? `retry ${retry + 1}/${c.retry.maxRetries} in ${delay} ms${retryAfter !== null ? " (Retry-After)" : ""}`
      : canFallback
        ? "fall back"
        : waitTooLong
          ? `give up (the server asked to wait ${Math.ceil(retryAfter / 1000)} s, over ` +
            `the ${MAX_RETRY_AFTER_MS / 1000} s limit)`
          : "give up";
  return { interrupted, cls, code, canRetry, canFallback, delay, next };
}

async function reportFailure(c: LlmCallContext, a: Attempt, failure: unknown, p: FailurePlan): Promise<void> {
  const reason = p.interrupted ? "interrupted" : p.cls.reason;
  await c.hooks.observe(
    "api_request_error",
    {
      ...a.ids,
      ...attemptTiming(a),
      status_code: isProviderError(failure) ? failure.status_code : null,
      retry_count: a.retry,
      max_retries: c.retry.maxRetries,
      retryable: p.interrupted ? false : p.cls.retryable,
      reason,
      error: { type: errorTypeName(failure), message: errorMessage(failure), code: p.code },
      request: a.sanitizedRequest,
    },
    `reason=${reason}`,
  );
  c.emit({
    type: "llm_error",
    code: p.code,
    message: errorMessage(failure),
    reason,
    retryable: p.cls.retryable,
    next: p.next,
  });
}

function logFailure(c: LlmCallContext, a: Attempt, failure: unknown, p: FailurePlan): void {
  const { cls } = p;
  const level = p.canRetry || p.canFallback ? "warn" : "error";
  c.log[level](
    {
      code: p.code,
      reason: cls.reason,
      retryable: cls.retryable,
      classified_by: cls.classified_by,
      status_code: isProviderError(failure) ? failure.status_code : null,
      retry_count: a.retry,
      api_request_id: a.api_request_id,
    },
    `model call failed (${cls.reason}): ${errorMessage(failure)}; ${p.next}`,
  );
}

/** Swap in the fallback provider (once per call); false when it could not be set up. */
async function switchToFallback(c: LlmCallContext): Promise<boolean> {
  c.provider.fellBack = true;
  const fb = await c.provider.fallback!().catch((e) => {
    c.log.error(`the fallback provider could not be set up: ${errorMessage(e)}`);
    return undefined;
  });
  if (!fb) return false;
  c.provider.current = fb;
  c.log.warn(`falling back to ${fb.name} ${fb.model}`);
  return true;
}

export { ProviderError };
