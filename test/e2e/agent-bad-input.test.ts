import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, spawnCli, STACK_RE } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import {
  agentHome,
  fakeOpenAI,
  LLM_CALL,
  logLines,
  names,
  readTrace,
  TURN_END,
  TURN_START,
  waitFor,
  type ChatJson,
  type Reply,
} from "./agent-helpers.js";

/**
 * Issue 5, bad input: a provider that sends malformed JSON, times out or drops the stream; tool
 * arguments that are not JSON; an unknown tool; a turn over max_turns; Ctrl-C mid-tool and
 * mid-request. Each ends in a clear, logged outcome, the turn continues or ends cleanly, and
 * nothing is executed twice.
 */
const scratch = new Scratch("hermes-e2e-agent-bad-");
afterAll(() => scratch.cleanup());

async function chat(
  replies: Reply[],
  opts: { stream?: boolean; extraYaml?: string; args?: string[]; settings?: Record<string, unknown> } = {},
) {
  const root = scratch.dir("bad");
  const h = agentHome(root, opts);
  const server = await fakeOpenAI(replies);
  const work = join(root, "work");
  mkdirSync(work, { recursive: true });
  try {
    const r = await runCli(
      [
        "--home",
        h.home,
        "chat",
        "--base-url",
        server.url,
        "--model",
        "fake-model",
        "--query",
        "go",
        "--json",
        ...(opts.stream === false ? ["--no-stream"] : []),
        ...(opts.args ?? []),
      ],
      { env: { HERMES_BUNDLED_PLUGINS: h.bundled }, cwd: work },
    );
    const json = r.stdout.trim() ? (JSON.parse(r.stdout) as ChatJson) : undefined;
    return { ...r, json, trace: readTrace(h.trace), requests: server.requests, work, log: logLines(r.stderr) };
  } finally {
    await server.close();
  }
}

