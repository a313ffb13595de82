import { AsyncLocalStorage } from "node:async_hooks";

/** The tools whose pipeline runs in this async context, outermost first (ctx.dispatch_tool's recursion check). */
const chain = new AsyncLocalStorage<readonly string[]>();

export function toolChain(): readonly string[] {
  return chain.getStore() ?? [];
}

/** Run one tool call's pipeline (hooks, middleware, handler) with `name` added to the chain. */
export function withinToolCall<T>(name: string, fn: () => Promise<T>): Promise<T> {
  return chain.run([...toolChain(), name], fn);
}
