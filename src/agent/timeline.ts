import type { TraceEntry } from "../runtime/middleware.js";
import { brief } from "./sanitize.js";

/**
 * What the agent loop reports as it goes: every hook fired and middleware chain run, in order,
 * with the plugins that own them. `hermes demo` and `hermes chat --timeline` print these; they
 * make the call order of hooks and middleware visible.
 */
export type TimelineEvent =
  | { type: "turn_start"; turn: number; turn_id: string; user_message: string }
  | { type: "hook"; name: string; owners: readonly string[]; detail?: string }
  | { type: "middleware"; kind: string; owners: readonly string[]; detail?: string; trace?: readonly TraceEntry[] }
  | {
      type: "llm_attempt";
      api_call_count: number;
      retry_count: number;
      api_request_id: string;
      provider: string;
      model: string;
    }
  | { type: "llm_result"; finish_reason: string | null; tool_calls: readonly string[]; text: string | null }
  | { type: "llm_error"; code: string; message: string; reason: string; retryable: boolean; next: string }
  | { type: "tool_start"; tool_name: string; tool_call_id: string; args: string }
  | { type: "tool_args"; args: unknown; changed: boolean }
  | { type: "approval"; outcome: string; detail: string }
  | { type: "tool_end"; tool_name: string; status: string; duration_ms: number; result: string }
  | {
      type: "turn_end";
      exit_reason: string;
      completed: boolean;
      failed: boolean;
      interrupted: boolean;
      answer: string | null;
    }
  | { type: "note"; text: string };

export type TimelineSink = (ev: TimelineEvent) => void;

function owners(list: readonly string[]): string {
  return list.length ? list.join(" → ") : "(no plugin)";
}

export function traceText(trace: readonly TraceEntry[] | undefined): string {
  if (!trace?.length) return "[]";
  return `[${trace.map((t) => [t.source ?? t.name ?? "plugin", t.reason].filter(Boolean).join(": ")).join("; ")}]`;
}

/**
 * A plain-text renderer: one line per event, nested by scope (turn, model call, tool call).
 * No colour codes, so the output reads the same in a terminal, a pipe and a test.
 */
export class TimelinePrinter {
  private depth = 0;

  constructor(private readonly write: (line: string) => void) {}

  private line(prefix: string, text: string): void {
    this.write(`${"  ".repeat(this.depth)}${prefix}${text}`);
  }

  print = (ev: TimelineEvent): void => {
    switch (ev.type) {
      case "turn_start":
        this.depth = 0;
        this.line("", `turn ${ev.turn} · user: ${brief(ev.user_message, 100)}`);
        this.depth = 1;
        return;
      case "hook":
        this.line("hook        ", `${ev.name.padEnd(34)} ${owners(ev.owners)}${ev.detail ? `  ${ev.detail}` : ""}`);
        return;
      case "middleware":
        this.line(
          "middleware  ",
          `${ev.kind.padEnd(34)} ${owners(ev.owners)}${ev.trace ? `  trace=${traceText(ev.trace)}` : ""}` +
            `${ev.detail ? `  ${ev.detail}` : ""}`,
        );
        return;
      case "llm_attempt":
        this.depth = 1;
        this.line(
          "",
          `model call ${ev.api_call_count}${ev.retry_count ? ` (retry ${ev.retry_count})` : ""} · ` +
            `provider ${ev.provider}, model ${ev.model}`,
        );
        this.depth = 2;
        return;
      case "llm_result":
        this.line(
          "→ ",
          ev.tool_calls.length
            ? `tool call(s): ${ev.tool_calls.join(", ")}`
            : `answer: ${brief(ev.text ?? "", 100)}  (finish_reason ${ev.finish_reason})`,
        );
        this.depth = 1;
        return;
      case "llm_error":
        this.line(
          "✗ ",
          `${ev.code}: ${brief(ev.message, 120)}  reason=${ev.reason} retryable=${ev.retryable} → ${ev.next}`,
        );
        return;
      case "tool_start":
        this.depth = 1;
        this.line("", `tool ${ev.tool_name} (${ev.tool_call_id}) · model args ${brief(ev.args, 100)}`);
        this.depth = 2;
        return;
      case "tool_args":
        this.line(
          "args        ",
          `${brief(ev.args, 120)}${ev.changed ? "  (rewritten by tool_request middleware)" : ""}`,
        );
        return;
      case "approval":
        this.line("approval    ", `${ev.outcome}${ev.detail ? `  ${ev.detail}` : ""}`);
        return;
      case "tool_end":
        this.line("→ ", `${ev.status} in ${ev.duration_ms} ms: ${brief(ev.result, 110)}`);
        this.depth = 1;
        return;
      case "turn_end":
        this.depth = 1;
        this.line(
          "",
          `turn ended: ${ev.exit_reason} (completed=${ev.completed} failed=${ev.failed} interrupted=${ev.interrupted})`,
        );
        this.depth = 0;
        return;
      case "note":
        this.line("· ", ev.text);
        return;
    }
  };
}
