import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { RequiredMiddlewareError, type MiddlewareEngine, type TraceEntry } from "../runtime/middleware.js";
import type { ToolEntry, ToolRegistry } from "../runtime/registries.js";
import type { ApprovalGate } from "./approvals/gate.js";
import { matchDenyRule } from "./approvals/deny-rules.js";
import { guard } from "./guardrails.js";
import { terminalBackendName } from "./tools/terminal-backend.js";
import type { HookSite } from "./hook-site.js";
import { withinToolCall } from "./dispatch-scope.js";
import { newId } from "./ids.js";
import { brief } from "./sanitize.js";
import type { Session } from "./session.js";
import type { TimelineSink } from "./timeline.js";
import { parseToolArgs } from "./tool-args.js";
import type { ToolCall } from "./types.js";

export type ToolStatus = "success" | "error" | "blocked";

export interface ToolCallContext {
  tools: ToolRegistry;
  middleware: MiddlewareEngine;
  hooks: HookSite;
  gate: ApprovalGate;
  log: Logger;
  emit: TimelineSink;
  signal: AbortSignal;
  session: Session;
  /** turn_id and api_request_id are null for a ctx.dispatch_tool call outside a turn or model request. */
  ids: { session_id: string; task_id: string; turn_id: string | null; api_request_id: string | null };
  env?: NodeJS.ProcessEnv;
  /** More keyword arguments for the handler (ctx.dispatch_tool's `extra`); the ids, signal and session win. */
  extra?: Record<string, unknown>;
}

export interface ToolCallOutcome {
  tool_call_id: string;
  tool_name: string;
  /** What the model gets back (after transform_tool_result). */
  result: string;
  status: ToolStatus;
  error_type: string | null;
  /** The effective arguments (what policy saw and the tool ran with). */
  args: Record<string, unknown>;
  middleware_trace: TraceEntry[];
  /** How many times the tool's handler ran: 0 or 1, never more. */
  executions: number;
}

const errorJson = (message: string) => JSON.stringify({ error: message });

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * One tool call, in this order:
 * 1. parse and coerce the model's arguments (not JSON → an error result, nothing runs);
 * 2. `tool_request` middleware (its result is the effective args for everything below);
 * 3. availability (unknown tool → error result), `pre_tool_call` directives (block → `{"error": msg}`,
 *    modify → merged args), hardline patterns and the user's deny rules (refused before any approval or
 *    transport), then approve → the approval gate and dangerous-command approval, all on the effective args;
 * 4. `tool_execution` middleware around the dispatch (the handler runs at most once);
 * 5. `post_tool_call` with duration_ms, status and middleware_trace;
 * 6. `transform_tool_result` before the result goes back into the conversation.
 * Every call the model makes ends in exactly one post_tool_call. The whole call runs with its tool
 * on the dispatch chain, so a hook or handler that dispatches it again is refused (plugin-dispatch.ts).
 */
export function runToolCall(c: ToolCallContext, call: ToolCall): Promise<ToolCallOutcome> {
  return withinToolCall(call.function?.name ?? "", () => runSteps(c, call));
}

