// The seed's minimal plugin, in JavaScript: one tool and one hook.
export function register(ctx) {
  ctx.register_tool({
    name: "hello_world",
    toolset: "hello_world",
    schema: {
      name: "hello_world",
      description: "Returns a friendly greeting for the given name.",
      parameters: {
        type: "object",
        properties: { name: { type: "string", description: "Name to greet" } },
        required: ["name"],
      },
    },
    handler: (params) => JSON.stringify({ success: true, greeting: `Hello, ${params?.name ?? "World"}!` }),
  });

  ctx.register_hook("post_tool_call", ({ tool_name }) => {
    ctx.log.info(`[hello-world] tool called: ${tool_name}`);
  });
}
