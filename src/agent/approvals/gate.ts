import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { writeFileAtomic } from "../../core/atomic-fs.js";
import type { ErrorCode } from "../../core/errors.js";
import type { SlotMap } from "../../runtime/ledger.js";
import type { ApprovalTransportEntry } from "../../runtime/registries.js";
import type { HookSite } from "../hook-site.js";
import type { Session } from "../session.js";
import type { TimelineSink } from "../timeline.js";
import type { ApprovalPrompter } from "./prompt.js";
import { createApprovalRequest, redactCommandText, type ApprovalRequest } from "./request.js";
import { invokeApprovalTransport, type TransportResult } from "./transport.js";

export interface ApprovalAsk {
  command: string;
  description: string;
  pattern_key: string;
  pattern_keys: readonly string[];
  tool_name: string;
  turn_id: string | null;
  tool_call_id: string;
  session: Session;
  signal: AbortSignal;
}

export interface ApprovalOutcome {
  approved: boolean;
  /** once / session / always / deny / timeout / cancelled / transport_<failure>, or how it was pre-approved. */
  choice: string;
  decided_by: string;
  /** For the model when denied. */
  message?: string;
  code?: ErrorCode;
}

export interface ApprovalSettings {
  mode: "manual" | "off";
  timeoutSeconds: number;
  allowPermanent: boolean;
  transport: string;
  fallbackToBuiltin: boolean;
  /** `approvals.deny`: globs of terminal commands refused before any approval (deny-rules.ts). */
  deny: string[];
}

function lowerTrim(v: unknown): string | undefined {
  return typeof v === "string" ? v.trim().toLowerCase() : undefined;
}

/** `approvals.*` and `security.approval.*`; only the exact value `builtin` enables the fallback prompt. */
export function approvalSettings(config: Record<string, unknown>): ApprovalSettings {
  const a = (config.approvals ?? {}) as Record<string, unknown>;
  const sec = ((config.security ?? {}) as Record<string, unknown>).approval as Record<string, unknown> | undefined;
  const mode = a.mode === false || lowerTrim(a.mode) === "off" ? "off" : "manual";
  const timeout = typeof a.timeout === "number" && Number.isFinite(a.timeout) && a.timeout >= 0 ? a.timeout : 300;
  return {
    mode,
    timeoutSeconds: timeout,
    allowPermanent: a.allow_permanent !== false,
    transport: lowerTrim(sec?.transport) || "builtin",
    fallbackToBuiltin: lowerTrim(sec?.transport_fallback) === "builtin",
    deny: Array.isArray(a.deny) ? a.deny.filter((r): r is string => typeof r === "string" && r !== "") : [],
  };
}

/** Pattern keys a person approved "always", kept in `<home>/approvals.json`. */
export class PermanentApprovals {
  private readonly keys = new Set<string>();
  private readonly file: string;

  constructor(home: string) {
    this.file = join(home, "approvals.json");
    try {
      const doc = JSON.parse(readFileSync(this.file, "utf8")) as { always?: unknown };
      if (Array.isArray(doc.always)) for (const k of doc.always) if (typeof k === "string") this.keys.add(k);
    } catch {
      /* none yet */
    }
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  async add(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.keys.add(k);
    await writeFileAtomic(this.file, `${JSON.stringify({ always: [...this.keys].sort() }, null, 2)}\n`, {
      mode: 0o600,
    });
  }
}

const TRANSPORT_BLOCKED = (failure: string) =>
  `BLOCKED: Selected approval transport failed (${failure}); the user has NOT consented to this action. Do ` +
  "NOT retry this command or attempt the same outcome through another route.";

/**
 * The approval gate: pre-approved keys (session, always) pass without asking;
 * otherwise the selected transport is asked, or the built-in prompt; without a terminal the
 * built-in prompt denies at once and never waits. Every question fires pre_approval_request and
 * post_approval_response.
 */
export class ApprovalGate {
  constructor(
    private readonly deps: {
      home: string;
      config: () => Record<string, unknown>;
      transports: SlotMap<ApprovalTransportEntry>;
      hooks: HookSite;
      prompter?: ApprovalPrompter;
      emit: TimelineSink;
      log: Logger;
      /** The built-in prompt's surface: `cli`, or `gateway` in hermes serve. */
      surface?: string;
      permanent: PermanentApprovals;
    },
  ) {}

