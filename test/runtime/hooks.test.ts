/**
 * Hook dispatch: telemetry injection, timeout
 * normalisation, the bounded / fail-closed / caller sets, 60 s suppression, call-identity gate keys,
 * the 3-abandoned cap, and the exact fail-closed block directives.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  FAIL_CLOSED_TIMEOUT_MESSAGE,
  HookBus,
  normalizeHookTimeout,
  OBSERVER_SCHEMA_VERSION,
  resolveToolDirective,
} from "../../src/runtime/hooks.js";
import { FailureReporter } from "../../src/runtime/reporter.js";
import { captureLog, plugin, start } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterEach(() => {
  vi.useRealTimers();
  cleanupTemp();
});

function bus(timeoutSeconds = 30) {
  const logs = captureLog();
  const b = new HookBus(new FailureReporter(logs.log));
  b.timeoutSeconds = timeoutSeconds;
  return { b, logs };
}

/** A callback that never settles unless told to; counts its calls. */
function hanging(name = "hangs") {
  const calls: Array<{ payload: Record<string, unknown>; settle: () => void }> = [];
  const fn = {
    [name]: (payload: Record<string, unknown>) =>
      new Promise<void>((resolve) => {
        calls.push({ payload, settle: () => resolve() });
      }),
  }[name]!;
  return { fn, calls };
}

describe("telemetry_schema_version", () => {
  it("is injected into every payload except gateway_platform_event, without touching the caller's object", async () => {
    const { b } = bus();
    const seen: Array<[string, Record<string, unknown>]> = [];
    for (const h of [
      "post_tool_call",
      "pre_llm_call",
      "on_session_end",
      "gateway_platform_event",
      "kanban_task_claimed",
    ])
      b.add(h, (p) => void seen.push([h, p]), "p");
    const payload = { a: 1 };
    for (const h of [
      "post_tool_call",
      "pre_llm_call",
      "on_session_end",
      "gateway_platform_event",
      "kanban_task_claimed",
    ])
      await b.invoke(h, payload);
    expect(Object.fromEntries(seen.map(([h, p]) => [h, p.telemetry_schema_version]))).toEqual({
      post_tool_call: OBSERVER_SCHEMA_VERSION,
      pre_llm_call: OBSERVER_SCHEMA_VERSION,
      on_session_end: OBSERVER_SCHEMA_VERSION,
      gateway_platform_event: undefined,
      kanban_task_claimed: OBSERVER_SCHEMA_VERSION,
    });
    expect(payload).toEqual({ a: 1 });
  });

  it("keeps a version the caller already set", async () => {
    const { b } = bus();
    let got: unknown;
    b.add("post_tool_call", (p) => void (got = p.telemetry_schema_version), "p");
    await b.invoke("post_tool_call", { telemetry_schema_version: "custom" });
    expect(got).toBe("custom");
  });
});

describe("dispatch", () => {
  it(
    "runs callbacks in registration order and returns the " + "non-null results; a throwing observer is skipped",
    async () => {
      const { b } = bus();
      const order: string[] = [];
      b.add("pre_llm_call", () => (order.push("a"), "A"), "a");
      b.add(
        "pre_llm_call",
        () => {
          order.push("b");
          throw new Error("boom");
        },
        "b",
      );
      b.add("pre_llm_call", async () => (order.push("c"), null), "c");
      b.add("pre_llm_call", async () => (order.push("d"), { context: "D" }), "d");
      expect(await b.invoke("pre_llm_call", {})).toEqual(["A", { context: "D" }]);
      expect(order).toEqual(["a", "b", "c", "d"]);
      expect(b.owners("pre_llm_call")).toEqual(["a", "b", "c", "d"]);
    },
  );

  it("dispose removes the last identical callback only", async () => {
    const { b } = bus();
    const cb = () => "x";
    b.add("pre_llm_call", cb, "p");
    const second = b.add("pre_llm_call", cb, "q");
    second();
    expect(b.owners("pre_llm_call")).toEqual(["p"]);
  });
});

