import { nearest } from "../core/suggest.js";

/**
 * Recorded in the lock as `hook_catalog`. A lock compiled for another catalog names hook slots this
 * runtime may not have, so the runtime never runs it: a managed home refuses (E_LOCK_CATALOG), an
 * unmanaged home warns and recompiles.
 */
export const HOOK_CATALOG_VERSION = "hermes.hooks.v1";

/**
 * Directive hooks steer control flow, transform hooks replace content, observers only watch. The class
 * is only documentation (docs/hooks.md). `timeout` decides how the dispatcher runs callbacks;
 * `combine` decides which of its fold methods a fire site may call (each takes HooksFoldedBy<rule>).
 */
export type HookClass = "directive" | "transform" | "observer";

/**
 * How the dispatcher folds the list of callback results into one outcome. Each value names one rule
 * rather than a generic "first/last" so that two hooks that look alike (e.g. `first-string` keeps `""`,
 * `first-non-empty` skips it) can never silently share an implementation that is wrong for one of them.
 */
export type HookCombine =
  | "directive" // pre_tool_call: modify merges, any valid block wins, else the first valid approve
  | "first-string" // the first string result, "" included, replaces the value
  | "first-non-empty" // the first non-empty string result replaces the value
  | "joined" // every valid result, joined with "\n\n" in callback order
  | "last-writer-per-field" // dict results applied in order; later callbacks win per allowed field
  | "first-valid" // all callbacks run, then the first result that passes the hook's validator wins
  | "tts-policy" // block refuses; one rewrite is re-checked by all hooks; anything malformed blocks
  | "ignored"; // observers: results are discarded

/**
 * - bounded: raced against `plugins.hook_callback_timeout`; a late callback is skipped (fail-open).
 * - fail-closed: bounded too, but a timeout or exception becomes a block directive, because an
 *   enforcement hook that silently lets the call through is worse than one that refuses.
 * - caller: must run on the caller's own path and is never raced against a timer, because the caller
 *   relies on ordering (subagent_stop is serialized on the parent).
 * - unbounded: runs to completion; these sit off the hot path or have their own delivery queue.
 */
export type HookTimeout = "bounded" | "fail-closed" | "caller" | "unbounded";

export interface HookSpec {
  class: HookClass;
  combine: HookCombine;
  timeout: HookTimeout;
  /** The keyword fields the fire site passes (besides the injected `telemetry_schema_version`). */
  payload: readonly string[];
  summary: string;
  /** Whether the dispatcher injects `telemetry_schema_version` into the payload. */
  telemetry: boolean;
}

// Field lists shared by several hooks. Spelled once so sibling hooks cannot drift apart.
const TOOL_IDS = ["task_id", "session_id", "tool_call_id", "turn_id", "api_request_id"] as const;
const TOOL_OUTCOME = ["duration_ms", "status", "error_type", "error_message"] as const;
const STREAM_COMMON = ["turn_id", "iteration", "session_id", "model", "provider", "surface"] as const;
const API_IDS = [
  "task_id",
  "turn_id",
  "api_request_id",
  "session_id",
  "platform",
  "model",
  "provider",
  "base_url",
  "api_mode",
  "api_call_count",
] as const;
const AUX_IDS = [
  "aux_task",
  "task_id",
  "turn_id",
  "session_id",
  "platform",
  "api_request_id",
  "api_call_count",
  "retry_count",
  "streaming",
  "model",
  "provider",
  "base_url",
  "api_mode",
] as const;
const API_TIMING = ["api_duration", "started_at", "ended_at"] as const;
const SESSION_SWAP = ["session_id", "platform", "reason", "old_session_id", "new_session_id"] as const;
const APPROVAL = [
  "command",
  "description",
  "pattern_key",
  "pattern_keys",
  "session_key",
  "surface",
  "turn_id",
  "tool_call_id",
  "request_id",
  "request_digest",
] as const;
const KANBAN_TASK = ["task_id", "profile_name", "board", "assignee", "run_id"] as const;

/**
 * Every hook a plugin may register, in lifecycle order (tools, LLM turn, streaming, provider calls,
 * sessions, subagents, gateway, approvals, speech, kanban, commands). This table is the only list of
 * hook names in the code base: registration, dispatch, the lock and docs/hooks.md all read it.
 */
