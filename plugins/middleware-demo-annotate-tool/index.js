// The middleware seed's "tool execution middleware" example, in JavaScript.
// It wraps the real tool call and returns its result unchanged.
export function register(ctx) {
  ctx.register_middleware("tool_execution", annotate_tool_execution);
}

async function annotate_tool_execution(kwargs) {
  const result = await kwargs.next_call(kwargs.args);
  // Here you could collect metrics, log, or route to external systems.
  return result;
}
