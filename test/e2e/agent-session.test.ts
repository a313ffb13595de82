import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { agentHome, fakeOpenAI, names, readTrace, type Reply } from "./agent-helpers.js";

/**
 * Issue 5: the CLI session — the REPL with plugin slash commands (piped), ctx.llm
 * (complete, complete_structured, the override gate), ctx.inject_message (idle, mid-turn, gateway),
 * system prompt sections, pre_llm_call context and its spill file, provider selection from the
 * config and the environment.
 */
const scratch = new Scratch("hermes-e2e-agent-session-");
afterAll(() => scratch.cleanup());

function writeHelper(pluginsDir: string): void {
  const dir = join(pluginsDir, "helper");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), 'name: helper\nversion: "1"\nhooks: [post_tool_call]\n');
  writeFileSync(
    join(dir, "index.js"),
    `export function register(ctx) {
  ctx.register_command("ask", async (raw) => "llm said: " + (await ` +
      `ctx.llm.complete([{ role: "user", content: raw }], { purpose: "test" })).text, "ask the host LLM");
  ` +
      `ctx.register_command("structured", async () => {
    const r = await ctx.llm.complete_structured({ ` +
      `instructions: "Give me a number", input: ["anything"], json_schema: { type: "object", properties: { n: { ` +
      `type: "number" } }, required: ["n"] }, schema_name: "num" });
    return "parsed " + ` +
      `JSON.stringify(r.parsed) + " " + r.content_type + " " + r.audit.schema_name;
  });
  ` +
      `ctx.register_command("override", async () => {
    try { await ctx.llm.complete([{ role: "user", content: ` +
      `"x" }], { model: "other-model" }); return "allowed?!"; }
    catch (e) { return e.name + ": " + ` +
      `e.message; }
  });
  ctx.register_command("inject", (raw) => "queued=" + ctx.inject_message(raw, ` +
      `"system"));
  ctx.register_command("gateway", () => "gateway=" + ctx.inject_message("hi", "user", { ` +
      `session_key: "agent:main:telegram:dm:1" }));
  ctx.register_system_prompt_section("a.helper", "Helper ` +
      `section text.");
  ctx.register_system_prompt_section("b.bad", () => { throw new Error("section boom"); ` +
      `});
  ctx.register_system_prompt_section("c.dynamic", (info) => "dynamic for " + info.session_id + " on " ` +
      `+ info.model);
  let injected = false;
  ctx.register_hook("post_tool_call", () => {
    if ` +
      `(ctx.get_config("inject_mid_turn") && !injected) { injected = true; ctx.inject_message("change of plan"); ` +
      `}
  });
}
`,
  );
}