export const HOOK_CATALOG = {
  pre_tool_call: {
    class: "directive",
    combine: "directive",
    timeout: "fail-closed",
    payload: ["tool_name", "args", ...TOOL_IDS, "middleware_trace"],
    summary: "Before every tool call: block it, send it to human approval, or shallow-merge new arguments.",
    telemetry: true,
  },
  post_tool_call: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: ["tool_name", "args", "result", ...TOOL_IDS, ...TOOL_OUTCOME, "middleware_trace"],
    summary: "After every tool call, including blocked and failed ones, with status and duration.",
    telemetry: true,
  },
  transform_terminal_output: {
    class: "transform",
    combine: "first-string",
    timeout: "bounded",
    payload: ["command", "output", "returncode", "task_id", "env_type"],
    summary: "Rewrites terminal output before the output limit and secret redaction apply.",
    telemetry: true,
  },
  transform_tool_result: {
    class: "transform",
    combine: "first-string",
    timeout: "bounded",
    payload: ["tool_name", "args", "result", ...TOOL_IDS, ...TOOL_OUTCOME],
    summary: "Rewrites a tool result before the model sees it; an empty string is a valid replacement.",
    telemetry: true,
  },
  transform_llm_output: {
    class: "transform",
    combine: "first-non-empty",
    timeout: "bounded",
    payload: ["response_text", "session_id", "model", "platform"],
    summary: "Rewrites the final assistant text of a completed turn before it is stored and delivered.",
    telemetry: true,
  },
  pre_llm_call: {
    class: "directive",
    combine: "joined",
    timeout: "bounded",
    payload: [
      "session_id",
      "task_id",
      "turn_id",
      "user_message",
      "conversation_history",
      "is_first_turn",
      "model",
      "platform",
      "parent_session_id",
      "sender_id",
    ],
    summary: "Once per turn: returned context is appended to the current user message, never the system prompt.",
    telemetry: true,
  },
  post_llm_call: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: [
      "session_id",
      "task_id",
      "turn_id",
      "user_message",
      "assistant_response",
      "conversation_history",
      "model",
      "platform",
    ],
    summary: "After a turn that produced a final response and was not interrupted.",
    telemetry: true,
  },
  on_stream_start: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...STREAM_COMMON],
    summary: "A streamed response began; delivered off the token path through a per-callback queue.",
    telemetry: true,
  },
  on_stream_delta: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: ["delta", "kind", ...STREAM_COMMON],
    summary: "One normalized text or (opt-in) reasoning delta; a stalled callback drops its own oldest events.",
    telemetry: true,
  },
  on_stream_end: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: ["final_text", "finished", "error", ...STREAM_COMMON],
    summary: "A streamed response finished or failed, with the assembled text.",
    telemetry: true,
  },
  on_interim_message: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: ["text", "already_streamed", ...STREAM_COMMON],
    summary: "An assistant message surfaced mid-loop, before the final answer, streamed or not.",
    telemetry: true,
  },
  pre_verify: {
    class: "directive",
    combine: "first-valid",
    timeout: "bounded",
    payload: ["session_id", "platform", "model", "coding", "attempt", "final_response", "changed_paths"],
    summary: "Before finishing a turn that edited code: a valid continue/block with a message adds one more nudge.",
    telemetry: true,
  },
  pre_api_request: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: [
      "task_id",
      "turn_id",
      "api_request_id",
      "session_id",
      "user_message",
      "conversation_history",
      "platform",
      "model",
      "provider",
      "base_url",
      "api_mode",
      "api_call_count",
      "retry_count",
      "request_messages",
      "message_count",
      "tool_count",
      "approx_input_tokens",
      "request_char_count",
      "max_tokens",
      "started_at",
      "middleware_trace",
      "request",
    ],
    summary: "Each provider attempt, just before sending, with the sanitized effective request.",
    telemetry: true,
  },
  post_api_request: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: [
      ...API_IDS,
      ...API_TIMING,
      "finish_reason",
      "message_count",
      "response_model",
      "response",
      "usage",
      "assistant_message",
      "assistant_content_chars",
      "assistant_tool_call_count",
    ],
    summary: "A provider attempt succeeded, with timing, usage and the sanitized response.",
    telemetry: true,
  },
  api_request_error: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: [
      ...API_IDS,
      ...API_TIMING,
      "status_code",
      "retry_count",
      "max_retries",
      "retryable",
      "reason",
      "error",
      "request",
    ],
    summary: "A provider attempt failed, with the status, retry position and error.",
    telemetry: true,
  },
  pre_auxiliary_call: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: [
      ...AUX_IDS,
      "request_messages",
      "system_prompt",
      "message_count",
      "tool_count",
      "approx_input_tokens",
      "request_char_count",
      "max_tokens",
      "started_at",
      "request",
    ],
    summary:
      "Before each attempt of an auxiliary LLM call (titles, compression, approvals), which never fires the " +
      "api_request hooks.",
    telemetry: true,
  },
  post_auxiliary_call: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: [
      ...AUX_IDS,
      ...API_TIMING,
      "finish_reason",
      "response_model",
      "usage",
      "response",
      "assistant_content_chars",
      "assistant_tool_call_count",
      "error",
      "error_type",
    ],
    summary: "After an auxiliary LLM attempt returned or raised.",
    telemetry: true,
  },
  transform_api_error_classification: {
    class: "transform",
    combine: "first-valid",
    timeout: "unbounded",
    payload: [
      "provider",
      "model",
      "status_code",
      "error_type",
      "error_code",
      "error_message",
      "error_body",
      "error",
      "approx_tokens",
      "context_length",
      "num_messages",
    ],
    summary: "Reclassifies a failed provider call (retry, compress, rotate, fall back) before the built-in classifier.",
    telemetry: true,
  },
  on_session_start: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: ["session_id", "model", "platform"],
    summary: "The first turn of a new session.",
    telemetry: true,
  },
  on_session_end: {
    class: "observer",
    combine: "ignored",
    timeout: "bounded",
    payload: [
      "session_id",
      "task_id",
      "turn_id",
      "completed",
      "failed",
      "interrupted",
      "turn_exit_reason",
      "model",
      "platform",
    ],
    summary: "The end of every run, and at exit when a turn was still in flight.",
    telemetry: true,
  },
  on_session_finalize: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...SESSION_SWAP],
    summary: "A session is being closed for good (cleanup, gateway shutdown, or before a reset).",
    telemetry: true,
  },
  on_session_reset: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...SESSION_SWAP],
    summary: "A replacement session took over from the old one.",
    telemetry: true,
  },
  on_skill_lifecycle: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [
      "action",
      "skill_name",
      "provenance",
      "task_id",
      "session_id",
      "use_count",
      "reused",
      "reuse_after_patch",
    ],
    summary: "A skill's usage state changed for good (used, reused, patched).",
    telemetry: true,
  },
  subagent_start: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [
      "parent_session_id",
      "parent_turn_id",
      "parent_subagent_id",
      "child_session_id",
      "child_subagent_id",
      "child_role",
      "child_goal",
    ],
    summary: "A child agent has been built and is about to run.",
    telemetry: true,
  },
  subagent_stop: {
    class: "observer",
    combine: "ignored",
    timeout: "caller",
    payload: [
      "parent_session_id",
      "parent_turn_id",
      "child_session_id",
      "child_role",
      "child_summary",
      "child_status",
      "tool_call_history",
      "duration_ms",
    ],
    summary: "A child agent finished; runs serialized on the parent's path, never on a timed worker.",
    telemetry: true,
  },
  pre_gateway_dispatch: {
    class: "directive",
    combine: "first-valid",
    timeout: "unbounded",
    payload: ["event", "gateway", "session_store"],
    summary:
      "Each inbound gateway message before auth and dispatch: skip it, rewrite its text, or allow it; errors " +
      "fall through.",
    telemetry: true,
  },
  agent_loop_stopped: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: ["session_key", "platform", "reason", "invalidation_reason"],
    summary: "A running agent loop was interrupted.",
    telemetry: true,
  },
  pre_approval_request: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...APPROVAL],
    summary: "A human approval is about to be requested; it cannot veto or pre-answer.",
    telemetry: true,
  },
  post_approval_response: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...APPROVAL, "choice", "decided_by"],
    summary: "An approval was decided, timed out, or could not be delivered.",
    telemetry: true,
  },
  on_room_member_activity: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [
      "room_id",
      "thread_id",
      "member_id",
      "turn_id",
      "task_id",
      "execution_generation",
      "kind",
      "seq",
      "payload",
    ],
    summary: "Live runtime events of a hosted group-chat member, queued per callback and never stored.",
    telemetry: true,
  },
  pre_transcription: {
    class: "transform",
    combine: "last-writer-per-field",
    timeout: "unbounded",
    payload: ["file_path", "provider", "model", "language", "prompt", "source"],
    summary: "Before any speech-to-text backend runs: may change prompt, language and model, never file_path.",
    telemetry: true,
  },
  pre_tts_synthesis: {
    class: "directive",
    combine: "tts-policy",
    timeout: "fail-closed",
    payload: ["text", "provider"],
    summary: "Before text-to-speech: block synthesis or rewrite the text once; anything malformed refuses.",
    telemetry: true,
  },
  kanban_task_claimed: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...KANBAN_TASK],
    summary: "A kanban task was claimed, in the dispatcher, after the commit and before the worker starts.",
    telemetry: true,
  },
  kanban_task_completed: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...KANBAN_TASK, "summary"],
    summary: "A kanban task was completed, after the commit.",
    telemetry: true,
  },
  kanban_task_blocked: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...KANBAN_TASK, "reason"],
    summary: "A kanban task moved to blocked, with the reason.",
    telemetry: true,
  },
  on_kanban_worker_spawned: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...KANBAN_TASK, "worker_pid", "workspace_path"],
    summary: "A kanban worker started and its pid was persisted; runs inside the dispatch lock, so keep it fast.",
    telemetry: true,
  },
  on_kanban_worker_exited: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...KANBAN_TASK, "worker_pid", "exit_kind", "exit_code", "outcome", "retry_status"],
    summary: "A dead kanban worker's task was reclaimed by the dispatcher.",
    telemetry: true,
  },
  on_kanban_worker_stale_claim: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...KANBAN_TASK, "worker_pid", "heartbeat_stale", "retry_status"],
    summary: "A kanban claim whose time-to-live expired was reclaimed.",
    telemetry: true,
  },
  on_kanban_task_updated: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: [...KANBAN_TASK, "changed_fields"],
    summary: "A kanban task row changed outside claim/complete/block; carries field names, never values.",
    telemetry: true,
  },
  on_kanban_dispatch_tick: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: ["board", "profile_name", "dry_run", "outcome", "result"],
    summary: "Once per dispatcher tick, after the dispatch lock is released, idle ticks included.",
    telemetry: true,
  },
  gateway_platform_event: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: ["platform", "event_type", "payload"],
    summary: "A normalized platform event (reactions, edits, deletes, thread changes) at the gateway boundary.",
    // Its payload is an event-local envelope with its own versioning; stamping the observer schema
    // version onto it would claim a shape it does not have.
    telemetry: false,
  },
  pre_command: {
    class: "observer",
    combine: "ignored",
    timeout: "unbounded",
    payload: ["surface", "command", "alias_used", "args_raw", "session_key", "platform"],
    summary: "A recognized slash command is about to run; not fired for /stop or /approve on a running agent.",
    telemetry: true,
  },
} as const satisfies Record<string, HookSpec>;

