import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { HookSite } from "./hook-site.js";
import type { ToolCallOutcome } from "./tool-call.js";

/** `agent.max_verify_nudges` of config.yaml: how many pre_verify nudges one turn may take (default 3). */
export function maxVerifyNudges(config: Record<string, unknown>): number {
  const a = (config.agent ?? {}) as Record<string, unknown>;
  const v = a.max_verify_nudges;
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 3;
}

/** The files the turn's successful `write_file` calls wrote, sorted and without repeats. */
export function changedPaths(calls: readonly ToolCallOutcome[]): string[] {
  const paths = calls
    .filter((c) => c.tool_name === "write_file" && c.status === "success" && typeof c.args.path === "string")
    .map((c) => resolve(c.args.path as string));
  return [...new Set(paths)].sort();
}

/** Whether `dir` is inside a git work tree: the kit's stand-in for the original's coding posture. */
export function inCodeWorkspace(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return true;
    if (dirname(d) === d) return false;
  }
}

/** A continue directive's message: `{action|decision: "continue"|"block", message|reason: text}`. */
export function verifyDirective(r: unknown): string | undefined {
  if (!r || typeof r !== "object" || Array.isArray(r)) return undefined;
  const o = r as Record<string, unknown>;
  const action = o.action ?? o.decision;
  if (typeof action !== "string" || !["continue", "block"].includes(action.trim().toLowerCase())) return undefined;
  const message = o.message ?? o.reason;
  return typeof message === "string" && message.trim() ? message.trim() : undefined;
}

export interface VerifyInfo {
  session_id: string;
  platform: string;
  model: string;
}

/**
 * pre_verify, once per would-be final answer of a turn that edited files: the first valid continue
 * directive is sent back as a user message and the loop goes on, at most `max` times per turn.
 */
export class VerifyGate {
  private attempt = 0;

  constructor(
    private readonly hooks: HookSite,
    private readonly max: number,
  ) {}

  /** The nudge to send, or undefined to let the turn finish with `answer`. */
  async nudge(answer: string, calls: readonly ToolCallOutcome[], info: VerifyInfo): Promise<string | undefined> {
    if (this.attempt >= this.max || !this.hooks.has("pre_verify")) return undefined;
    const changed = changedPaths(calls);
    if (!changed.length) return undefined;
    const r = await this.hooks.firstValid(
      "pre_verify",
      {
        ...info,
        coding: inCodeWorkspace(process.cwd()),
        attempt: this.attempt,
        final_response: answer,
        changed_paths: changed,
      },
      verifyDirective,
    );
    if (r.value === undefined) return undefined;
    this.attempt++;
    return r.value;
  }
}
