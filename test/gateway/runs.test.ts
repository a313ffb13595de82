import { describe, expect, it } from "vitest";
import type { TurnResult } from "../../src/agent/agent.js";
import { ApprovalAnswerError, Run, RunRegistry } from "../../src/gateway/runs.js";

const ACTION = {
  command: "rm -rf /x",
  description: "delete",
  pattern_key: "rm",
  pattern_keys: ["rm"],
  session_key: "k",
};

function result(over: Partial<TurnResult> = {}): TurnResult {
  return {
    turn_id: "t",
    answer: "hi",
    exit_reason: "completed",
    completed: true,
    failed: false,
    interrupted: false,
    api_calls: 1,
    tool_calls: [],
    ...over,
  };
}

describe("Run", () => {
  it("keeps its events in order for late readers and ends with run.completed", () => {
    const run = new Run("s", "m");
    run.timeline({ type: "hook", name: "pre_llm_call", owners: ["p"] });
    run.finish(result());
    const seen: string[] = [];
    const sub = run.subscribe((e) => seen.push(e.event));
    expect(sub.backlog.map((e) => e.event)).toEqual(["timeline.hook", "run.completed"]);
    expect(sub.backlog[0]).toMatchObject({ name: "pre_llm_call", owners: ["p"], run_id: run.run_id, seq: 1 });
    expect(run.subscribe(() => undefined, 1).backlog.map((e) => e.seq)).toEqual([2]);
    expect(run.status).toBe("completed");
    expect(run.toJSON()).toMatchObject({ object: "hermes.run", status: "completed", output: "hi" });
    expect(seen).toEqual([]);
  });

  it("an approval is answered only with the request id and digest it was asked with", async () => {
    const run = new Run("s", "m");
    const events: Record<string, unknown>[] = [];
    run.subscribe((e) => events.push(e));
    const asked = run.ask(["once", "session", "deny"], {
      signal: new AbortController().signal,
      timeoutMs: 5000,
      action: ACTION,
    });
    expect(run.status).toBe("waiting_for_approval");
    const req = events.find((e) => e.event === "approval.request")!;
    expect(req).toMatchObject({ command: "rm -rf /x", choices: ["once", "session", "deny"] });
    const id = req.request_id as string;
    expect(() => run.answer({ request_id: id, digest: "0".repeat(64), choice: "once" })).toThrow(ApprovalAnswerError);
    expect(() => run.answer({ request_id: id, digest: req.digest as string, choice: "always" })).toThrow(
      /one of once, session, deny/,
    );
    expect(run.answer({ request_id: id, digest: req.digest as string, choice: "Approve" })).toBe("once");
    expect(await asked).toBe("once");
    expect(run.status).toBe("queued");
    expect(() => run.answer({ request_id: id, digest: req.digest as string, choice: "once" })).toThrow(/not waiting/);
  });

  it("an unanswered approval times out, and stop() cancels a pending one", async () => {
    const run = new Run("s", "m");
    expect(
      await run.ask(["once", "deny"], { signal: new AbortController().signal, timeoutMs: 10, action: ACTION }),
    ).toBe("timeout");
    const pending = run.ask(["once", "deny"], {
      signal: new AbortController().signal,
      timeoutMs: 5000,
      action: ACTION,
    });
    let interrupted = "";
    run.bindInterrupt((r) => ((interrupted = r), true));
    expect(run.stop()).toBe(true);
    expect(await pending).toBe("cancelled");
    expect(interrupted).toMatch(/stop requested/);
    run.finish(result({ completed: false, interrupted: true, answer: null, exit_reason: "interrupted" }));
    expect(run.status).toBe("cancelled");
    expect(run.stop()).toBe(false);
  });

  it("a failed turn ends with run.failed and its code", () => {
    const run = new Run("s", "m");
    run.finish(
      result({
        completed: false,
        failed: true,
        answer: null,
        exit_reason: "api_error",
        error: { code: "E_X", message: "no" },
      }),
    );
    const last = run.subscribe(() => undefined).backlog.at(-1)!;
    expect(last).toMatchObject({ event: "run.failed", error: "no", code: "E_X" });
  });
});

describe("RunRegistry", () => {
  it("keeps at most maxKept finished runs, the newest; active() lists the unfinished", async () => {
    const reg = new RunRegistry(3600, 2, 0);
    const runs = [1, 2, 3, 4].map(() => reg.add(new Run("s", "m")));
    for (const r of runs) r.finish(result());
    reg.add(new Run("s", "m"));
    const kept = runs.filter((r) => reg.get(r.run_id));
    expect(kept).toEqual(runs.slice(2));
    await Promise.all(runs.map((r) => r.done));
    expect(reg.active()).toHaveLength(1);
  });
});