describe("hook_callback_timeout normalisation", () => {
  it("default 30; 0 disables; negative → 30 (does not disable); clamp at 600; junk → 30", () => {
    expect(normalizeHookTimeout(undefined)).toBe(30);
    expect(normalizeHookTimeout(null)).toBe(30);
    expect(normalizeHookTimeout(0)).toBe(0);
    expect(normalizeHookTimeout(-1)).toBe(30);
    expect(normalizeHookTimeout(-0.5)).toBe(30);
    expect(normalizeHookTimeout(45)).toBe(45);
    expect(normalizeHookTimeout(600)).toBe(600);
    expect(normalizeHookTimeout(601)).toBe(600);
    expect(normalizeHookTimeout(1e9)).toBe(600);
    expect(normalizeHookTimeout("10")).toBe(30);
    expect(normalizeHookTimeout(Number.NaN)).toBe(30);
    expect(normalizeHookTimeout(Number.POSITIVE_INFINITY)).toBe(30);
  });

  it("the runtime applies the lock's setting through the same rule", async () => {
    for (const [v, want] of [
      [-5, 30],
      [0, 0],
      [10_000, 600],
      [12, 12],
    ] as const) {
      const { rt } = await start([], { settings: { hook_callback_timeout: v } });
      expect(rt.hooks.timeoutSeconds).toBe(want);
    }
  });
});

describe("bounded and fail-closed callbacks", () => {
  it("a late bounded callback is abandoned and skipped (fail-open); the others still run", async () => {
    const { b, logs } = bus(0.05);
    const late = hanging("slowObserver");
    b.add("post_tool_call", late.fn, "slow");
    b.add("post_tool_call", () => "fast", "fast");
    const t0 = Date.now();
    expect(await b.invoke("post_tool_call", {})).toEqual(["fast"]);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(logs.warnings().map((r) => [r.plugin, r.msg])).toEqual([
      ["slow", "hook post_tool_call callback slowObserver timed out after 0.05s — skipping"],
    ]);
  });

  it("0 disables the bound: a slow callback is awaited and its result kept", async () => {
    const { b } = bus(0);
    b.add("pre_tool_call", () => new Promise((r) => setTimeout(() => r({ action: "approve" }), 80)), "p");
    expect(await b.invoke("pre_tool_call", { tool_name: "t" })).toEqual([{ action: "approve" }]);
  });

  it("unbounded hooks are never raced, whatever the timeout", async () => {
    const { b } = bus(0.01);
    b.add("on_session_finalize", () => new Promise((r) => setTimeout(() => r("done"), 60)), "p");
    expect(await b.invoke("on_session_finalize", {})).toEqual(["done"]);
  });

  it("pre_tool_call timeout → the exact fail-closed block, which beats another plugin's approve", async () => {
    const { b } = bus(0.05);
    b.add("pre_tool_call", () => ({ action: "approve", message: "fine" }), "approver");
    b.add("pre_tool_call", hanging().fn, "guard");
    const r = await b.invoke("pre_tool_call", { tool_name: "terminal", tool_call_id: "c1" });
    expect(r).toEqual([
      { action: "approve", message: "fine" },
      { action: "block", message: "pre_tool_call plugin callback timed out or is still running" },
    ]);
    expect(FAIL_CLOSED_TIMEOUT_MESSAGE).toBe("pre_tool_call plugin callback timed out or is still running");
    expect(resolveToolDirective(r, {})).toEqual({ action: "block", message: FAIL_CLOSED_TIMEOUT_MESSAGE });
  });

  it("pre_tts_synthesis uses the same literal timeout message", async () => {
    const { b } = bus(0.05);
    b.add("pre_tts_synthesis", hanging().fn, "guard");
    expect(await b.invoke("pre_tts_synthesis", { text: "x" })).toEqual([
      { action: "block", message: FAIL_CLOSED_TIMEOUT_MESSAGE },
    ]);
  });

  it("an exception in a fail-closed hook → '<hook> plugin callback <cb> raised <Type>: <msg[:200]>'", async () => {
    const { b } = bus();
    b.add(
      "pre_tool_call",
      function policy() {
        throw new RangeError("x".repeat(300));
      },
      "p",
    );
    b.add(
      "pre_tool_call",
      async function asyncPolicy() {
        throw new TypeError("nope");
      },
      "q",
    );
    b.add(
      "pre_tool_call",
      () => {
        throw "a string";
      },
      "r",
    );
    const r = (await b.invoke("pre_tool_call", { tool_name: "t" })) as Array<{ message: string }>;
    expect(r).toEqual([
      { action: "block", message: `pre_tool_call plugin callback policy raised RangeError: ${"x".repeat(200)}` },
      { action: "block", message: "pre_tool_call plugin callback asyncPolicy raised TypeError: nope" },
      { action: "block", message: "pre_tool_call plugin callback <anonymous> raised Error: a string" },
    ]);
  });

  it("an exception in a fail-open hook is reported, not turned into a result", async () => {
    const { b, logs } = bus();
    b.add(
      "transform_tool_result",
      () => {
        throw new Error("bad");
      },
      "p",
    );
    expect(await b.invoke("transform_tool_result", { result: "r" })).toEqual([]);
    expect(logs.warnings()).toHaveLength(1);
  });
});

