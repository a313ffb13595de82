import { randomBytes } from "node:crypto";
import type { TurnResult } from "../agent/agent.js";
import type { ApprovalPrompter, PromptOptions } from "../agent/approvals/prompt.js";
import { createApprovalRequest, type ApprovalRequest } from "../agent/approvals/request.js";
import type { TimelineEvent } from "../agent/timeline.js";

export type RunStatus =
  | "queued"
  | "running"
  | "waiting_for_approval"
  | "stopping"
  | "completed"
  | "failed"
  | "cancelled";

const FINISHED: ReadonlySet<RunStatus> = new Set(["completed", "failed", "cancelled"]);

/** One event of a run as GET /v1/runs/{id}/events sends it: `event` names it, the rest is its data. */
export interface RunEvent {
  event: string;
  run_id: string;
  seq: number;
  timestamp: number;
  [field: string]: unknown;
}

/** Why an approval answer was not taken (HTTP 409 or 400). */
export class ApprovalAnswerError extends Error {
  constructor(
    readonly code: "approval_not_pending" | "approval_mismatch" | "invalid_approval_choice",
    message: string,
  ) {
    super(message);
  }
}

/** Events a run keeps for late readers; older ones are dropped (a reader sees `events_dropped`). */
const MAX_EVENTS = 10_000;

/**
 * One agent turn started through the API (POST /v1/runs, and every chat completion): its status,
 * its events for readers that come and go, its pending approval, and how to stop it.
 */
export class Run {
  readonly run_id = `run_${randomBytes(16).toString("hex")}`;
  readonly created_at = Date.now() / 1000;
  updated_at = this.created_at;
  status: RunStatus = "queued";
  result: TurnResult | undefined;
  error: string | undefined;
  private readonly events: RunEvent[] = [];
  private dropped = 0;
  private seq = 0;
  private readonly listeners = new Set<(ev: RunEvent) => void>();
  private pending: { request: ApprovalRequest; resolve: (choice: string) => void } | undefined;
  private interrupt: ((reason: string) => boolean) | undefined;
  /** Why the turn was asked to stop (POST /stop, service stop), for agent_loop_stopped. */
  stopReason: string | undefined;
  private settle!: () => void;
  /** Resolves when the run has finished. */
  readonly done = new Promise<void>((r) => (this.settle = r));

  constructor(
    readonly session_id: string,
    readonly model: string,
  ) {}

  get finished(): boolean {
    return FINISHED.has(this.status);
  }

  push(event: string, data: Record<string, unknown> = {}): void {
    const ev: RunEvent = { ...data, event, run_id: this.run_id, seq: ++this.seq, timestamp: Date.now() / 1000 };
    this.events.push(ev);
    if (this.events.length > MAX_EVENTS) {
      this.events.shift();
      this.dropped++;
    }
    this.updated_at = ev.timestamp;
    for (const l of this.listeners) l(ev);
  }

  /** Events after `afterSeq`, then every new one until the run ends; returns the unsubscribe. */
  subscribe(listener: (ev: RunEvent) => void, afterSeq = 0): { backlog: RunEvent[]; dropped: number; off(): void } {
    this.listeners.add(listener);
    return {
      backlog: this.events.filter((e) => e.seq > afterSeq),
      dropped: this.dropped,
      off: () => this.listeners.delete(listener),
    };
  }

  setStatus(status: RunStatus): void {
    if (this.finished) return;
    this.status = status;
    this.updated_at = Date.now() / 1000;
  }

  /** The timeline of the turn, as `hermes chat --timeline` prints it, plus the original's event names. */
  readonly timeline = (ev: TimelineEvent): void => {
    if (ev.type === "tool_start")
      this.push("tool.started", { tool: ev.tool_name, tool_call_id: ev.tool_call_id, preview: ev.args });
    else if (ev.type === "tool_end")
      this.push("tool.completed", {
        tool: ev.tool_name,
        duration: Math.round(ev.duration_ms) / 1000,
        error: ev.status !== "success",
        status: ev.status,
      });
    const { type, ...fields } = ev;
    this.push(`timeline.${type}`, fields);
  };

  /** While the turn runs: how to interrupt it (POST /stop). */
  bindInterrupt(fn: ((reason: string) => boolean) | undefined): void {
    this.interrupt = fn;
  }

  /** Interrupt the turn like Ctrl-C: false when it is not running. */
  stop(reason = "stop requested via the API"): boolean {
    if (this.finished) return false;
    this.stopReason = reason;
    this.setStatus("stopping");
    this.pending?.resolve("cancelled");
    return this.interrupt?.(reason) ?? true;
  }

  finish(result: TurnResult | undefined, error?: string): void {
    if (this.finished) return;
    this.result = result;
    this.error = error ?? result?.error?.message;
    this.status =
      result?.completed === true
        ? "completed"
        : result?.interrupted || this.status === "stopping"
          ? "cancelled"
          : "failed";
    if (this.status === "completed") this.push("run.completed", { output: result?.answer ?? "" });
    else if (this.status === "cancelled") this.push("run.cancelled", { reason: this.error ?? "stopped" });
    else this.push("run.failed", { error: this.error ?? "the turn failed", code: result?.error?.code ?? null });
    this.interrupt = undefined;
    this.settle();
  }

  get pendingApproval(): ApprovalRequest | undefined {
    return this.pending?.request;
  }