  settings(): ApprovalSettings {
    return approvalSettings(this.deps.config());
  }

  /** The live config the gate reads; the guardrails name the terminal backend from it. */
  config(): Record<string, unknown> {
    return this.deps.config();
  }

  async request(ask: ApprovalAsk): Promise<ApprovalOutcome> {
    const s = this.settings();
    const keys = ask.pattern_keys.length ? ask.pattern_keys : [ask.pattern_key];
    if (s.mode === "off") return this.done(ask, { approved: true, choice: "once", decided_by: "approvals.mode=off" });
    if (keys.every((k) => ask.session.sessionApprovals.has(k)))
      return this.done(ask, { approved: true, choice: "session", decided_by: "approved earlier in this session" });
    if (keys.every((k) => this.deps.permanent.has(k)))
      return this.done(ask, { approved: true, choice: "always", decided_by: "approved always" });
    if (s.transport !== "builtin") {
      const r = await this.viaTransport(s, ask);
      if (!r.failure) return this.apply(ask, r.choice, `transport:${s.transport}`);
      if (s.fallbackToBuiltin && r.failure !== "error_construct") {
        this.deps.log.warn(
          { code: "E_APPROVAL_TRANSPORT" },
          `approval transport '${s.transport}' failed (${r.failure}${r.detail ? `: ${r.detail}` : ""}); ` +
            "falling back to the built-in prompt (transport_fallback: builtin)",
        );
      } else {
        this.deps.log.warn(
          { code: "E_APPROVAL_TRANSPORT" },
          `approval transport '${s.transport}' failed (${r.failure}${r.detail ? `: ${r.detail}` : ""}); ` +
            `denied: ${ask.description}`,
        );
        const failure = r.failure === "error_construct" ? "error" : r.failure;
        return this.done(ask, {
          approved: false,
          choice: `transport_${failure}`,
          decided_by: `transport:${s.transport}`,
          message: TRANSPORT_BLOCKED(failure),
          code: "E_APPROVAL_TRANSPORT",
        });
      }
    }
    return this.builtin(s, ask);
  }

  private async viaTransport(
    s: ApprovalSettings,
    ask: ApprovalAsk,
  ): Promise<Omit<TransportResult, "failure"> & { failure: TransportResult["failure"] | "error_construct" }> {
    const entry = this.deps.transports.get(s.transport);
    // The surface is where the person is (cli, gateway); decided_by names the transport that asked.
    const base = this.observerPayload(ask, this.deps.surface ?? "cli");
    if (!entry || entry.profile_home !== this.deps.home) {
      const result = {
        choice: "deny",
        failure: "unavailable" as const,
        detail: `no approval transport named '${s.transport}' is registered in this profile`,
      };
      await this.deps.hooks.observe("post_approval_response", {
        ...base,
        request_id: null,
        request_digest: null,
        choice: "transport_unavailable",
        decided_by: `transport:${s.transport}`,
      });
      this.deps.emit({ type: "approval", outcome: "transport_unavailable", detail: result.detail });
      return result;
    }
    let request: ApprovalRequest;
    try {
      request = createApprovalRequest({
        command: redactCommandText(ask.command),
        description: redactCommandText(ask.description),
        pattern_key: ask.pattern_key,
        pattern_keys: ask.pattern_keys,
        session_key: ask.session.key,
        surface: this.deps.surface ?? "cli",
        allow_session: true,
        allow_permanent: s.allowPermanent,
        timeout_seconds: s.timeoutSeconds,
      });
    } catch (e) {
      // Construction failed: deny, and never fall back (the plugin is never shown raw text).
      return { choice: "deny", failure: "error_construct", detail: (e as Error).message };
    }
    const ids = { request_id: request.request_id, request_digest: request.digest };
    await this.deps.hooks.observe("pre_approval_request", {
      ...base,
      command: request.command,
      description: request.description,
      ...ids,
    });
    const r = await invokeApprovalTransport(entry.present as (req: ApprovalRequest) => unknown, request, {
      timeout_seconds: s.timeoutSeconds,
      signal: ask.signal,
    });
    const choice = r.failure ? `transport_${r.failure}` : r.choice;
    await this.deps.hooks.observe(
      "post_approval_response",
      {
        ...base,
        command: request.command,
        description: request.description,
        ...ids,
        choice,
        decided_by: `transport:${s.transport}`,
      },
      `choice=${choice}`,
    );
    this.deps.emit({
      type: "approval",
      outcome: choice,
      detail: `transport ${s.transport}${r.detail ? `: ${r.detail}` : ""}`,
    });
    return r;
  }

