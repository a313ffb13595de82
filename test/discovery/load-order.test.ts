/**
 * Load order: Kahn batches sorted by key, advisory
 * dependencies, cycles, and the explicit `plugins.order` list.
 */
import { afterEach, describe, expect, it } from "vitest";
import { resolveLoadOrder, type OrderInput } from "../../src/discovery/order.js";
import { loadPluginSet } from "../../src/discovery/plugin-set.js";
import { makeSandbox, writePlugin } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterEach(cleanupTemp);

const p = (key: string, requires: string[] = [], name = key): OrderInput => ({ key, name, requires });

function codes(r: { diagnostics: { code: string }[] }): string[] {
  return r.diagnostics.map((d) => d.code);
}

describe("requires_plugins", () => {
  it("Kahn batches, each sorted: A, B→C, C gives [A, C, B]", () => {
    const r = resolveLoadOrder([p("B", ["C"]), p("C"), p("A")]);
    expect(r.order).toEqual(["A", "C", "B"]);
    expect(r.batches).toEqual([["A", "C"], ["B"]]);
    expect(r.diagnostics).toEqual([]);
  });

  it("no dependencies → plain key order, one batch", () => {
    const r = resolveLoadOrder([p("zeta"), p("alpha"), p("cat/mid")]);
    expect(r.order).toEqual(["alpha", "cat/mid", "zeta"]);
    expect(r.batches).toEqual([["alpha", "cat/mid", "zeta"]]);
  });

  it("a chain and a diamond resolve batch by batch", () => {
    const r = resolveLoadOrder([p("d", ["b", "c"]), p("c", ["a"]), p("b", ["a"]), p("a"), p("e", ["d"])]);
    expect(r.batches).toEqual([["a"], ["b", "c"], ["d"], ["e"]]);
  });

  it("an unresolved dependency warns and the dependent still loads", () => {
    const r = resolveLoadOrder([p("a", ["ghost"]), p("b")]);
    expect(r.order).toEqual(["a", "b"]);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ code: "W_ORDER_MISSING_DEPENDENCY", severity: "warning" });
    expect(r.diagnostics[0]!.message).toContain("a");
    expect(r.diagnostics[0]!.message).toContain("'ghost'");
    expect(r.diagnostics[0]!.message).toContain("loading anyway");
  });

  it("a dependency resolves by manifest name", () => {
    const r = resolveLoadOrder([p("aaa", ["the-lib"]), p("zz/lib", [], "the-lib")]);
    expect(r.order).toEqual(["zz/lib", "aaa"]);
    expect(r.diagnostics).toEqual([]);
  });

  it("when two plugins share a manifest name, the first key in sorted order owns it", () => {
    const r = resolveLoadOrder([p("a", ["shared"]), p("y/x", [], "shared"), p("b/x", [], "shared")]);
    expect(r.batches).toEqual([["b/x", "y/x"], ["a"]]);
  });

  it("a key match wins over a name match", () => {
    // "lib" is both the key of one plugin and the manifest name of another.
    const r = resolveLoadOrder([p("a", ["lib"]), p("lib"), p("0/other", [], "lib")]);
    expect(r.batches).toEqual([["0/other", "lib"], ["a"]]);
  });

  it("a self dependency is ignored with a warning", () => {
    const r = resolveLoadOrder([p("b", ["b"]), p("a")]);
    expect(r.order).toEqual(["a", "b"]);
    expect(codes(r)).toEqual(["W_ORDER_MISSING_DEPENDENCY"]);
    expect(r.diagnostics[0]!.message).toContain("itself");
  });

  it("a self dependency by manifest name is ignored too", () => {
    const r = resolveLoadOrder([p("cat/b", ["bee"], "bee"), p("a", ["bee"])]);
    expect(r.order).toEqual(["cat/b", "a"]);
    expect(codes(r)).toEqual(["W_ORDER_MISSING_DEPENDENCY"]);
  });

  it("a dependency cycle warns W_ORDER_DEPENDENCY_CYCLE and falls back to key order for all plugins", () => {
    // a → z would order z first; the cycle m ⇄ n makes everything alphabetical.
    const r = resolveLoadOrder([p("a", ["z"]), p("z"), p("m", ["n"]), p("n", ["m"])]);
    expect(r.order).toEqual(["a", "m", "n", "z"]);
    expect(codes(r)).toEqual(["W_ORDER_DEPENDENCY_CYCLE"]);
    expect(r.diagnostics[0]!.severity).toBe("warning");
    expect(r.diagnostics[0]!.message).toContain("m -> n -> m");
  });

  it("a cycle is named even when the first key in sorted order only depends on the cycle", () => {
    // a requires m; m ⇄ n. "a" never loads in Kahn's pass but is not on the cycle itself.
    const r = resolveLoadOrder([p("a", ["m"]), p("m", ["n"]), p("n", ["m"])]);
    expect(r.order).toEqual(["a", "m", "n"]);
    expect(codes(r)).toEqual(["W_ORDER_DEPENDENCY_CYCLE"]);
    expect(r.diagnostics[0]!.message).toContain("m -> n -> m");
  });

  it("a three-plugin cycle names every member", () => {
    const r = resolveLoadOrder([p("x", ["z"]), p("y", ["x"]), p("z", ["y"])]);
    expect(r.order).toEqual(["x", "y", "z"]);
    expect(r.diagnostics[0]!.message).toContain("x -> y -> z -> x");
  });
});