export type HookName = keyof typeof HOOK_CATALOG;

type Catalog = typeof HOOK_CATALOG;

/**
 * The hooks whose results are folded by rule `C`. The typed dispatchers accept only these names, so a
 * fire site cannot fold a hook's results by another hook's rule.
 */
export type HooksFoldedBy<C extends HookCombine> = {
  [H in HookName]: Catalog[H]["combine"] extends C ? H : never;
}[HookName];

/** The keyword fields a fire site may pass to hook `H`: exactly the catalog's payload list for it. */
export type HookPayloadOf<H extends HookName> = { readonly [F in Catalog[H]["payload"][number]]?: unknown };

/**
 * The hooks something in this kit fires today (a test checks this against the fire sites). The others
 * can be registered, so plugins written for them load, but no callback of theirs is ever called yet.
 */
export const FIRED_HOOKS: ReadonlySet<HookName> = new Set<HookName>([
  "agent_loop_stopped",
  "api_request_error",
  "on_interim_message",
  "on_skill_lifecycle",
  "on_session_end",
  "on_session_finalize",
  "on_session_reset",
  "on_session_start",
  "on_stream_delta",
  "on_stream_end",
  "on_stream_start",
  "post_api_request",
  "post_approval_response",
  "post_auxiliary_call",
  "post_llm_call",
  "post_tool_call",
  "pre_api_request",
  "pre_approval_request",
  "pre_auxiliary_call",
  "pre_command",
  "pre_gateway_dispatch",
  "pre_llm_call",
  "pre_tool_call",
  "pre_transcription",
  "pre_tts_synthesis",
  "pre_verify",
  "subagent_start",
  "subagent_stop",
  "transform_api_error_classification",
  "transform_llm_output",
  "transform_terminal_output",
  "transform_tool_result",
]);