  /** Ask through the runs API: an approval.request event, answered by POST /approval, or the timeout. */
  async ask(choices: readonly string[], opts: PromptOptions): Promise<string> {
    const a = opts.action;
    const request = createApprovalRequest({
      command: a?.command ?? "",
      description: a?.description ?? "",
      pattern_key: a?.pattern_key ?? "",
      pattern_keys: a?.pattern_keys ?? [],
      session_key: a?.session_key ?? this.session_id,
      surface: "gateway",
      allow_session: choices.includes("session"),
      allow_permanent: choices.includes("always"),
      timeout_seconds: opts.timeoutMs / 1000,
    });
    const previous = this.status;
    this.setStatus("waiting_for_approval");
    const answer = new Promise<string>((resolve) => (this.pending = { request, resolve }));
    this.push("approval.request", {
      request_id: request.request_id,
      digest: request.digest,
      command: request.command,
      description: request.description,
      pattern_keys: request.pattern_keys,
      choices: request.allowed_choices,
      timeout_seconds: request.timeout_seconds,
    });
    const timer = setTimeout(() => this.pending?.resolve("timeout"), Math.max(1, opts.timeoutMs));
    const onAbort = () => this.pending?.resolve("cancelled");
    opts.signal.addEventListener("abort", onAbort, { once: true });
    try {
      const choice = await answer;
      this.push("approval.responded", { request_id: request.request_id, choice });
      return choice;
    } finally {
      clearTimeout(timer);
      opts.signal.removeEventListener("abort", onAbort);
      this.pending = undefined;
      if (this.status === "waiting_for_approval") this.setStatus(previous);
    }
  }

  /** POST /v1/runs/{id}/approval: the answer must name the request it answers (id and digest). */
  answer(body: { request_id: string; digest: string; choice: string }): string {
    const p = this.pending;
    if (!p) throw new ApprovalAnswerError("approval_not_pending", `run ${this.run_id} is not waiting for an approval`);
    if (body.request_id !== p.request.request_id || body.digest !== p.request.digest)
      throw new ApprovalAnswerError(
        "approval_mismatch",
        `the answer names request ${body.request_id}, but the pending request is ${p.request.request_id} (with its ` +
          "digest): answer the request the approval.request event shows",
      );
    const choice = normalizeChoice(body.choice);
    if (!choice || !p.request.allowed_choices.includes(choice))
      throw new ApprovalAnswerError(
        "invalid_approval_choice",
        `choice must be one of ${p.request.allowed_choices.join(", ")} (got ${JSON.stringify(body.choice)})`,
      );
    p.resolve(choice);
    return choice;
  }

  /** GET /v1/runs/{id}. */
  toJSON(): Record<string, unknown> {
    return {
      object: "hermes.run",
      run_id: this.run_id,
      status: this.status,
      session_id: this.session_id,
      model: this.model,
      created_at: this.created_at,
      updated_at: this.updated_at,
      ...(this.result?.answer != null ? { output: this.result.answer } : {}),
      ...(this.error ? { error: this.error } : {}),
      ...(this.pending
        ? {
            pending_approval: {
              request_id: this.pending.request.request_id,
              digest: this.pending.request.digest,
              command: this.pending.request.command,
              choices: this.pending.request.allowed_choices,
            },
          }
        : {}),
    };
  }
}

function normalizeChoice(v: string): string | undefined {
  const c = String(v).trim().toLowerCase();
  if (c === "approve" || c === "approved" || c === "allow") return "once";
  return ["once", "session", "always", "deny"].includes(c) ? c : undefined;
}

/** The built-in approval prompt of one run. */
export function runPrompter(run: Run): ApprovalPrompter {
  return { ask: (_question, choices, opts) => run.ask(choices, opts) };
}

/** Runs by id; finished ones are kept for an hour (and at most `maxKept`) for late readers. */
export class RunRegistry {
  private readonly runs = new Map<string, Run>();
  private readonly running = new Set<Run>();
  private lastPrune = 0;

  constructor(
    private readonly keepSeconds = 3600,
    private readonly maxKept = 1000,
    private readonly slack = 100,
  ) {}

  add(run: Run): Run {
    // Pruning walks every kept run: at most once a second, or when `slack` runs over the cap.
    const now = Date.now();
    if (now - this.lastPrune > 1000 || this.runs.size > this.maxKept + this.slack) this.prune(now / 1000);
    this.runs.set(run.run_id, run);
    this.running.add(run);
    void run.done.then(() => this.running.delete(run));
    return run;
  }

  get(id: string): Run | undefined {
    return this.runs.get(id);
  }

  /** Runs not finished yet. */
  active(): Run[] {
    return [...this.running];
  }

  /** Whether a run of this session has not finished. */
  busy(sessionId: string): boolean {
    for (const r of this.running) if (r.session_id === sessionId) return true;
    return false;
  }

  private prune(now: number): void {
    this.lastPrune = now * 1000;
    const finished = [...this.runs.values()].filter((r) => r.finished).sort((a, b) => a.updated_at - b.updated_at);
    let excess = finished.length - this.maxKept;
    for (const r of finished) {
      if (excess <= 0 && now - r.updated_at <= this.keepSeconds) break;
      this.runs.delete(r.run_id);
      excess--;
    }
  }
}
