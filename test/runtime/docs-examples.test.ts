/**
 * The complete plugin examples in docs/plugins.md (every ```js block that exports register) load in
 * the runtime and do what the page says they do.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/core/paths.js";
import { start } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterEach(() => cleanupTemp());

const page = readFileSync(join(PACKAGE_ROOT, "docs", "plugins.md"), "utf8");
const examples = [...page.matchAll(/```js\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .filter((b) => /export function register\(ctx\)/.test(b));

describe("docs/plugins.md examples", () => {
  it("has the register example and the four middleware examples of the seed", () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const kind of ["llm_request", "tool_request", "llm_execution", "tool_execution"])
      expect(
        examples.some((e) => e.includes(`"${kind}"`)),
        kind,
      ).toBe(true);
  });

  it("every example loads, and the middleware examples behave as described", async () => {
    const { rt } = await start(examples.map((code, i) => ({ key: `example-${i}`, code })));
    for (const [key, s] of rt.status) expect(s.state, `${key}: ${s.error}`).toBe("loaded");
    expect(await rt.tools.dispatch("hello_world", { name: "Ada" })).toBe(JSON.stringify({ greeting: "Hello, Ada!" }));
    // The model provider example registers its profile as checked at registration.
    expect(rt.providers.list("model").map((p) => p.provider)).toContainEqual(
      expect.objectContaining({
        name: "acme",
        api_mode: "chat_completions",
        fallback_models: ["acme-large", "acme-small"],
      }),
    );

    const llm = await rt.middleware.applyRequest("llm_request", { model: "m", extra_body: { keep: 1 } });
    expect(llm.payload).toEqual({ model: "m", extra_body: { keep: 1, metadata: { hermes_middleware_demo: true } } });
    expect(llm.trace).toEqual([{ source: "middleware-demo", reason: "tagged provider request" }]);

    const term = await rt.middleware.applyRequest("tool_request", { command: "ls" }, { tool_name: "terminal" });
    expect(term.payload).toMatchObject({ command: "ls", workdir: expect.stringContaining("hermes-middleware-demo") });
    const kept = await rt.middleware.applyRequest(
      "tool_request",
      { command: "ls", workdir: "/srv" },
      { tool_name: "terminal" },
    );
    expect(kept.payload).toEqual({ command: "ls", workdir: "/srv" });
    const other = await rt.middleware.applyRequest("tool_request", { path: "x" }, { tool_name: "read_file" });
    expect(other).toMatchObject({ payload: { path: "x" }, changed: false });

    expect(await rt.middleware.runExecution("llm_execution", { model: "m" }, async (r) => ({ echoed: r }))).toEqual({
      echoed: { model: "m" },
    });
    expect(
      await rt.middleware.runExecution("tool_execution", { a: 1 }, async (a) => `ran ${JSON.stringify(a)}`, {
        tool_name: "t",
      }),
    ).toBe('ran {"a":1}');
  });
});
