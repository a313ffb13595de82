import { HermesError } from "../core/errors.js";
import { toolChain } from "./dispatch-scope.js";
import { newId } from "./ids.js";
import { runToolCall, type ToolCallContext } from "./tool-call.js";

/** What a session lends ctx.dispatch_tool: its pipeline parts, and the turn that is running, if any. */
export type DispatchContext = Omit<ToolCallContext, "ids" | "extra"> & { turn_id: string | null };

/**
 * ctx.dispatch_tool inside a session: the call goes through the same pipeline as the model's calls
 * (tool_request and tool_execution middleware, pre_tool_call/post_tool_call/transform_tool_result,
 * guardrails, deny rules and approvals) with the session's ids and the running turn's id and signal,
 * and resolves to the result the model would get. A tool already on the dispatch chain (the tool
 * itself, or one that led to it) is refused, so a tool or hook cannot dispatch itself forever.
 */
export async function dispatchForPlugin(
  c: DispatchContext,
  caller: string,
  name: string,
  args: unknown,
  extra: Record<string, unknown>,
): Promise<string> {
  const chain = toolChain();
  if (chain.includes(name)) {
    const err = new HermesError("E_PLUGIN_DISPATCH_RECURSION", {
      message:
        `ctx.dispatch_tool('${name}') of plugin '${caller}' was refused: '${name}' is already running in this ` +
        `call chain (${[...chain, name].join(" → ")}), and a tool may not dispatch itself, directly or through ` +
        "other tools or hooks",
    });
    c.log.warn({ code: err.code, plugin: caller, tool: name }, err.message);
    throw err;
  }
  let text: string;
  try {
    text = JSON.stringify(args ?? {});
  } catch (e) {
    throw new HermesError("E_PLUGIN_DISPATCH_ARGS", {
      message:
        `ctx.dispatch_tool('${name}') of plugin '${caller}': the arguments are not JSON ` + `(${(e as Error).message})`,
    });
  }
  const { turn_id, ...parts } = c;
  const o = await runToolCall(
    {
      ...parts,
      ids: { session_id: c.session.session_id, task_id: c.session.task_id, turn_id, api_request_id: null },
      extra,
    },
    { id: newId("call"), type: "function", function: { name, arguments: text } },
  );
  return o.result;
}
