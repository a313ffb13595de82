// The middleware seed's "LLM execution middleware" example, in JavaScript.
// It wraps the real provider call and returns the provider's response unchanged
// (same shape as the provider adapter returns; no plugin-specific envelope).
import { performance } from "node:perf_hooks";

export function register(ctx) {
  ctx.register_middleware("llm_execution", time_llm_execution);
}

async function time_llm_execution(kwargs) {
  const started = performance.now();
  const response = await kwargs.next_call(kwargs.request);
  const elapsed_ms = Math.trunc(performance.now() - started);
  console.log(`llm_execution elapsed_ms=${elapsed_ms}`);
  return response;
}
