/**
 * Loading: transactional registration
 * (a failed register() leaves nothing behind), the load deadline and the abandoned context, missing
 * register exports, unknown hook names in a locked runtime, and required plugins failing closed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isHermesError } from "../../src/core/errors.js";
import { PluginContext } from "../../src/runtime/context.js";
import { readRuntimeStatus } from "../../src/runtime/runtime.js";
import { plugin, start } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterEach(() => cleanupTemp());

/** Registers one of (nearly) everything, then optionally fails. */
const EVERYTHING = `
  ctx.register_tool({ name: "shared_tool", handler: () => "mine", override: true });
  ctx.register_tool({ name: "own_tool", handler: () => "own" });
  ctx.register_hook("post_tool_call", () => {});
  ctx.register_middleware("tool_execution", ({ next_call }) => next_call());
  ctx.register_command("greet", () => "hi");
  ctx.register_cli_command({ name: "greet-cli", help: "x", handler_fn: () => "x" });
  ctx.subscribe("other:evt", () => { globalThis.__leaked = true; });
  ctx.register_approval_transport("pager", () => ({ choice: "deny" }));
  ctx.register_memory_provider({ name: "mem" });
  ctx.register_context_engine({ name: "ctxeng" });
  ctx.register_system_prompt_section("house.rules", "be nice");
  ctx.on_unload(() => { globalThis.__unloaded = (globalThis.__unloaded ?? 0) + 1; });
`;

function snapshot(rt: Awaited<ReturnType<typeof start>>["rt"]) {
  return {
    tools: rt.tools
      .entries()
      .map(([n, t]) => `${n}:${t.owner}`)
      .sort(),
    hooks: rt.hooks.names(),
    mw: rt.middleware.kinds(),
    commands: rt.commands.entries().map(([n]) => n),
    cli: rt.cliCommands.entries().map(([n]) => n),
    transports: rt.approvalTransports.entries().map(([n]) => n),
    memory: rt.providers.list("memory").map((p) => p.name),
    engines: rt.providers.list("context_engine").map((p) => p.name),
    sections: rt.promptSections.entries().map(([n]) => n),
  };
}

