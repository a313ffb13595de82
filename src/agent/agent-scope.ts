import { AsyncLocalStorage } from "node:async_hooks";
import type { Agent } from "./agent.js";

/**
 * The agent whose turn is running, for tools that act on their caller (delegate_task builds a child of
 * it). An async context rather than a field, because `hermes serve` runs many agents over one runtime.
 */
export const runningAgent = new AsyncLocalStorage<Agent>();
