import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/core/paths.js";
import {
  FIRED_HOOKS,
  HOOK_CATALOG,
  HOOK_CATALOG_VERSION,
  HOOK_FIRE_SITES,
  HOOK_NAMES,
  type HookCombine,
  type HookSpec,
  isHookName,
  isMiddlewareKind,
  MIDDLEWARE_CATALOG,
  MIDDLEWARE_KINDS,
  NOT_FIRED_HOOKS,
  suggestHook,
  suggestMiddlewareKind,
} from "../../src/contracts/hook-catalog.js";
import { renderHooksDoc } from "../../src/contracts/hooks-doc.js";

// The original's hook names (plus pre_tts_synthesis), copied by hand so a
// hook added to or dropped from the catalog must be a deliberate edit in two places.
const SPEC_HOOKS = [
  "pre_tool_call",
  "post_tool_call",
  "transform_terminal_output",
  "transform_tool_result",
  "transform_llm_output",
  "pre_llm_call",
  "post_llm_call",
  "on_stream_start",
  "on_stream_delta",
  "on_stream_end",
  "on_interim_message",
  "pre_verify",
  "pre_api_request",
  "post_api_request",
  "api_request_error",
  "pre_auxiliary_call",
  "post_auxiliary_call",
  "transform_api_error_classification",
  "on_session_start",
  "on_session_end",
  "on_session_finalize",
  "on_session_reset",
  "on_skill_lifecycle",
  "subagent_start",
  "subagent_stop",
  "pre_gateway_dispatch",
  "agent_loop_stopped",
  "pre_approval_request",
  "post_approval_response",
  "on_room_member_activity",
  "pre_transcription",
  "kanban_task_claimed",
  "kanban_task_completed",
  "kanban_task_blocked",
  "on_kanban_worker_spawned",
  "on_kanban_worker_exited",
  "on_kanban_worker_stale_claim",
  "on_kanban_task_updated",
  "on_kanban_dispatch_tick",
  "gateway_platform_event",
  "pre_command",
  "pre_tts_synthesis",
];

// Hooks raced against plugins.hook_callback_timeout.
const BOUNDED = [
  "post_tool_call",
  "transform_terminal_output",
  "transform_tool_result",
  "transform_llm_output",
  "pre_llm_call",
  "post_llm_call",
  "pre_api_request",
  "post_api_request",
  "api_request_error",
  "pre_auxiliary_call",
  "post_auxiliary_call",
  "pre_verify",
  "on_session_start",
  "on_session_end",
];
const FAIL_CLOSED = ["pre_tool_call", "pre_tts_synthesis"];
const CALLER_THREAD = ["subagent_stop"];

// Hooks whose results are not simply ignored.
const COMBINE: Record<string, HookCombine> = {
  pre_tool_call: "directive",
  pre_tts_synthesis: "tts-policy",
  transform_tool_result: "first-string",
  transform_terminal_output: "first-string",
  transform_llm_output: "first-non-empty",
  pre_llm_call: "joined",
  pre_transcription: "last-writer-per-field",
  transform_api_error_classification: "first-valid",
  pre_verify: "first-valid",
  pre_gateway_dispatch: "first-valid",
};

const entries = Object.entries(HOOK_CATALOG) as [string, HookSpec][];
const namesWhere = (pred: (s: HookSpec) => boolean): string[] =>
  entries
    .filter(([, s]) => pred(s))
    .map(([n]) => n)
    .sort();

describe("hook catalog", () => {
  it("docs/hooks.md is generated from the catalog and current (npm run docs)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs/hooks.md"), "utf8")).toBe(renderHooksDoc());
  });

  it("holds exactly the hooks of the runtime spec", () => {
    expect(new Set(SPEC_HOOKS).size).toBe(SPEC_HOOKS.length);
    expect([...HOOK_NAMES]).toEqual([...SPEC_HOOKS].sort());
    expect(HOOK_CATALOG_VERSION).toBe("hermes.hooks.v1");
  });

  it("timeout classes match BOUNDED, FAIL_CLOSED and CALLER_THREAD", () => {
    expect(namesWhere((s) => s.timeout === "bounded")).toEqual([...BOUNDED].sort());
    expect(namesWhere((s) => s.timeout === "fail-closed")).toEqual([...FAIL_CLOSED].sort());
    expect(namesWhere((s) => s.timeout === "caller")).toEqual(CALLER_THREAD);
    const special = new Set([...BOUNDED, ...FAIL_CLOSED, ...CALLER_THREAD]);
    expect(namesWhere((s) => s.timeout === "unbounded")).toEqual(SPEC_HOOKS.filter((h) => !special.has(h)).sort());
  });

  it("combine rules follow the per-hook contracts; every other hook is ignored", () => {
    for (const [name, spec] of entries) expect(spec.combine, name).toBe(COMBINE[name] ?? "ignored");
  });

  it("observers, and only observers, have their results ignored", () => {
    for (const [name, spec] of entries) expect(spec.combine === "ignored", name).toBe(spec.class === "observer");
  });

  it("classes follow the seed's grouping", () => {
    expect(namesWhere((s) => s.class === "directive")).toEqual([
      "pre_gateway_dispatch",
      "pre_llm_call",
      "pre_tool_call",
      "pre_tts_synthesis",
      "pre_verify",
    ]);
    expect(namesWhere((s) => s.class === "transform")).toEqual([
      "pre_transcription",
      "transform_api_error_classification",
      "transform_llm_output",
      "transform_terminal_output",
      "transform_tool_result",
    ]);
  });

  it("gateway_platform_event is the only hook without telemetry_schema_version", () => {
    expect(namesWhere((s) => !s.telemetry)).toEqual(["gateway_platform_event"]);
  });

  it("every hook has a summary and a duplicate-free payload", () => {
    for (const [name, spec] of entries) {
      expect(spec.summary.length, name).toBeGreaterThan(10);
      expect(spec.payload.length, name).toBeGreaterThan(0);
      expect(new Set(spec.payload).size, name).toBe(spec.payload.length);
    }
    expect(HOOK_CATALOG.pre_tool_call.payload).toContain("middleware_trace");
    expect(HOOK_CATALOG.transform_tool_result.payload).not.toContain("middleware_trace");
  });

  it("recognizes names and suggests the nearest one", () => {
    expect(isHookName("pre_tool_call")).toBe(true);
    expect(isHookName("pre_tool_cal")).toBe(false);
    expect(isHookName("constructor")).toBe(false);
    expect(isHookName("__proto__")).toBe(false);
    expect(suggestHook("pre_tool_cal")).toBe("pre_tool_call");
    expect(suggestHook("on_sesion_start")).toBe("on_session_start");
    expect(suggestHook("zzzzzzzz")).toBeUndefined();
  });
});