describe("a provider that misbehaves", () => {
  it(
    "malformed JSON: api_request_error " + "(malformed_response, retryable), retried, then the " + "turn continues",
    async () => {
      const r = await chat([{ raw: "{this is not json" }, { say: "recovered" }], { stream: false });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json!.answer).toBe("recovered");
      expect(r.trace.find((t) => t.ev === "hook:api_request_error")).toMatchObject({
        reason: "malformed_response",
        retryable: true,
        error: { code: "E_PROVIDER_MALFORMED" },
      });
      expect(r.log.some((l) => l.code === "E_PROVIDER_MALFORMED" && /not JSON/.test(String(l.msg)))).toBe(true);
    },
  );

  it("malformed JSON every time: the turn ends failed, with the code on stderr and exit 1, no stack", async () => {
    const r = await chat([{ raw: "<html>oops</html>", contentType: "text/html" }], {
      stream: false,
      extraYaml: "  api_max_retries: 1\n",
    });
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({
      completed: false,
      failed: true,
      interrupted: false,
      exit_reason: "api_error",
      error: { code: "E_PROVIDER_MALFORMED" },
    });
    expect(r.requests).toHaveLength(2);
    expect(r.trace.find((t) => t.ev === "hook:on_session_end")).toMatchObject({
      completed: false,
      failed: true,
      interrupted: false,
      turn_exit_reason: "api_error",
    });
    expect(names(r.trace)).not.toContain("hook:post_llm_call");
    expect(r.stderr).not.toMatch(STACK_RE);
  });

  it("a timeout: a clear E_PROVIDER_TIMEOUT outcome after model.timeout, retried once, then failed", async () => {
    const started = Date.now();
    const r = await chat([{ hang: true }], { extraYaml: "  api_max_retries: 1\nmodel:\n  timeout: 1\n" });
    expect(r.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(r.json!.error!.code).toBe("E_PROVIDER_TIMEOUT");
    const errs = r.trace.filter((t) => t.ev === "hook:api_request_error");
    expect(errs.map((e) => [e.reason, e.retryable, e.retry_count])).toEqual([
      ["timeout", true, 0],
      ["timeout", true, 1],
    ]);
    expect(r.log.filter((l) => l.code === "E_PROVIDER_TIMEOUT").length).toBeGreaterThanOrEqual(2);
  });

  it("a dropped stream: E_PROVIDER_STREAM, on_stream_end(finished false), then a retry that completes", async () => {
    const r = await chat([{ drop: "this answer will be cut off in the middle", after: 3 }, { say: "whole answer" }], {
      stream: true,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("whole answer");
    expect(r.trace.find((t) => t.ev === "hook:api_request_error")).toMatchObject({
      reason: "stream_interrupted",
      retryable: true,
      error: { code: "E_PROVIDER_STREAM" },
    });
    const ends = r.trace.filter((t) => t.ev === "hook:on_stream_end");
    expect(ends[0]).toMatchObject({ finished: false });
    expect(ends[0]!.final_text).toBe("this answer will ");
    expect(ends[1]).toMatchObject({ finished: true, final_text: "whole answer" });
  });

  it("a 401 is not retried: one request, reason auth, the server's message in the outcome", async () => {
    const r = await chat([
      { status: 401, body: JSON.stringify({ error: { message: "bad key", code: "invalid_api_key" } }) },
    ]);
    expect(r.code).toBe(1);
    expect(r.requests).toHaveLength(1);
    expect(r.trace.find((t) => t.ev === "hook:api_request_error")).toMatchObject({
      status_code: 401,
      retryable: false,
      reason: "auth",
    });
    expect(r.json!.error!.message).toContain("bad key");
  });
});

describe("tool calls the agent cannot run", () => {
  it("arguments that are not JSON: an error result to the model, logged, nothing run, the turn continues", async () => {
    const r = await chat([
      { tools: [{ name: "terminal", arguments: '{"command": "echo x > ran.txt"' }] },
      { say: "sorry" },
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(names(r.trace)).toEqual([
      ...TURN_START,
      ...LLM_CALL,
      "hook:post_tool_call",
      "hook:transform_tool_result",
      ...LLM_CALL,
      ...TURN_END,
    ]);
    expect(r.trace.find((t) => t.ev === "hook:post_tool_call")).toMatchObject({
      status: "error",
      error_type: "invalid_arguments",
    });
    const toolMsg = (r.requests[1]!.messages as Array<{ role: string; content: string }>).find(
      (m) => m.role === "tool",
    )!;
    expect(JSON.parse(toolMsg.content).error).toMatch(
      /invalid arguments for tool 'terminal': the arguments are not valid JSON/,
    );
    expect(r.log.some((l) => l.code === "E_AGENT_TOOL_ARGS")).toBe(true);
    expect(existsSync(join(r.work, "ran.txt"))).toBe(false);
  });

  it("arguments that need coercing: a numeric string for an integer parameter becomes a number", async () => {
    const r = await chat([
      { tools: [{ name: "terminal", arguments: JSON.stringify({ command: "echo coerced", timeout: "5" }) }] },
      { say: "ok" },
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.trace.find((t) => t.ev === "mw:tool_request")!.args).toEqual({ command: "echo coerced", timeout: 5 });
  });

  it(
    "an unknown tool: tool_request runs, then an error naming the available tools; no pre_tool_call, nothing " +
      "executed",
    async () => {
      const r = await chat([{ tools: [{ name: "launch_rockets", arguments: "{}" }] }, { say: "no rockets" }]);
      expect(r.code, r.stderr).toBe(0);
      expect(names(r.trace)).toEqual([
        ...TURN_START,
        ...LLM_CALL,
        "mw:tool_request",
        "hook:post_tool_call",
        "hook:transform_tool_result",
        ...LLM_CALL,
        ...TURN_END,
      ]);
      expect(r.trace.find((t) => t.ev === "hook:post_tool_call")).toMatchObject({
        status: "error",
        error_type: "unknown_tool",
      });
      expect(r.json!.tool_calls[0]!.result).toMatch(/unknown tool 'launch_rockets'; available tools: .*terminal/);
      expect(r.log.some((l) => l.code === "E_AGENT_UNKNOWN_TOOL")).toBe(true);
    },
  );

  it("a model that never stops calling tools ends at --max-turns with E_AGENT_MAX_TURNS and exit 1", async () => {
    const r = await chat(
      [{ tools: [{ name: "terminal", arguments: JSON.stringify({ command: "echo again >> loops.txt" }) }] }],
      { args: ["--max-turns", "2"] },
    );
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ exit_reason: "max_turns", completed: false, error: { code: "E_AGENT_MAX_TURNS" } });
    expect(r.requests).toHaveLength(2);
    expect(r.trace.find((t) => t.ev === "hook:on_session_end")).toMatchObject({
      turn_exit_reason: "max_turns",
      completed: false,
    });
  });
});

describe("interrupting a turn (Ctrl-C)", () => {
  async function interrupted(replies: Reply[], waitForEv: string) {
    const root = scratch.dir("sigint");
    const h = agentHome(root);
    const server = await fakeOpenAI(replies);
    const work = join(root, "work");
    mkdirSync(work, { recursive: true });
    try {
      const p = spawnCli(
        ["--home", h.home, "chat", "--base-url", server.url, "--model", "m", "--query", "long job", "--json"],
        { env: { HERMES_BUNDLED_PLUGINS: h.bundled }, cwd: work },
      );
      await waitFor(() => readTrace(h.trace).some((t) => t.ev === waitForEv), 30_000, waitForEv);
      const t0 = Date.now();
      p.child.kill("SIGINT");
      const res = await p.done;
      return {
        ...res,
        ms: Date.now() - t0,
        json: JSON.parse(p.stdout()) as ChatJson,
        trace: readTrace(h.trace),
        stderr: p.stderr(),
        requests: server.requests,
      };
    } finally {
      await server.close();
    }
  }

  it("mid-tool: the command is killed, the turn ends with interrupted: true, exit 130, no post_llm_call", async () => {
    const r = await interrupted(
      [{ tools: [{ name: "terminal", arguments: JSON.stringify({ command: "sleep 30" }) }] }, { say: "never asked" }],
      "mw:tool_execution:enter",
    );
    expect(r.code).toBe(130);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.json).toMatchObject({
      interrupted: true,
      completed: false,
      exit_reason: "interrupted",
      error: { code: "E_AGENT_INTERRUPTED" },
    });
    expect(r.trace.find((t) => t.ev === "hook:post_tool_call")).toMatchObject({
      status: "error",
      error_type: "interrupted",
    });
    expect(r.trace.find((t) => t.ev === "hook:on_session_end")).toMatchObject({
      interrupted: true,
      completed: false,
      turn_exit_reason: "interrupted",
    });
    expect(names(r.trace)).not.toContain("hook:post_llm_call");
    expect(r.requests).toHaveLength(1);
  });

  it("mid-request: the provider call is cancelled, api_request_error(interrupted), exit 130", async () => {
    const r = await interrupted([{ hang: true }], "mw:llm_execution:enter");
    expect(r.code).toBe(130);
    expect(r.trace.find((t) => t.ev === "hook:api_request_error")).toMatchObject({
      reason: "interrupted",
      retryable: false,
    });
    expect(names(r.trace).slice(-1)).toEqual(["hook:on_session_end"]);
    expect(r.trace.find((t) => t.ev === "hook:on_session_end")).toMatchObject({ interrupted: true });
  });
});

// Used by the approval tests below: a plugin approval transport whose behaviour comes from its settings.
function writeApprover(pluginsDir: string): void {
  const dir = join(pluginsDir, "approver");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), 'name: approver\nversion: "1"\n');
  writeFileSync(
    join(dir, "index.js"),
    `import { appendFileSync } from "node:fs";
export function register(ctx) {
  let first;
  ` +
      `ctx.register_approval_transport("test-ui", (request) => {
    const mode = ctx.get_config("mode");
    ` +
      `appendFileSync(ctx.get_config("trace_file"), JSON.stringify({ ev: "transport", mode, command: ` +
      `request.command, choices: request.allowed_choices, frozen: Object.isFrozen(request) }) + "\\n");
    if ` +
      `(mode === "once") return request.respond("once");
    if (mode === "late") return new Promise((r) => ` +
      `setTimeout(() => r(request.respond("once")), 2500));
    if (mode === "stale") {
      if (!first) { ` +
      `first = request; return request.respond("deny"); }
      return first.respond("once");
    }
    if ` +
      `(mode === "always") return request.respond("always");
    if (mode === "plain") return { request_id: ` +
      `request.request_id, request_digest: request.digest, choice: "once" };
    if (mode === "throw") throw ` +
      `new Error("transport exploded");
    return request.respond("deny");
  });
}
`,
  );
}

