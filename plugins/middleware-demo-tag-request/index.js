// The middleware seed's "LLM request middleware" example, in JavaScript.
// It tags the provider request and leaves a trace entry that later observers
// (pre_api_request and after) see as middleware_trace.
export function register(ctx) {
  ctx.register_middleware("llm_request", tag_llm_request);
}

function tag_llm_request(kwargs) {
  const request = { ...kwargs.request };
  const extra_body = { ...(request.extra_body ?? {}) };
  extra_body.metadata = { ...(extra_body.metadata ?? {}), hermes_middleware_demo: true };
  request.extra_body = extra_body;
  return {
    request,
    source: "middleware-demo",
    reason: "tagged provider request",
  };
}
