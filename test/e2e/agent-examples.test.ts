import { cpSync, existsSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import { agentHome, fakeOpenAI, names, readTrace } from "./agent-helpers.js";

/**
 * Issue 5 acceptance: the middleware seed's four examples, shipped as bundled plugins, produce
 * the effects the seed describes against a real chat-completions server; `hermes demo` runs
 * offline and prints a readable timeline.
 */
const scratch = new Scratch("hermes-e2e-agent-examples-");
afterAll(() => scratch.cleanup());

const EXAMPLES = [
  "middleware-demo-tag-request",
  "middleware-demo-terminal-workdir",
  "middleware-demo-time-llm",
  "middleware-demo-annotate-tool",
];

describe("the seed's four middleware examples", () => {
  it(
    "tag the request the server receives, default the workdir before policy sees it, print the elapsed time, " +
      "keep the result",
    async () => {
      const root = scratch.dir("examples");
      // The bundled examples, copied as the package ships them.
      const bundled = join(root, "bundled");
      for (const p of EXAMPLES) cpSync(join(ROOT, "plugins", p), join(bundled, p), { recursive: true });
      const h = agentHome(root, { enabled: EXAMPLES, bundled });
      const server = await fakeOpenAI([
        { tools: [{ name: "terminal", arguments: JSON.stringify({ command: "echo examples && pwd" }) }] },
        { say: "done" },
      ]);
      try {
        const r = await runCli(
          ["--home", h.home, "chat", "--base-url", server.url, "--model", "m1", "--query", "run it"],
          { env: { HERMES_BUNDLED_PLUGINS: bundled }, cwd: root },
        );
        expect(r.code, r.stderr).toBe(0);
        // tag llm request: the metadata is in the JSON body the server received, on every attempt.
        expect(server.requests).toHaveLength(2);
        for (const body of server.requests) expect(body.metadata).toEqual({ hermes_middleware_demo: true });
        expect(server.requests[0]).not.toHaveProperty("extra_body");
        const pre = readTrace(h.trace).filter((t) => t.ev === "hook:pre_api_request");
        expect(pre[0]!.middleware_trace).toEqual([{ source: "middleware-demo", reason: "tagged provider request" }]);
        // terminal workdir: defaulted before pre_tool_call (policy) sees the args, and the command ran there.
        const scratchDir = join(h.home, "cache", "scratch", "hermes-middleware-demo");
        const ptc = readTrace(h.trace).find((t) => t.ev === "hook:pre_tool_call")!;
        expect(ptc.args).toEqual({ command: "echo examples && pwd", workdir: scratchDir });
        expect(ptc.middleware_trace).toEqual([{ source: "middleware-demo", reason: "defaulted terminal workdir" }]);
        // time llm execution: one line per provider call on stdout, then the answer.
        expect(r.stdout.match(/^llm_execution elapsed_ms=\d+$/gm)).toHaveLength(2);
        expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("done");
        // annotate tool execution: the result is what the tool produced, unchanged.
        const toolMsg = (server.requests[1]!.messages as Array<{ role: string; content: string }>).find(
          (m) => m.role === "tool",
        )!;
        expect(JSON.parse(toolMsg.content)).toEqual({ output: `examples\n${scratchDir}\n`, exit_code: 0, error: null });
        const post = readTrace(h.trace).find((t) => t.ev === "hook:post_tool_call")!;
        expect(post.result).toBe(toolMsg.content);
        expect(names(readTrace(h.trace)).filter((e) => e === "mw:tool_execution:enter")).toHaveLength(1);
      } finally {
        await server.close();
      }
    },
  );
});

describe("hermes demo", () => {
  it(
    "runs offline from the package, prints the timeline " + "with the trace and the answer, and removes its home",
    async () => {
      const before = new Set(readdirSync(tmpdir()).filter((d) => d.startsWith("hermes-demo-")));
      const cwd = scratch.dir("demo-cwd");
      // No network: a proxy that goes nowhere would break any fetch; the scripted provider needs none.
      const r = await runCli(["demo"], {
        cwd,
        env: {
          HTTPS_PROXY: "http://127.0.0.1:9",
          HTTP_PROXY: "http://127.0.0.1:9",
          HERMES_BUNDLED_PLUGINS: join(cwd, "nothing-here"),
        },
      });
      expect(r.code, r.stderr).toBe(0);
      const out = r.stdout;
      expect(out).toMatch(/^hermes demo — a throwaway home at /);
      expect(out).toContain(
        "hello-world → middleware-demo-annotate-tool → middleware-demo-tag-request → " +
          "middleware-demo-terminal-workdir → middleware-demo-time-llm",
      );
      // The seed's order for the model call and the tool call, as printed lines.
      const lines = out.split("\n").map((l) => l.trim());
      const at = (re: RegExp, from = 0) => lines.findIndex((l, i) => i >= from && re.test(l));
      const llmReq = at(
        /^middleware\s+llm_request\s+middleware-demo-tag-request\s+trace=\[middleware-demo: tagged provider request\]/,
      );
      const preApi = at(/^hook\s+pre_api_request/, llmReq);
      const llmExec = at(/^middleware\s+llm_execution\s+middleware-demo-time-llm/, preApi);
      const elapsed = at(/^llm_execution elapsed_ms=\d+$/, llmExec);
      const postApi = at(/^hook\s+post_api_request/, elapsed);
      expect([llmReq, preApi, llmExec, elapsed, postApi].every((i) => i >= 0)).toBe(true);
      expect(llmReq < preApi && preApi < llmExec && llmExec < elapsed && elapsed < postApi).toBe(true);
      const toolReq = at(
        new RegExp(
          String.raw`^middleware\s+tool_request\s+middleware-demo-terminal-workdir\s+` +
            String.raw`trace=\[middleware-demo: defaulted terminal workdir\]`,
        ),
      );
      const args = at(/^args\s+\{"command":"echo hello","workdir":".*hermes-middleware-demo"\}/, toolReq);
      const preTool = at(/^hook\s+pre_tool_call/, args);
      const toolExec = at(/^middleware\s+tool_execution\s+middleware-demo-annotate-tool\s+→ terminal/, preTool);
      const postTool = at(/^hook\s+post_tool_call\s+hello-world\s+status=success/, toolExec);
      const transform = at(/^hook\s+transform_tool_result/, postTool);
      expect([toolReq, args, preTool, toolExec, postTool, transform].every((i) => i >= 0)).toBe(true);
      expect(out).toMatch(/→ success in \d+ ms: \{"output":"hello\\n","exit_code":0,"error":null\}/);
      expect(out).toMatch(/hook\s+on_session_end\s+\(no plugin\)\s+completed=true/);
      expect(out).toContain("3 of 3 provider request(s) carried extra_body.metadata.hermes_middleware_demo = true");
      expect(out).toMatch(/answer: The terminal printed "hello"/);
      // The throwaway home is gone.
      const home = /throwaway home at (\S+)/.exec(out)![1]!;
      expect(existsSync(home)).toBe(false);
      const after = readdirSync(tmpdir()).filter((d) => d.startsWith("hermes-demo-") && !before.has(d));
      expect(after).toEqual([]);
    },
  );

  it("--keep keeps the home, compiled and ready for hermes chat", async () => {
    const r = await runCli(["demo", "--keep"], { cwd: scratch.dir("demo-keep") });
    expect(r.code, r.stderr).toBe(0);
    const home = /^kept: (.+)$/m.exec(r.stdout)![1]!;
    try {
      expect(existsSync(join(home, "hermes.lock.json"))).toBe(true);
      const again = await runCli(
        ["--home", home, "chat", "--script", join(home, "demo-script.yaml"), "--query", "again"],
        { cwd: home },
      );
      expect(again.code, again.stderr).toBe(0);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
