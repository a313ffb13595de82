import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ApprovalGate, PermanentApprovals } from "../../src/agent/approvals/gate.js";
import type { ApprovalPrompter } from "../../src/agent/approvals/prompt.js";
import { HookSite } from "../../src/agent/hook-site.js";
import { Session } from "../../src/agent/session.js";
import type { TimelineEvent } from "../../src/agent/timeline.js";
import { runToolCall, type ToolCallContext } from "../../src/agent/tool-call.js";
import { registerBuiltinTools } from "../../src/agent/tools/builtin.js";
import { limitOutput, terminalSettings } from "../../src/agent/tools/terminal.js";
import type { ToolCall } from "../../src/agent/types.js";
import { captureLog, rig, type Rig } from "./helpers.js";
import { cleanupTemp, tempDir } from "../support/home.js";

afterAll(cleanupTemp);

function call(name: string, args: unknown, id = "call_1"): ToolCall {
  return {
    id,
    type: "function",
    function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
  };
}

async function setup(opts: { prompter?: ApprovalPrompter; config?: Record<string, unknown> } = {}) {
  const r = await rig();
  const events: TimelineEvent[] = [];
  const logs = captureLog();
  const hooks = new HookSite(r.rt.hooks, (e) => events.push(e));
  registerBuiltinTools(r.rt, {
    transformOutput: (p) => hooks.firstString("transform_terminal_output", p),
    config: () => opts.config ?? {},
  });
  const runs: unknown[] = [];
  r.rt.tools.lease("probe", {
    name: "probe",
    toolset: "t",
    schema: {
      name: "probe",
      description: "records its args",
      parameters: { type: "object", properties: { n: { type: "integer" } } },
    },
    handler: (a) => {
      runs.push(a);
      if ((a as { fail?: boolean }).fail) throw new RangeError("probe failed on purpose");
      return { ok: true, got: a };
    },
    requires_env: [],
    description: "",
    emoji: "",
    owner: "test",
  });
  r.rt.tools.lease("needs-env", {
    name: "needs-env",
    toolset: "t",
    schema: { name: "needs-env" },
    handler: () => "x",
    requires_env: ["SURELY_UNSET_VAR_X"],
    description: "",
    emoji: "",
    owner: "test",
  });
  const session = new Session();
  const gate = new ApprovalGate({
    home: r.home,
    config: () => opts.config ?? {},
    transports: r.rt.approvalTransports,
    hooks,
    ...(opts.prompter ? { prompter: opts.prompter } : {}),
    emit: (e) => events.push(e),
    log: logs.log,
    permanent: new PermanentApprovals(r.home),
  });
  const c: ToolCallContext = {
    tools: r.rt.tools,
    middleware: r.rt.middleware,
    hooks,
    gate,
    log: logs.log,
    emit: (e) => events.push(e),
    signal: new AbortController().signal,
    session,
    ids: { session_id: session.session_id, task_id: session.task_id, turn_id: "turn_x", api_request_id: "req_x" },
  };
  return { r, c, runs, events, logs };
}

const postOf = (r: Rig) => {
  const seen: Array<Record<string, unknown>> = [];
  r.hook("post_tool_call", (p) => void seen.push(p));
  return seen;
};