describe("failed-load rollback", () => {
  it(
    "a register() that throws after registering disposes every registration (reverse order) and restores what " +
      "it displaced",
    async () => {
      (globalThis as Record<string, unknown>).__leaked = undefined;
      (globalThis as Record<string, unknown>).__unloaded = 0;
      const { rt, logs } = await start([
        plugin("first", `ctx.register_tool({ name: "shared_tool", handler: () => "first's" });`),
        plugin("broken", `${EVERYTHING}\n  throw new Error("register exploded");`, { granted: ["tools.override"] }),
        plugin("other", `globalThis.__emitter = ctx;`),
      ]);
      expect(rt.status.get("broken")).toMatchObject({ state: "failed", error: "register exploded" });
      expect(snapshot(rt)).toEqual({
        tools: ["shared_tool:first"],
        hooks: [],
        mw: [],
        commands: [],
        cli: [],
        transports: [],
        memory: [],
        engines: [],
        sections: [],
      });
      expect(await rt.tools.dispatch("shared_tool", {})).toBe("first's");
      // its subscription is gone too; its on_unload ran as part of the rollback
      ((globalThis as Record<string, unknown>).__emitter as { emit: (e: string, p: object) => number }).emit("evt", {});
      await rt.settle();
      expect((globalThis as Record<string, unknown>).__leaked).toBeUndefined();
      expect((globalThis as Record<string, unknown>).__unloaded).toBe(1);
      expect(rt.ledger.of("broken")).toEqual([]);
      // one warning line, naming the plugin key
      expect(
        logs
          .warnings()
          .filter((r) => r.plugin === "broken")
          .map((r) => r.msg),
      ).toEqual(["Failed to load plugin 'broken': register exploded"]);
      // the others are unaffected
      expect(rt.status.get("first")!.state).toBe("loaded");
      expect(rt.status.get("other")!.state).toBe("loaded");
    },
  );

  it("the same registrations stay when register() succeeds (control for the test above)", async () => {
    const { rt } = await start([plugin("fine", EVERYTHING, { granted: ["tools.override"] })]);
    expect(snapshot(rt)).toEqual({
      tools: ["own_tool:fine", "shared_tool:fine"],
      hooks: ["post_tool_call"],
      mw: ["tool_execution"],
      commands: ["greet"],
      cli: ["greet-cli"],
      transports: ["pager"],
      memory: ["mem"],
      engines: ["ctxeng"],
      sections: ["house.rules"],
    });
    expect(rt.status.get("fine")!.registered).toMatchObject({
      tool: 2,
      hook: 1,
      middleware: 1,
      subscription: 1,
      on_unload: 1,
    });
  });

  it("throwing a non-Error, rejecting asynchronously, and failing at import time are all contained", async () => {
    const { rt } = await start([
      plugin("str", `ctx.register_hook("post_tool_call", () => {}); throw "just a string";`),
      plugin(
        "async",
        `await new Promise((r) => setTimeout(r, 5)); ctx.register_hook("post_tool_call", () => {}); throw ` +
          `new TypeError("later");`,
      ),
      { key: "importfail", code: `throw new Error("at import");\nexport function register() {}\n` },
      { key: "syntax", code: `export function register(ctx) {\n` },
      plugin("ok", `ctx.register_hook("post_tool_call", () => {});`),
    ]);
    expect(rt.status.get("str")).toMatchObject({ state: "failed", error: "just a string" });
    expect(rt.status.get("async")).toMatchObject({ state: "failed", error: "later" });
    expect(rt.status.get("importfail")).toMatchObject({ state: "failed", error: "at import" });
    expect(rt.status.get("syntax")!.state).toBe("failed");
    expect(rt.hooks.owners("post_tool_call")).toEqual(["ok"]);
  });

  it("a module without a register export fails that plugin with a clear error", async () => {
    const { rt, logs } = await start([
      { key: "noexport", code: `export const setup = () => {};\n` },
      {
        key: "defaultobj",
        code: `export default { register(ctx) { ctx.register_hook("post_tool_call", () => {}); } };\n`,
      },
    ]);
    expect(rt.status.get("noexport")).toMatchObject({ state: "failed", error: "no register() export" });
    expect(
      logs
        .warnings()
        .filter((r) => r.plugin === "noexport")
        .map((r) => r.msg),
    ).toEqual(["Failed to load plugin 'noexport': no register() export"]);
    expect(rt.status.get("defaultobj")!.state).toBe("loaded");
  });

  it("register(ctx) runs strictly in lock order, one after another", async () => {
    const body = (k: string) =>
      `(globalThis.__order ??= []).push("start ${k}"); await new Promise((r) => setTimeout(r, 10)); ` +
      `globalThis.__order.push("end ${k}");`;
    (globalThis as Record<string, unknown>).__order = [];
    await start([plugin("zz", body("zz")), plugin("aa", body("aa")), plugin("mm", body("mm"))]);
    expect((globalThis as Record<string, unknown>).__order).toEqual([
      "start zz",
      "end zz",
      "start aa",
      "end aa",
      "start mm",
      "end mm",
    ]);
  });
});