describe("approvals", () => {
  async function approve(mode: string, replies: Reply[], extraYaml = "") {
    const root = scratch.dir(`approve-${mode}`);
    const work = join(root, "work");
    mkdirSync(join(work, "victim1"), { recursive: true });
    mkdirSync(join(work, "victim2"), { recursive: true });
    const trace = join(root, "trace.jsonl");
    const h = agentHome(root, {
      enabled: ["approver"],
      extraYaml: `  api_max_retries: 0\nsecurity:\n  approval:\n    transport: test-ui\n${extraYaml}`,
    });
    writeApprover(join(h.home, "plugins"));
    // The approver writes into the same trace file.
    writeFileSync(
      join(h.home, "config.yaml"),
      `${readFileSync(join(h.home, "config.yaml"), "utf8").replace(
        "  entries:\n",
        `  entries:\n    approver:\n      settings:\n        mode: ${mode}\n        ` +
          `trace_file: ${JSON.stringify(trace)}\n`,
      )}`,
    );
    const server = await fakeOpenAI(replies);
    try {
      const r = await runCli(
        ["--home", h.home, "chat", "--base-url", server.url, "--model", "m", "--query", "clean up", "--json"],
        { env: { HERMES_BUNDLED_PLUGINS: h.bundled }, cwd: work },
      );
      return {
        ...r,
        json: JSON.parse(r.stdout) as ChatJson,
        trace: readTrace(trace),
        work,
        log: logLines(r.stderr),
        requests: server.requests,
      };
    } finally {
      await server.close();
    }
  }
  const rm = (dir: string): Reply => ({
    tools: [{ name: "terminal", arguments: JSON.stringify({ command: `rm -rf ${dir}` }) }],
  });
  const choices = (trace: ReturnType<typeof readTrace>) =>
    trace.filter((t) => t.ev === "hook:post_approval_response").map((t) => t.choice);

  it("a transport that approves once: the dangerous command runs, with pre/post_approval hooks around it", async () => {
    const r = await approve("once", [rm("victim1"), { say: "done" }]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(r.work, "victim1"))).toBe(false);
    const tr = r.trace.find((t) => t.ev === "transport")!;
    expect(tr).toMatchObject({
      command: "rm -rf victim1",
      choices: ["once", "session", "always", "deny"],
      frozen: true,
    });
    const pre = r.trace.find((t) => t.ev === "hook:pre_approval_request")!;
    // The host's surface, not the transport's name (decided_by names the transport).
    expect(pre).toMatchObject({ surface: "cli", pattern_keys: ["rm_recursive"] });
    expect(pre.request_id).toMatch(/^[0-9a-f]{32}$/);
    expect(pre.request_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(choices(r.trace)).toEqual(["once"]);
    expect(names(r.trace).filter((e) => /approval|tool_execution:enter|pre_tool_call/.test(e))).toEqual([
      "hook:pre_tool_call",
      "hook:pre_approval_request",
      "hook:post_approval_response",
      "mw:tool_execution:enter",
    ]);
  });

  it("a transport that answers late: transport_timeout, denied with the BLOCKED message, nothing deleted", async () => {
    const r = await approve("late", [rm("victim1"), { say: "ok" }], "approvals:\n  timeout: 1\n");
    expect(r.code, r.stderr).toBe(0);
    expect(choices(r.trace)).toEqual(["transport_timeout"]);
    expect(existsSync(join(r.work, "victim1"))).toBe(true);
    expect(r.json.tool_calls[0]).toMatchObject({ status: "blocked", error_type: "approval_denied" });
    expect(JSON.parse(r.json.tool_calls[0]!.result).error).toMatch(
      /^BLOCKED: Selected approval transport failed \(timeout\); the user has NOT consented/,
    );
    expect(r.log.some((l) => l.code === "E_APPROVAL_TRANSPORT")).toBe(true);
    expect(names(r.trace)).not.toContain("mw:tool_execution:enter");
  });

  it("a stale digest (a decision bound to an earlier request): transport_stale, denied", async () => {
    const r = await approve("stale", [
      {
        tools: [
          { name: "terminal", arguments: JSON.stringify({ command: "rm -rf victim1" }) },
          { name: "terminal", arguments: JSON.stringify({ command: "rm -rf victim2" }) },
        ],
      },
      { say: "ok" },
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(choices(r.trace)).toEqual(["deny", "transport_stale"]);
    expect(existsSync(join(r.work, "victim1"))).toBe(true);
    expect(existsSync(join(r.work, "victim2"))).toBe(true);
  });

  it(
    "a choice that was not offered ('always' with approvals.allow_permanent: false) or a plain object: " +
      "transport_invalid",
    async () => {
      const a = await approve("always", [rm("victim1"), { say: "ok" }], "approvals:\n  allow_permanent: false\n");
      expect(a.trace.find((t) => t.ev === "transport")!.choices).toEqual(["once", "session", "deny"]);
      expect(choices(a.trace)).toEqual(["transport_invalid"]);
      expect(existsSync(join(a.work, "victim1"))).toBe(true);
      const p = await approve("plain", [rm("victim1"), { say: "ok" }]);
      expect(choices(p.trace)).toEqual(["transport_invalid"]);
      expect(existsSync(join(p.work, "victim1"))).toBe(true);
    },
  );

  it(
    "transport_fallback: builtin falls back to the built-in " + "prompt, which denies at once without a terminal",
    async () => {
      const r = await approve("throw", [rm("victim1"), { say: "ok" }], "    transport_fallback: builtin\n");
      expect(r.code, r.stderr).toBe(0);
      expect(
        r.trace.filter((t) => t.ev === "hook:post_approval_response").map((t) => [t.choice, t.surface, t.decided_by]),
      ).toEqual([
        ["transport_error", "cli", "transport:test-ui"],
        ["deny", "cli", "no_tty"],
      ]);
      expect(existsSync(join(r.work, "victim1"))).toBe(true);
      expect(JSON.parse(r.json.tool_calls[0]!.result).error).toMatch(
        /nobody can be asked in this session \(no terminal\)/,
      );
    },
  );

  it("a hardline command is blocked before any transport or hook of the approval path runs", async () => {
    const r = await approve("once", [
      { tools: [{ name: "terminal", arguments: JSON.stringify({ command: "mkfs.ext4 /dev/sdzz9" }) }] },
      { say: "refused" },
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.trace.some((t) => t.ev === "transport" || t.ev === "hook:pre_approval_request")).toBe(false);
    expect(r.trace.find((t) => t.ev === "hook:post_tool_call")).toMatchObject({
      status: "blocked",
      error_type: "hardline",
    });
    expect(r.log.some((l) => l.code === "E_APPROVAL_HARDLINE")).toBe(true);
  });
});