describe("one tool call", () => {
  it(
    "pre_tool_call modify merges into the effective args " + "(after tool_request), which the tool then runs with",
    async () => {
      const { r, c, runs } = await setup();
      r.mw("tool_request", (kw) => ({ args: { ...(kw.args as object), from_mw: true }, name: "mw1" }));
      r.hook("pre_tool_call", (p) => {
        expect(p.args).toEqual({ n: 5, from_mw: true });
        return { action: "modify", args: { extra: "yes" } };
      });
      r.hook("pre_tool_call", () => ({ action: "modify", args: { n: 6 } }));
      const post = postOf(r);
      const o = await runToolCall(c, call("probe", { n: "5" }));
      expect(runs).toEqual([{ n: 6, from_mw: true, extra: "yes" }]);
      expect(o).toMatchObject({ status: "success", executions: 1, middleware_trace: [{ name: "mw1" }] });
      expect(post[0]).toMatchObject({
        status: "success",
        error_type: null,
        args: { n: 6, from_mw: true, extra: "yes" },
        middleware_trace: [{ name: "mw1" }],
      });
      expect(r.order).toEqual(["mw:tool_request", "hook:pre_tool_call", "hook:pre_tool_call", "hook:post_tool_call"]);
    },
  );

  it(
    "block beats approve whatever the order; a plugin approve " + "goes to the gate, which denies without a terminal",
    async () => {
      const a = await setup();
      a.r.hook("pre_tool_call", () => ({ action: "approve", message: "really?" }));
      a.r.hook("pre_tool_call", () => ({ action: "block", message: "no way" }));
      expect(await runToolCall(a.c, call("probe", {}))).toMatchObject({
        status: "blocked",
        error_type: "plugin_block",
        result: '{"error":"no way"}',
        executions: 0,
      });
      const b = await setup();
      b.r.hook("pre_tool_call", () => ({ action: "approve", rule_key: "probe-rule" }));
      const o = await runToolCall(b.c, call("probe", {}));
      expect(o).toMatchObject({ status: "blocked", error_type: "plugin_block", executions: 0 });
      expect(JSON.parse(o.result).error).toMatch(/^BLOCKED: this action needs a person's approval/);
      const c2 = await setup({ prompter: { ask: async () => "session" } });
      c2.r.hook("pre_tool_call", () => ({ action: "approve", rule_key: "probe-rule" }));
      expect(await runToolCall(c2.c, call("probe", {}))).toMatchObject({ status: "success", executions: 1 });
      expect(c2.c.session.sessionApprovals.has("probe-rule")).toBe(true);
    },
  );

  it(
    "a tool that throws: status error with the error's type, the model gets {error}, the call is logged; it " +
      "ran once",
    async () => {
      const { r, c, runs, logs } = await setup();
      const post = postOf(r);
      const o = await runToolCall(c, call("probe", { fail: true }));
      expect(o).toMatchObject({ status: "error", error_type: "RangeError", executions: 1 });
      expect(JSON.parse(o.result)).toEqual({ error: "tool 'probe' failed: probe failed on purpose" });
      expect(post[0]).toMatchObject({
        status: "error",
        error_type: "RangeError",
        error_message: "probe failed on purpose",
      });
      expect(runs).toHaveLength(1);
      expect(logs.warnings().some((w) => w.code === "E_AGENT_TOOL_FAILED")).toBe(true);
    },
  );

  it(
    "tool_execution middleware: next_call(modified) reaches the tool; a short-circuit replaces it; a " +
      "non-object payload falls back to the effective args",
    async () => {
      const a = await setup();
      a.r.mw("tool_execution", (kw) =>
        (kw.next_call as (x: unknown) => Promise<unknown>)({ ...(kw.args as object), n: 99 }),
      );
      await runToolCall(a.c, call("probe", { n: 1 }));
      expect(a.runs).toEqual([{ n: 99 }]);
      const b = await setup();
      b.r.mw("tool_execution", () => "cached answer");
      const post = postOf(b.r);
      expect(await runToolCall(b.c, call("probe", {}))).toMatchObject({
        result: "cached answer",
        executions: 0,
        status: "success",
      });
      expect(post[0]!.result).toBe("cached answer");
      const c3 = await setup();
      c3.r.mw("tool_execution", (kw) => (kw.next_call as (x: unknown) => Promise<unknown>)("not an object"));
      await runToolCall(c3.c, call("probe", { n: 2 }));
      expect(c3.runs).toEqual([{ n: 2 }]);
    },
  );

  it("a tool whose requires_env is unset is unavailable (error result), like an unknown one", async () => {
    const { c } = await setup();
    const o = await runToolCall(c, call("needs-env", {}));
    expect(o).toMatchObject({ status: "error", error_type: "unknown_tool" });
    expect(JSON.parse(o.result).error).toMatch(/not available here .*SURELY_UNSET_VAR_X/);
  });

  it(
    "transform_tool_result: the first string replaces the result ('' included); blocked calls are not " + "transformed",
    async () => {
      const { r, c } = await setup();
      r.hook("transform_tool_result", () => null);
      r.hook("transform_tool_result", () => "");
      r.hook("transform_tool_result", () => "late");
      expect((await runToolCall(c, call("probe", {}))).result).toBe("");
    },
  );
});

describe("the built-in tools", () => {
  it(
    "terminal: transform_terminal_output rewrites before " + "the output limit; the limit keeps head and tail",
    async () => {
      const { r, c } = await setup({ config: { terminal: { output_limit: 100 } } });
      r.hook("transform_terminal_output", (p) => `${String(p.output).trim()}!`.repeat(80));
      const o = await runToolCall(c, call("terminal", { command: "echo hi" }));
      const out = JSON.parse(o.result) as { output: string; exit_code: number };
      expect(out.exit_code).toBe(0);
      expect(out.output.startsWith("hi!hi!")).toBe(true);
      expect(out.output).toContain("[140 characters truncated; output limit 100]");
      expect(limitOutput("abcdefghij", 5)).toBe("ab\n… [5 characters truncated; output limit 5] …\nhij");
      expect(terminalSettings({ terminal: { timeout: 9999, max_timeout: 60 } })).toEqual({
        timeoutSeconds: 60,
        maxTimeoutSeconds: 60,
        outputLimit: 50000,
      });
    },
  );

  it(
    "terminal: a timeout kills the whole process group and " + "reports exit 124; a missing workdir is an error",
    async () => {
      const { c } = await setup();
      const dir = tempDir("hk-term-");
      const t0 = Date.now();
      const o = await runToolCall(
        c,
        call("terminal", { command: `(sleep 5; echo late > ${dir}/late.txt) & sleep 5`, timeout: 1 }),
      );
      expect(Date.now() - t0).toBeLessThan(4500);
      expect(JSON.parse(o.result)).toMatchObject({
        exit_code: 124,
        error: "timed out after 1s; the command was killed",
      });
      await new Promise((res) => setTimeout(res, 300));
      expect(() => readFileSync(join(dir, "late.txt"))).toThrow();
      const m = await runToolCall(c, call("terminal", { command: "true", workdir: join(dir, "nope") }));
      expect(m.status).toBe("error");
      expect(JSON.parse(m.result).error).toMatch(/workdir .*nope does not exist/);
    },
  );

  it("read_file, write_file (atomic, folders created), list_dir; writing into ~/.ssh needs approval", async () => {
    const { c } = await setup();
    const dir = tempDir("hk-files-");
    const w = await runToolCall(c, call("write_file", { path: join(dir, "a", "b.txt"), content: "one\ntwo\nthree" }));
    expect(JSON.parse(w.result)).toEqual({ path: join(dir, "a", "b.txt"), bytes_written: 13 });
    const rd = await runToolCall(c, call("read_file", { path: join(dir, "a", "b.txt"), offset: 2, limit: 1 }));
    expect(JSON.parse(rd.result)).toMatchObject({ content: "two", total_lines: 3, offset: 2, truncated: true });
    writeFileSync(join(dir, "z.txt"), "");
    const ls = await runToolCall(c, call("list_dir", { path: dir }));
    expect(JSON.parse(ls.result).entries).toEqual([
      { name: "a", type: "dir" },
      { name: "z.txt", type: "file" },
    ]);
    const ssh = await runToolCall(c, call("write_file", { path: join(dir, ".ssh", "authorized_keys"), content: "k" }));
    expect(ssh).toMatchObject({ status: "blocked", error_type: "approval_denied", executions: 0 });
  });
});