describe("the REPL (piped) with plugin slash commands, ctx.llm, ctx.inject_message and prompt sections", () => {
  it(
    "runs commands and turns in order; injected messages " + "start turns; the system prompt carries the sections",
    async () => {
      const root = scratch.dir("repl");
      const h = agentHome(root, { enabled: ["helper"], settings: { context: "Remember: tea." } });
      writeHelper(join(h.home, "plugins"));
      const replies: Reply[] = [
        { say: "fine thanks" },
        { say: '{"n": 42}' },
        { say: "summary done" },
        { say: "hi human" },
      ];
      const server = await fakeOpenAI(replies);
      try {
        const input = [
          "/help",
          "/plugins",
          "/ask what is up",
          "/structured",
          "/override",
          "/inject please summarise",
          "/gateway",
          "hello",
          "/nonexistent",
          "/exit",
          "never reached",
        ].join("\n");
        const r = await runCli(["--home", h.home, "chat", "--base-url", server.url, "--model", "fake-model"], {
          env: { HERMES_BUNDLED_PLUGINS: h.bundled },
          input,
          cwd: root,
        });
        expect(r.code, r.stderr).toBe(0);
        const out = r.stdout.split("\n");
        expect(out).toContain("llm said: fine thanks");
        expect(out).toContain('parsed {"n":42} json num');
        expect(r.stdout).toMatch(
          new RegExp(
            String.raw`PermissionError: Plugin 'helper' may not override the model of host LLM calls ` +
              String.raw`\('other-model'\): grant llm\.model_override`,
          ),
        );
        expect(out).toContain("queued=true");
        expect(out).toContain("gateway=false");
        expect(r.stderr).toMatch(/gateway injection is not allowed for this plugin/);
        // The injected message ran as the next turn, before the next typed line.
        expect(out.indexOf("summary done")).toBeGreaterThan(out.indexOf("queued=true"));
        expect(out.indexOf("hi human")).toBeGreaterThan(out.indexOf("summary done"));
        expect(r.stdout).toMatch(/unknown command \/nonexistent/);
        expect(r.stdout).toMatch(/^\/ask\s+ask the host LLM \(helper\)$/m);
        // /plugins lists the loaded plugins, one key a line (as the seed's /plugins does).
        expect(out).toContain("helper");
        expect(r.stdout).toMatch(/^\/plugins\s+the plugins loaded$/m);
        expect(r.stdout).not.toContain("never reached");
        expect(server.requests).toHaveLength(4);
        // ctx.llm calls are auxiliary: pre/post_auxiliary_call, never pre_api_request.
        const tr = readTrace(h.trace);
        expect(names(tr).filter((e) => e.includes("auxiliary"))).toEqual([
          "hook:pre_auxiliary_call",
          "hook:post_auxiliary_call",
          "hook:pre_auxiliary_call",
          "hook:post_auxiliary_call",
        ]);
        expect(tr.filter((t) => t.ev === "hook:pre_api_request")).toHaveLength(2);
        expect(tr.filter((t) => t.ev === "hook:pre_command").map((t) => t.command)).toEqual([
          "ask",
          "structured",
          "override",
          "inject",
          "gateway",
        ]);
        expect(server.requests[1]!.response_format).toMatchObject({
          type: "json_schema",
          json_schema: { name: "num" },
        });
        // The injected turn: "[system] " prefix, pre_llm_call context appended to the user message.
        const injectedTurn = server.requests[2]!.messages as Array<{ role: string; content: string }>;
        expect(injectedTurn.at(-1)).toEqual({ role: "user", content: "[system] please summarise\n\nRemember: tea." });
        const sys = injectedTurn[0]!;
        expect(sys.role).toBe("system");
        expect(sys.content).toContain(
          '<plugin-section id="a.helper" plugin="helper">\nHelper section text.\n</plugin-section>',
        );
        expect(sys.content).toMatch(/dynamic for sess_[0-9a-f]+ on fake-model/);
        expect(sys.content).not.toContain("b.bad");
        expect(sys.content.indexOf("a.helper")).toBeLessThan(sys.content.indexOf("c.dynamic"));
        expect(r.stderr).toMatch(
          /system prompt section 'b\.bad' skipped: its content function raised Error: section boom/,
        );
        // The two chat turns are one session: one on_session_start.
        expect(tr.filter((t) => t.ev === "hook:on_session_start")).toHaveLength(1);
        expect(tr.filter((t) => t.ev === "hook:pre_llm_call").map((t) => t.is_first_turn)).toEqual([true, false]);
      } finally {
        await server.close();
      }
    },
  );

  it("an injected message mid-turn interrupts the turn and runs next (--query runs the follow-up)", async () => {
    const root = scratch.dir("inject");
    const h = agentHome(root, { enabled: ["helper"] });
    writeHelper(join(h.home, "plugins"));
    writeText(
      join(h.home, "config.yaml"),
      readFileSync(join(h.home, "config.yaml"), "utf8").replace(
        "  entries:\n",
        "  entries:\n    helper:\n      settings:\n        inject_mid_turn: true\n",
      ),
    );
    const server = await fakeOpenAI([
      { tools: [{ name: "terminal", arguments: JSON.stringify({ command: "echo first" }) }] },
      { say: "the new plan" },
    ]);
    try {
      const r = await runCli(
        ["--home", h.home, "chat", "--base-url", server.url, "--model", "m", "--query", "start", "--json"],
        { env: { HERMES_BUNDLED_PLUGINS: h.bundled }, cwd: root },
      );
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as { answer: string; turns: Array<{ exit_reason: string; interrupted: boolean }> };
      expect(j.answer).toBe("the new plan");
      expect(j.turns.map((t) => t.exit_reason)).toEqual(["interrupted", "completed"]);
      const ends = readTrace(h.trace).filter((t) => t.ev === "hook:on_session_end");
      expect(ends.map((e) => e.interrupted)).toEqual([true, false]);
      expect((server.requests[1]!.messages as Array<{ role: string; content: string }>).at(-1)).toEqual({
        role: "user",
        content: "change of plan",
      });
      // The tool message of the interrupted turn stays in the history (every tool call has its result).
      expect((server.requests[1]!.messages as Array<{ role: string }>).filter((m) => m.role === "tool")).toHaveLength(
        1,
      );
    } finally {
      await server.close();
    }
  });
});

describe("pre_llm_call context", () => {
  it("over 10 000 characters spills to <home>/hook_outputs/<session>/<uuid>.txt with a head/tail preview", async () => {
    const root = scratch.dir("spill");
    const long = `HEAD${"x".repeat(11_000)}TAIL`;
    const h = agentHome(root, { settings: { context: long } });
    const server = await fakeOpenAI([{ say: "ok" }]);
    try {
      const r = await runCli(["--home", h.home, "chat", "--base-url", server.url, "--model", "m", "--query", "hello"], {
        env: { HERMES_BUNDLED_PLUGINS: h.bundled },
        cwd: root,
      });
      expect(r.code, r.stderr).toBe(0);
      const user = (server.requests[0]!.messages as Array<{ role: string; content: string }>).at(-1)!.content;
      expect(user.startsWith("hello\n\nHEAD")).toBe(true);
      expect(user.endsWith("TAIL")).toBe(true);
      const file = /the full hook output \(11008 characters\) is in (\S+)\]/.exec(user)![1]!;
      expect(file).toContain(join(h.home, "hook_outputs", "sess_"));
      expect(readFileSync(file, "utf8")).toBe(long);
      expect(user.length).toBeLessThan(1500);
    } finally {
      await server.close();
    }
  });
});

