/**
 * The bundled memory provider `facts` (select it with `memory.provider: facts`; docs/plugins.md, "Memory
 * providers"). The model stores a durable fact with the `facts_remember` tool; every later turn, in any
 * session of this home, starts with the stored facts recalled. The facts live in the plugin's `ctx.state`
 * file under the home (`<home>/plugin-data/…/state.json`: atomic writes under a file lock).
 */

/** Facts recalled before a turn: the newest ones, at most this many. */
const RECALL_LIMIT = 50;
/** Longest fact kept, in characters. */
const MAX_FACT = 500;

const TOOL = {
  name: "facts_remember",
  description:
    "Store one durable fact (about the user, their preferences or their work) in long-term memory; it is " +
    "recalled at the start of every later turn, also in new sessions.",
  parameters: {
    type: "object",
    properties: { fact: { type: "string", description: "The fact, as one short sentence" } },
    required: ["fact"],
  },
};

function factList(v) {
  return Array.isArray(v) ? v.filter((f) => f && typeof f.text === "string") : [];
}

export function register(ctx) {
  const read = async () => factList(await ctx.state.get("facts", []));

  async function remember(args, extra) {
    const text = String(args?.fact ?? "")
      .replace(/\s+/g, " ")
      .trim()
      .slice(0, MAX_FACT);
    if (!text) return JSON.stringify({ error: "facts_remember needs a non-empty 'fact'" });
    // Read again just before the write: another session of this home may have added facts meanwhile.
    const facts = await read();
    if (!facts.some((f) => f.text === text)) {
      facts.push({ text, at: new Date().toISOString(), session_id: extra?.session_id ?? null });
      await ctx.state.set("facts", facts);
    }
    return JSON.stringify({ remembered: text, facts: facts.length });
  }

  ctx.register_memory_provider({
    name: "facts",
    is_available: () => true,
    system_prompt_block: () =>
      "Long-term memory: call facts_remember to store a durable fact about the user or their work; stored " +
      "facts are recalled at the start of every later turn (in a <memory-context> block).",
    prefetch: async () => {
      const facts = (await read()).slice(-RECALL_LIMIT);
      return facts.length ? `Facts remembered earlier:\n${facts.map((f) => `- ${f.text}`).join("\n")}` : "";
    },
    get_tool_schemas: () => [TOOL],
    handle_tool_call: (name, args, extra) =>
      name === TOOL.name ? remember(args, extra) : JSON.stringify({ error: `unknown tool '${name}'` }),
  });
}
