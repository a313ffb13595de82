/**
 * Middleware: chained request
 * middleware with deep copies and traces, and the frame rules of nested execution middleware.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  MIDDLEWARE_SCHEMA_VERSION,
  MiddlewareEngine,
  RequiredMiddlewareError,
  type MiddlewareCallback,
} from "../../src/runtime/middleware.js";
import { OBSERVER_SCHEMA_VERSION } from "../../src/runtime/hooks.js";
import { FailureReporter } from "../../src/runtime/reporter.js";
import { captureLog, plugin, start } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterEach(() => cleanupTemp());

function engine(
  ...cbs: Array<MiddlewareCallback | [MiddlewareCallback, { kind?: string; owner?: string; required?: boolean }]>
) {
  const logs = captureLog();
  const m = new MiddlewareEngine(new FailureReporter(logs.log));
  cbs.forEach((c, i) => {
    const [cb, o] = Array.isArray(c) ? c : [c, {}];
    m.add({ kind: o.kind ?? "tool_execution", cb, owner: o.owner ?? `p${i}`, required: o.required ?? false });
  });
  return { m, logs };
}

function req(kind: "tool_request" | "llm_request", ...cbs: MiddlewareCallback[]) {
  return engine(
    ...cbs.map((cb, i) => [cb, { kind, owner: `p${i}` }] as [MiddlewareCallback, { kind: string; owner: string }]),
  );
}

describe("request middleware", () => {
  it("with no callbacks returns the same object, uncopied, unchanged", async () => {
    const { m } = engine();
    const input = { a: 1 };
    const r = await m.applyRequest("tool_request", input);
    expect(r.payload).toBe(input);
    expect(r.original_payload).toBe(input);
    expect(r).toMatchObject({ changed: false, trace: [] });
  });

  it("is chained: each callback sees the previous rewrite; original_* stays the input", async () => {
    const seen: unknown[] = [];
    const { m } = req(
      "tool_request",
      ({ args }) => (seen.push(args), { args: { ...(args as object), n: 1 } }),
      ({ args, original_args }) => (seen.push([args, original_args]), { args: { ...(args as object), n: 2, m: true } }),
    );
    const r = await m.applyRequest("tool_request", { cmd: "ls" });
    expect(seen).toEqual([{ cmd: "ls" }, [{ cmd: "ls", n: 1 }, { cmd: "ls" }]]);
    expect(r.payload).toEqual({ cmd: "ls", n: 2, m: true });
    expect(r.original_payload).toEqual({ cmd: "ls" });
  });

  it("llm_request uses request/original_request and carries both schema versions and the call context", async () => {
    let kw: Record<string, unknown> = {};
    const { m } = req("llm_request", (k) => void (kw = k));
    await m.applyRequest("llm_request", { model: "x" }, { turn_id: "t1", provider: "p" });
    expect(kw).toMatchObject({
      request: { model: "x" },
      original_request: { model: "x" },
      turn_id: "t1",
      provider: "p",
      telemetry_schema_version: OBSERVER_SCHEMA_VERSION,
      middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
    });
  });

  it(
    "works on deep copies: in-place mutation never reaches " + "the caller, the original, or the next callback",
    async () => {
      const input = { nested: { v: 1 }, list: [1] };
      let returned: { nested: { v: number } } | undefined;
      let secondSaw: unknown;
      const { m } = req(
        "tool_request",
        ({ args, original_args }) => {
          (args as typeof input).nested.v = 99; // mutation without returning: not a rewrite
          (original_args as typeof input).list.push(2);
          return null;
        },
        ({ args }) => {
          secondSaw = structuredClone(args);
          returned = { nested: { v: 2 } };
          return { args: returned };
        },
      );
      const r = await m.applyRequest("tool_request", input);
      returned!.nested.v = 3; // mutating what was returned after the fact changes nothing
      expect(input).toEqual({ nested: { v: 1 }, list: [1] });
      expect(secondSaw).toEqual({ nested: { v: 1 }, list: [1] });
      expect(r.payload).toEqual({ nested: { v: 2 } });
      expect(r.original_payload).toEqual({ nested: { v: 1 }, list: [1] });
      expect(r.original_payload).not.toBe(input);
    },
  );

  it("ignores non-mapping returns and returns whose payload key is not a mapping", async () => {
    const { m } = req(
      "tool_request",
      () => "string",
      () => ["array"],
      () => ({ args: "not a mapping", source: "x" }),
      () => ({ args: [1, 2], source: "y" }),
      () => ({ request: { wrong: "key" }, source: "z" }),
      () => 42,
      () => undefined,
    );
    const r = await m.applyRequest("tool_request", { a: 1 });
    expect(r).toEqual({ payload: { a: 1 }, original_payload: { a: 1 }, changed: false, trace: [] });
  });

  it(
    "trace entries keep the non-empty source/reason/name strings, default {source:'plugin'}; changed = trace " +
      "non-empty",
    async () => {
      const { m } = req(
        "tool_request",
        ({ args }) => ({ args, source: "relay", reason: "defaulted workdir", name: "wd", extra: "dropped" }),
        ({ args }) => ({ args }),
        ({ args }) => ({ args, source: "", reason: 5, name: "only-name" }),
      );
      const r = await m.applyRequest("tool_request", { a: 1 });
      expect(r.trace).toEqual([
        { source: "relay", reason: "defaulted workdir", name: "wd" },
        { source: "plugin" },
        { name: "only-name" },
      ]);
      // Identical payload returned with a trace still counts as changed: changed tracks the trace.
      expect(r.payload).toEqual({ a: 1 });
      expect(r.changed).toBe(true);
    },
  );

  it("a raising callback is skipped (fail-open) and reported once; the chain goes on", async () => {
    const { m, logs } = req(
      "tool_request",
      ({ args }) => ({ args: { ...(args as object), first: true } }),
      function broken() {
        throw new Error("nope");
      },
      ({ args }) => ({ args: { ...(args as object), third: true } }),
    );
    for (let i = 0; i < 2; i++) {
      const r = await m.applyRequest("tool_request", { a: 1 }, { tool_name: "t" });
      expect(r.payload).toEqual({ a: 1, first: true, third: true });
    }
    expect(logs.warnings()).toHaveLength(1);
    expect(logs.warnings()[0]!.plugin).toBe("p1");
  });

  it("a required plugin's raising request middleware fails the call", async () => {
    const logs = captureLog();
    const m = new MiddlewareEngine(new FailureReporter(logs.log));
    const boom = new Error("policy unavailable");
    m.add({ kind: "tool_request", owner: "policy", required: true, cb: () => Promise.reject(boom) });
    const err = await m.applyRequest("tool_request", {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequiredMiddlewareError);
    expect((err as RequiredMiddlewareError).message).toBe(
      "required plugin policy: tool_request middleware failed: policy unavailable",
    );
    expect((err as RequiredMiddlewareError).causeError).toBe(boom);
  });
});

describe("execution middleware frame rules", () => {
  function counter(result: unknown = "tool-result") {
    const calls: unknown[] = [];
    return { calls, terminal: async (p: unknown) => (calls.push(p), result) };
  }

  it("with no callbacks calls the terminal directly", async () => {
    const { m } = engine();
    const t = counter();
    expect(await m.runExecution("tool_execution", { a: 1 }, t.terminal)).toBe("tool-result");
    expect(t.calls).toEqual([{ a: 1 }]);
  });

  it(
    "nests in registration order: the first registered is outermost; next_call(payload) passes a new payload " + "down",
    async () => {
      const log: string[] = [];
      const frame =
        (n: string): MiddlewareCallback =>
        async ({ args, next_call }) => {
          log.push(`enter ${n}`);
          const r = await (next_call as (a: unknown) => Promise<string>)({ ...(args as object), [n]: true });
          log.push(`leave ${n}`);
          return `${n}(${r})`;
        };
      const { m } = engine(frame("a"), frame("b"), frame("c"));
      const t = counter("T");
      expect(await m.runExecution("tool_execution", { x: 0 }, t.terminal, { tool_name: "demo" })).toBe("a(b(c(T)))");
      expect(log).toEqual(["enter a", "enter b", "enter c", "leave c", "leave b", "leave a"]);
      expect(t.calls).toEqual([{ x: 0, a: true, b: true, c: true }]);
    },
  );

  it(
    "next_call() without an argument passes the frame's payload; kwargs carry tool_name, original_args, " +
      "versions and a camelCase alias",
    async () => {
      let kw: Record<string, unknown> = {};
      const { m } = engine(async (k) => {
        kw = k;
        return (k.nextCall as () => Promise<unknown>)();
      });
      const t = counter();
      await m.runExecution("tool_execution", { a: 1 }, t.terminal, { tool_name: "demo" });
      expect(t.calls).toEqual([{ a: 1 }]);
      expect(kw).toMatchObject({
        tool_name: "demo",
        args: { a: 1 },
        original_args: { a: 1 },
        telemetry_schema_version: OBSERVER_SCHEMA_VERSION,
        middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
      });
      expect(kw.nextCall).toBe(kw.next_call);
    },
  );

  it("llm_execution uses request/original_request (original taken from the context when given)", async () => {
    let kw: Record<string, unknown> = {};
    const { m } = engine([
      async (k) => ((kw = k), (k.next_call as () => Promise<unknown>)()),
      { kind: "llm_execution" },
    ]);
    await m.runExecution("llm_execution", { model: "b" }, async () => "resp", { original_request: { model: "a" } });
    expect(kw).toMatchObject({ request: { model: "b" }, original_request: { model: "a" } });
  });

  it(
    "next_call is single-use: the second call throws the exact error; the first result is kept and the " +
      "terminal runs once",
    async () => {
      let second: unknown;
      const { m, logs } = engine(async function twice({ args, next_call }) {
        const call = next_call as (a: unknown) => Promise<unknown>;
        const r = await call(args);
        try {
          await call(args);
        } catch (e) {
          second = e;
        }
        return r;
      });
      const t = counter();
      expect(await m.runExecution("tool_execution", {}, t.terminal)).toBe("tool-result");
      expect((second as Error).message).toBe(
        "Middleware 'tool_execution' callback twice called next_call() more than once; downstream execution is " +
          "single-use",
      );
      expect(t.calls).toHaveLength(1);
      expect(logs.warnings()).toHaveLength(0);
    },
  );

  it(
    "a second next_call left uncaught (even unawaited) is contained: reported once, downstream result kept, no " +
      "unhandled rejection",
    async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (e: unknown) => unhandled.push(e);
      process.on("unhandledRejection", onUnhandled);
      try {
        const { m, logs } = engine([
          function sloppy({ args, next_call }) {
            const call = next_call as (a: unknown) => Promise<unknown>;
            const first = call(args);
            void call(args); // throws synchronously: the frame fails after... the first call is in flight
            return first;
          },
          { owner: "sloppy" },
        ]);
        const { m: m2, logs: logs2 } = engine([
          async function awaitedTwice({ args, next_call }) {
            const call = next_call as (a: unknown) => Promise<unknown>;
            await call(args);
            return call(args);
          },
          { owner: "twice" },
        ]);
        // Still in flight when the second call throws: the frame's own error propagates (rule 3), not a crash.
        const slow = async () => {
          await new Promise((r) => setTimeout(r, 5));
          return "late";
        };
        await expect(m.runExecution("tool_execution", {}, slow)).rejects.toThrow(/called next_call\(\) more than once/);
        // Already finished when it throws (a terminal that settles at once): the result stands, as a
        // throw after a successful next_call (the original's next_call is synchronous).
        const t = counter();
        expect(await m.runExecution("tool_execution", {}, t.terminal)).toBe("tool-result");
        expect(t.calls).toHaveLength(1);
        // After a successful first call: the result is kept, the terminal never re-runs (rule 2).
        const t2 = counter("kept");
        expect(await m2.runExecution("tool_execution", {}, t2.terminal)).toBe("kept");
        expect(t2.calls).toHaveLength(1);
        expect(logs2.warnings().map((r) => r.plugin)).toEqual(["twice"]);
        expect(logs2.warnings()[0]!.msg).toContain("called next_call() more than once");
        expect(logs.warnings().map((r) => r.plugin)).toEqual(["sloppy"]);
        await new Promise((r) => setTimeout(r, 20));
        expect(unhandled).toEqual([]);
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
    },
  );

  it(
    "a frame that gives up on a downstream still in flight (its own deadline) fails at once, without waiting " +
      "for it",
    async () => {
      let release!: (v: string) => void;
      let terminalDone = false;
      const terminal = () =>
        new Promise<string>((r) => (release = r)).then((v) => {
          terminalDone = true;
          return v;
        });
      const { m } = engine(async ({ args, next_call }) => {
        await Promise.race([
          (next_call as (a: unknown) => Promise<unknown>)(args),
          new Promise((r) => setTimeout(r, 1)),
        ]);
        throw new Error("middleware deadline");
      });
      await expect(m.runExecution("tool_execution", {}, terminal)).rejects.toThrow("middleware deadline");
      expect(terminalDone).toBe(false);
      release("late");
    },
  );

  it(
    "a throw before next_call skips that frame (fail-open): " + "the rest of the chain and the terminal still run",
    async () => {
      const log: string[] = [];
      const { m, logs } = engine(
        async ({ next_call }) => (log.push("outer"), (next_call as () => Promise<unknown>)()),
        function broken() {
          throw new Error("before next");
        },
        async ({ args, next_call }) => (
          log.push(`inner ${JSON.stringify(args)}`), (next_call as () => Promise<unknown>)()
        ),
      );
      const t = counter();
      expect(await m.runExecution("tool_execution", { a: 1 }, t.terminal)).toBe("tool-result");
      expect(log).toEqual(["outer", 'inner {"a":1}']);
      expect(t.calls).toEqual([{ a: 1 }]);
      expect(logs.warnings().map((r) => r.plugin)).toEqual(["p1"]);
    },
  );

  it("a throw after a successful next_call keeps the downstream result and never re-runs the terminal", async () => {
    const { m, logs } = engine(async function post({ next_call }) {
      await (next_call as () => Promise<unknown>)();
      throw new Error("post-processing failed");
    });
    const t = counter("the result");
    expect(await m.runExecution("tool_execution", {}, t.terminal)).toBe("the result");
    expect(t.calls).toHaveLength(1);
    expect(logs.warnings()).toHaveLength(1);
    expect(logs.warnings()[0]!.msg).toContain(
      "Middleware 'tool_execution' callback post raised: post-processing failed",
    );
  });

  it("a downstream error propagates unchanged (the same object) through frames that do not catch it", async () => {
    const boom = new Error("tool exploded");
    const { m, logs } = engine(
      async ({ next_call }) => (next_call as () => Promise<unknown>)(),
      async ({ next_call }) => {
        const r = await (next_call as () => Promise<unknown>)();
        return r;
      },
    );
    let calls = 0;
    const err = await m
      .runExecution("tool_execution", {}, () => {
        calls++;
        throw boom;
      })
      .catch((e: unknown) => e);
    expect(err).toBe(boom);
    expect(calls).toBe(1);
    expect(logs.warnings()).toHaveLength(0);
  });

  it("a frame may translate a downstream error by catching it (a value or a different error)", async () => {
    const boom = new Error("429");
    const { m } = engine(async ({ next_call }) => {
      try {
        return await (next_call as () => Promise<unknown>)();
      } catch (e) {
        return { error: `translated: ${(e as Error).message}` };
      }
    });
    expect(await m.runExecution("tool_execution", {}, () => Promise.reject(boom))).toEqual({
      error: "translated: 429",
    });
    const other = new TypeError("rate limited");
    const { m: m2 } = engine(async ({ next_call }) => {
      await (next_call as () => Promise<unknown>)().catch(() => {
        throw other;
      });
    });
    expect(await m2.runExecution("tool_execution", {}, () => Promise.reject(boom)).catch((e: unknown) => e)).toBe(
      other,
    );
  });

  it(
    "a frame that never calls next_call short-circuits: its value is the result; inner frames and the terminal " +
      "do not run",
    async () => {
      let inner = 0;
      const { m } = engine(
        () => "cached",
        async ({ next_call }) => (inner++, (next_call as () => Promise<unknown>)()),
      );
      const t = counter();
      expect(await m.runExecution("tool_execution", {}, t.terminal)).toBe("cached");
      expect(inner).toBe(0);
      expect(t.calls).toHaveLength(0);
    },
  );

  it("a required plugin's frame failing before next_call fails the call; the terminal " + "does not run", async () => {
    const { m } = engine([
      () => {
        throw new Error("audit sink down");
      },
      { owner: "audit", required: true },
    ]);
    const t = counter();
    const err = (await m
      .runExecution("tool_execution", {}, t.terminal)
      .catch((e: unknown) => e)) as RequiredMiddlewareError;
    expect(err).toBeInstanceOf(RequiredMiddlewareError);
    expect(err.plugin).toBe("audit");
    expect(err.message).toBe("required plugin audit: tool_execution middleware failed: audit sink down");
    expect(t.calls).toHaveLength(0);
  });

  it("a required plugin's frame failing AFTER a successful next_call still keeps the result", async () => {
    const { m } = engine([
      async ({ next_call }) => {
        await (next_call as () => Promise<unknown>)();
        throw new Error("late");
      },
      { owner: "audit", required: true },
    ]);
    expect(await m.runExecution("tool_execution", {}, async () => "ok")).toBe("ok");
  });
});

describe("middleware from loaded plugins", () => {
  it(
    "the lock's required flag reaches the engine: a required plugin's failing frame fails the call, a normal " +
      "one is skipped",
    async () => {
      const failing = `ctx.register_middleware("tool_execution", () => { throw new Error("down"); });`;
      const { rt } = await start([plugin("optional", failing), plugin("strictly", failing, { required: true })]);
      await expect(rt.middleware.runExecution("tool_execution", {}, async () => "ran")).rejects.toThrow(
        "required plugin strictly: tool_execution middleware failed: down",
      );
      rt.unload("strictly");
      expect(await rt.middleware.runExecution("tool_execution", {}, async () => "ran")).toBe("ran");
    },
  );
});

describe("registration during a call", () => {
  it("middleware added or removed while a chain runs changes the next call, not the one in flight", async () => {
    const calls: string[] = [];
    const { m } = engine();
    let removeSecond: () => void = () => undefined;
    m.add({
      kind: "tool_execution",
      owner: "p1",
      required: false,
      cb: ({ args, next_call }) => {
        calls.push("first");
        m.add({
          kind: "tool_execution",
          owner: "p3",
          required: false,
          cb: ({ args: a, next_call: n }) => (calls.push("late"), (n as (x: unknown) => unknown)(a)),
        });
        removeSecond();
        return (next_call as (x: unknown) => unknown)(args);
      },
    });
    removeSecond = m.add({
      kind: "tool_execution",
      owner: "p2",
      required: false,
      cb: ({ args, next_call }) => (calls.push("second"), (next_call as (x: unknown) => unknown)(args)),
    });
    expect(await m.runExecution("tool_execution", {}, () => "done")).toBe("done");
    expect(calls).toEqual(["first", "second"]);
    calls.length = 0;
    removeSecond = () => undefined;
    expect(await m.runExecution("tool_execution", {}, () => "done")).toBe("done");
    expect(calls).toEqual(["first", "late"]);
    expect(m.owners("tool_execution")).toEqual(["p1", "p3", "p3"]);
  });
});

describe("plain pass-through frames", () => {
  it(
    "a frame that returns next_call's promise as is passes " + "results and downstream errors through unchanged",
    async () => {
      const seen: string[] = [];
      const pass =
        (name: string): MiddlewareCallback =>
        ({ args, next_call }) => (seen.push(name), (next_call as (a: unknown) => unknown)(args));
      const { m } = engine(pass("outer"), pass("inner"));
      expect(await m.runExecution("tool_execution", { a: 1 }, (a: unknown) => ({ got: a }))).toEqual({ got: { a: 1 } });
      const boom = new Error("tool failed");
      await expect(m.runExecution("tool_execution", {}, () => Promise.reject(boom))).rejects.toBe(boom);
      expect(seen).toEqual(["outer", "inner", "outer", "inner"]);
    },
  );
});
