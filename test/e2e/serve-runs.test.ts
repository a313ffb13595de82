import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scratch } from "../support/home.js";
import { agentHome, readTrace, type TraceEvent, waitFor } from "./agent-helpers.js";
import {
  api,
  echoModel,
  type EchoModel,
  openSse,
  pollRun,
  serve,
  type Served,
  writeRecorder,
} from "./serve-helpers.js";

/**
 * `hermes serve`'s runs API, spawned as a user runs it against the echo model: a run's status and
 * output, its events as server-sent events (the timeline with hook and middleware owners, tool
 * progress, resuming after a seq), approvals answered through the API (a wrong digest, once, deny, the
 * timeout), stopping a run, and the session hooks of first turns and resets.
 */
const scratch = new Scratch("hermes-e2e-serve-runs-");
let model: EchoModel;

interface Server {
  s: Served;
  trace: string;
  root: string;
}

/**
 * A home with the tracer (every hook and middleware, to trace.jsonl) and a `sessions` recorder (the
 * session hooks with their session_id, to the same file) serving with `approvals.timeout`.
 */
async function start(name: string, approvalTimeout: number): Promise<Server> {
  const root = scratch.dir(name);
  const h = agentHome(root, {
    enabled: ["sessions"],
    extraYaml:
      `  api_max_retries: 0\nmodel:\n  provider: openai-compatible\n  base_url: ${model.url}\n  default: echo\n` +
      `approvals:\n  timeout: ${approvalTimeout}\n`,
  });
  writeRecorder(join(h.home, "plugins"), "sessions", {
    hooks: [
      "agent_loop_stopped",
      "on_session_end",
      "on_session_finalize",
      "on_session_reset",
      "pre_approval_request",
      "post_approval_response",
    ],
    file: h.trace,
  });
  const s = await serve(h.home, [], { HERMES_BUNDLED_PLUGINS: h.bundled });
  return { s, trace: h.trace, root };
}

let main: Server;
let quick: Server;