describe("suppression, gate keys and the abandoned cap (fake clock)", () => {
  it("after a timeout the callback is suppressed for 60 s, then runs again", async () => {
    vi.useFakeTimers();
    const { b, logs } = bus(1);
    const h = hanging("guard");
    b.add("post_tool_call", h.fn, "p");
    const first = b.invoke("post_tool_call", { tool_call_id: "a" });
    await vi.advanceTimersByTimeAsync(1000);
    expect(await first).toEqual([]);
    h.calls[0]!.settle(); // the abandoned call finishes: only the suppression window remains
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(58_000);
    expect(await b.invoke("post_tool_call", { tool_call_id: "b" })).toEqual([]);
    expect(h.calls).toHaveLength(1);
    expect(logs.warnings().at(-1)!.msg).toBe(
      "hook post_tool_call callback guard skipped after previous timeout or while still running",
    );
    await vi.advanceTimersByTimeAsync(2_100); // t = 61.1 s: the window (timeout at 1 s + 60 s) is over
    const third = b.invoke("post_tool_call", { tool_call_id: "c" });
    expect(h.calls).toHaveLength(2);
    h.calls[1]!.settle();
    expect(await third).toEqual([]);
  });

  it("while suppressed, a fail-closed hook blocks", async () => {
    vi.useFakeTimers();
    const { b } = bus(1);
    const h = hanging();
    b.add("pre_tool_call", h.fn, "p");
    const first = b.invoke("pre_tool_call", { tool_call_id: "a" });
    await vi.advanceTimersByTimeAsync(1000);
    await first;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await b.invoke("pre_tool_call", { tool_call_id: "b" })).toEqual([
      { action: "block", message: FAIL_CLOSED_TIMEOUT_MESSAGE },
    ]);
    expect(h.calls).toHaveLength(1);
  });

  it("suppression is per (hook, callback): the same function on another hook is not suppressed", async () => {
    vi.useFakeTimers();
    const { b } = bus(1);
    const h = hanging();
    b.add("post_tool_call", h.fn, "p");
    b.add("pre_llm_call", h.fn, "p");
    const first = b.invoke("post_tool_call", {});
    await vi.advanceTimersByTimeAsync(1000);
    await first;
    void b.invoke("pre_llm_call", {});
    expect(h.calls).toHaveLength(2);
  });

  it(
    "the running gate is keyed by call identity " +
      "(tool_call_id, then turn_id): distinct calls are not " +
      "collapsed",
    async () => {
      vi.useFakeTimers();
      const { b } = bus(1);
      const h = hanging();
      b.add("post_tool_call", h.fn, "p");
      const first = b.invoke("post_tool_call", { tool_call_id: "a", turn_id: "t1" });
      await vi.advanceTimersByTimeAsync(1000);
      await first;
      await vi.advanceTimersByTimeAsync(61_000); // suppression over; call "a" is still running
      await b.invoke("post_tool_call", { tool_call_id: "a" });
      expect(h.calls).toHaveLength(1); // same call identity: skipped while still running
      void b.invoke("post_tool_call", { tool_call_id: "b" });
      expect(h.calls).toHaveLength(2); // another call runs
      expect(h.calls[1]!.payload.tool_call_id).toBe("b");
    },
  );

  it("turn_id is the call identity when tool_call_id is absent or empty", async () => {
    vi.useFakeTimers();
    const { b } = bus(1);
    const h = hanging();
    b.add("pre_llm_call", h.fn, "p");
    const first = b.invoke("pre_llm_call", { tool_call_id: "", turn_id: "t1" });
    await vi.advanceTimersByTimeAsync(1000);
    await first;
    await vi.advanceTimersByTimeAsync(61_000);
    await b.invoke("pre_llm_call", { turn_id: "t1" });
    expect(h.calls).toHaveLength(1);
    void b.invoke("pre_llm_call", { turn_id: "t2" });
    expect(h.calls).toHaveLength(2);
  });

  it("two anonymous callbacks of one plugin are different callbacks: one hanging does not gate the other", async () => {
    const { b } = bus(0.05);
    let second = 0;
    b.add("post_tool_call", () => new Promise(() => undefined), "p");
    b.add("post_tool_call", () => void second++, "p");
    await b.invoke("post_tool_call", { tool_call_id: "x" });
    expect(second).toBe(1);
  });

  it(
    "a callback with 3 abandoned calls still running is " + "skipped ('the plugin is hung') until one finishes",
    async () => {
      vi.useFakeTimers();
      const { b, logs } = bus(1);
      const h = hanging("stuck");
      b.add("post_tool_call", h.fn, "p");
      for (const id of ["a", "b", "c"]) {
        const p = b.invoke("post_tool_call", { tool_call_id: id });
        await vi.advanceTimersByTimeAsync(1000);
        await p;
        await vi.advanceTimersByTimeAsync(61_000);
      }
      expect(h.calls).toHaveLength(3);
      await b.invoke("post_tool_call", { tool_call_id: "d" });
      expect(h.calls).toHaveLength(3);
      expect(logs.warnings().at(-1)).toMatchObject({
        plugin: "p",
        msg: "hook post_tool_call callback stuck skipped: 3 abandoned call(s) still running — the plugin is hung",
      });
      h.calls[0]!.settle();
      await vi.advanceTimersByTimeAsync(0);
      void b.invoke("post_tool_call", { tool_call_id: "e" });
      expect(h.calls).toHaveLength(4);
    },
  );

  it("unload-all clears the running, abandoned and suppression bookkeeping", async () => {
    vi.useFakeTimers();
    const { b } = bus(1);
    const h = hanging();
    b.add("post_tool_call", h.fn, "p");
    const p = b.invoke("post_tool_call", { tool_call_id: "a" });
    await vi.advanceTimersByTimeAsync(1000);
    await p;
    b.clearTimeoutState();
    void b.invoke("post_tool_call", { tool_call_id: "a" });
    expect(h.calls).toHaveLength(2);
  });
});

