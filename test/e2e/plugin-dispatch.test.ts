import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import { agentHome, type ChatJson, fakeOpenAI } from "./agent-helpers.js";

/**
 * Issue 17: ctx.dispatch_tool runs through the session's tool pipeline (hooks with the session's and the
 * turn's ids, approvals and deny rules), a tool that dispatches itself is refused, and outside a session
 * (a plugin's CLI command) the call is refused plainly. The built CLI against a real chat-completions server.
 */
const scratch = new Scratch("hermes-e2e-dispatch-");
afterAll(() => scratch.cleanup());

const DISPATCHER = `import { appendFileSync } from "node:fs";
export function register(ctx) {
  const rec = (x) => appendFileSync(ctx.get_config("log"), JSON.stringify(x) + "\\n");
  ctx.register_tool({ name: "inner", description: "inner", handler: (args, extra) => {
    rec({ ev: "run", tool: "inner", session: extra.session, turn: extra.turn_id });
    return JSON.stringify({ inner: args });
  } });
  ctx.register_tool({ name: "outer", description: "outer",
    handler: async () => "outer got " + (await ctx.dispatch_tool("inner", { x: 1 })) });
  ctx.register_tool({ name: "loop", description: "loop", handler: () => ctx.dispatch_tool("loop", {}) });
  ctx.register_tool({ name: "shell", description: "shell",
    handler: () => ctx.dispatch_tool("terminal", { command: "git push --force origin main" }) });
  for (const h of ["pre_tool_call", "post_tool_call"])
    ctx.register_hook(h, (p) => void rec({ ev: h, tool: p.tool_name, session: p.session_id, turn: p.turn_id }));
  ctx.register_cli_command("disp-cli", "dispatch outside a session", null, () => ctx.dispatch_tool("inner", {}));
}
`;

function dispatcherHome(root: string) {
  const log = join(root, "dispatch.jsonl");
  const h = agentHome(root, { enabled: ["disp"], extraYaml: 'approvals:\n  deny:\n    - "git push --force*"\n' });
  const cfg = join(h.home, "config.yaml");
  const entry = `  entries:\n    disp:\n      settings:\n        log: ${JSON.stringify(log)}\n`;
  writeFileSync(cfg, readFileSync(cfg, "utf8").replace("  entries:\n", entry));
  const dir = join(h.home, "plugins", "disp");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), 'name: disp\nversion: "1"\nhooks: [pre_tool_call, post_tool_call]\n');
  writeFileSync(join(dir, "index.js"), DISPATCHER);
  const read = () =>
    readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { ev: string; tool: string; session: string; turn: string | null });
  return { ...h, read };
}

describe("ctx.dispatch_tool through hermes chat", () => {
  it("goes through the pipeline with the session's ids; recursion and a deny rule are refused", async () => {
    const root = scratch.dir("chat");
    const h = dispatcherHome(root);
    const server = await fakeOpenAI([
      {
        tools: [
          { name: "outer", arguments: "{}" },
          { name: "loop", arguments: "{}" },
          { name: "shell", arguments: "{}" },
        ],
      },
      { say: "done" },
    ]);
    try {
      const r = await runCli(["chat", "--base-url", server.url, "--model", "fake-model", "--query", "go", "--json"], {
        home: h.home,
        env: { HERMES_BUNDLED_PLUGINS: h.bundled },
        cwd: root,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(STACK_RE);
      const json = JSON.parse(r.stdout) as ChatJson;
      expect(json.answer).toBe("done");
      const [outer, loop, shell] = json.tool_calls;
      expect(outer!.result).toBe('outer got {"inner":{"x":1}}');
      expect(loop!.status).toBe("error");
      expect(loop!.result).toMatch(/ctx\.dispatch_tool\('loop'\) of plugin 'disp' was refused: 'loop' is already/);
      expect(shell!.result).toMatch(/BLOCKED: this command matches the user's deny rule 'git push --force\*'/);
      const seen = h.read();
      const outerPre = seen.find((e) => e.ev === "pre_tool_call" && e.tool === "outer")!;
      expect(outerPre.turn).toMatch(/^turn_/);
      const ids = { session: outerPre.session, turn: outerPre.turn };
      // The dispatched inner call: its hooks and handler inside outer's, with the same session and turn.
      expect(seen.slice(0, 5)).toEqual([
        { ev: "pre_tool_call", tool: "outer", ...ids },
        { ev: "pre_tool_call", tool: "inner", ...ids },
        { ev: "run", tool: "inner", ...ids },
        { ev: "post_tool_call", tool: "inner", ...ids },
        { ev: "post_tool_call", tool: "outer", ...ids },
      ]);
      // The terminal call dispatched by shell went through the pipeline too, and never ran.
      expect(seen.filter((e) => e.tool === "terminal").map((e) => e.ev)).toEqual(["pre_tool_call", "post_tool_call"]);
    } finally {
      await server.close();
    }
  });

  it("from a plugin's CLI command (no agent session) it is refused plainly, with its code", async () => {
    const root = scratch.dir("cli");
    const h = dispatcherHome(root);
    const r = await runCli(["disp-cli"], { home: h.home, env: { HERMES_BUNDLED_PLUGINS: h.bundled }, cwd: root });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_PLUGIN_DISPATCH_NO_SESSION");
    expect(r.stderr).toContain("ctx.dispatch_tool('inner') of plugin 'disp': no agent session is running");
    expect(r.stderr).not.toMatch(STACK_RE);
  });
});
