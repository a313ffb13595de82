import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { Scratch } from "../support/home.js";

/**
 * MCP through the built CLI: `hermes chat` starts the servers of config.yaml, the model calls
 * their tools beside the built-ins, a plugin tool reaches them with ctx.call_mcp, and a crash in
 * the middle of a conversation is an error result for that call only.
 */
const FIXTURE = fileURLToPath(new URL("../fixtures/mcp/echo-server.mjs", import.meta.url));
const scratch = new Scratch("hermes-mcp-chat-");
afterAll(() => scratch.cleanup());

interface ChatJson {
  completed: boolean;
  answer: string | null;
  tool_calls: Array<{ tool_name: string; status: string; result: string }>;
}

describe("hermes chat with mcp_servers", () => {
  it(
    "the model calls MCP tools, a plugin uses ctx.call_mcp, " + "a crash fails one call and the next reconnects",
    async () => {
      const root = scratch.dir("chat");
      const home = join(root, "home");
      const bundled = join(root, "bundled");
      mkdirSync(bundled, { recursive: true });
      const plugin = join(home, "plugins", "asker");
      mkdirSync(plugin, { recursive: true });
      writeFileSync(join(plugin, "plugin.yaml"), "name: asker\nversion: '1'\n");
      writeFileSync(
        join(plugin, "index.js"),
        `export function register(ctx) {
  ctx.register_tool({
    name: "ask_mcp",
    schema: { name: ` +
          `"ask_mcp", description: "ask the echo server", parameters: { type: "object", properties: { server: { ` +
          `type: "string" } } } },
    handler: async (args) => {
      try { return JSON.stringify(await ` +
          `ctx.call_mcp(args.server ?? "echo", "echo", { message: "from a plugin" }, "5")); }
      catch (e) { ` +
          `return JSON.stringify({ refused: e.name, message: e.message }); }
    },
  });
}
`,
      );
      writeFileSync(
        join(home, "config.yaml"),
        `plugins:
  enabled: [asker]
  entries:
    asker:
      mcp_allowlist: [echo]
mcp_servers:
  echo:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(FIXTURE)}]
    timeout: 10
`,
      );
      const script = join(root, "script.yaml");
      writeFileSync(
        script,
        `- call: {tool: mcp_echo_echo, args: {message: from the model}}
- call: {tool: ask_mcp, args: {}}
- call: {tool: ask_mcp, args: {server: other}}
- call: {tool: mcp_echo_crash, args: {}}
- call: {tool: mcp_echo_echo, args: {message: after the crash}}
- say: done
`,
      );
      const r = await runCli(["--home", home, "chat", "--script", script, "--query", "go", "--json"], {
        env: { HERMES_BUNDLED_PLUGINS: bundled, HERMES_LOG_LEVEL: "info" },
      });
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as ChatJson;
      expect(out.completed).toBe(true);
      expect(out.answer).toBe("done");
      const calls = out.tool_calls.map((c) => [c.tool_name, c.status]);
      expect(calls).toEqual([
        ["mcp_echo_echo", "success"],
        ["ask_mcp", "success"],
        ["ask_mcp", "success"],
        ["mcp_echo_crash", "error"],
        ["mcp_echo_echo", "success"],
      ]);
      expect(out.tool_calls[0]!.result).toBe('{"result":"echo: from the model"}');
      expect(JSON.parse(out.tool_calls[1]!.result)).toEqual({ ok: true, result: "echo: from a plugin" });
      expect(JSON.parse(out.tool_calls[2]!.result)).toEqual({
        refused: "PermissionError",
        message:
          "Plugin 'asker' is not allowed to call MCP server 'other'. Add it to " +
          "plugins.entries.asker.mcp_allowlist in config.yaml to grant access (default is no MCP access).",
      });
      expect(JSON.parse(out.tool_calls[3]!.result).error).toMatch(
        /closed the connection while calling 'crash'.*restarted on the next call/,
      );
      expect(out.tool_calls[4]!.result).toBe('{"result":"echo: after the crash"}');
      // Outcomes are logged with their codes.
      expect(r.stderr).toContain("E_MCP_SERVER_CLOSED");
      expect(r.stderr).toContain("MCP server 'echo' reconnected");
    },
  );
});