beforeAll(async () => {
  model = await echoModel();
  [main, quick] = await Promise.all([start("main", 20), start("quick", 1)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([main?.s.stop(), quick?.s.stop()]);
  await model?.close();
  scratch.cleanup();
});

type Run = Record<string, unknown>;

async function postRun(srv: Server, input: string, sessionId?: string): Promise<Run> {
  const r = await api(srv.s.url, "/v1/runs", { input, ...(sessionId ? { session_id: sessionId } : {}) });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body;
}

/** Every event of a run, read as SSE until the server closes the stream. */
async function events(srv: Server, runId: string, after?: number) {
  const sse = await openSse(`${srv.s.url}/v1/runs/${runId}/events${after !== undefined ? `?after=${after}` : ""}`);
  expect(sse.status).toBe(200);
  expect(sse.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const { frames, comments } = await sse.done;
  return { list: frames.map((f) => f.json as Run & { event: string; seq: number }), comments };
}

/** Trace lines of one session (the hooks that carry session_id). */
function sessionTrace(srv: Server, sessionId: string): TraceEvent[] {
  return readTrace(srv.trace).filter((t) => t.session_id === sessionId);
}

describe("runs: POST /v1/runs, GET /v1/runs/{id}, its events", () => {
  it("202 with the run id; the run completes with the output; the events show the timeline with owners", async () => {
    const posted = await postRun(main, "slow:100 hello runs a b c d");
    expect(posted).toMatchObject({ object: "hermes.run", status: expect.stringMatching(/^(queued|running)$/) });
    expect(posted.run_id).toMatch(/^run_[0-9a-f]{32}$/);
    expect(posted.session_id).toMatch(/^api-/);
    // Read the events while the run goes on (the model streams a word every 100 ms): they arrive as they
    // happen, and the stream ends by itself after run.completed.
    const sse = await openSse(`${main.s.url}/v1/runs/${posted.run_id}/events`);
    await waitFor(() => sse.frames.length > 0, 10_000, "the first event");
    expect((await api(main.s.url, `/v1/runs/${posted.run_id}`)).body.status).toBe("running");
    const done = await pollRun(main.s.url, String(posted.run_id));
    expect(done).toMatchObject({
      status: "completed",
      session_id: posted.session_id,
      output: "echo: hello runs a b c d",
    });
    const { frames, comments } = await sse.done;
    const list = frames.map((f) => f.json as Run & { event: string; seq: number });
    expect(comments).toContain("stream closed");
    const names = list.map((e) => e.event);
    expect(names[0]).toBe("timeline.turn_start");
    expect(names[names.length - 1]).toBe("run.completed");
    expect(list[list.length - 1]).toMatchObject({ output: done.output, run_id: posted.run_id });
    expect(list.map((e) => e.seq)).toEqual(list.map((_, i) => i + 1));
    const hook = (name: string) => list.find((e) => e.event === "timeline.hook" && e.name === name);
    expect(hook("pre_llm_call")).toMatchObject({ owners: ["tracer"] });
    expect(hook("on_session_start")).toMatchObject({ owners: ["tracer"] });
    expect(hook("on_session_end")).toMatchObject({ owners: ["sessions", "tracer"] });
    const mw = list.find((e) => e.event === "timeline.middleware" && e.kind === "llm_request");
    expect(mw).toMatchObject({ owners: ["tracer"] });
    expect(names).toContain("timeline.llm_attempt");
    expect(names).toContain("timeline.turn_end");
    // The stream of a finished run: the same events again, then the close.
    const again = await events(main, String(posted.run_id));
    expect(again.list).toEqual(list);
    expect(again.comments).toEqual(["stream closed"]);
  });

  it("a tool call shows tool.started and tool.completed; ?after=<seq> resumes after that event", async () => {
    const dir = scratch.dir("tool");
    const file = join(dir, "made-by-terminal");
    const posted = await postRun(main, `tool:terminal ${JSON.stringify({ command: `echo served > ${file}` })}`);
    const done = await pollRun(main.s.url, String(posted.run_id));
    expect(done.status).toBe("completed");
    expect(String(done.output)).toMatch(/^done: .*"exit_code":0/);
    expect(existsSync(file)).toBe(true);
    const { list } = await events(main, String(posted.run_id));
    const started = list.find((e) => e.event === "tool.started");
    const completed = list.find((e) => e.event === "tool.completed");
    expect(started).toMatchObject({ tool: "terminal", tool_call_id: expect.any(String) });
    expect(completed).toMatchObject({ tool: "terminal", error: false, status: "success" });
    expect(started!.seq).toBeLessThan(completed!.seq);
    expect(list.find((e) => e.event === "timeline.hook" && e.name === "pre_tool_call")).toMatchObject({
      owners: ["tracer"],
    });
    expect(list.find((e) => e.event === "timeline.middleware" && e.kind === "tool_execution")).toMatchObject({
      owners: ["tracer"],
    });
    const resumed = await events(main, String(posted.run_id), started!.seq);
    expect(resumed.list).toEqual(list.filter((e) => e.seq > started!.seq));
    expect(resumed.list[0]!.seq).toBe(started!.seq + 1);
    expect(resumed.comments).toContain("stream closed");
    const past = await events(main, String(posted.run_id), list.at(-1)!.seq);
    expect(past).toEqual({ list: [], comments: ["stream closed"] });
  });

  it("unknown runs are 404; stopping a finished run is 409", async () => {
    const missing = await api(main.s.url, "/v1/runs/run_nope");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: "run_not_found" } });
    const posted = await postRun(main, "quick one");
    await pollRun(main.s.url, String(posted.run_id));
    const stop = await api(main.s.url, `/v1/runs/${posted.run_id}/stop`, {});
    expect(stop.status).toBe(409);
    expect(stop.body).toMatchObject({ error: { code: "run_not_active" } });
  });
});

