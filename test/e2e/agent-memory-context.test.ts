import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, runCli, STACK_RE } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import { agentHome, fakeOpenAI, readTrace, type AgentHome } from "./agent-helpers.js";

/**
 * Issue 17 (part A): the exclusive plugins. `memory.provider` selects a memory provider (the bundled
 * file-backed `facts`, or a user folder of the same name that wins over it) and the agent uses it every
 * turn: system prompt block, prefetch into the model's request, its tools through the tool pipeline,
 * sync after the turn, shutdown at exit. `context.engine` selects a context engine; by default the
 * built-in compressor summarises older turns through the session's provider and keeps the last ones.
 */
const scratch = new Scratch("hermes-e2e-memory-context-");
afterAll(() => scratch.cleanup());

type Msg = { role: string; content: string | null; tool_calls?: unknown[] };
const msgs = (req: Record<string, unknown>) => req.messages as Msg[];
const toolNames = (req: Record<string, unknown>) =>
  ((req.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);

/** A home whose bundled root holds only the shipped `plugins/memory/facts` (linked, as a package holds it). */
function memoryHome(name: string, extraYaml: string): AgentHome {
  const root = scratch.dir(name);
  const bundled = join(root, "bundled");
  mkdirSync(join(bundled, "memory"), { recursive: true });
  symlinkSync(join(ROOT, "plugins", "memory", "facts"), join(bundled, "memory", "facts"));
  return agentHome(root, { bundled, extraYaml });
}

async function chat(h: AgentHome, url: string, query: string | string[]) {
  const repl = Array.isArray(query);
  const r = await runCli(
    [
      "--home",
      h.home,
      "chat",
      "--base-url",
      url,
      "--model",
      "fake-model",
      ...(repl ? [] : ["--query", query, "--json"]),
    ],
    {
      env: { HERMES_BUNDLED_PLUGINS: h.bundled },
      cwd: h.home,
      ...(repl ? { input: `${query.join("\n")}\n/exit\n` } : {}),
    },
  );
  expect(r.stderr).not.toMatch(STACK_RE);
  return r;
}

/** The `facts` plugin's ctx.state file under the home. */
function factsFile(home: string): string {
  const data = join(home, "plugin-data");
  const ns = readdirSync(data).find((d) => d.startsWith("agent-plugin-memory-facts-"));
  if (!ns) throw new Error(`no facts state under ${data}: ${readdirSync(data).join(", ")}`);
  return join(data, ns, "state.json");
}

describe("memory.provider: the bundled file-backed provider", () => {
  it("is loaded by selection alone; its tool stores a fact in the home; a later session recalls it", async () => {
    const h = memoryHome("facts", "memory:\n  provider: facts\n");
    const server = await fakeOpenAI([
      { tools: [{ name: "facts_remember", arguments: '{"fact": "The user drinks green tea."}' }] },
      { say: "Noted." },
      { say: "You drink green tea." },
    ]);
    try {
      const first = await chat(h, server.url, "remember that I drink green tea");
      expect(first.code, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({ answer: "Noted.", completed: true });
      // Selected, not enabled: plugins.enabled names only the tracer.
      const lock = JSON.parse(readFileSync(join(h.home, "hermes.lock.json"), "utf8")) as {
        plugins: Array<{ key: string; action: string; reason: string; state: string }>;
      };
      expect(lock.plugins.find((p) => p.key === "memory/facts")).toMatchObject({
        action: "load",
        state: "not-enabled",
        reason: "selected by memory.provider",
      });
      // The provider's block is in the system prompt and its tool reached the model beside the built-ins.
      const req0 = server.requests[0]!;
      expect(msgs(req0)[0]!.content).toContain("call facts_remember to store a durable fact");
      expect(toolNames(req0)).toContain("facts_remember");
      // The tool ran through the pipeline (the tracer's hooks saw it) and wrote the state file atomically.
      const trace = readTrace(h.trace);
      expect(trace.find((t) => t.ev === "hook:post_tool_call")).toMatchObject({
        tool_name: "facts_remember",
        status: "success",
      });
      const state = JSON.parse(readFileSync(factsFile(h.home), "utf8")) as { facts: Array<{ text: string }> };
      expect(state.facts.map((f) => f.text)).toEqual(["The user drinks green tea."]);

      // A new process, a new session: the fact is recalled into the user's message the model receives.
      const second = await chat(h, server.url, "what do I drink?");
      expect(second.code, second.stderr).toBe(0);
      const last = msgs(server.requests[2]!).at(-1)!;
      expect(last.role).toBe("user");
      expect(last.content).toMatch(/^what do I drink\?\n\n<memory-context>\n/);
      expect(last.content).toContain("- The user drinks green tea.");
      expect(last.content).toMatch(/<\/memory-context>$/);
      // The session keeps the message as typed: the recall is not in the turn's history hooks see.
      const preLlm = readTrace(h.trace).filter((t) => t.ev === "hook:pre_llm_call");
      expect(preLlm.at(-1)!.user_message).toBe("what do I drink?");
    } finally {
      await server.close();
    }
  });

  it("a name nothing provides warns with the nearest name, and the agent runs with built-in memory", async () => {
    const h = memoryHome("typo", "memory:\n  provider: fatcs\n");
    const server = await fakeOpenAI([{ say: "hello" }]);
    try {
      // compile says so from discovery…
      const c = await runCli(["--home", h.home, "compile"], { env: { HERMES_BUNDLED_PLUGINS: h.bundled } });
      expect(c.code, c.stderr).toBe(0);
      expect(c.stderr).toContain(
        "warning W_PROVIDER_NOT_FOUND " +
          `${join(h.home, "config.yaml")} memory.provider: memory.provider 'fatcs' names no discovered memory ` +
          "provider plugin; did you mean 'facts'?",
      );
      // …and the agent when it starts, then runs without memory.
      const r = await chat(h, server.url, "hi");
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("W_PROVIDER_NOT_FOUND");
      expect(r.stderr).toContain(
        "memory.provider 'fatcs': no loaded plugin registered a memory provider by that name; did you mean 'facts'?",
      );
      expect(toolNames(server.requests[0]!)).not.toContain("facts_remember");
      expect(msgs(server.requests[0]!).at(-1)!.content).toBe("hi");
    } finally {
      await server.close();
    }
  });
});

/** A user memory provider named `facts` that logs each call of the contract to `calls.jsonl`. */
function writeRecordingProvider(home: string, log: string): void {
  const dir = join(home, "plugins", "memory", "facts");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), 'name: facts\nversion: "9"\n');
  writeFileSync(
    join(dir, "index.js"),
    `import { appendFileSync } from "node:fs";
const rec = (call, data = {}) => appendFileSync(${JSON.stringify(log)}, JSON.stringify({ call, ...data }) + "\\n");
export function register(ctx) {
  ctx.registerMemoryProvider({
    name: "facts",
    isAvailable() { rec("is_available"); return true; },
    initialize(session_id, kw) {
      rec("initialize", { session_id, hermes_home: kw.hermes_home, platform: kw.platform });
    },
    systemPromptBlock() { rec("system_prompt_block"); return "USER PROVIDER BLOCK"; },
    async prefetch(query, kw) {
      rec("prefetch", { query, session_id: kw.session_id });
      return "recalled: " + query;
    },
    syncTurn(user, assistant, kw) { rec("sync_turn", { user, assistant, messages: kw.messages.length }); },
    getToolSchemas() {
      return [{ name: "user_recall", description: "recall", parameters: { type: "object", properties: {} } }];
    },
    handleToolCall(name, args, extra) {
      rec("handle_tool_call", { name, session: typeof extra.session_id });
      return { hits: 3 };
    },
    shutdown() { rec("shutdown"); },
  });
}
`,
  );
}