describe("load deadline and the abandoned context", () => {
  it(
    "a register() that never returns times out; what it registered is rolled back; later ctx calls are warned " +
      "no-ops",
    async () => {
      (globalThis as Record<string, unknown>).__late = undefined;
      const { rt, logs } = await start(
        [
          plugin(
            "slow",
            `ctx.register_hook("post_tool_call", () => {});
           globalThis.__slowCtx = ctx;
           await new Promise((r) => setTimeout(r, 400));
           globalThis.__late = {
             tool: ctx.register_tool({ name: "late_tool", handler: () => "x" }),
             hook: ctx.register_hook("pre_llm_call", () => "ctx"),
             mw: ctx.register_middleware("tool_request", () => null),
             cmd: ctx.register_command("late", () => "x"),
             unload: ctx.on_unload(() => { globalThis.__lateUnloadRan = true; }),
           };`,
          ),
          plugin("after", `ctx.register_hook("post_tool_call", () => {});`),
        ],
        { settings: { load_timeout_seconds: 0.1 } },
      );
      expect(rt.status.get("slow")).toMatchObject({
        state: "timeout",
        error: "load timed out after 0.1s (import + register() never returned)",
      });
      expect(rt.status.get("after")!.state).toBe("loaded");
      expect(rt.hooks.owners("post_tool_call")).toEqual(["after"]);
      await new Promise((r) => setTimeout(r, 500));
      expect((globalThis as Record<string, unknown>).__late).toEqual({
        tool: null,
        hook: null,
        mw: null,
        cmd: null,
        unload: null,
      });
      expect((globalThis as Record<string, unknown>).__lateUnloadRan).toBeUndefined();
      expect(rt.tools.get("late_tool")).toBeUndefined();
      expect(rt.hooks.has("pre_llm_call")).toBe(false);
      expect(rt.commands.get("late")).toBeUndefined();
      expect(((globalThis as Record<string, unknown>).__slowCtx as PluginContext).abandoned).toBe(true);
      const slow = logs
        .warnings()
        .filter((r) => r.plugin === "slow")
        .map((r) => r.msg);
      expect(slow[0]).toBe(
        "Failed to load plugin 'slow': load timed out after 0.1s (import + register() never returned)",
      );
      expect(slow.slice(1)).toEqual([
        "tool 'late_tool' ignored: this plugin's load timed out and its context was abandoned",
        "hook 'pre_llm_call' ignored: this plugin's load timed out and its context was abandoned",
        "middleware 'tool_request' ignored: this plugin's load timed out and its context was abandoned",
        "command 'late' ignored: this plugin's load timed out and its context was abandoned",
        "on_unload callback ignored: this plugin's load timed out and its context was abandoned",
      ]);
    },
  );

  it("load_timeout_seconds 0 means no deadline", async () => {
    const { rt } = await start(
      [
        plugin(
          "slowish",
          `await new Promise((r) => setTimeout(r, 150)); ctx.register_hook("post_tool_call", () => {});`,
        ),
      ],
      {
        settings: { load_timeout_seconds: 0 },
      },
    );
    expect(rt.status.get("slowish")!.state).toBe("loaded");
  });
});

describe("unknown hook and middleware names", () => {
  it("a locked (strict) runtime fails the plugin with the nearest valid name", async () => {
    const { rt, logs } = await start([
      plugin(
        "typo",
        `ctx.register_tool({ name: "t1", handler: () => "x" }); ctx.register_hook("post_tool_cal", () => {});`,
      ),
      plugin("mwtypo", `ctx.register_middleware("api_request", () => null);`),
    ]);
    expect(rt.status.get("typo")).toMatchObject({
      state: "failed",
      error: "Plugin 'typo' registered unknown hook 'post_tool_cal'; did you mean 'post_tool_call'?",
    });
    expect(rt.tools.get("t1")).toBeUndefined();
    expect(rt.status.get("mwtypo")!.error).toBe(
      "Plugin 'mwtypo' registered unknown middleware 'api_request'; did you mean 'llm_request'?",
    );
    expect(logs.warnings().filter((r) => r.plugin === "typo")).toHaveLength(1);
  });

  it("a non-strict runtime warns and still stores the callback", async () => {
    const { rt, logs } = await start([plugin("typo", `ctx.register_hook("post_tool_cal", () => "x");`)], {
      strict: false,
    });
    expect(rt.status.get("typo")!.state).toBe("loaded");
    expect(rt.hooks.owners("post_tool_cal")).toEqual(["typo"]);
    expect(logs.warnings()[0]!.msg).toBe(
      "Plugin 'typo' registered unknown hook 'post_tool_cal'; did you mean 'post_tool_call'?",
    );
  });
});

describe("required plugins fail closed", () => {
  it(
    "a required plugin that fails to load stops startup with " + "E_RUNTIME_REQUIRED_FAILED and unloads everything",
    async () => {
      const { rt } = await start(
        [
          plugin("before", `ctx.register_hook("post_tool_call", () => {});`),
          plugin("needed", `throw new Error("no license");`, { required: true }),
          plugin("after", ""),
        ],
        { load: false },
      );
      const err = await rt.loadAll().catch((e: unknown) => e);
      expect(isHermesError(err)).toBe(true);
      expect(err).toMatchObject({
        code: "E_RUNTIME_REQUIRED_FAILED",
        message: "required plugin needed did not load: no license",
      });
      expect(rt.hooks.names()).toEqual([]);
      expect(rt.status.size).toBe(0);
    },
  );

  it("a required plugin that times out stops startup too", async () => {
    const { rt } = await start([plugin("needed", `await new Promise(() => {});`, { required: true })], {
      load: false,
      settings: { load_timeout_seconds: 0.05 },
    });
    await expect(rt.loadAll()).rejects.toMatchObject({ code: "E_RUNTIME_REQUIRED_FAILED" });
  });
});

