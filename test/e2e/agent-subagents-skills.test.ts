import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import { agentHome, fakeOpenAI, logLines, type ChatJson, type Reply } from "./agent-helpers.js";

/**
 * Issue 17 (part E): the hooks of skills, subagents, interim messages and pre_verify fire from a real
 * `hermes chat` against a real HTTP model server, with the original's payloads; a kanban hook warns.
 * The `rec` plugin registers a skill and records every payload of the hooks below to a JSON-lines file.
 */
const scratch = new Scratch("hermes-e2e-agent-subagents-");
afterAll(() => scratch.cleanup());

const RECORDED = [
  "on_session_start",
  "pre_llm_call",
  "on_interim_message",
  "on_skill_lifecycle",
  "subagent_start",
  "subagent_stop",
  "pre_verify",
  "kanban_task_claimed",
];

/** The rec plugin: a skill, and a recorder on RECORDED; pre_verify nudges while `attempt < nudges` (setting). */
function writeRec(pluginsDir: string): void {
  const dir = join(pluginsDir, "rec");
  mkdirSync(join(dir, "skills"), { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), `name: rec\nversion: "1"\nhooks: [${RECORDED.join(", ")}]\n`);
  writeFileSync(join(dir, "skills", "runbook.md"), "# Runbook\n\nPage the on-call person, then open an incident.\n");
  writeFileSync(
    join(dir, "index.js"),
    `import { appendFileSync } from "node:fs";
export function register(ctx) {
  ctx.register_skill("runbook", "skills/runbook.md", "What to do when the pager fires");
  const file = ctx.get_config("rec_file");
  for (const name of ${JSON.stringify(RECORDED)}) {
    ctx.register_hook(name, (p) => {
      appendFileSync(file, JSON.stringify({ hook: name, ...p }) + "\\n");
      if (name === "pre_verify" && p.attempt < (ctx.get_config("nudges") ?? 0))
        return { action: "continue", message: "run the tests first" };
      return null;
    });
  }
}
`,
  );
}

type Rec = Record<string, unknown> & { hook: string };