describe("providers from config.yaml and the environment", () => {
  it(
    "model: {provider, base_url, default, api_key_env} is used without flags; the key goes in the " +
      "Authorization header",
    async () => {
      const root = scratch.dir("cfg");
      const server = await fakeOpenAI([{ say: "configured" }]);
      try {
        const h = agentHome(root, {
          extraYaml:
            `model:\n  provider: openai-compatible\n  base_url: ${server.url}\n  default: cfg-model\n  ` +
            "api_key_env: MY_KEY\n",
        });
        const r = await runCli(["--home", h.home, "chat", "-q", "hi"], {
          env: { HERMES_BUNDLED_PLUGINS: h.bundled, MY_KEY: "sk-test-123" },
          cwd: root,
        });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe("configured\n");
        expect(server.requests[0]!.model).toBe("cfg-model");
        expect(server.headers[0]!.authorization).toBe("Bearer sk-test-123");
        // The key never reaches observers.
        expect(readFileSync(h.trace, "utf8")).not.toContain("sk-test-123");
        const missing = await runCli(["--home", h.home, "chat", "-q", "hi"], {
          env: { HERMES_BUNDLED_PLUGINS: h.bundled },
          cwd: root,
        });
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain("E_PROVIDER_NO_KEY");
        expect(missing.stderr).toContain("MY_KEY");
      } finally {
        await server.close();
      }
    },
  );

  it(
    "no provider at all is a usage error naming the flags; a " + "bad base URL or provider name is refused up front",
    async () => {
      const root = scratch.dir("none");
      const h = agentHome(root);
      const env = { HERMES_BUNDLED_PLUGINS: h.bundled };
      const none = await runCli(["--home", h.home, "chat", "-q", "hi"], { env, cwd: root });
      expect(none.code).toBe(2);
      expect(none.stderr).toContain("E_AGENT_NO_PROVIDER");
      expect(none.stderr).toContain("--provider scripted --script FILE");
      const badUrl = await runCli(["--home", h.home, "chat", "--base-url", "ftp://x", "--model", "m", "-q", "hi"], {
        env,
        cwd: root,
      });
      expect(badUrl.code).toBe(2);
      expect(badUrl.stderr).toContain("E_PROVIDER_CONFIG");
      const typo = await runCli(["--home", h.home, "chat", "--provider", "openai-compat", "-q", "hi"], {
        env,
        cwd: root,
      });
      expect(typo.code).toBe(2);
      expect(typo.stderr).toMatch(/unknown provider 'openai-compat'; did you mean 'openai-compatible'\?/);
      for (const r of [none, badUrl, typo]) expect(r.stderr).not.toMatch(STACK_RE);
      // Nothing was started: no plugin ran.
      expect(existsSync(h.trace)).toBe(false);
    },
  );

  it("the scripted provider reads a YAML script; a bad script is refused with every problem listed", async () => {
    const root = scratch.dir("script");
    const h = agentHome(root);
    const good = writeText(join(root, "good.yaml"), "- call: {tool: list_dir, args: {path: .}}\n- say: listed\n");
    const r = await runCli(["--home", h.home, "chat", "--script", good, "-q", "list", "--json", "--timeline"], {
      env: { HERMES_BUNDLED_PLUGINS: h.bundled },
      cwd: root,
    });
    expect(r.code, r.stderr).toBe(0);
    // --timeline: the hook and middleware timeline on stderr, stdout stays one JSON document.
    expect(r.stderr).toMatch(/^ {4}middleware {2}llm_request\s+tracer {2}trace=\[\]$/m);
    expect(r.stderr).toMatch(/^ {2}tool list_dir \(call_1_1\) · model args \{"path":"\."\}$/m);
    expect(r.stderr).toMatch(/^ {2}turn ended: completed \(completed=true failed=false interrupted=false\)$/m);
    const j = JSON.parse(r.stdout) as {
      answer: string;
      tool_calls: Array<{ tool_name: string; status: string; result: string }>;
    };
    expect(j.answer).toBe("listed");
    expect(j.tool_calls[0]).toMatchObject({ tool_name: "list_dir", status: "success" });
    expect(JSON.parse(j.tool_calls[0]!.result).entries).toEqual(
      expect.arrayContaining([{ name: "good.yaml", type: "file" }]),
    );
    const bad = writeText(join(root, "bad.yaml"), "- say: 3\n- call: {args: {}}\n- nothing: here\n");
    const b = await runCli(["--home", h.home, "chat", "--script", bad, "-q", "x"], {
      env: { HERMES_BUNDLED_PLUGINS: h.bundled },
      cwd: root,
    });
    expect(b.code).toBe(1);
    expect(b.stderr).toContain("E_AGENT_SCRIPT");
    expect(b.stderr).toContain("turns[0].say: expected text");
    expect(b.stderr).toContain("turns[1].call: expected {tool: NAME, args: {...}}");
    expect(b.stderr).toContain("turns[2]: give exactly one of say:, call:, fail:");
  });
});