describe("ctx surface", () => {
  it("has camelCase aliases for the snake_case API", async () => {
    const { rt } = await start([
      plugin(
        "camel",
        `ctx.registerTool({ name: "camel_tool", handler: () => "c" });
         ` +
          `ctx.registerHook("post_tool_call", () => {});
         ctx.registerMiddleware("tool_request", () ` +
          `=> null);
         ctx.registerCommand("camel", () => "x");
         ctx.onUnload(() => ` +
          `{});
         globalThis.__camel = { id: ctx.pluginId, profile: ctx.profileName, has: ` +
          `ctx.hasPlugin("camel"), cap: ctx.hasCapability("tools.override"), cfg: ctx.getConfig("x", "dflt") ` +
          "};",
      ),
    ]);
    expect(rt.status.get("camel")!.state).toBe("loaded");
    expect(rt.tools.get("camel_tool")!.owner).toBe("camel");
    expect((globalThis as Record<string, unknown>).__camel).toEqual({
      id: "camel",
      profile: "default",
      has: false,
      cap: false,
      cfg: "dflt",
    });
    const proto = PluginContext.prototype as unknown as Record<string, unknown>;
    for (const name of [
      "registerTool",
      "dispatchTool",
      "registerHook",
      "registerMiddleware",
      "registerCommand",
      "registerCliCommand",
      "registerSkill",
      "skillView",
      "hasCapability",
      "hasPlugin",
      "getConfig",
      "setConfig",
      "onUnload",
      "registerApprovalTransport",
      "registerContextEngine",
      "registerImageGenProvider",
      "registerVideoGenProvider",
      "registerTerminalEnvironmentProvider",
      "registerTtsProvider",
      "registerTranscriptionProvider",
      "registerMemoryProvider",
      "registerModelProvider",
      "registerPlatform",
      "registerSystemPromptSection",
    ])
      expect(typeof proto[name], name).toBe("function");
  });

  it("has_plugin sees loaded plugins by key or name, not failed ones", async () => {
    await start([
      plugin("base", ""),
      plugin("broken", `throw new Error("x");`),
      plugin(
        "probe",
        `globalThis.__probe = [ctx.has_plugin("base"), ctx.has_plugin("broken"), ctx.has_plugin("nope")];`,
      ),
    ]);
    expect((globalThis as Record<string, unknown>).__probe).toEqual([true, false, false]);
  });

  it("register_skill is read through skill_view by its plugin:skill name", async () => {
    const { rt } = await start(
      [plugin("skills", `ctx.register_skill("howto", "SKILL.md", "how to"); globalThis.__skills = ctx;`)],
      { load: false },
    );
    writeFileSync(join(rt.lock.plugins[0]!.target, "SKILL.md"), "# How to\n");
    await rt.loadAll();
    expect(((globalThis as Record<string, unknown>).__skills as PluginContext).skill_view("skills:howto")).toBe(
      "# How to\n",
    );
    expect(rt.skills.get("skills:howto")!.plugin_key).toBe("skills");
  });

  it("writeStatus records each plugin's run state for `hermes plugins why`", async () => {
    const { rt, home } = await start([plugin("good", ""), plugin("bad", `throw new Error("nope");`)]);
    await rt.writeStatus();
    const st = readRuntimeStatus(home)!;
    expect(st.plugins.good!.state).toBe("loaded");
    expect(st.plugins.bad).toMatchObject({ state: "failed", error: "nope" });
    expect(JSON.parse(readFileSync(join(home, "runtime-status.json"), "utf8")).inputs_hash).toBe(rt.lock.inputs_hash);
  });
});