describe("approvals through the runs API", () => {
  function victim(name: string): { dir: string; input: string } {
    const dir = join(scratch.dir(name), "victim");
    mkdirSync(join(dir, "inner"), { recursive: true });
    return { dir, input: `tool:terminal ${JSON.stringify({ command: `rm -rf ${dir}` })}` };
  }

  async function waiting(srv: Server, input: string) {
    const posted = await postRun(srv, input);
    const id = String(posted.run_id);
    const run = await pollRun(srv.s.url, id, (r) => r.status === "waiting_for_approval");
    const sse = await openSse(`${srv.s.url}/v1/runs/${id}/events`);
    await waitFor(() => sse.frames.some((f) => f.json?.event === "approval.request"), 10_000, "approval.request");
    const request = sse.frames.find((f) => f.json?.event === "approval.request")!.json!;
    return { id, run, request, sse, session_id: String(posted.session_id) };
  }

  it("waiting_for_approval with request_id and digest; a wrong digest is 409; once runs the command", async () => {
    const v = victim("once");
    const w = await waiting(main, v.input);
    expect(w.request).toMatchObject({
      request_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      command: `rm -rf ${v.dir}`,
      pattern_keys: ["rm_recursive"],
      choices: ["once", "session", "always", "deny"],
      timeout_seconds: 20,
    });
    expect(w.run.pending_approval).toMatchObject({ request_id: w.request.request_id, digest: w.request.digest });
    const answer = (body: Record<string, unknown>) => api(main.s.url, `/v1/runs/${w.id}/approval`, body);
    const wrong = await answer({ request_id: w.request.request_id, digest: "0".repeat(64), choice: "once" });
    expect(wrong.status).toBe(409);
    expect(wrong.body).toMatchObject({ error: { code: "approval_mismatch" } });
    const otherId = await answer({ request_id: "f".repeat(32), digest: w.request.digest, choice: "once" });
    expect(otherId.status).toBe(409);
    const badChoice = await answer({ request_id: w.request.request_id, digest: w.request.digest, choice: "maybe" });
    expect(badChoice.status).toBe(400);
    expect(badChoice.body).toMatchObject({ error: { code: "invalid_approval_choice" } });
    // Still waiting after the refused answers, and the directory is still there.
    expect((await api(main.s.url, `/v1/runs/${w.id}`)).body.status).toBe("waiting_for_approval");
    expect(existsSync(v.dir)).toBe(true);
    const ok = await answer({ request_id: w.request.request_id, digest: w.request.digest, choice: "once" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ choice: "once", request_id: w.request.request_id });
    const done = await pollRun(main.s.url, w.id);
    expect(done.status).toBe("completed");
    expect(String(done.output)).toMatch(/^done: .*"exit_code":0/);
    expect(existsSync(v.dir)).toBe(false);
    const { frames, comments } = await w.sse.done;
    const names = frames.map((f) => f.json?.event);
    expect(names).toContain("approval.responded");
    expect(frames.find((f) => f.json?.event === "approval.responded")!.json).toMatchObject({ choice: "once" });
    expect(names.indexOf("approval.request")).toBeLessThan(names.indexOf("tool.completed"));
    expect(comments).toContain("stream closed");
    const late = await answer({ request_id: w.request.request_id, digest: w.request.digest, choice: "once" });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ error: { code: "approval_not_pending" } });
    const approvalHooks = readTrace(main.trace).filter(
      (t) => t.plugin === "sessions" && /approval/.test(t.ev) && t.command === `rm -rf ${v.dir}`,
    );
    expect(approvalHooks).toEqual([
      expect.objectContaining({ ev: "hook:pre_approval_request", surface: "gateway", session_key: w.session_id }),
      expect.objectContaining({
        ev: "hook:post_approval_response",
        surface: "gateway",
        choice: "once",
        decided_by: "user",
      }),
    ]);
  });

  it("deny: the tool result says BLOCKED and the command did not run", async () => {
    const v = victim("deny");
    const w = await waiting(main, v.input);
    const r = await api(main.s.url, `/v1/runs/${w.id}/approval`, {
      request_id: w.request.request_id,
      digest: w.request.digest,
      choice: "deny",
    });
    expect(r.status).toBe(200);
    const done = await pollRun(main.s.url, w.id);
    expect(done.status).toBe("completed");
    expect(String(done.output)).toMatch(/^done: .*BLOCKED: the user did not approve this action/);
    expect(existsSync(v.dir)).toBe(true);
    const { frames } = await w.sse.done;
    expect(frames.find((f) => f.json?.event === "tool.completed")!.json).toMatchObject({ error: true });
  });

  it("session: the same command later in that session runs without asking; another session is asked", async () => {
    const v = victim("session");
    const w = await waiting(main, v.input);
    await api(main.s.url, `/v1/runs/${w.id}/approval`, {
      request_id: w.request.request_id,
      digest: w.request.digest,
      choice: "session",
    });
    expect((await pollRun(main.s.url, w.id)).status).toBe("completed");
    expect(existsSync(v.dir)).toBe(false);
    mkdirSync(v.dir);
    const again = await postRun(main, v.input, w.session_id);
    const done = await pollRun(main.s.url, String(again.run_id));
    expect(done).toMatchObject({ status: "completed", output: expect.stringMatching(/"exit_code":0/) });
    expect(existsSync(v.dir)).toBe(false);
    const { list } = await events(main, String(again.run_id));
    expect(list.map((e) => e.event)).not.toContain("approval.request");
    expect(list.find((e) => e.event === "timeline.approval")).toMatchObject({
      outcome: "approved",
      detail: "approved earlier in this session",
    });
    // Another session is asked again.
    mkdirSync(v.dir);
    const other = await waiting(main, v.input);
    expect(other.session_id).not.toBe(w.session_id);
    expect((await api(main.s.url, `/v1/runs/${other.id}/stop`, {})).status).toBe(200);
    expect((await pollRun(main.s.url, other.id)).status).toBe("cancelled");
    expect(existsSync(v.dir)).toBe(true);
  });

  it("POST /stop while the run waits for approval: cancelled at once, the command not run", async () => {
    const v = victim("stop-waiting");
    const w = await waiting(main, v.input);
    const t0 = Date.now();
    const stop = await api(main.s.url, `/v1/runs/${w.id}/stop`, {});
    expect(stop.status).toBe(200);
    const done = await pollRun(main.s.url, w.id, undefined, 10_000);
    expect(done.status).toBe("cancelled");
    expect(done.pending_approval).toBeUndefined();
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(existsSync(v.dir)).toBe(true);
    const { frames } = await w.sse.done;
    const names = frames.map((f) => f.json?.event);
    expect(frames.find((f) => f.json?.event === "approval.responded")!.json).toMatchObject({ choice: "cancelled" });
    expect(names.at(-1)).toBe("run.cancelled");
    const late = await api(main.s.url, `/v1/runs/${w.id}/approval`, {
      request_id: w.request.request_id,
      digest: w.request.digest,
      choice: "once",
    });
    expect(late.status).toBe(409);
  });

  it("no answer with approvals.timeout: 1: denied after about a second, never waiting forever", async () => {
    const v = victim("timeout");
    const t0 = Date.now();
    const w = await waiting(quick, v.input);
    expect(w.request.timeout_seconds).toBe(1);
    const done = await pollRun(quick.s.url, w.id, undefined, 10_000);
    const took = Date.now() - t0;
    expect(done.status).toBe("completed");
    expect(String(done.output)).toMatch(/BLOCKED: .*answer: timeout/);
    expect(took).toBeLessThan(8_000);
    expect(existsSync(v.dir)).toBe(true);
    const { frames } = await w.sse.done;
    expect(frames.find((f) => f.json?.event === "approval.responded")!.json).toMatchObject({ choice: "timeout" });
    const post = readTrace(quick.trace).filter((t) => t.plugin === "sessions" && t.command === `rm -rf ${v.dir}`);
    expect(post.map((t) => [t.ev, t.surface, t.choice])).toEqual([
      ["hook:pre_approval_request", "gateway", undefined],
      ["hook:post_approval_response", "gateway", "timeout"],
    ]);
  });
});

