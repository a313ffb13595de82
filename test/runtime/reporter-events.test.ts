/**
 * The warn-once-then-debug reporter and the plugin event bus
 *: namespacing, deep copies, FIFO, depth and backlog caps, generation bump on unload.
 */
import { afterEach, describe, expect, it } from "vitest";
import { EventBus } from "../../src/runtime/events.js";
import { FailureReporter } from "../../src/runtime/reporter.js";
import { captureLog, plugin, start } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterEach(() => cleanupTemp());

describe("warn-once reporter", () => {
  it("the first failure warns with the fields the surface provides; identical repeats go to DEBUG", async () => {
    const { rt, logs } = await start([
      plugin(
        "sig",
        `ctx.register_hook("post_tool_call", function needsResult(p) { if (!p.missing_field) throw new ` +
          `Error("missing_field required"); });`,
      ),
    ]);
    for (let i = 0; i < 3; i++) await rt.hooks.invoke("post_tool_call", { tool_name: "t", args: {}, result: "r" });
    const w = logs.warnings().filter((r) => r.plugin === "sig");
    expect(w).toHaveLength(1);
    expect(w[0]!.msg).toBe(
      "Hook 'post_tool_call' callback needsResult raised: missing_field required (hook provides: args, " +
        "result, telemetry_schema_version, tool_name; identical failures are logged at DEBUG from now on)",
    );
    const d = logs.debugs().filter((r) => r.plugin === "sig" && r.msg.includes("raised again"));
    expect(d.map((r) => r.msg)).toEqual(
      Array(2).fill("Hook 'post_tool_call' callback needsResult raised again: missing_field required"),
    );
  });

  it("a different error (type or message) warns again; the key uses the first 200 characters of the message", () => {
    const logs = captureLog();
    const r = new FailureReporter(logs.log);
    r.report("Middleware", "llm_request", "p", "cb", new Error("a"), []);
    r.report("Middleware", "llm_request", "p", "cb", new TypeError("a"), []);
    r.report("Middleware", "llm_request", "p", "cb", new Error("b"), []);
    r.report("Middleware", "llm_request", "p", "cb", new Error(`${"x".repeat(200)}1`), []);
    r.report("Middleware", "llm_request", "p", "cb", new Error(`${"x".repeat(200)}2`), []);
    r.report("Middleware", "llm_request", "p", "other", new Error("a"), []);
    expect(logs.warnings()).toHaveLength(5);
    expect(logs.warnings()[0]!.msg).toBe(
      "Middleware 'llm_request' callback cb raised: a (middleware provides: no fields; identical failures " +
        "are logged at DEBUG from now on)",
    );
  });

  it("unload-all resets it (a reload warns again); a targeted unload does not", async () => {
    const code = `ctx.register_hook("post_llm_call", function bad() { throw new Error("always"); });`;
    const { rt, logs } = await start([plugin("a", code), plugin("b", `ctx.register_hook("post_llm_call", () => {});`)]);
    const fire = () => rt.hooks.invoke("post_llm_call", {});
    await fire();
    await fire();
    expect(logs.warnings()).toHaveLength(1);
    rt.unload("b");
    await fire();
    expect(logs.warnings()).toHaveLength(1);
    await rt.reload(rt.lock);
    await fire();
    expect(logs.warnings().filter((r) => r.msg.includes("callback bad raised:"))).toHaveLength(2);
  });

  it("first warnings are kept on the plugin's runtime status (shown by `hermes plugins why --json`)", async () => {
    const { rt } = await start([
      plugin("noisy", `ctx.register_middleware("tool_request", function boom() { throw new Error("x"); });`),
    ]);
    await rt.middleware.applyRequest("tool_request", {});
    await rt.middleware.applyRequest("tool_request", {});
    expect(rt.status.get("noisy")!.issues).toEqual([
      expect.stringContaining("Middleware 'tool_request' callback boom raised: x"),
    ]);
  });
});

function eventBus() {
  const logs = captureLog();
  return { bus: new EventBus(logs.log, new FailureReporter(logs.log)), logs };
}