/**
 * Where hermes-kit fires each hook of FIRED_HOOKS, as docs/hooks.md states it. Every `src/…` path in
 * backticks must hold a fire site of that hook (test/runtime/hook-catalog.test.ts checks it).
 */
export const HOOK_FIRE_SITES: { readonly [H in HookName]?: string } = {
  pre_tool_call: "Every tool call of the agent loop (`src/agent/tool-call.ts`).",
  post_tool_call: "Every tool call of the agent loop (`src/agent/tool-call.ts`).",
  transform_terminal_output: "The built-in `terminal` tool (`src/app/start-agent.ts`).",
  transform_tool_result: "Every tool call of the agent loop (`src/agent/tool-call.ts`).",
  transform_llm_output: "The end of a completed turn (`src/agent/agent.ts`).",
  pre_llm_call: "Once per turn (`src/agent/agent.ts`).",
  post_llm_call: "The end of a completed turn (`src/agent/agent.ts`).",
  on_stream_start: "Each streamed model call (`src/agent/stream-observers.ts`).",
  on_stream_delta: "Each streamed model call (`src/agent/stream-observers.ts`).",
  on_stream_end: "Each streamed model call (`src/agent/stream-observers.ts`).",
  on_interim_message:
    "A model reply with text and tool calls, before the tools run (`src/agent/interim.ts`, called by the loop).",
  pre_verify:
    "A turn whose final answer comes after a successful `write_file` of that turn (`src/agent/verify-gate.ts`); " +
    "`coding` is true inside a git work tree, `agent.max_verify_nudges` (3) bounds the nudges.",
  pre_api_request: "Each provider attempt of the agent (`src/agent/llm-call.ts`).",
  post_api_request: "Each provider attempt of the agent (`src/agent/llm-call.ts`).",
  api_request_error: "Each failed provider attempt of the agent (`src/agent/llm-call.ts`).",
  pre_auxiliary_call: "Each attempt of `ctx.llm` (`src/agent/plugin-llm.ts`).",
  post_auxiliary_call: "Each attempt of `ctx.llm` (`src/agent/plugin-llm.ts`).",
  transform_api_error_classification: "Each failed provider attempt (`src/agent/llm-call.ts`).",
  on_session_start: "The first turn of a session (`src/agent/agent.ts`).",
  on_session_end: "The end of every turn (`src/agent/agent.ts`).",
  on_session_finalize: "`hermes serve` closing or resetting a session (`src/gateway/service.ts`).",
  on_session_reset: "`hermes serve` replacing a session (`src/gateway/service.ts`).",
  agent_loop_stopped:
    "`hermes serve` stopping a running turn: `POST /v1/runs/{id}/stop`, shutdown (`src/gateway/service.ts`).",
  on_skill_lifecycle:
    'A successful `skill_view` of a plugin skill, as `action: "loaded"` (`src/agent/tools/skills.ts`); plugin ' +
    "install and removal run no plugin code, so no callback exists to call then.",
  subagent_start: "`delegate_task` built a child agent (`src/agent/tools/delegate.ts`).",
  subagent_stop: "`delegate_task`'s child finished, on the parent's path (`src/agent/tools/delegate.ts`).",
  pre_gateway_dispatch: "Each inbound platform message of `hermes serve` (`src/gateway/platforms/hub.ts`).",
  pre_approval_request: "A dangerous command or an approve directive (`src/agent/approvals/gate.ts`).",
  post_approval_response: "A dangerous command or an approve directive (`src/agent/approvals/gate.ts`).",
  pre_command: "A slash command in `hermes chat` (`src/app/chat.ts`) or a platform (`src/gateway/platforms/hub.ts`).",
  pre_transcription:
    "The `transcribe_audio` tool, after `stt.provider` resolved and before the backend runs, with `source: " +
    '"tool"` (`src/agent/tools/voice.ts`).',
  pre_tts_synthesis:
    "The `text_to_speech` tool, after `tts.provider` resolved and before the backend runs " +
    "(`src/agent/tools/voice.ts`).",
};