async function chat(
  root: string,
  replies: Reply[],
  o: { yaml?: string; agent?: string; settings?: Record<string, unknown> } = {},
) {
  const recFile = join(root, "rec.jsonl");
  const h = agentHome(root, {
    enabled: ["rec"],
    settings: {},
    extraYaml: `${o.yaml ?? ""}\n`,
  });
  if (!existsSync(join(h.home, "plugins", "rec"))) writeRec(join(h.home, "plugins"));
  // The rec plugin's settings beside the tracer's.
  const cfg = readFileSync(join(h.home, "config.yaml"), "utf8");
  const recSettings = Object.entries({ rec_file: recFile, ...(o.settings ?? {}) })
    .map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`)
    .join("\n");
  writeFileSync(
    join(h.home, "config.yaml"),
    cfg
      .replace("  entries:\n", `  entries:\n    rec:\n      settings:\n${recSettings}\n`)
      .replace("\nagent:\n", `\nagent:\n${o.agent ? `  ${o.agent}\n` : ""}`),
  );
  const work = join(root, "work");
  mkdirSync(work, { recursive: true });
  const server = await fakeOpenAI(replies);
  try {
    const r = await runCli(
      [
        "--home",
        h.home,
        "chat",
        "--provider",
        "openai-compatible",
        "--base-url",
        server.url,
        "--model",
        "fake-model",
      ].concat(["--query", "please help", "--json", "--no-stream"]),
      { env: { HERMES_BUNDLED_PLUGINS: h.bundled, HERMES_LOG_LEVEL: "warn" }, cwd: work },
    );
    const recs: Rec[] = existsSync(recFile)
      ? readFileSync(recFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Rec)
      : [];
    writeFileSync(recFile, "");
    return {
      ...r,
      json: JSON.parse(r.stdout || "null") as ChatJson | null,
      recs,
      requests: [...server.requests],
      work,
    };
  } finally {
    await server.close();
  }
}

const of = (recs: Rec[], hook: string) => recs.filter((r) => r.hook === hook);
const tool = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });
type Msg = { role: string; content: string | null };
const messages = (req: Record<string, unknown>) => req.messages as Msg[];
const toolNames = (req: Record<string, unknown>) =>
  (req.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);

describe("skills: skill_view and on_skill_lifecycle", () => {
  it("indexes plugin skills, loads one by its plugin:skill name, counts uses across sessions", async () => {
    const root = scratch.dir("skills");
    const replies: Reply[] = [
      { tools: [tool("skill_view", { name: "rec:runbook" })], say: "Let me read the runbook." },
      { say: "Page the on-call person." },
    ];
    const r = await chat(root, replies);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("Page the on-call person.");
    const system = messages(r.requests[0]!)[0]!;
    expect(system.role).toBe("system");
    expect(system.content).toContain("- rec:runbook: What to do when the pager fires");
    expect(toolNames(r.requests[0]!)).toContain("skill_view");
    const call = r.json!.tool_calls[0]!;
    expect(call.status).toBe("success");
    expect(JSON.parse(call.result).content).toContain("Page the on-call person, then open an incident.");

    const session = of(r.recs, "on_session_start")[0]!.session_id;
    const [loaded] = of(r.recs, "on_skill_lifecycle");
    expect(loaded).toMatchObject({
      action: "loaded",
      skill_name: "rec:runbook",
      provenance: "local",
      session_id: session,
      use_count: 1,
      reused: false,
      reuse_after_patch: false,
      telemetry_schema_version: "hermes.observer.v1",
    });
    expect(typeof loaded!.task_id).toBe("string");

    // The text that came with the tool call is an interim message; the final answer is not.
    const interim = of(r.recs, "on_interim_message");
    expect(interim).toHaveLength(1);
    expect(interim[0]).toMatchObject({
      text: "Let me read the runbook.",
      iteration: 1,
      session_id: session,
      model: "fake-model",
      provider: "openai-compatible",
      surface: "cli",
      already_streamed: false,
    });
    expect(of(r.recs, "pre_verify")).toEqual([]);

    // A second session of the same home: the use count persists, so the use is a reuse.
    const again = await chat(root, replies);
    expect(again.code, again.stderr).toBe(0);
    expect(of(again.recs, "on_skill_lifecycle")[0]).toMatchObject({ use_count: 2, reused: true });
  });

  it("an unknown skill is a failed tool call that names the skills, and fires nothing", async () => {
    const r = await chat(scratch.dir("skills-unknown"), [
      { tools: [tool("skill_view", { name: "rec:nope" })] },
      { say: "no such skill" },
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.tool_calls[0]!.status).toBe("error");
    expect(r.json!.tool_calls[0]!.result).toContain("rec:runbook");
    expect(of(r.recs, "on_skill_lifecycle")).toEqual([]);
    // Tool calls without text are no interim message.
    expect(of(r.recs, "on_interim_message")).toEqual([]);
  });

  it("registering a kanban hook warns that hermes-kit never fires it", async () => {
    const r = await chat(scratch.dir("kanban"), [{ say: "hi" }]);
    expect(r.code, r.stderr).toBe(0);
    const warn = logLines(r.stderr).find((l) => l.code === "W_HOOK_NOT_FIRED");
    expect(warn?.msg).toContain("kanban_task_claimed");
    expect(warn?.msg).toContain("no kanban task board");
    expect(of(r.recs, "kanban_task_claimed")).toEqual([]);
  });
});

describe("subagents: delegate_task", () => {
  it("runs a child with its own session; subagent_start and subagent_stop carry the ids", async () => {
    const r = await chat(scratch.dir("delegate"), [
      { tools: [tool("delegate_task", { goal: "name the answer", context: "it is 42" })] },
      { say: "42" },
      { say: "The child says 42." },
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("The child says 42.");
    const [parentLlm, childLlm] = of(r.recs, "pre_llm_call");
    const [start] = of(r.recs, "subagent_start");
    const [stop] = of(r.recs, "subagent_stop");
    expect(start).toMatchObject({
      parent_session_id: parentLlm!.session_id,
      parent_turn_id: parentLlm!.turn_id,
      parent_subagent_id: null,
      child_role: "leaf",
      child_goal: "name the answer",
    });
    expect(start!.child_session_id).not.toBe(parentLlm!.session_id);
    expect(String(start!.child_subagent_id)).toMatch(/^subagent_/);
    // The child ran as its own session, told who its parent is.
    expect(childLlm).toMatchObject({ session_id: start!.child_session_id, parent_session_id: parentLlm!.session_id });
    expect(childLlm!.user_message).toBe("name the answer\n\nContext:\nit is 42");
    expect(stop).toMatchObject({
      parent_session_id: parentLlm!.session_id,
      parent_turn_id: parentLlm!.turn_id,
      child_session_id: start!.child_session_id,
      child_role: "leaf",
      child_summary: "42",
      child_status: "completed",
      tool_call_history: [],
    });
    expect(typeof stop!.duration_ms).toBe("number");
    // The child is a leaf: it is not offered delegate_task.
    expect(toolNames(r.requests[0]!)).toContain("delegate_task");
    expect(toolNames(r.requests[1]!)).not.toContain("delegate_task");
    expect(JSON.parse(r.json!.tool_calls[0]!.result)).toMatchObject({ status: "completed", summary: "42" });
  });

  it("stops a child at delegation.max_iterations model calls and reports it truncated", async () => {
    const r = await chat(
      scratch.dir("delegate-budget"),
      [
        { tools: [tool("delegate_task", { goal: "list forever" })] },
        { tools: [tool("list_dir", {})] },
        { tools: [tool("list_dir", {})] },
        { say: "The child ran out of budget." },
      ],
      { yaml: "delegation:\n  max_iterations: 2" },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("The child ran out of budget.");
    // Parent, two child calls (the budget), parent again.
    expect(r.requests).toHaveLength(4);
    const result = JSON.parse(r.json!.tool_calls[0]!.result);
    expect(result).toMatchObject({ status: "failed", exit_reason: "max_iterations", truncated: true, api_calls: 2 });
    const [stop] = of(r.recs, "subagent_stop");
    expect(stop!.child_status).toBe("failed");
    expect(stop!.child_summary).toBeNull();
    const history = stop!.tool_call_history as Array<Record<string, unknown>>;
    expect(history.map((h) => [h.tool_name, h.status])).toEqual([
      ["list_dir", "success"],
      ["list_dir", "success"],
    ]);
    expect(history[0]).toMatchObject({ tool_input: "{}", input_bytes: 2 });
    expect(history[0]!.output_bytes).toBeGreaterThan(0);
  });
});

describe("pre_verify", () => {
  const write = (work: string) => tool("write_file", { path: join(work, "a.txt"), content: "x" });

  it("after a turn that wrote a file, a continue directive sends the agent back once per attempt", async () => {
    const root = scratch.dir("verify");
    mkdirSync(join(root, "work", ".git"), { recursive: true });
    const r = await chat(
      root,
      [{ tools: [write(join(root, "work"))] }, { say: "first answer" }, { say: "final answer" }],
      {
        settings: { nudges: 1 },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("final answer");
    const calls = of(r.recs, "pre_verify");
    expect(calls.map((c) => c.attempt)).toEqual([0, 1]);
    expect(calls[0]).toMatchObject({
      session_id: of(r.recs, "on_session_start")[0]!.session_id,
      platform: "cli",
      model: "fake-model",
      coding: true,
      final_response: "first answer",
      changed_paths: [join(root, "work", "a.txt")],
    });
    // The nudge went to the model as a user message after the attempted answer.
    const sent = messages(r.requests[2]!);
    expect(sent.at(-2)).toMatchObject({ role: "assistant", content: "first answer" });
    expect(sent.at(-1)).toMatchObject({ role: "user", content: "run the tests first" });
  });

  it("agent.max_verify_nudges bounds a hook that always says continue; outside git, coding is false", async () => {
    const root = scratch.dir("verify-bound");
    const r = await chat(root, [{ tools: [write(join(root, "work"))] }, { say: "A" }, { say: "B" }, { say: "C" }], {
      settings: { nudges: 99 },
      agent: "max_verify_nudges: 1",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("B");
    expect(r.requests).toHaveLength(3);
    const calls = of(r.recs, "pre_verify");
    expect(calls).toHaveLength(1);
    expect(calls[0]!.coding).toBe(false);
  });
});