describe("event bus", () => {
  it(
    "ctx.emit namespaces bare names as '<key>:<event>'; ':' in the name, empty names and non-object payloads " +
      "are refused",
    async () => {
      const { rt } = await start([
        plugin("pub", `globalThis.__pub = ctx;`),
        plugin("sub", `ctx.subscribe("pub:ready", (p) => { (globalThis.__got ??= []).push(p); });`),
      ]);
      const ctx = (globalThis as Record<string, unknown>).__pub as { emit: (e: unknown, p?: unknown) => number };
      expect(ctx.emit("ready", { n: 1 })).toBe(1);
      expect(ctx.emit("other")).toBe(0);
      expect(() => ctx.emit("pub:ready", {})).toThrow(
        "emit 'pub:ready': plugins emit bare names; the 'pub:' namespace is added for you",
      );
      expect(() => ctx.emit("hermes:boot", {})).toThrow(/bare names/);
      expect(() => ctx.emit("", {})).toThrow(/non-empty string/);
      expect(() => ctx.emit("x", [1] as unknown as Record<string, unknown>)).toThrow(TypeError);
      await rt.settle();
      expect((globalThis as Record<string, unknown>).__got).toEqual([{ n: 1 }]);
    },
  );

  it("delivers after the emitter returns, FIFO, with a fresh deep copy per subscriber", async () => {
    const { bus } = eventBus();
    const got: Array<[string, unknown]> = [];
    bus.subscribe(
      "p:e",
      (p) => {
        got.push(["a", structuredClone(p)]);
        (p.nested as { v: number }).v = 100;
      },
      "a",
    );
    bus.subscribe("p:e", (p) => void got.push(["b", structuredClone(p)]), "b");
    const payload = { seq: 1, nested: { v: 1 } };
    bus.emit("p:e", payload, "p");
    bus.emit("p:e", { seq: 2, nested: { v: 2 } }, "p");
    expect(got).toEqual([]); // nothing runs on the emitter's path
    await bus.idle();
    expect(got).toEqual([
      ["a", { seq: 1, nested: { v: 1 } }],
      ["b", { seq: 1, nested: { v: 1 } }],
      ["a", { seq: 2, nested: { v: 2 } }],
      ["b", { seq: 2, nested: { v: 2 } }],
    ]);
    expect(payload).toEqual({ seq: 1, nested: { v: 1 } });
  });

  it(
    "async subscribers are awaited in order; a failing subscriber is reported ('Event') and does not stop " +
      "delivery",
    async () => {
      const { bus, logs } = eventBus();
      const order: string[] = [];
      bus.subscribe(
        "p:e",
        async () => {
          await new Promise((r) => setTimeout(r, 20));
          order.push("slow");
        },
        "a",
      );
      bus.subscribe(
        "p:e",
        () => {
          throw new Error("sub failed");
        },
        "b",
      );
      bus.subscribe("p:e", () => void order.push("fast"), "c");
      bus.emit("p:e", {}, "p");
      await bus.idle();
      expect(order).toEqual(["slow", "fast"]);
      expect(logs.warnings().map((r) => [r.plugin, r.msg.split(" (")[0]])).toEqual([
        ["b", "Event 'p:e' callback <anonymous> raised: sub failed"],
      ]);
    },
  );

  it("recursive emits stop at depth 8 with a warning", async () => {
    const { bus, logs } = eventBus();
    let deliveries = 0;
    bus.subscribe(
      "p:ping",
      () => {
        deliveries++;
        bus.emit("p:ping", {}, "p");
      },
      "p",
    );
    bus.emit("p:ping", {}, "p");
    await bus.idle();
    expect(deliveries).toBe(8);
    expect(logs.warnings().map((r) => r.msg)).toEqual([
      "event p:ping dropped: emit depth 8 reached (recursive emits?)",
    ]);
  });

  it("at most 64 deliveries may be pending: beyond that the event is dropped and emit returns 0", async () => {
    const { bus, logs } = eventBus();
    let n = 0;
    bus.subscribe("p:e", () => void n++, "s");
    const counts = Array.from({ length: 70 }, () => bus.emit("p:e", {}, "p"));
    expect(counts.filter((c) => c === 1)).toHaveLength(64);
    expect(counts.slice(64)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(logs.warnings()[0]!.msg).toBe("event p:e dropped: 64 events already pending");
    await bus.idle();
    expect(n).toBe(64);
    expect(bus.emit("p:e", {}, "p")).toBe(1); // the backlog drained
  });

  it("unload bumps the generation: events queued before it are dropped", async () => {
    const { rt } = await start([
      plugin("pub", `globalThis.__pub2 = ctx;`),
      plugin("sub", `ctx.subscribe("pub:e", () => { globalThis.__n2 = (globalThis.__n2 ?? 0) + 1; });`),
    ]);
    const ctx = (globalThis as Record<string, unknown>).__pub2 as { emit: (e: string, p?: unknown) => number };
    expect(ctx.emit("e", {})).toBe(1);
    await rt.unloadAll();
    await rt.settle();
    expect((globalThis as Record<string, unknown>).__n2).toBeUndefined();
  });

  it(
    "a subscription removed after queueing is skipped; a " + "targeted unload removes the plugin's subscriptions",
    async () => {
      const { rt } = await start([
        plugin("pub", `globalThis.__pub3 = ctx;`),
        plugin("sub", `ctx.subscribe("pub:e", () => { globalThis.__n3 = (globalThis.__n3 ?? 0) + 1; });`),
      ]);
      const ctx = (globalThis as Record<string, unknown>).__pub3 as { emit: (e: string, p?: unknown) => number };
      ctx.emit("e", {});
      rt.unload("sub");
      await rt.settle();
      expect(ctx.emit("e", {})).toBe(0);
      expect((globalThis as Record<string, unknown>).__n3).toBeUndefined();
    },
  );
});