describe("malformed pre_tool_call directives", () => {
  it("are ignored for that call and named once (then DEBUG) with the plugin key", async () => {
    const { b, logs } = bus();
    b.add(
      "pre_tool_call",
      function sloppy() {
        return { action: "block" };
      },
      "sloppy",
    );
    b.add("pre_tool_call", () => "yes", "stringy");
    b.add("pre_tool_call", () => ({ action: "allow" }), "wrongverb");
    for (let i = 0; i < 3; i++)
      expect(resolveToolDirective(await b.invoke("pre_tool_call", { tool_name: "t" }), {})).toEqual({});
    expect(logs.warnings().map((r) => [r.plugin, r.msg])).toEqual([
      [
        "sloppy",
        "Hook 'pre_tool_call' callback sloppy returned a malformed result: action 'block' needs a non-empty " +
          "message; ignored (the call is not blocked by it) (identical problems are logged at DEBUG from now " +
          "on)",
      ],
      [
        "stringy",
        "Hook 'pre_tool_call' callback <anonymous> returned a malformed result: expected a directive object " +
          `({action: "block" | "approve" | "modify", …}), got the string "yes"; ignored (identical problems ` +
          "are logged at DEBUG from now on)",
      ],
      [
        "wrongverb",
        `Hook 'pre_tool_call' callback <anonymous> returned a malformed result: unknown action "allow" ` +
          "(expected block, approve or modify); ignored (identical problems are logged at DEBUG from now on)",
      ],
    ]);
    expect(logs.debugs()).toHaveLength(6);
  });
});

describe("pre_tool_call through loaded plugins", () => {
  it("a raising guard plugin blocks even though an earlier plugin approved (fail-closed beats approve)", async () => {
    const { rt } = await start([
      plugin("approver", `ctx.register_hook("pre_tool_call", () => ({ action: "approve", rule_key: "x" }));`),
      plugin(
        "guard",
        `ctx.register_hook("pre_tool_call", function guard({ tool_name }) { if (tool_name === "terminal") ` +
          `throw new Error("policy service down"); });`,
      ),
    ]);
    const r = await rt.hooks.invoke("pre_tool_call", { tool_name: "terminal", args: {} });
    expect(resolveToolDirective(r, {})).toEqual({
      action: "block",
      message: "pre_tool_call plugin callback guard raised Error: policy service down",
    });
    const ok = await rt.hooks.invoke("pre_tool_call", { tool_name: "read_file", args: {} });
    expect(resolveToolDirective(ok, {})).toEqual({ action: "approve", message: null, rule_key: "x" });
  });
});

describe("registration during a dispatch", () => {
  it("a callback added or removed while a hook runs changes the next dispatch, not the one in flight", async () => {
    const { b } = bus();
    const calls: string[] = [];
    let removeSecond: () => void = () => undefined;
    b.add(
      "post_tool_call",
      () => {
        calls.push("first");
        b.add("post_tool_call", () => void calls.push("late"), "p3");
        removeSecond();
      },
      "p1",
    );
    removeSecond = b.add("post_tool_call", () => void calls.push("second"), "p2");
    await b.invoke("post_tool_call", {});
    expect(calls).toEqual(["first", "second"]);
    calls.length = 0;
    removeSecond = () => undefined;
    await b.invoke("post_tool_call", {});
    expect(calls).toEqual(["first", "late"]);
    expect(b.owners("post_tool_call")).toEqual(["p1", "p3", "p3"]);
  });
});

