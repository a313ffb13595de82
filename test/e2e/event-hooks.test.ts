import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, spawnCli, STACK_RE } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { api, type EchoModel, echoModel, serve, writeServeConfig } from "./serve-helpers.js";

/**
 * Issue 18: gateway event hooks (hooks/<name>/HOOK.yaml + handler.js) through `hermes serve`: the
 * events a handler sees, a throwing handler that never breaks the turn, `hermes hooks list`, and the
 * lock holding each hook with its integrity (a handler changed after the compile is refused).
 */
const scratch = new Scratch("hk-event-hooks-");
let model: EchoModel;

beforeAll(async () => {
  model = await echoModel();
});
afterAll(async () => {
  await model.close();
  scratch.cleanup();
});

function eventHook(dir: string, events: string[], body: string): void {
  writeText(
    join(dir, "HOOK.yaml"),
    `name: ${dir.split("/").pop()}\ndescription: test hook\nevents: [${events.join(", ")}]\n`,
  );
  writeText(join(dir, "handler.js"), body);
}

const RECORDER = (file: string) =>
  `import { appendFileSync } from "node:fs";\nexport async function handle(event, context) {\n` +
  `  appendFileSync(${JSON.stringify(file)}, JSON.stringify({ event, context }) + "\\n");\n}\n`;

function events(file: string): Array<{ event: string; context: Record<string, unknown> }> {
  try {
    return readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; context: Record<string, unknown> });
  } catch {
    return [];
  }
}

describe("gateway event hooks", () => {
  it("a handler sees startup, session start, agent start/end and reset; a throwing one breaks nothing", async () => {
    const home = scratch.dir("serve");
    writeServeConfig(home, model.url);
    const log = join(home, "events.jsonl");
    eventHook(
      join(home, "hooks", "recorder"),
      ["gateway:startup", "session:*", "agent:start", "agent:step", "agent:end"],
      RECORDER(log),
    );
    eventHook(
      join(home, "hooks", "broken"),
      ["agent:start"],
      'export function handle() { throw new Error("boom in hook"); }\n',
    );
    expect((await runCli(["--home", home, "compile"])).code).toBe(0);
    const lock = JSON.parse(readFileSync(join(home, "hermes.lock.json"), "utf8")) as {
      event_hooks: Array<{ name: string; integrity: string; events: string[] }>;
    };
    expect(lock.event_hooks.map((h) => h.name)).toEqual(["broken", "recorder"]);
    expect(lock.event_hooks[1]!.integrity).toMatch(/^sha256-tree:[0-9a-f]{64}$/);
    const s = await serve(home);
    try {
      const r = await api<{ choices: Array<{ message: { content: string } }> }>(s.url, "/v1/chat/completions", {
        model: "echo",
        messages: [{ role: "user", content: "hello hooks" }],
      });
      expect(r.status).toBe(200);
      const sid = r.headers.get("x-hermes-session-id")!;
      expect(sid).toBeTruthy();
      expect((await api(s.url, `/v1/sessions/${sid}/reset`, {})).status).toBeLessThan(300);
      const seen = events(log);
      expect(seen.map((e) => e.event)).toEqual([
        "gateway:startup",
        "session:start",
        "agent:start",
        "agent:step",
        "agent:end",
        "session:reset",
      ]);
      expect(seen[0]!.context.platforms).toEqual(expect.any(Array));
      expect(seen[1]!.context).toMatchObject({ session_id: sid, platform: "api_server" });
      expect(seen[2]!.context).toMatchObject({ session_id: sid, message: "hello hooks" });
      expect(seen[3]!.context).toMatchObject({ session_id: sid, iteration: 1, tool_names: [] });
      expect(seen[4]!.context.response).toBe(r.body.choices[0]!.message.content);
      expect(s.proc.stderr()).toContain("event hook broken failed on agent:start: boom in hook");
      expect(s.proc.stderr()).not.toMatch(STACK_RE);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it("hermes hooks list shows shell and event hooks with their lock state", async () => {
    const home = scratch.dir("list");
    writeServeConfig(
      home,
      model.url,
      'hooks:\n  pre_tool_call:\n    - command: "/bin/true"\n      matcher: terminal\n',
    );
    eventHook(join(home, "hooks", "audit"), ["command:*"], "export function handle() {}\n");
    const before = await runCli(["--home", home, "hooks", "list", "--json"]);
    expect(before.code, before.stderr).toBe(0);
    const b = JSON.parse(before.stdout) as { shell: unknown[]; event: Array<{ name: string; state: string }> };
    expect(b.shell).toEqual([
      { hook: "pre_tool_call", owner: "shell:0", command: "/bin/true", matcher: "terminal", timeout: 60 },
    ]);
    expect(b.event).toMatchObject([{ name: "audit", state: "not-compiled", events: ["command:*"] }]);
    expect((await runCli(["--home", home, "compile"])).code).toBe(0);
    const after = await runCli(["--home", home, "hooks", "list"]);
    expect(after.stdout).toMatch(/audit \[locked\] command:\*/);
    expect(after.stdout).toMatch(/pre_tool_call shell:0: \/bin\/true {2}timeout 60s {2}matcher \/terminal\//);
  });

  it("a handler changed after a managed compile is refused like a changed plugin", async () => {
    const home = scratch.dir("tamper");
    writeServeConfig(home, model.url);
    const spec = writeText(join(scratch.root, "tamper-spec.yaml"), "plugins: []\n");
    const log = join(home, "events.jsonl");
    eventHook(join(home, "hooks", "recorder"), ["gateway:startup"], RECORDER(log));
    expect((await runCli(["--home", home, "compile", "--spec", spec, "--managed", "nixos"])).code).toBe(0);
    writeText(join(home, "hooks", "recorder", "handler.js"), `${RECORDER(log)}// edited\n`);
    const p = spawnCli(["--home", home, "serve", "--port", "0"]);
    const done = await p.done;
    expect(done.code).toBe(1);
    expect(p.stderr()).toContain("E_COMPILE_STALE");
    expect(events(log)).toEqual([]);
  });
});
