import { performance } from "node:perf_hooks";
import { HermesError } from "../../core/errors.js";
import type { ToolEntry } from "../../runtime/registries.js";
import type { Agent, TurnResult } from "../agent.js";
import { runningAgent } from "../agent-scope.js";
import { newId } from "../ids.js";

/** `delegation.max_iterations` of config.yaml: the model calls a child may make (default 50, as the original). */
export function delegationBudget(config: Record<string, unknown>): number {
  const d = (config.delegation ?? {}) as Record<string, unknown>;
  const v = d.max_iterations;
  return typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : 50;
}

export const DELEGATE_SCHEMA = {
  name: "delegate_task",
  description:
    "Hand a self-contained task to a child agent with its own conversation and a bounded number of model " +
    "calls; returns its final answer. The child has your tools except delegate_task and knows only what " +
    "`goal` and `context` tell it.",
  parameters: {
    type: "object",
    properties: {
      goal: { type: "string", description: "What the child must do and what it should answer with" },
      context: { type: "string", description: "Facts the child needs (paths, constraints); it sees nothing else" },
    },
    required: ["goal"],
  },
};

const CHILD_STATUS: Record<TurnResult["exit_reason"], string> = {
  completed: "completed",
  max_turns: "failed",
  interrupted: "interrupted",
  api_error: "error",
  middleware_failed: "error",
};

/** The child's tool calls as metadata only: name, a bounded input, sizes and status, never raw results. */
function toolHistory(r: TurnResult): Array<Record<string, unknown>> {
  return r.tool_calls.map((c) => {
    const input = JSON.stringify(c.args);
    return {
      tool_name: c.tool_name,
      tool_input: input.length > 200 ? `${input.slice(0, 200)}…` : input,
      input_bytes: Buffer.byteLength(input),
      output_bytes: Buffer.byteLength(c.result),
      status: c.status,
    };
  });
}

/**
 * `delegate_task`: run `goal` as one turn of a child agent (same provider, runtime and approvals, its own
 * session, `delegation.max_iterations` model calls), firing subagent_start before it runs and
 * subagent_stop after, on the parent's own path. Children are leaves: they are not offered this tool.
 */
export function delegateTool(deps: { config: () => Record<string, unknown> }): Omit<ToolEntry, "owner"> {
  return {
    name: "delegate_task",
    toolset: "delegation",
    schema: DELEGATE_SCHEMA,
    requires_env: [],
    description: DELEGATE_SCHEMA.description,
    emoji: "🔀",
    handler: async (args, extra) => {
      const parent = runningAgent.getStore();
      if (!parent)
        throw new HermesError("E_AGENT_DELEGATE", { message: "delegate_task runs only inside an agent's turn" });
      if (parent.subagentId)
        throw new HermesError("E_AGENT_DELEGATE", { message: "a child agent cannot delegate further" });
      const goal = typeof args.goal === "string" ? args.goal.trim() : "";
      if (!goal) throw new HermesError("E_AGENT_TOOL_ARGS", { message: "a non-empty 'goal' string is required" });
      const context = typeof args.context === "string" ? args.context.trim() : "";
      return runChild(parent, goal, context, delegationBudget(deps.config()), extra);
    },
  };
}

async function runChild(
  parent: Agent,
  goal: string,
  context: string,
  budget: number,
  extra: Record<string, unknown>,
): Promise<string> {
  const child_subagent_id = newId("subagent");
  const child = parent.child({ maxTurns: budget, subagentId: child_subagent_id });
  const parent_turn_id = typeof extra.turn_id === "string" ? extra.turn_id : null;
  const ids = {
    parent_session_id: parent.session.session_id,
    parent_turn_id,
    child_session_id: child.session.session_id,
  };
  await parent.hooks.observe("subagent_start", {
    ...ids,
    parent_subagent_id: null,
    child_subagent_id,
    child_role: "leaf",
    child_goal: goal,
  });
  // Interrupting the parent's tool call interrupts the child's turn.
  const signal = extra.signal instanceof AbortSignal ? extra.signal : undefined;
  const stop = () => child.interrupt("the parent's turn was interrupted");
  signal?.addEventListener("abort", stop, { once: true });
  const started = performance.now();
  let result: TurnResult;
  try {
    result = await child.runTurn(context ? `${goal}\n\nContext:\n${context}` : goal);
  } finally {
    signal?.removeEventListener("abort", stop);
  }
  const duration_ms = Math.round(performance.now() - started);
  const child_status = CHILD_STATUS[result.exit_reason];
  await parent.hooks.observe("subagent_stop", {
    ...ids,
    child_role: "leaf",
    child_summary: result.answer,
    child_status,
    tool_call_history: toolHistory(result),
    duration_ms,
  });
  return JSON.stringify({
    status: child_status,
    summary: result.answer,
    exit_reason: result.exit_reason === "max_turns" ? "max_iterations" : result.exit_reason,
    ...(result.exit_reason === "max_turns" ? { truncated: true } : {}),
    ...(result.error ? { error: result.error.message } : {}),
    api_calls: result.api_calls,
    child_session_id: child.session.session_id,
    duration_ms,
  });
}
