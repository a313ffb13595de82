/**
 * The user's deny rules (`approvals.deny`), as the original documents them: fnmatch globs, case-insensitive,
 * against the whole command and every command it executes; refused after hardline and before any approval
 * (mode off, session or always approvals, a transport), the model told, the timeline saying why.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ApprovalGate, approvalSettings, PermanentApprovals } from "../../src/agent/approvals/gate.js";
import { globToRegExp, matchDenyRule } from "../../src/agent/approvals/deny-rules.js";
import { HookSite } from "../../src/agent/hook-site.js";
import { Session } from "../../src/agent/session.js";
import type { TimelineEvent } from "../../src/agent/timeline.js";
import { runToolCall } from "../../src/agent/tool-call.js";
import { cleanupTemp } from "../support/home.js";
import { captureLog, rig } from "./helpers.js";

afterAll(cleanupTemp);

describe("deny rule matching", () => {
  it.each([
    ["git push --force*", "git push --force origin main", true],
    ["git push --force*", "git push origin main", false],
    ["GIT PUSH --FORCE*", "git push --force", true],
    ['git pu""sh --force*', "git push --force", false],
    ["git push --force*", 'git pu""sh --force origin', true],
    ["git push --force*", "echo ok && git push --force", true],
    ["git push --force*", "cd repo; git push --force | tee log", true],
    ["sudo *", "/usr/bin/sudo -n id", true],
    ["sudo *", "./sudo -n id", true],
    ["/usr/bin/sudo *", "sudo -n id", false],
    ["git status", "env git\tstatus; echo done", true],
    ["rm *", "sudo -u root rm -rf build", true],
    ["rm *", "timeout 10 nice -n 5 rm -rf build", true],
    ["rm *", "FOO=1 BAR=2 rm x", true],
    ["rm *", "bash -lc 'cd /tmp && rm -rf x'", true],
    ["rm *", "env -S 'rm -rf x'", true],
    ["rm *", "echo $(rm -rf x)", true],
    ["rm *", "echo 'rm -rf x'", false],
    ["sudo *", "echo 'sudo -n id'", false],
    ["*sudo*", "echo 'sudo -n id'", true],
    ["rm *", "command -v rm", false],
    ["cat *", "cat < in.txt > out.txt 2>&1", true],
    ["dd if=* of=/dev/*", "dd if=/dev/zero of=/dev/sda bs=1M", true],
    ["ls [!a]*", "ls b", true],
    ["ls [!a]*", "ls a", false],
    ["ls [ab]", "ls b", true],
    ["echo [unclosed", "echo [unclosed", true],
    ["make ?", "make a", true],
    ["make ?", "make ab", false],
  ])("%j vs %j → %s", (rule, command, hit) => {
    expect(matchDenyRule(command, [rule]) !== undefined).toBe(hit);
  });

  it("names the first matching rule; regex characters in a rule are literal", () => {
    expect(matchDenyRule("git push --force", ["npm *", "git *", "git push*"])).toBe("git *");
    expect(globToRegExp("a.b+(c)").test("a.b+(c)")).toBe(true);
    expect(globToRegExp("a.b").test("axb")).toBe(false);
    expect(matchDenyRule("anything", [])).toBeUndefined();
  });

  it("approvals.deny is read as a list of non-empty strings; anything else is no rules", () => {
    expect(approvalSettings({ approvals: { deny: ["a*", 3, "", "b"] } }).deny).toEqual(["a*", "b"]);
    expect(approvalSettings({ approvals: { deny: "a*" } }).deny).toEqual([]);
    expect(approvalSettings({}).deny).toEqual([]);
  });
});

describe("a terminal command matching a deny rule", () => {
  async function setup(config: Record<string, unknown>) {
    const r = await rig();
    const events: TimelineEvent[] = [];
    const observed: string[] = [];
    const hooks = new HookSite(r.rt.hooks, (e) => events.push(e));
    for (const h of ["pre_approval_request", "post_approval_response", "post_tool_call"] as const)
      r.rt.hooks.add(h, (p) => void observed.push(`${h}:${String((p as { status?: string }).status ?? "")}`), "t");
    let ran = 0;
    let transportAsked = 0;
    r.rt.tools.lease("terminal", {
      name: "terminal",
      toolset: "t",
      schema: { name: "terminal" },
      handler: () => (ran++, "ran"),
      requires_env: [],
      description: "",
      emoji: "",
      owner: "test",
    });
    r.rt.approvalTransports.lease("pager", {
      name: "pager",
      present: () => (transportAsked++, undefined),
      plugin_id: "t",
      profile_home: r.home,
    });
    const logs = captureLog();
    const session = new Session();
    session.sessionApprovals.add("git_force_push");
    const gate = new ApprovalGate({
      home: r.home,
      config: () => config,
      transports: r.rt.approvalTransports,
      hooks,
      emit: (e) => events.push(e),
      log: logs.log,
      permanent: new PermanentApprovals(r.home),
    });
    const call = (command: string) =>
      runToolCall(
        {
          tools: r.rt.tools,
          middleware: r.rt.middleware,
          hooks,
          gate,
          log: logs.log,
          emit: (e) => events.push(e),
          signal: new AbortController().signal,
          session,
          ids: { session_id: session.session_id, task_id: session.task_id, turn_id: "t1", api_request_id: "r1" },
        },
        { id: "c1", type: "function", function: { name: "terminal", arguments: JSON.stringify({ command }) } },
      );
    return { call, events, observed, logs, counts: () => ({ ran, transportAsked }) };
  }

  it.each([
    ["a transport selected", { security: { approval: { transport: "pager" } } }],
    ["approvals.mode off", { approvals: { mode: "off" } }],
  ])("is refused before any approval (%s): the model is told, the timeline says why", async (_l, extra) => {
    const config = { ...extra, approvals: { ...(extra as { approvals?: object }).approvals, deny: ["git push*"] } };
    const t = await setup(config);
    // Approved for the session already: a deny rule still wins.
    const o = await t.call("git push --force origin main");
    expect(o.status).toBe("blocked");
    expect(o.error_type).toBe("deny_rule");
    expect(JSON.parse(o.result).error).toMatch(
      /^BLOCKED: this command matches the user's deny rule 'git push\*' \(approvals\.deny\); it never runs/,
    );
    expect(t.counts()).toEqual({ ran: 0, transportAsked: 0 });
    expect(t.observed).toEqual(["post_tool_call:blocked"]);
    expect(t.events).toContainEqual({ type: "approval", outcome: "deny rule", detail: "approvals.deny 'git push*'" });
    expect(t.logs.warnings().map((w) => w.code)).toContain("E_APPROVAL_DENY_RULE");
  });

  it("hardline comes first; a command no rule matches goes on to the transport as before", async () => {
    const t = await setup({ security: { approval: { transport: "pager" } }, approvals: { deny: ["rm *", "x*"] } });
    const hard = await t.call("rm -rf /");
    expect(hard.error_type).toBe("hardline");
    const other = await t.call("chmod -R 777 .");
    expect(other.error_type).toBe("approval_denied");
    expect(t.counts()).toEqual({ ran: 0, transportAsked: 1 });
    expect(t.observed.filter((e) => e.startsWith("pre_approval_request"))).toHaveLength(1);
    expect((await t.call("ls")).result).toBe("ran");
  });
});