describe("middleware kinds", () => {
  it("are the four kinds, each described", () => {
    expect([...MIDDLEWARE_KINDS]).toEqual(["llm_request", "llm_execution", "tool_request", "tool_execution"]);
    expect(Object.keys(MIDDLEWARE_CATALOG).sort()).toEqual([...MIDDLEWARE_KINDS].sort());
    expect(isMiddlewareKind("tool_execution")).toBe(true);
    expect(isMiddlewareKind("api_request")).toBe(false);
    expect(isMiddlewareKind("toString")).toBe(false);
  });

  it("points the original's api_* aliases at the llm_* names", () => {
    expect(suggestMiddlewareKind("api_request")).toBe("llm_request");
    expect(suggestMiddlewareKind("api_execution")).toBe("llm_execution");
  });
});

describe("which hooks fire", () => {
  it("FIRED_HOOKS is exactly the set of hooks a typed dispatcher or the stream queue is called with in src/", () => {
    const folds = "observe|firstString|firstNonEmpty|contexts|directive|firstValid|lastWriterPerField|ttsPolicy";
    const dispatch = new RegExp(String.raw`\.(?:${folds})\(\s*"([a-z_]+)"`, "g");
    const queued = /enqueue\(\s*"([a-z_]+)"/g;
    const fired = new Set<string>();
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".ts")) {
          const text = readFileSync(p, "utf8");
          for (const m of [...text.matchAll(dispatch), ...text.matchAll(queued)]) fired.add(m[1] ?? "");
        }
      }
    };
    walk(join(PACKAGE_ROOT, "src"));
    expect([...fired].sort()).toEqual([...FIRED_HOOKS].sort());
    expect([...FIRED_HOOKS].every((h) => isHookName(h))).toBe(true);
  });
});

describe("every catalog hook fires or says why not", () => {
  const dispatch = (hook: string) =>
    new RegExp(
      String.raw`\.(?:observe|firstString|firstNonEmpty|contexts|directive|firstValid|lastWriterPerField|` +
        String.raw`ttsPolicy)\(\s*"${hook}"` +
        String.raw`|enqueue\(\s*"${hook}"`,
    );

  it("each hook is fired (FIRED_HOOKS) or marked not fired with a reason (NOT_FIRED_HOOKS), never both", () => {
    const marked = Object.keys(NOT_FIRED_HOOKS).sort();
    expect(marked.filter((h) => FIRED_HOOKS.has(h as never))).toEqual([]);
    const neither = HOOK_NAMES.filter((h) => !FIRED_HOOKS.has(h) && !(h in NOT_FIRED_HOOKS));
    expect(neither).toEqual([]);
    for (const reason of Object.values(NOT_FIRED_HOOKS)) expect(reason.length).toBeGreaterThan(20);
  });

  it("each fired hook's documented fire site names files that hold its fire site", () => {
    expect(Object.keys(HOOK_FIRE_SITES).sort()).toEqual([...FIRED_HOOKS].sort());
    for (const [hook, site] of Object.entries(HOOK_FIRE_SITES)) {
      const files = [...(site ?? "").matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => m[1]!);
      expect(files.length, hook).toBeGreaterThan(0);
      const fired = files.filter((f) => dispatch(hook).test(readFileSync(join(PACKAGE_ROOT, f), "utf8")));
      // A site may name the module whose helper the fire site calls (the loop calls interim.ts), but one must fire.
      expect(fired.length, `${hook}: ${files.join(", ")}`).toBeGreaterThan(0);
    }
  });

  it("docs/hooks.md gives each hook its fire site or its reason", () => {
    const doc = readFileSync(join(PACKAGE_ROOT, "docs/hooks.md"), "utf8");
    for (const h of HOOK_NAMES) {
      const row = doc.split("\n").find((l) => l.startsWith(`| \`${h}\` |`)) ?? "";
      const last = row.split(" | ").at(-1) ?? "";
      if (h in NOT_FIRED_HOOKS) expect(last, h).toContain("*Not fired by hermes-kit:*");
      else expect(last, h).toContain("`src/");
    }
  });
});