describe("one timer for every pending bounded call", () => {
  it("each pending call times out at its own start + the bound, not at the first call's", async () => {
    vi.useFakeTimers();
    const { b, logs } = bus(1);
    const h = hanging("slow");
    b.add("post_tool_call", () => new Promise((r) => setTimeout(r, 800)), "first");
    b.add("post_tool_call", h.fn, "second");
    let done = false;
    const p = b.invoke("post_tool_call", { tool_call_id: "a" }).then((r) => {
      done = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(1000); // t = 1 s: "slow" started at 0.8 s
    expect(h.calls).toHaveLength(1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(799);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1); // t = 1.8 s
    expect(await p).toEqual([]);
    expect(logs.warnings().map((r) => [r.plugin, r.msg])).toEqual([
      ["second", "hook post_tool_call callback slow timed out after 1s — skipping"],
    ]);
  });

  it("concurrent dispatches share the timer; each keeps its own deadline and in-time results", async () => {
    vi.useFakeTimers();
    const { b } = bus(1);
    const h = hanging("slow");
    b.add("pre_tool_call", h.fn, "p");
    const order: string[] = [];
    const a = b.invoke("pre_tool_call", { tool_call_id: "a" }).then((r) => order.push("a") && r);
    await vi.advanceTimersByTimeAsync(400);
    const c = b.invoke("pre_tool_call", { tool_call_id: "b" }).then((r) => order.push("b") && r);
    await vi.advanceTimersByTimeAsync(300);
    const d = b.invoke("pre_tool_call", { tool_call_id: "c" }).then((r) => order.push("c") && r);
    h.calls[2]!.settle(); // "c" answers in time
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(["c"]);
    await vi.advanceTimersByTimeAsync(300); // t = 1 s: a's deadline
    expect(order).toEqual(["c", "a"]);
    await vi.advanceTimersByTimeAsync(399);
    expect(order).toEqual(["c", "a"]);
    await vi.advanceTimersByTimeAsync(1); // t = 1.4 s: b's deadline
    expect(order).toEqual(["c", "a", "b"]);
    const block = { action: "block", message: FAIL_CLOSED_TIMEOUT_MESSAGE };
    expect([await a, await c, await d]).toEqual([[block], [block], []]);
  });

  it("a late rejection of an abandoned call is neither reported nor left unhandled", async () => {
    vi.useFakeTimers();
    const { b, logs } = bus(1);
    b.add(
      "post_tool_call",
      function late() {
        return new Promise((_, reject) => setTimeout(() => reject(new Error("too late")), 2000));
      },
      "p",
    );
    const p = b.invoke("post_tool_call", {});
    await vi.advanceTimersByTimeAsync(1000);
    expect(await p).toEqual([]);
    await vi.advanceTimersByTimeAsync(1500);
    expect(logs.warnings().map((r) => r.msg)).toEqual([
      "hook post_tool_call callback late timed out after 1s — skipping",
    ]);
  });

  it("a result whose `then` getter throws is that callback's error (fail-closed: a block)", async () => {
    const { b } = bus(1);
    b.add(
      "pre_tool_call",
      function trap() {
        return {
          // biome-ignore lint/suspicious/noThenProperty: a hostile thenable on purpose
          get then() {
            throw new TypeError("no then");
          },
        };
      },
      "p",
    );
    expect(await b.invoke("pre_tool_call", { tool_name: "t" })).toEqual([
      { action: "block", message: "pre_tool_call plugin callback trap raised TypeError: no then" },
    ]);
  });

  it("the timer keeps the process alive only while a bounded call is pending", async () => {
    const { b } = bus(600);
    let answer: (v: string) => void = () => undefined;
    b.add("transform_tool_result", () => new Promise<string>((r) => (answer = r)), "p");
    const timers = () => process.getActiveResourcesInfo().filter((t) => t === "Timeout").length;
    const before = timers();
    const p = b.invoke("transform_tool_result", { result: "r" });
    expect(timers()).toBe(before + 1);
    answer("rewritten");
    expect(await p).toEqual(["rewritten"]);
    expect(timers()).toBe(before);
    const again = b.invoke("transform_tool_result", { result: "r" });
    expect(timers()).toBe(before + 1);
    answer("again");
    expect(await again).toEqual(["again"]);
    expect(timers()).toBe(before);
  });
});
