import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import {
  agentHome,
  fakeOpenAI,
  LLM_CALL,
  logLines,
  names,
  readTrace,
  TOOL_CALL,
  TURN_END,
  TURN_START,
  type ChatJson,
  type Reply,
} from "./agent-helpers.js";

/**
 * Issue 5 acceptance: the exact order of hook and middleware events of an LLM call and of a tool
 * call, as the middleware seed lists them, through the built CLI against a real HTTP server
 * speaking chat completions (streamed and not): a plain answer, a tool call, a blocked tool call,
 * a retry after a 500, and execution middleware that fails before and after next_call.
 */
const scratch = new Scratch("hermes-e2e-agent-order-");
afterAll(() => scratch.cleanup());

async function chat(
  replies: Reply[],
  opts: {
    stream?: boolean;
    enabled?: string[];
    settings?: Record<string, unknown>;
    extraYaml?: string;
    plugins?: (pluginsDir: string) => void;
    query?: string;
  } = {},
) {
  const root = scratch.dir("chat");
  const h = agentHome(root, opts);
  opts.plugins?.(join(h.home, "plugins"));
  const server = await fakeOpenAI(replies);
  const work = join(root, "work");
  mkdirSync(work, { recursive: true });
  try {
    const r = await runCli(
      [
        "--home",
        h.home,
        "chat",
        "--provider",
        "openai-compatible",
        "--base-url",
        server.url,
        "--model",
        "fake-model",
        "--query",
        opts.query ?? "hello there",
        "--json",
        ...(opts.stream === false ? ["--no-stream"] : []),
      ],
      { env: { HERMES_BUNDLED_PLUGINS: h.bundled, HERMES_LOG_LEVEL: "warn" }, cwd: work },
    );
    let json: ChatJson | undefined;
    try {
      json = JSON.parse(r.stdout) as ChatJson;
    } catch {
      json = undefined;
    }
    return {
      ...r,
      json,
      trace: readTrace(h.trace),
      requests: server.requests,
      headers: server.headers,
      home: h.home,
      work,
      root,
    };
  } finally {
    await server.close();
  }
}

describe.each([
  ["not streamed", false],
  ["streamed (SSE)", true],
])("call order, %s", (_label, stream) => {
  it("a plain answer: turn hooks around one provider attempt, in the seed's order", async () => {
    const r = await chat([{ say: "hi, I am fine" }], { stream });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("hi, I am fine");
    expect(names(r.trace)).toEqual([...TURN_START, ...LLM_CALL, ...TURN_END]);
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]!.stream).toBe(stream);
    expect(r.requests[0]!.model).toBe("fake-model");
    // Every hook payload carries the observer schema version; middleware gets its own.
    for (const t of r.trace.filter((t) => t.ev.startsWith("hook:"))) expect(t.schema, t.ev).toBe("hermes.observer.v1");
    expect(r.trace.find((t) => t.ev === "mw:llm_request")!.mw_schema).toBe("hermes.middleware.v1");
    const end = r.trace.find((t) => t.ev === "hook:on_session_end")!;
    expect(end).toMatchObject({ completed: true, failed: false, interrupted: false, turn_exit_reason: "completed" });
    if (stream) {
      // Streaming observers: delivered off the token path, but all of them, in order, inside the attempt.
      const all = names(r.trace, { streams: true });
      const s = all.indexOf("hook:on_stream_start");
      const e = all.indexOf("hook:on_stream_end");
      expect(s).toBeGreaterThan(all.indexOf("hook:pre_api_request"));
      expect(e).toBeGreaterThan(s);
      expect(e).toBeLessThan(all.indexOf("hook:post_api_request"));
      const deltas = r.trace.filter((t) => t.ev === "hook:on_stream_delta").map((t) => t.delta);
      expect(deltas.join("")).toBe("hi, I am fine");
      expect(r.trace.find((t) => t.ev === "hook:on_stream_end")).toMatchObject({
        final_text: "hi, I am fine",
        finished: true,
      });
    } else expect(r.trace.some((t) => t.ev.startsWith("hook:on_stream_"))).toBe(false);
  });

  it(
    "a tool call: parse → tool_request → pre_tool_call → tool_execution → post_tool_call → " +
      "transform_tool_result, between two provider attempts",
    async () => {
      const r = await chat(
        [
          { tools: [{ name: "terminal", arguments: JSON.stringify({ command: "echo from-the-tool" }) }] },
          { say: "the tool said from-the-tool" },
        ],
        { stream },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(names(r.trace)).toEqual([...TURN_START, ...LLM_CALL, ...TOOL_CALL(true), ...LLM_CALL, ...TURN_END]);
      const post = r.trace.find((t) => t.ev === "hook:post_tool_call")!;
      expect(post).toMatchObject({ tool_name: "terminal", status: "success", error_type: null });
      expect(typeof post.duration_ms).toBe("number");
      expect(JSON.parse(post.result as string)).toEqual({ output: "from-the-tool\n", exit_code: 0, error: null });
      // The model gets the tool result in the next request, tied to its call id.
      const second = r.requests[1]!.messages as Array<{ role: string; content: string; tool_call_id?: string }>;
      const toolMsg = second.find((m) => m.role === "tool")!;
      expect(JSON.parse(toolMsg.content)).toEqual({ output: "from-the-tool\n", exit_code: 0, error: null });
      expect(toolMsg.tool_call_id).toBe(post.tool_call_id);
      expect(r.requests[0]!.tools).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: "function", function: expect.objectContaining({ name: "terminal" }) }),
        ]),
      );
    },
  );
});