async function runSteps(c: ToolCallContext, call: ToolCall): Promise<ToolCallOutcome> {
  const tool_call_id = call.id || newId("call");
  const tool_name = call.function?.name ?? "";
  const ids = {
    task_id: c.ids.task_id,
    session_id: c.ids.session_id,
    tool_call_id,
    turn_id: c.ids.turn_id,
    api_request_id: c.ids.api_request_id,
  };
  c.emit({ type: "tool_start", tool_name, tool_call_id, args: call.function?.arguments ?? "" });
  const s: CallState = { c, tool_call_id, tool_name, ids, trace: [], executions: 0, args: {} };

  // 1. Parse and coerce.
  const entry0 = c.tools.get(tool_name);
  const parsed = parseToolArgs(call.function?.arguments ?? "", entry0?.schema?.parameters);
  if (!parsed.ok) {
    const msg =
      `invalid arguments for tool '${tool_name}': ${parsed.error}. Nothing was run; call the tool again with a ` +
      "JSON object.";
    c.log.warn({ code: "E_AGENT_TOOL_ARGS", tool: tool_name, tool_call_id }, msg);
    return finish(s, {}, errorJson(msg), "error", "invalid_arguments", msg, 0);
  }
  s.args = parsed.args;

  // 2. tool_request middleware.
  const failed = await applyToolRequest(s);
  if (failed) return failed;

  // 3a. Availability.
  const entry = c.tools.get(tool_name);
  if (!entry || !c.tools.available(tool_name, c.env)) return unavailable(s, entry);

  // 3b. pre_tool_call directives, then 3c. guardrails and approvals on the effective args.
  const directive = await c.hooks.directive(
    "pre_tool_call",
    { tool_name, args: structuredClone(s.args), ...ids, middleware_trace: structuredClone(s.trace) },
    s.args,
  );
  const refused = (await applyDirective(s, directive)) ?? (await applyGuardrails(s, directive));
  if (refused) return refused;

  if (c.signal.aborted)
    return finish(
      s,
      s.args,
      errorJson("interrupted before the tool ran"),
      "error",
      "interrupted",
      "interrupted",
      0,
      false,
    );

  // 4. tool_execution middleware around the dispatch.
  return execute(s, entry, parsed.args);
}

/** One call's identity and what it has gathered so far; `finish` reports from it. */
interface CallState {
  c: ToolCallContext;
  tool_call_id: string;
  tool_name: string;
  ids: {
    task_id: string;
    session_id: string;
    tool_call_id: string;
    turn_id: string | null;
    api_request_id: string | null;
  };
  trace: TraceEntry[];
  executions: number;
  /** The effective arguments so far. */
  args: Record<string, unknown>;
}

type Directive = Awaited<ReturnType<HookSite["directive"]>>;

/** Steps 5 and 6: post_tool_call, then transform_tool_result unless the call was refused. */
async function finish(
  s: CallState,
  args: Record<string, unknown>,
  result: string,
  status: ToolStatus,
  error_type: string | null,
  error_message: string | null,
  duration_ms: number,
  transform = true,
): Promise<ToolCallOutcome> {
  const { c, tool_name, tool_call_id, ids } = s;
  // Each hook gets its own copy of the arguments.
  const outcome = () => ({
    tool_name,
    args: structuredClone(args),
    result,
    ...ids,
    duration_ms,
    status,
    error_type,
    error_message,
  });
  await c.hooks.observe(
    "post_tool_call",
    { ...outcome(), middleware_trace: structuredClone(s.trace) },
    `status=${status}${error_type ? ` error_type=${error_type}` : ""} duration_ms=${duration_ms}`,
  );
  let final = result;
  if (transform) {
    const replaced = await c.hooks.firstString("transform_tool_result", outcome());
    if (replaced !== undefined) final = replaced;
  }
  c.emit({ type: "tool_end", tool_name, status, duration_ms, result: final });
  return {
    tool_call_id,
    tool_name,
    result: final,
    status,
    error_type,
    args,
    middleware_trace: s.trace,
    executions: s.executions,
  };
}

/** Step 2; ends the call only when a required middleware failed. */
async function applyToolRequest(s: CallState): Promise<ToolCallOutcome | undefined> {
  const { c, tool_name, ids } = s;
  const owners = c.middleware.owners("tool_request");
  try {
    const r = await c.middleware.applyRequest("tool_request", s.args, { tool_name, ...ids });
    if (isMapping(r.payload)) {
      s.args = r.payload;
      s.trace = r.trace;
    }
  } catch (e) {
    if (e instanceof RequiredMiddlewareError) {
      c.emit({ type: "middleware", kind: "tool_request", owners, detail: `failed: ${e.message}` });
      c.log.error({ code: "E_AGENT_MIDDLEWARE_FAILED", plugin: e.plugin, tool: tool_name }, e.message);
      return finish(
        s,
        s.args,
        errorJson(`tool '${tool_name}' was not run: ${e.message}`),
        "error",
        "middleware_failed",
        e.message,
        0,
      );
    }
    c.log.debug(`tool_request middleware failed as a whole (${(e as Error).message}); the original arguments are used`);
  }
  c.emit({ type: "middleware", kind: "tool_request", owners, trace: s.trace });
  c.emit({ type: "tool_args", args: s.args, changed: s.trace.length > 0 });
  return undefined;
}