describe("stopping a run", () => {
  it("POST /stop on a hanging run: cancelled, and on_session_end saw interrupted: true", async () => {
    const posted = await postRun(main, "hang");
    const id = String(posted.run_id);
    await pollRun(main.s.url, id, (r) => r.status === "running");
    // The model call is under way when the stop comes.
    await waitFor(() => model.requests.some((q) => q.messages.at(-1)?.content === "hang"), 10_000, "the model call");
    const sse = await openSse(`${main.s.url}/v1/runs/${id}/events`);
    const stop = await api(main.s.url, `/v1/runs/${id}/stop`, {});
    expect(stop.status).toBe(200);
    expect(stop.body).toMatchObject({ run_id: id, status: expect.stringMatching(/^(stopping|cancelled)$/) });
    const done = await pollRun(main.s.url, id, undefined, 10_000);
    expect(done.status).toBe("cancelled");
    const { frames, comments } = await sse.done;
    expect(frames.at(-1)!.json).toMatchObject({ event: "run.cancelled" });
    expect(comments).toContain("stream closed");
    const end = sessionTrace(main, String(posted.session_id)).filter((t) => t.ev === "hook:on_session_end");
    expect(end).toEqual([expect.objectContaining({ interrupted: true, completed: false })]);
    const stopped = readTrace(main.trace).filter(
      (t) => t.ev === "hook:agent_loop_stopped" && t.session_key === posted.session_id,
    );
    expect(stopped).toEqual([
      expect.objectContaining({
        session_key: posted.session_id,
        platform: "api_server",
        reason: "stop requested via the API",
        invalidation_reason: null,
      }),
    ]);
    // The session goes on.
    const next = await postRun(main, "after the stop", String(posted.session_id));
    expect(await pollRun(main.s.url, String(next.run_id))).toMatchObject({
      status: "completed",
      output: expect.stringMatching(/^echo: after the stop/),
    });
  });

  it("POST /stop on a run queued behind its session's running turn: cancelled before it starts", async () => {
    const a = await postRun(main, "hang");
    await pollRun(main.s.url, String(a.run_id), (r) => r.status === "running");
    const b = await postRun(main, "queued behind the hang", String(a.session_id));
    expect(b.status).toBe("queued");
    expect((await api(main.s.url, `/v1/runs/${b.run_id}`)).body.status).toBe("queued");
    expect((await api(main.s.url, `/v1/runs/${b.run_id}/stop`, {})).status).toBe(200);
    expect((await api(main.s.url, `/v1/runs/${a.run_id}/stop`, {})).status).toBe(200);
    expect((await pollRun(main.s.url, String(a.run_id))).status).toBe("cancelled");
    expect((await pollRun(main.s.url, String(b.run_id))).status).toBe("cancelled");
    expect(model.requests.some((q) => q.messages.at(-1)?.content === "queued behind the hang")).toBe(false);
    const { list } = await events(main, String(b.run_id));
    expect(list.map((e) => e.event)).toEqual(["run.cancelled"]);
  });
});