describe("call order: blocked, retried, failing middleware", () => {
  it(
    "a blocked tool call gives the model {error} and post_tool_call(status blocked, plugin_block); nothing " +
      "executes",
    async () => {
      const r = await chat(
        [
          { tools: [{ name: "terminal", arguments: JSON.stringify({ command: "echo should-not-run > ran.txt" }) }] },
          { say: "ok, blocked" },
        ],
        { settings: { block_tool: "terminal" } },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(names(r.trace)).toEqual([
        ...TURN_START,
        ...LLM_CALL,
        "mw:tool_request",
        "hook:pre_tool_call",
        "hook:post_tool_call",
        ...LLM_CALL,
        ...TURN_END,
      ]);
      expect(r.trace.find((t) => t.ev === "hook:post_tool_call")).toMatchObject({
        status: "blocked",
        error_type: "plugin_block",
        error_message: "tracer blocks terminal",
        result: JSON.stringify({ error: "tracer blocks terminal" }),
      });
      const toolMsg = (r.requests[1]!.messages as Array<{ role: string; content: string }>).find(
        (m) => m.role === "tool",
      )!;
      expect(JSON.parse(toolMsg.content)).toEqual({ error: "tracer blocks terminal" });
      expect(existsSync(join(r.work, "ran.txt"))).toBe(false);
    },
  );

  it("a retry after HTTP 500 re-applies llm_request and fires api_request_error with the classification", async () => {
    const r = await chat([{ status: 500 }, { say: "second time lucky" }]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("second time lucky");
    expect(names(r.trace)).toEqual([
      ...TURN_START,
      "mw:llm_request",
      "hook:pre_api_request",
      "mw:llm_execution:enter",
      "mw:llm_execution:error",
      "hook:transform_api_error_classification",
      "hook:api_request_error",
      ...LLM_CALL,
      ...TURN_END,
    ]);
    expect(r.trace.find((t) => t.ev === "hook:api_request_error")).toMatchObject({
      status_code: 500,
      retryable: true,
      reason: "server_error",
      retry_count: 0,
    });
    expect(r.trace.filter((t) => t.ev === "hook:pre_api_request").map((t) => t.retry_count)).toEqual([0, 1]);
    expect(r.requests).toHaveLength(2);
    const log = logLines(r.stderr);
    expect(log.some((l) => l.code === "E_PROVIDER_HTTP" && /retry 1\//.test(String(l.msg)))).toBe(true);
  });

  it(
    "execution middleware failing before next_call is skipped (fail open); failing after keeps the result; " +
      "nothing runs twice",
    async () => {
      const plugins = (dir: string) => {
        for (const [name, when] of [
          ["fail-before", "before"],
          ["fail-after", "after"],
        ] as const) {
          mkdirSync(join(dir, name), { recursive: true });
          writeFileSync(
            join(dir, name, "plugin.yaml"),
            `name: ${name}\nversion: "1"\nprovides_middleware: [llm_execution, tool_execution]\n`,
          );
          const body =
            when === "before"
              ? `throw new Error("${name} broke before next_call");`
              : `await kw.next_call(kw[key]); throw new Error("${name} broke after next_call");`;
          writeFileSync(
            join(dir, name, "index.js"),
            `export function register(ctx) {
  for (const kind of ["llm_execution", "tool_execution"]) {
    const key = kind === "llm_execution" ? "request" : "args";
    ctx.register_middleware(kind, async function ${name.replace("-", "_")}(kw) { ${body} });
  }
}
`,
          );
        }
      };
      const r = await chat(
        [
          {
            tools: [
              { name: "terminal", arguments: JSON.stringify({ command: "echo once >> count.txt; echo counted" }) },
            ],
          },
          { say: "counted once" },
        ],
        {
          enabled: ["fail-before", "fail-after"],
          plugins,
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.json!.answer).toBe("counted once");
      // The tool ran once and the provider was called once per model call.
      expect(readFileSync(join(r.work, "count.txt"), "utf8")).toBe("once\n");
      expect(r.requests).toHaveLength(2);
      expect(names(r.trace)).toEqual([...TURN_START, ...LLM_CALL, ...TOOL_CALL(true), ...LLM_CALL, ...TURN_END]);
      const toolMsg = (r.requests[1]!.messages as Array<{ role: string; content: string }>).find(
        (m) => m.role === "tool",
      )!;
      expect(JSON.parse(toolMsg.content)).toEqual({ output: "counted\n", exit_code: 0, error: null });
      // Each failure is reported once with the field names the middleware provides, not once per call.
      const warn = logLines(r.stderr).map((l) => String(l.msg));
      expect(
        warn.filter((m) => /Middleware 'tool_execution' callback fail_before raised: .*broke before next_call/.test(m)),
      ).toHaveLength(1);
      expect(
        warn.filter((m) => /Middleware 'tool_execution' callback fail_after raised: .*broke after next_call/.test(m)),
      ).toHaveLength(1);
      expect(warn.filter((m) => /Middleware 'llm_execution' callback fail_before raised/.test(m))).toHaveLength(1);
    },
  );
});