const NO_KANBAN = "hermes-kit has no kanban task board, so nothing claims, completes or blocks a task";

/**
 * Hooks a plugin may register but hermes-kit never fires, with the reason. docs/hooks.md says so, and
 * registering one warns (W_HOOK_NOT_FIRED) so an author learns it at load, not by silence.
 */
export const NOT_FIRED_HOOKS: { readonly [H in HookName]?: string } = {
  kanban_task_claimed: NO_KANBAN,
  kanban_task_completed: NO_KANBAN,
  kanban_task_blocked: NO_KANBAN,
  on_kanban_worker_spawned: NO_KANBAN,
  on_kanban_worker_exited: NO_KANBAN,
  on_kanban_worker_stale_claim: NO_KANBAN,
  on_kanban_task_updated: NO_KANBAN,
  on_kanban_dispatch_tick: NO_KANBAN,
  on_room_member_activity: "hermes-kit hosts no group-chat members (the original's Bot Mode rooms)",
  gateway_platform_event:
    "hermes-kit's platform adapters deliver messages only; no reaction, edit, delete or thread event is normalized",
};

/** Sorted so that error messages and listings are stable regardless of the catalog's lifecycle order. */
export const HOOK_NAMES: readonly HookName[] = Object.freeze((Object.keys(HOOK_CATALOG) as HookName[]).sort());

