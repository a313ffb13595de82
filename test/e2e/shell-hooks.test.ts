import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { processRunning } from "../support/util.js";
import { agentHome, readTrace } from "./agent-helpers.js";

/**
 * Issue 18: shell hooks (config.yaml `hooks:`) through the built CLI and the scripted provider: a
 * blocking pre_tool_call, one that times out (fail-closed, its process group killed), a transform
 * that replaces a result, a failing observer that does not break the turn, and the owners `shell:<i>`
 * in `plugins chain` and the timeline.
 */
const scratch = new Scratch("hermes-e2e-shell-hooks-");
afterAll(() => scratch.cleanup());

function script(path: string, body: string): string {
  writeText(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

interface ChatOut {
  answer: string;
  tool_calls: Array<{ tool_name: string; status: string; result: string }>;
}

async function chat(root: string, hooksYaml: string, extra: string[] = []) {
  const h = agentHome(root, { extraYaml: hooksYaml });
  const steps = writeText(join(root, "script.yaml"), "- call: {tool: list_dir, args: {path: .}}\n- say: done\n");
  const r = await runCli(["--home", h.home, "chat", "--script", steps, "-q", "list", "--json", ...extra], {
    env: { HERMES_BUNDLED_PLUGINS: h.bundled },
    cwd: root,
  });
  let json: ChatOut | undefined;
  try {
    json = JSON.parse(r.stdout) as ChatOut;
  } catch {
    json = undefined;
  }
  return { ...r, json, h };
}

describe("shell hooks", () => {
  it("a pre_tool_call hook blocks (Claude-Code shape) after the plugins and reads the original's stdin", async () => {
    const root = scratch.dir("block");
    const seen = join(root, "stdin.json");
    const hook = script(
      join(root, "block.sh"),
      `cat > "${seen}"\nprintf '{"decision": "block", "reason": "no listing today"}\\n'`,
    );
    const r = await chat(
      root,
      `hooks:\n  pre_tool_call:\n    - matcher: "^list_dir$"\n      command: "${hook}"\n      timeout: 10\n`,
      ["--timeline"],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.tool_calls[0]).toMatchObject({ tool_name: "list_dir", status: "blocked" });
    expect(r.json!.tool_calls[0]!.result).toContain("no listing today");
    const input = JSON.parse(readFileSync(seen, "utf8")) as Record<string, unknown>;
    expect(input).toMatchObject({
      hook_event_name: "pre_tool_call",
      tool_name: "list_dir",
      tool_input: { path: "." },
      profile: "default",
      cwd: root,
    });
    expect((input.extra as Record<string, unknown>).tool_call_id).toBe("call_1_1");
    // The tracer plugin ran first in the same chain.
    expect(readTrace(r.h.trace).some((t) => t.ev === "hook:pre_tool_call")).toBe(true);
    expect(r.stderr).toMatch(/hook {8}pre_tool_call\s+tracer → shell:0/);
  });

  it("a hook whose matcher does not match the tool is not run", async () => {
    const root = scratch.dir("nomatch");
    const ran = join(root, "ran");
    const hook = script(join(root, "h.sh"), `touch "${ran}"\nexit 2`);
    const r = await chat(root, `hooks:\n  pre_tool_call:\n    - matcher: "^terminal$"\n      command: "${hook}"\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.tool_calls[0]!.status).toBe("success");
    expect(existsSync(ran)).toBe(false);
  });

  it("exit 2 blocks with stderr as the message", async () => {
    const root = scratch.dir("exit2");
    const hook = script(join(root, "h.sh"), `cat >/dev/null\necho "policy: listing is off" >&2\nexit 2`);
    const r = await chat(root, `hooks:\n  pre_tool_call:\n    - command: "${hook}"\n`);
    expect(r.json!.tool_calls[0]!.status).toBe("blocked");
    expect(r.json!.tool_calls[0]!.result).toContain("policy: listing is off");
  });

  it("a pre_tool_call hook that times out blocks the tool (fail-closed) and its process group is killed", async () => {
    const root = scratch.dir("timeout");
    const pidFile = join(root, "grandchild.pid");
    const hook = script(join(root, "slow.sh"), `sleep 120 &\necho $! > "${pidFile}"\nwait`);
    const r = await chat(root, `hooks:\n  pre_tool_call:\n    - command: "${hook}"\n      timeout: 1\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.tool_calls[0]!.status).toBe("blocked");
    expect(r.json!.tool_calls[0]!.result).toMatch(/timed out after 1s/);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(pid).toBeGreaterThan(0);
    expect(processRunning(pid)).toBe(false);
    expect(r.stderr).not.toMatch(STACK_RE);
  });

  it("a transform hook replaces the tool result; a failing observer is reported and the turn goes on", async () => {
    const root = scratch.dir("transform");
    const t = script(join(root, "t.sh"), `cat >/dev/null\nprintf '"replaced by the shell hook"'`);
    const bad = script(join(root, "bad.sh"), "cat >/dev/null\necho broken >&2\nexit 3");
    const r = await chat(
      root,
      `hooks:\n  transform_tool_result:\n    - command: "${t}"\n  post_tool_call:\n    - command: "${bad}"\n`,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json!.answer).toBe("done");
    expect(r.json!.tool_calls[0]!.result).toBe("replaced by the shell hook");
    expect(r.stderr).toMatch(/exited with code 3: broken/);
  });

  it("plugins chain lists shell:<i> after the plugins; an entry that cannot run is skipped with a code", async () => {
    const root = scratch.dir("chain");
    const a = script(join(root, "a.sh"), "cat >/dev/null");
    const h = agentHome(root, {
      extraYaml:
        `hooks:\n  pre_tool_call:\n    - command: "${a}"\n    - command: "${a} second"\n` +
        `  pre_tool_cal:\n    - command: "${a}"\n  kanban_task_claimed:\n    - command: "${a}"\n` +
        `  on_session_start:\n    - command: "${a}"\n      matcher: x\n`,
    });
    const r = await runCli(["--home", h.home, "plugins", "chain", "--json"], {
      env: { HERMES_BUNDLED_PLUGINS: h.bundled },
    });
    expect(r.code, r.stderr).toBe(0);
    const data = JSON.parse(r.stdout) as { hooks: Record<string, string[]> };
    expect(data.hooks.pre_tool_call).toEqual(["tracer", "shell:0", "shell:1"]);
    expect(data.hooks.on_session_start).toEqual(["tracer"]);
    expect(data.hooks.kanban_task_claimed).toBeUndefined();
    expect(r.stderr).toMatch(/hooks\.pre_tool_cal: unknown hook \(did you mean pre_tool_call\?\); not run/);
    expect(r.stderr).toMatch(/hooks\.kanban_task_claimed: hermes-kit never fires this hook/);
    expect(r.stderr).toMatch(/hooks\.on_session_start\.0: `matcher` selects tools/);
    expect(r.stderr).toContain("W_SHELL_HOOK_SKIPPED");
  });

  it("config validate names an entry that would not run, at its line; a bad timeout fails the schema", async () => {
    const root = scratch.dir("validate");
    const file = writeText(
      join(root, "config.yaml"),
      'hooks:\n  pre_tool_call:\n    - command: "/bin/true"\n  on_session_start:\n    - command: "/bin/true"\n' +
        "      matcher: x\n",
    );
    const r = await runCli(["config", "validate", file, "--json"]);
    const ds = JSON.parse(r.stdout) as Array<{ code: string; line?: number; message: string }>;
    expect(ds).toMatchObject([{ code: "W_SHELL_HOOK_SKIPPED", line: 5 }]);
    expect(ds[0]!.message).toMatch(/^hooks\.on_session_start\.0: `matcher` selects tools/);
    writeText(file, 'hooks:\n  pre_tool_call:\n    - command: "/bin/true"\n      timeout: 301\n');
    const bad = await runCli(["config", "validate", file, "--json"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("timeout");
    expect(bad.stderr).not.toMatch(STACK_RE);
  });
});