function unavailable(s: CallState, entry: ToolEntry | undefined): Promise<ToolCallOutcome> {
  const { c, tool_name, tool_call_id } = s;
  const known = c.tools.list(c.env).map((t) => t.name);
  const msg = entry
    ? `tool '${tool_name}' is not available here (its check failed or a required environment variable is ` +
      `unset: ${entry.requires_env.join(", ") || "none"})`
    : `unknown tool '${tool_name}'; available tools: ${known.join(", ") || "none"}`;
  c.log.warn({ code: "E_AGENT_UNKNOWN_TOOL", tool: tool_name, tool_call_id }, msg);
  return finish(s, s.args, errorJson(msg), "error", "unknown_tool", msg, 0);
}

/** Step 3b: modified args are taken, a block ends the call, an approval goes to the gate. */
async function applyDirective(s: CallState, directive: Directive): Promise<ToolCallOutcome | undefined> {
  const { c, tool_name, tool_call_id } = s;
  if (directive.modified_args) {
    s.args = directive.modified_args;
    c.emit({ type: "tool_args", args: s.args, changed: true });
  }
  if (directive.action === "block") {
    const msg = directive.message ?? "blocked by a plugin";
    c.log.warn({ tool: tool_name, tool_call_id }, `tool call blocked by pre_tool_call: ${msg}`);
    c.emit({ type: "approval", outcome: "blocked", detail: `pre_tool_call: ${msg}` });
    return finish(s, s.args, errorJson(msg), "blocked", "plugin_block", msg, 0, false);
  }
  if (directive.action !== "approve") return undefined;
  // Hardline patterns and the user's deny rules come before any approval, a plugin-requested one too.
  const refused = refuseByPolicy(s);
  if (refused) return refused;
  const rule = directive.rule_key ?? tool_name;
  let blockMsg: string | undefined;
  try {
    const o = await c.gate.request({
      command: directive.message || `${tool_name} ${brief(s.args, 200)}`,
      description: directive.message || `run ${tool_name} (a plugin asks for approval)`,
      pattern_key: rule,
      pattern_keys: [rule],
      tool_name,
      turn_id: c.ids.turn_id,
      tool_call_id,
      session: c.session,
      signal: c.signal,
    });
    if (!o.approved) blockMsg = o.message || `BLOCKED: plugin approval required for ${tool_name}`;
  } catch (e) {
    c.log.error(`the approval gate failed: ${(e as Error).message}`);
    blockMsg = `BLOCKED: plugin approval gate failed for ${tool_name}`;
  }
  if (blockMsg) return finish(s, s.args, errorJson(blockMsg), "blocked", "plugin_block", blockMsg, 0, false);
  return undefined;
}

/**
 * Step 3c: a hardline match, then a command matching one of the user's deny rules (`approvals.deny`), never
 * runs: refused before any approval (session, always, mode off, transport or prompt) is consulted.
 */