/** Own-property check: `"constructor"` or `"__proto__"` must not pass as hook names. */
export function isHookName(s: string): s is HookName {
  return Object.hasOwn(HOOK_CATALOG, s);
}

/** The nearest hook name for a "did you mean", or undefined when nothing is plausibly meant. */
export function suggestHook(name: string): string | undefined {
  return nearest(name, HOOK_NAMES);
}

/**
 * Registration uses these names only. The original's `api_request`/`api_execution` aliases are not
 * accepted; `suggestMiddlewareKind` points such callers at the llm_* name instead.
 */
export const MIDDLEWARE_KINDS = ["llm_request", "llm_execution", "tool_request", "tool_execution"] as const;

export type MiddlewareKind = (typeof MIDDLEWARE_KINDS)[number];

export interface MiddlewareSpec {
  /** request: rewrites the payload before the call; execution: wraps the call with `next`. */
  shape: "request" | "execution";
  /** The payload key the callback rewrites or passes to `next`. */
  payloadKey: "request" | "args";
  summary: string;
}

export const MIDDLEWARE_CATALOG = {
  llm_request: {
    shape: "request",
    payloadKey: "request",
    summary:
      "Rewrites the provider request once per attempt (retries and fallbacks included); each callback sees " +
      "the previous rewrite.",
  },
  llm_execution: {
    shape: "execution",
    payloadKey: "request",
    summary: "Wraps the provider call; may short-circuit, translate errors, or call next once with a new request.",
  },
  tool_request: {
    shape: "request",
    payloadKey: "args",
    summary:
      "Rewrites tool arguments before policy (pre_tool_call, approvals) sees them; each callback sees the " +
      "previous rewrite.",
  },
  tool_execution: {
    shape: "execution",
    payloadKey: "args",
    summary: "Wraps the tool dispatch; may short-circuit, translate errors, or call next once with new arguments.",
  },
} as const satisfies Record<MiddlewareKind, MiddlewareSpec>;

export function isMiddlewareKind(s: string): s is MiddlewareKind {
  return (MIDDLEWARE_KINDS as readonly string[]).includes(s);
}

/** The nearest middleware kind, e.g. `llm_request` for the original's `api_request` alias. */
export function suggestMiddlewareKind(name: string): string | undefined {
  const alias = /^api_(request|execution)$/.exec(name);
  return alias ? `llm_${alias[1]}` : nearest(name, MIDDLEWARE_KINDS);
}