describe("memory.provider: a user folder wins over the bundled provider of the same name", () => {
  it("every method of the contract is called in order, camelCase aliases included", async () => {
    const h = memoryHome("user-wins", "memory:\n  provider: facts\n");
    const calls = join(h.home, "..", "calls.jsonl");
    writeRecordingProvider(h.home, calls);
    const server = await fakeOpenAI([
      { tools: [{ name: "user_recall", arguments: "{}" }] },
      { say: "first answer" },
      { say: "second answer" },
    ]);
    try {
      const r = await chat(h, server.url, ["turn one", "turn two"]);
      expect(r.code, r.stderr).toBe(0);
      const log = readFileSync(calls, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(log.map((c) => c.call)).toEqual([
        "is_available",
        "initialize",
        "system_prompt_block",
        "prefetch",
        "handle_tool_call",
        "sync_turn",
        "prefetch",
        "sync_turn",
        "shutdown",
      ]);
      expect(log[1]).toMatchObject({ hermes_home: h.home, platform: "cli" });
      expect(log[3]).toMatchObject({ query: "turn one", session_id: log[1]!.session_id });
      expect(log[4]).toEqual({ call: "handle_tool_call", name: "user_recall", session: "string" });
      // sync_turn gets the finished turn: user, answer and the history (user, tool call, tool result, answer).
      expect(log[5]).toEqual({ call: "sync_turn", user: "turn one", assistant: "first answer", messages: 4 });
      expect(log[7]).toMatchObject({ user: "turn two", assistant: "second answer" });
      // The user's provider, not the bundled one: its block and tool, not facts_remember.
      expect(msgs(server.requests[0]!)[0]!.content).toContain("USER PROVIDER BLOCK");
      expect(toolNames(server.requests[0]!)).toContain("user_recall");
      expect(toolNames(server.requests[0]!)).not.toContain("facts_remember");
      expect(msgs(server.requests[2]!).at(-1)!.content).toContain("recalled: turn two");
      expect(readTrace(h.trace).find((t) => t.ev === "hook:post_tool_call")).toMatchObject({
        tool_name: "user_recall",
        result: '{"hits":3}',
      });
    } finally {
      await server.close();
    }
  });
});

describe("context.engine: the built-in compressor", () => {
  it("over the budget, older turns are summarised by the session's provider; the last ones stay verbatim", async () => {
    const h = memoryHome(
      "compressor",
      "model:\n  context_length: 150\ncompression:\n  threshold: 0.5\n  protect_last_n: 2\n",
    );
    const server = await fakeOpenAI([
      { say: "answer alpha" },
      { say: "answer beta" },
      { say: "SUMMARY: the user asked about alpha." },
      { say: "answer gamma" },
    ]);
    try {
      const r = await chat(h, server.url, ["question alpha", "question beta", "question gamma"]);
      expect(r.code, r.stderr).toBe(0);
      expect(server.requests).toHaveLength(4);
      // The third request is the summary call: not streamed, the compressor's instructions and the old turn.
      const summary = server.requests[2]!;
      expect(summary.stream).toBe(false);
      expect(summary.tools).toBeUndefined();
      expect(msgs(summary)[0]!.content).toContain("You compact conversations");
      expect(msgs(summary)[1]!.content).toContain("user: question alpha\nassistant: answer alpha");
      expect(msgs(summary)[1]!.content).not.toContain("question beta");
      // The turn after it: system prompt, the summary, then the last two messages and the new one, verbatim.
      const turn = msgs(server.requests[3]!);
      expect(turn.map((m) => [m.role, m.content])).toEqual([
        ["system", msgs(server.requests[0]!)[0]!.content],
        [
          "user",
          "[Summary of the earlier conversation, compacted to fit the context window]\n" +
            "SUMMARY: the user asked about alpha.",
        ],
        ["user", "question beta"],
        ["assistant", "answer beta"],
        ["user", "question gamma"],
      ]);
      // An auxiliary call: pre/post_auxiliary_call with aux_task compression, never pre_api_request.
      const trace = readTrace(h.trace);
      expect(trace.filter((t) => t.ev === "hook:pre_auxiliary_call")).toEqual([
        expect.objectContaining({ aux_task: "compression" }),
      ]);
      expect(trace.filter((t) => t.ev === "hook:pre_api_request")).toHaveLength(3);
    } finally {
      await server.close();
    }
  });

  it("a failed summary call keeps the conversation as it was, and the turn still runs", async () => {
    const h = memoryHome("compressor-fails", "model:\n  context_length: 150\ncompression:\n  protect_last_n: 2\n");
    const server = await fakeOpenAI([
      { say: "answer alpha" },
      { say: "answer beta" },
      { status: 400, body: JSON.stringify({ error: { message: "no summaries today" } }) },
      { say: "answer gamma" },
    ]);
    try {
      const r = await chat(h, server.url, ["question alpha", "question beta", "question gamma"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("W_AGENT_COMPRESS_FAILED");
      expect(msgs(server.requests[3]!).map((m) => m.content)).toContain("question alpha");
      expect(r.stdout).toContain("answer gamma");
    } finally {
      await server.close();
    }
  });
});

describe("context.engine: a plugin engine", () => {
  it("is selected by context.engine, told the budget, and its compress() result is the conversation", async () => {
    const h = memoryHome("engine", "context:\n  engine: lastonly\nmodel:\n  context_length: 4096\n");
    const calls = join(h.home, "..", "engine.jsonl");
    const dir = join(h.home, "plugins", "context_engine", "lastonly");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "plugin.yaml"), 'name: lastonly\nversion: "1"\n');
    writeFileSync(
      join(dir, "index.js"),
      `import { appendFileSync } from "node:fs";
const rec = (call, data = {}) => appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ call, ...data }) + "\\n");
export function register(ctx) {
  ctx.register_context_engine({
    name: "lastonly",
    update_model(model, context_length) { rec("update_model", { model, context_length }); },
    on_session_start(session_id) { rec("on_session_start"); },
    update_from_response(usage) { rec("update_from_response", { prompt_tokens: usage.prompt_tokens }); },
    should_compress(tokens) { rec("should_compress", { positive: tokens > 0 }); return true; },
    compress(messages) {
      rec("compress", { n: messages.length });
      return messages.length > 2 ? [messages[0], messages.at(-1)] : messages;
    },
  });
}
`,
    );
    // Not streamed: the answers carry usage, which the engine is given.
    const server = await fakeOpenAI([
      { say: "one", stream: false },
      { say: "two", stream: false },
    ]);
    try {
      const r = await chat(h, server.url, ["first", "second"]);
      expect(r.code, r.stderr).toBe(0);
      const log = readFileSync(calls, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(log).toEqual([
        { call: "update_model", model: "fake-model", context_length: 4096 },
        { call: "on_session_start" },
        { call: "should_compress", positive: true },
        { call: "compress", n: 1 },
        { call: "update_from_response", prompt_tokens: 10 },
        { call: "should_compress", positive: true },
        { call: "compress", n: 3 },
        { call: "update_from_response", prompt_tokens: 10 },
      ]);
      // Its result replaced the conversation: the first turn's question is gone from the second request.
      const system = msgs(server.requests[0]!)[0]!.content;
      expect(msgs(server.requests[1]!).map((m) => m.content)).toEqual([system, "one", "second"]);
      expect(existsSync(join(h.home, "hermes.lock.json"))).toBe(true);
    } finally {
      await server.close();
    }
  });
});