function refuseByPolicy(s: CallState): Promise<ToolCallOutcome> | undefined {
  const { c, tool_name, args } = s;
  const hardline = guard(tool_name, args).hardline;
  if (hardline) {
    const msg =
      `BLOCKED: hardline policy refuses this command (${hardline.description}); it never runs, whatever any ` +
      "approval says.";
    c.log.warn(
      { code: "E_APPROVAL_HARDLINE", tool: tool_name, pattern: hardline.key },
      `hardline block: ${brief(args.command ?? args, 200)}`,
    );
    c.emit({ type: "approval", outcome: "hardline block", detail: hardline.description });
    return finish(s, args, errorJson(msg), "blocked", "hardline", msg, 0, false);
  }
  const command = tool_name === "terminal" && typeof args.command === "string" ? args.command : undefined;
  const rule = command === undefined ? undefined : matchDenyRule(command, c.gate.settings().deny);
  if (rule === undefined) return undefined;
  const msg =
    `BLOCKED: this command matches the user's deny rule '${rule}' (approvals.deny); it never runs, whatever any ` +
    "approval says. Do NOT retry it, rephrase it or reach the same outcome another way.";
  c.log.warn({ code: "E_APPROVAL_DENY_RULE", tool: tool_name, rule }, `deny rule '${rule}': ${brief(command, 200)}`);
  c.emit({ type: "approval", outcome: "deny rule", detail: `approvals.deny '${rule}'` });
  return finish(s, args, errorJson(msg), "blocked", "deny_rule", msg, 0, false);
}

/** Step 3d: hardline and deny rules (step 3c), then a dangerous command needs approval. */
async function applyGuardrails(s: CallState, directive: Directive): Promise<ToolCallOutcome | undefined> {
  const { c, tool_name, tool_call_id, args } = s;
  const refused = refuseByPolicy(s);
  if (refused) return refused;
  const g = guard(tool_name, args, terminalBackendName(c.gate.config()));
  if (g.approval) {
    const o = await c.gate.request({
      ...g.approval,
      tool_name,
      turn_id: c.ids.turn_id,
      tool_call_id,
      session: c.session,
      signal: c.signal,
    });
    if (!o.approved)
      return finish(
        s,
        args,
        errorJson(o.message ?? "BLOCKED: not approved"),
        "blocked",
        "approval_denied",
        o.message ?? "not approved",
        0,
        false,
      );
  } else if (!directive.action) c.emit({ type: "approval", outcome: "not needed", detail: "" });
  return undefined;
}

/** Step 4: the handler inside `tool_execution` middleware; it runs at most once. */
async function execute(
  s: CallState,
  entry: ToolEntry,
  originalArgs: Record<string, unknown>,
): Promise<ToolCallOutcome> {
  const { c, tool_name, tool_call_id, ids, args } = s;
  const effective = args;
  const run = async (a: unknown): Promise<string> => {
    s.executions++;
    const input = isMapping(a) ? a : effective;
    const r = await entry.handler(input, { ...c.extra, ...ids, signal: c.signal, session: c.session.session_id });
    return typeof r === "string" ? r : JSON.stringify(r ?? null);
  };
  c.emit({
    type: "middleware",
    kind: "tool_execution",
    owners: c.middleware.owners("tool_execution"),
    detail: `→ ${tool_name}`,
  });
  const t0 = performance.now();
  let result: string;
  let status: ToolStatus = "success";
  let error_type: string | null = null;
  let error_message: string | null = null;
  try {
    const r = await c.middleware.runExecution("tool_execution", args, run, {
      tool_name,
      ...ids,
      original_args: structuredClone(originalArgs),
    });
    result = typeof r === "string" ? r : JSON.stringify(r ?? null);
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    status = "error";
    error_type = c.signal.aborted
      ? "interrupted"
      : err instanceof RequiredMiddlewareError
        ? "middleware_failed"
        : err.name || "Error";
    error_message = err.message;
    result = errorJson(`tool '${tool_name}' failed: ${err.message}`);
    if (c.signal.aborted)
      c.log.info({ tool: tool_name, tool_call_id }, `tool '${tool_name}' stopped by the interrupt: ${err.message}`);
    else
      c.log.warn(
        {
          code: err instanceof RequiredMiddlewareError ? "E_AGENT_MIDDLEWARE_FAILED" : "E_AGENT_TOOL_FAILED",
          tool: tool_name,
          tool_call_id,
        },
        `tool '${tool_name}' failed: ${err.message}`,
      );
  }
  const duration_ms = Math.round(performance.now() - t0);
  return finish(s, args, result, status, error_type, error_message, duration_ms);
}