  private async builtin(s: ApprovalSettings, ask: ApprovalAsk): Promise<ApprovalOutcome> {
    const base = this.observerPayload(ask, this.deps.surface ?? "cli");
    await this.deps.hooks.observe("pre_approval_request", base);
    let choice: string;
    let decided_by = "user";
    const choices = ["once", "session", ...(s.allowPermanent ? ["always"] : []), "deny"];
    if (!this.deps.prompter) {
      choice = "deny";
      decided_by = "no_tty";
    } else {
      choice = await this.deps.prompter.ask(
        `⚠ approval needed (${ask.tool_name}: ${ask.description})\n    ${ask.command}`,
        choices,
        {
          signal: ask.signal,
          timeoutMs: s.timeoutSeconds * 1000,
          action: {
            command: redactCommandText(ask.command),
            description: redactCommandText(ask.description),
            pattern_key: ask.pattern_key,
            pattern_keys: ask.pattern_keys,
            session_key: ask.session.key,
          },
        },
      );
    }
    await this.deps.hooks.observe("post_approval_response", { ...base, choice, decided_by }, `choice=${choice}`);
    if (decided_by === "no_tty") {
      this.deps.log.warn(
        { code: "E_APPROVAL_DENIED" },
        `denied without asking: no terminal to ask for approval of '${ask.command}' (${ask.description})`,
      );
      return this.done(ask, {
        approved: false,
        choice,
        decided_by,
        message:
          `BLOCKED: this action needs a person's approval (${ask.description}) and nobody can be asked in this ` +
          "session (no terminal). It was not run. Do NOT retry it or reach the same outcome another way.",
        code: "E_APPROVAL_DENIED",
      });
    }
    return this.apply(ask, choice, decided_by);
  }

  private async apply(ask: ApprovalAsk, choice: string, decided_by: string): Promise<ApprovalOutcome> {
    const keys = ask.pattern_keys.length ? ask.pattern_keys : [ask.pattern_key];
    if (choice === "once") return this.done(ask, { approved: true, choice, decided_by });
    if (choice === "session" || choice === "always") {
      for (const k of keys) ask.session.sessionApprovals.add(k);
      if (choice === "always")
        await this.deps.permanent
          .add(keys)
          .catch((e) => this.deps.log.warn(`could not save the "always" approval: ${(e as Error).message}`));
      return this.done(ask, { approved: true, choice, decided_by });
    }
    this.deps.log.warn(
      { code: "E_APPROVAL_DENIED" },
      `not approved (${choice}): '${ask.command}' (${ask.description})`,
    );
    return this.done(ask, {
      approved: false,
      choice,
      decided_by,
      message:
        `BLOCKED: the user did not approve this action (${ask.description}; answer: ${choice}). It was not ` +
        "run. Do NOT retry it or reach the same outcome another way.",
      code: "E_APPROVAL_DENIED",
    });
  }

  private done(ask: ApprovalAsk, o: ApprovalOutcome): ApprovalOutcome {
    if (o.decided_by !== "user" && o.decided_by !== "no_tty" && !o.decided_by.startsWith("transport:"))
      this.deps.emit({ type: "approval", outcome: o.approved ? "approved" : "denied", detail: o.decided_by });
    else if (o.decided_by === "user" || o.decided_by === "no_tty")
      this.deps.emit({ type: "approval", outcome: o.choice, detail: `${o.decided_by}: ${ask.description}` });
    return o;
  }

  private observerPayload(ask: ApprovalAsk, surface: string): Record<string, unknown> {
    return {
      command: ask.command,
      description: ask.description,
      pattern_key: ask.pattern_key,
      pattern_keys: [...ask.pattern_keys],
      session_key: ask.session.key,
      surface,
      turn_id: ask.turn_id,
      tool_call_id: ask.tool_call_id,
    };
  }
}