describe("plugins.order", () => {
  it("forces the listed plugins into that order; the rest follow in key order", () => {
    const r = resolveLoadOrder([p("a"), p("b"), p("c")], ["c", "a"]);
    expect(r.order).toEqual(["c", "a", "b"]);
    expect(r.diagnostics).toEqual([]);
  });

  it("a full list is followed exactly", () => {
    const r = resolveLoadOrder([p("a"), p("b"), p("c")], ["c", "b", "a"]);
    expect(r.order).toEqual(["c", "b", "a"]);
  });

  it("accepts manifest names", () => {
    const r = resolveLoadOrder([p("cat/a", [], "alpha"), p("cat/b", [], "beta")], ["beta", "alpha"]);
    expect(r.order).toEqual(["cat/b", "cat/a"]);
  });

  it("an order consistent with requires_plugins is fine", () => {
    const r = resolveLoadOrder([p("a", ["b"]), p("b"), p("c")], ["b", "a"]);
    expect(r.order).toEqual(["b", "a", "c"]);
    expect(r.diagnostics).toEqual([]);
  });

  it("an order that contradicts requires_plugins → E_ORDER_CYCLE listing the cycle", () => {
    const r = resolveLoadOrder([p("a", ["b"]), p("b"), p("c")], ["a", "b"]);
    expect(codes(r)).toEqual(["E_ORDER_CYCLE"]);
    expect(r.diagnostics[0]).toMatchObject({ severity: "error", path: "plugins.order" });
    expect(r.diagnostics[0]!.message).toContain("a -> b -> a");
    expect(r.order).toEqual(["a", "b", "c"]);
  });

  it("a contradicting order is an error even when the first key in sorted order only depends on the cycle", () => {
    // x requires y, but plugins.order puts x before y; a requires x and sorts first.
    const r = resolveLoadOrder([p("a", ["x"]), p("x", ["y"]), p("y")], ["x", "y"]);
    expect(codes(r)).toEqual(["E_ORDER_CYCLE"]);
    expect(r.diagnostics[0]!.message).toContain("x -> y -> x");
  });

  it("an unknown key warns W_ORDER_UNKNOWN_KEY with a suggestion, and is otherwise ignored", () => {
    const r = resolveLoadOrder([p("weather"), p("clock")], ["wether", "clock", "weather"]);
    expect(r.order).toEqual(["clock", "weather"]);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({
      code: "W_ORDER_UNKNOWN_KEY",
      severity: "warning",
      path: "plugins.order[0]",
    });
    expect(r.diagnostics[0]!.message).toContain("'wether'");
    expect(r.diagnostics[0]!.message).toContain("did you mean 'weather'");
  });

  it("a key listed twice is refused", () => {
    const r = resolveLoadOrder([p("a"), p("b")], ["a", "b", "a"]);
    expect(r.diagnostics).toMatchObject([{ code: "E_ORDER_CYCLE", path: "plugins.order[2]" }]);
  });

  it("with a dependency cycle the explicit order is still honoured in the fallback", () => {
    const r = resolveLoadOrder([p("a"), p("m", ["n"]), p("n", ["m"]), p("z")], ["z", "a"]);
    expect(codes(r)).toEqual(["W_ORDER_DEPENDENCY_CYCLE"]);
    expect(r.order).toEqual(["z", "a", "m", "n"]);
  });
});

describe("load positions in a plugin set", () => {
  it("bundled backends come first, then the dependency-ordered enabled plugins; skipped plugins get none", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.bundled, "zz-backend", { manifest: { kind: "backend" } });
    await writePlugin(sb.userPlugins, "alpha", { manifest: { requires_plugins: ["gamma"] } });
    await writePlugin(sb.userPlugins, "beta");
    await writePlugin(sb.userPlugins, "gamma");
    await writePlugin(sb.userPlugins, "off");
    const set = await loadPluginSet({
      home: sb.home,
      env: sb.env,
      config: { plugins: { enabled: ["alpha", "beta", "gamma"], order: ["beta", "gamma"] } },
    });
    const pos = Object.fromEntries(set.views.map((v) => [v.candidate.key, v.loadPosition]));
    expect(pos).toEqual({ "zz-backend": 1, beta: 2, gamma: 3, alpha: 4, off: undefined });
    expect(set.diagnostics).toEqual([]);
  });

  it("order diagnostics reach the plugin set", async () => {
    const sb = await makeSandbox();
    await writePlugin(sb.userPlugins, "alpha");
    const set = await loadPluginSet({
      home: sb.home,
      env: sb.env,
      config: { plugins: { enabled: ["alpha"], order: ["alhpa"] } },
    });
    expect(set.diagnostics.map((d) => d.code)).toEqual(["W_ORDER_UNKNOWN_KEY"]);
    expect(set.diagnostics[0]!.message).toContain("did you mean 'alpha'");
  });
});