describe("session hooks", () => {
  const firstTurns = (srv: Server, id: string) =>
    sessionTrace(srv, id)
      .filter((t) => t.ev === "hook:pre_llm_call")
      .map((t) => t.is_first_turn);
  const starts = (srv: Server, id: string) => sessionTrace(srv, id).filter((t) => t.ev === "hook:on_session_start");

  async function turn(text: string, sessionId?: string) {
    const posted = await postRun(main, text, sessionId);
    const done = await pollRun(main.s.url, String(posted.run_id));
    expect(done.status).toBe("completed");
    return { id: String(posted.session_id), output: String(done.output) };
  }

  it("on_session_start on the first turn only; a reset finalizes, resets; the next turn is a first turn", async () => {
    const a = await turn("one");
    const id = a.id;
    expect(a.output).toMatch(/\[2 messages\]$/);
    const b = await turn("two", id);
    expect(b.output).toMatch(/\[4 messages\]$/);
    expect(starts(main, id)).toHaveLength(1);
    expect(firstTurns(main, id)).toEqual([true, false]);
    const reset = await api(main.s.url, `/v1/sessions/${id}/reset`, {});
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ session_id: id, reset: true });
    const after = sessionTrace(main, id).map((t) => t.ev);
    const fin = after.indexOf("hook:on_session_finalize");
    expect(fin).toBeGreaterThan(after.lastIndexOf("hook:on_session_end"));
    expect(after.indexOf("hook:on_session_reset")).toBe(fin + 1);
    expect(sessionTrace(main, id).find((t) => t.ev === "hook:on_session_finalize")).toMatchObject({
      reason: "reset",
      platform: "api_server",
    });
    expect((await api(main.s.url, `/v1/sessions/${id}`)).body).toMatchObject({ turns: 0, messages: [] });
    const c = await turn("three", id);
    expect(c.output).toMatch(/^echo: three \[2 messages\]$/);
    expect(starts(main, id)).toHaveLength(2);
    expect(firstTurns(main, id)).toEqual([true, false, true]);
  });

  it("a client that sends the whole conversation: the stored history is kept while its next turn runs", async () => {
    const send = (msgs: Array<{ role: string; content: string }>) =>
      api<{ choices: Array<{ message: { content: string } }> }>(main.s.url, "/v1/chat/completions", {
        messages: msgs,
      });
    const first = await send([{ role: "user", content: "whole one" }]);
    expect(first.status).toBe(200);
    const id = first.headers.get("x-hermes-session-id")!;
    const history = [
      { role: "user", content: "whole one" },
      { role: "assistant", content: first.body.choices[0]!.message.content },
    ];
    expect((await api(main.s.url, `/v1/sessions/${id}`)).body.messages).toEqual(history);
    // The next turn streams from the model for about a second; meanwhile the session still holds its history.
    const next = send([...history, { role: "user", content: "slow:100 whole two a b c d e f g h" }]);
    await waitFor(
      () => model.requests.some((q) => q.messages.at(-1)?.content === "slow:100 whole two a b c d e f g h"),
      10_000,
      "the second turn's model call",
    );
    const during = await api<{ messages: unknown[] }>(main.s.url, `/v1/sessions/${id}`);
    expect(during.body.messages).toEqual(history);
    const r = await next;
    expect(r.headers.get("x-hermes-session-id")).toBe(id);
    expect(r.body.choices[0]!.message.content).toBe("echo: whole two a b c d e f g h");
    expect((await api<{ messages: unknown[] }>(main.s.url, `/v1/sessions/${id}`)).body.messages).toEqual([
      ...history,
      { role: "user", content: "slow:100 whole two a b c d e f g h" },
      { role: "assistant", content: "echo: whole two a b c d e f g h" },
    ]);
  });

  it("a `/reset` chat message does the same", async () => {
    const a = await turn("alpha");
    const id = a.id;
    await turn("beta", id);
    const chat = (content: string) =>
      api(main.s.url, "/v1/chat/completions", { messages: [{ role: "user", content }] }, { "x-hermes-session-id": id });
    const r = await chat("/reset");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ choices: [{ message: { content: "Session reset." } }] });
    const evs = sessionTrace(main, id).map((t) => t.ev);
    expect(evs.filter((e) => e === "hook:on_session_finalize")).toHaveLength(1);
    expect(evs.indexOf("hook:on_session_reset")).toBe(evs.indexOf("hook:on_session_finalize") + 1);
    const next = await chat("gamma");
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ choices: [{ message: { content: "echo: gamma [2 messages]" } }] });
    expect(starts(main, id)).toHaveLength(2);
    expect(firstTurns(main, id)).toEqual([true, false, true]);
  });
});
