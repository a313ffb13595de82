import { HOOK_CATALOG, type HookName, type HookPayloadOf, type HooksFoldedBy } from "../contracts/hook-catalog.js";
import { safeString } from "../core/safe-string.js";
import { CallbackLists } from "./callback-lists.js";
import { HookTimeouts } from "./hook-timeouts.js";
import type { FailureReporter } from "./reporter.js";

export const OBSERVER_SCHEMA_VERSION = "hermes.observer.v1";

export type HookPayload = Record<string, unknown>;
export type HookCallback = (payload: HookPayload) => unknown;

export interface HookEntry {
  name: string;
  cb: HookCallback;
  owner: string;
  /** Bounds itself (shell hooks' per-entry timeout): never raced against `plugins.hook_callback_timeout`. */
  ownTimeout?: boolean;
}

/** `plugins.hook_callback_timeout`: default 30, 0 disables, negative → default, clamp 600. */
export function normalizeHookTimeout(v: unknown): number {
  if (v === null || v === undefined || typeof v !== "number" || !Number.isFinite(v) || v < 0) return 30;
  return Math.min(v, 600);
}

export const FAIL_CLOSED_TIMEOUT_MESSAGE = "pre_tool_call plugin callback timed out or is still running";
const timeoutBlock = (): { action: "block"; message: string } => ({
  action: "block",
  message: FAIL_CLOSED_TIMEOUT_MESSAGE,
});
const noop = (): void => undefined;

function cbName(cb: HookCallback): string {
  return cb.name || "<anonymous>";
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    v !== null &&
    (typeof v === "object" || typeof v === "function") &&
    typeof (v as { then?: unknown }).then === "function"
  );
}

type HookSpec = (typeof HOOK_CATALOG)[HookName];

/**
 * Hook registry and dispatch. Callbacks run in registration order
 * (which the loader makes equal to the lock's load order), each after the previous one settled. A
 * promise returned on a bounded or fail-closed hook is watched against the timeout (one timer for the
 * whole bus, `hook-timeouts.ts`) and, if late, abandoned: JavaScript cannot pre-empt a synchronous busy
 * loop, so only asynchronous work is bounded.
 */
export class HookBus {
  private readonly entries = new CallbackLists<HookEntry>();
  private readonly timeouts = new HookTimeouts();
  timeoutSeconds = 30;

  constructor(private readonly reporter: FailureReporter) {}

  add(name: string, cb: HookCallback, owner: string, opts: { ownTimeout?: boolean } = {}): () => void {
    return this.entries.add(name, { name, cb, owner, ...(opts.ownTimeout ? { ownTimeout: true } : {}) });
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Owners in callback order, for `hermes plugins chain` and the lock order check. */
  owners(name: string): string[] {
    return this.entries.owners(name);
  }

  names(): string[] {
    return this.entries.names();
  }

  clearTimeoutState(): void {
    this.timeouts.clear();
  }

  /** Run every callback; the list of non-null results (fail-closed blocks appended as directives). */
  invoke(name: string, payload: HookPayload = {}): Promise<unknown[]> {
    const list = this.entries.snapshot(name);
    if (!list.length) return Promise.resolve([]);
    try {
      const spec = HOOK_CATALOG[name as HookName] as HookSpec | undefined;
      // Object.assign, not spread: spread copies through V8's slow path here (bench/runtime.bench.mjs).
      const body: HookPayload =
        spec?.telemetry === false || "telemetry_schema_version" in payload
          ? payload
          : Object.assign({}, payload, { telemetry_schema_version: OBSERVER_SCHEMA_VERSION });
      const bounded = this.timeoutSeconds > 0 && (spec?.timeout === "bounded" || spec?.timeout === "fail-closed");
      const callId =
        typeof body.tool_call_id === "string" && body.tool_call_id
          ? body.tool_call_id
          : typeof body.turn_id === "string" && body.turn_id
            ? body.turn_id
            : "";
      const seconds = bounded ? this.timeoutSeconds : 0;
      const gateKey = bounded ? `${name}\0${callId}` : "";
      return new HookDispatch(name, list, body, spec, seconds, gateKey, this.reporter, this.timeouts).start();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  // ---- typed dispatch: the hook's fold rule is part of its name's type ----

  /** Observers: every callback runs; results are discarded. */
  async observe<H extends HooksFoldedBy<"ignored">>(name: H, payload: HookPayloadOf<H>): Promise<void> {
    if (this.entries.has(name)) await this.invoke(name, payload);
  }

  /** The first string result, "" included, or undefined when no callback returned one. */
  async firstString<H extends HooksFoldedBy<"first-string">>(
    name: H,
    payload: HookPayloadOf<H>,
  ): Promise<string | undefined> {
    return this.entries.has(name) ? firstString(await this.invoke(name, payload)) : undefined;
  }

  /** The first non-empty string result. */
  async firstNonEmpty<H extends HooksFoldedBy<"first-non-empty">>(
    name: H,
    payload: HookPayloadOf<H>,
  ): Promise<string | undefined> {
    return this.entries.has(name) ? firstNonEmpty(await this.invoke(name, payload)) : undefined;
  }

  /** Every non-blank context result in callback order; `joinContexts` joins them. */
  async contexts<H extends HooksFoldedBy<"joined">>(name: H, payload: HookPayloadOf<H>): Promise<string[]> {
    return this.entries.has(name) ? contextParts(await this.invoke(name, payload)) : [];
  }

  /** The resolved tool directive: merged modifications, a block, or the first approve. */
  async directive<H extends HooksFoldedBy<"directive">>(
    name: H,
    payload: HookPayloadOf<H>,
    originalArgs: Record<string, unknown>,
  ): Promise<ToolDirective> {
    return this.entries.has(name) ? resolveToolDirective(await this.invoke(name, payload), originalArgs) : {};
  }

  /** All callbacks run; the first result `validate` accepts wins, and how many later valid ones lost. */
  async firstValid<H extends HooksFoldedBy<"first-valid">, T>(
    name: H,
    payload: HookPayloadOf<H>,
    validate: (r: unknown) => T | undefined,
  ): Promise<FirstValid<T>> {
    return this.entries.has(name) ? firstValid(await this.invoke(name, payload), validate) : { skipped: 0 };
  }

  /** Object results applied in order; later callbacks win per allowed field. */
  async lastWriterPerField<H extends HooksFoldedBy<"last-writer-per-field">>(
    name: H,
    payload: HookPayloadOf<H>,
  ): Promise<TranscriptionFields> {
    return this.entries.has(name) ? lastWriterPerField(await this.invoke(name, payload)) : {};
  }

  /**
   * pre_tts_synthesis: every callback sees the script; a rewrite must pass all callbacks again and come
   * back unchanged, so no text is spoken that some policy has not seen.
   */
  async ttsPolicy<H extends HooksFoldedBy<"tts-policy">>(
    name: H,
    payload: HookPayloadOf<H> & { text: string },
  ): Promise<TtsPolicy> {
    if (!this.entries.has(name)) return { text: payload.text };
    const first = ttsPolicyRound(await this.invoke(name, payload), payload.text);
    if ("blocked" in first || first.text === payload.text) return first;
    const again = ttsPolicyRound(await this.invoke(name, { ...payload, text: first.text }), first.text);
    if ("blocked" in again || again.text === first.text) return again;
    return { blocked: `${name} returned an unstable script (a second rewrite changed it again)` };
  }
}

/**
 * One invoke: walks its snapshot synchronously until a callback returns a promise, and goes on from
 * that promise's settlement (or its deadline). No async function, no race and no timer per callback:
 * one promise reaction per pending callback (bench/runtime.bench.mjs: hook dispatch, 10 async callbacks).
 */
class HookDispatch {
  private i = 0;
  private readonly results: unknown[] = [];
  private resolve: (results: unknown[]) => void = noop;
  private reject: (err: unknown) => void = noop;
  private readonly failClosed: boolean;

  constructor(
    private readonly name: string,
    private readonly list: readonly HookEntry[],
    private readonly body: HookPayload,
    private readonly spec: HookSpec | undefined,
    /** The bound for this dispatch; 0 when the hook is unbounded or the bound disabled. */
    private readonly seconds: number,
    private readonly gateKey: string,
    private readonly reporter: FailureReporter,
    private readonly timeouts: HookTimeouts,
  ) {
    this.failClosed = spec?.timeout === "fail-closed";
  }

  start(): Promise<unknown[]> {
    if (this.walk()) return Promise.resolve(this.results);
    // Settlements and deadlines only ever arrive later, so resolve/reject are set before they run.
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Run callbacks from `i` on; true when all ran, false when one is pending (its settlement resumes). */
  private walk(): boolean {
    const { list, body } = this;
    while (this.i < list.length) {
      const e = list[this.i++]!;
      const raced = this.seconds > 0 && !e.ownTimeout;
      if (raced) {
        const why = this.timeouts.skipReason(e.cb, this.name, this.gateKey);
        if (why !== undefined) {
          this.reporter.notice(e.owner, `hook ${this.name} callback ${cbName(e.cb)} ${why}`);
          if (this.failClosed) this.results.push(timeoutBlock());
          continue;
        }
      }
      let value: unknown;
      let pending: boolean;
      try {
        value = e.cb(body);
        // Inside the try: a `then` getter that throws is the callback's error.
        pending = isThenable(value);
      } catch (err) {
        this.failed(e, err);
        continue;
      }
      if (pending) {
        this.wait(e, raced, value as PromiseLike<unknown>);
        return false;
      }
      this.accept(e, value);
    }
    return true;
  }

  private wait(e: HookEntry, raced: boolean, value: PromiseLike<unknown>): void {
    const pending = Promise.resolve(value);
    if (!raced) {
      pending.then(
        (v) => this.resume(e, v, false),
        (err) => this.resume(e, err, true),
      );
      return;
    }
    const call = this.timeouts.start(e.cb, this.name, this.gateKey, this.seconds * 1000, () => this.expired(e));
    // A settlement after the deadline is abandoned (settle() returns false); the dispatch went on without it.
    pending.then(
      (v) => this.timeouts.settle(call) && this.resume(e, v, false),
      (err) => this.timeouts.settle(call) && this.resume(e, err, true),
    );
  }

  private resume(e: HookEntry, outcome: unknown, threw: boolean): void {
    try {
      if (threw) this.failed(e, outcome);
      else this.accept(e, outcome);
      if (this.walk()) this.resolve(this.results);
    } catch (err) {
      this.reject(err);
    }
  }

  private expired(e: HookEntry): void {
    try {
      this.reporter.notice(
        e.owner,
        `hook ${this.name} callback ${cbName(e.cb)} timed out after ${this.seconds}s — skipping`,
      );
      if (this.failClosed) this.results.push(timeoutBlock());
      if (this.walk()) this.resolve(this.results);
    } catch (err) {
      this.reject(err);
    }
  }

  private accept(e: HookEntry, value: unknown): void {
    if (value === null || value === undefined) return;
    const combine = this.spec?.combine;
    if (combine === "directive") {
      const problem = directiveProblem(value);
      if (problem) this.reporter.malformed("Hook", this.name, e.owner, cbName(e.cb), problem);
    }
    if (combine === "last-writer-per-field" && typeof value === "object" && "file_path" in value)
      this.reporter.malformed("Hook", this.name, e.owner, cbName(e.cb), "file_path is read-only; ignored");
    this.results.push(value);
  }

  private failed(e: HookEntry, err: unknown): void {
    this.reporter.report("Hook", this.name, e.owner, cbName(e.cb), err, Object.keys(this.body));
    if (this.failClosed) {
      const ex = err instanceof Error ? err : new Error(String(err));
      this.results.push({
        action: "block",
        message: `${this.name} plugin callback ${cbName(e.cb)} raised ${ex.name}: ${ex.message.slice(0, 200)}`,
      });
    }
  }
}

// ---- result combination (each hook's `combine` rule) ----

/** transform_tool_result / transform_terminal_output: the first string, "" included. */
export function firstString(results: readonly unknown[]): string | undefined {
  return results.find((r): r is string => typeof r === "string");
}

/** transform_llm_output: the first non-empty string. */
export function firstNonEmpty(results: readonly unknown[]): string | undefined {
  return results.find((r): r is string => typeof r === "string" && r.length > 0);
}

/** pre_llm_call: every `{context}` or non-blank string result, in callback order. */
export function contextParts(results: readonly unknown[]): string[] {
  const parts: string[] = [];
  for (const r of results) {
    const text =
      typeof r === "string" ? r : r && typeof r === "object" ? (r as { context?: unknown }).context : undefined;
    if (typeof text === "string" && text.trim()) parts.push(text);
  }
  return parts;
}

/** The text pre_llm_call contexts add to the user message: joined with a blank line. */
export function joinContexts(parts: readonly string[]): string | undefined {
  return parts.length ? parts.join("\n\n") : undefined;
}

const TRANSCRIPTION_FIELDS = ["prompt", "language", "model"] as const;

/** pre_transcription: later callbacks win per field; only string values of the allowed fields. */
export type TranscriptionFields = Partial<Record<(typeof TRANSCRIPTION_FIELDS)[number], string>>;

/** pre_transcription: later callbacks win per field; only string values of the allowed fields. */
export function lastWriterPerField(results: readonly unknown[]): TranscriptionFields {
  const out: TranscriptionFields = {};
  for (const r of results) {
    if (!r || typeof r !== "object" || Array.isArray(r)) continue;
    for (const f of TRANSCRIPTION_FIELDS) {
      const v = (r as Record<string, unknown>)[f];
      if (typeof v === "string") out[f] = v;
    }
  }
  return out;
}

/** What pre_tts_synthesis decided: the script to speak, or why nothing is spoken. */
export type TtsPolicy = { text: string } | { blocked: string };

/**
 * One pre_tts_synthesis round: a block (`{action: "block", message?}`, nothing else) refuses, exactly
 * `{text}` with non-blank text rewrites (the last one wins), anything else refuses.
 */
export function ttsPolicyRound(results: readonly unknown[], script: string): TtsPolicy {
  let text = script;
  for (const r of results) {
    if (!r || typeof r !== "object" || Array.isArray(r))
      return { blocked: "pre_tts_synthesis returned an invalid directive" };
    const d = r as Record<string, unknown>;
    const keys = Object.keys(d);
    if (d.action === "block" && keys.every((k) => k === "action" || k === "message"))
      return { blocked: d.message ? safeString(d.message) : "TTS synthesis blocked" };
    if (keys.length !== 1 || typeof d.text !== "string" || !d.text.trim())
      return { blocked: "pre_tts_synthesis returned an invalid script or directive" };
    text = d.text;
  }
  return { text };
}

/** transform_api_error_classification, pre_verify, pre_gateway_dispatch: the first result that validates. */
export function firstValid<T>(results: readonly unknown[], validate: (r: unknown) => T | undefined): FirstValid<T> {
  const valid = results.map(validate).filter((v): v is T => v !== undefined);
  return valid.length ? { value: valid[0], skipped: valid.length - 1 } : { skipped: 0 };
}

/** The winner of a first-valid fold, and how many later valid results lost to it. */
export interface FirstValid<T> {
  value?: T;
  skipped: number;
}

export interface ToolDirective {
  action?: "block" | "approve";
  message?: string | null;
  rule_key?: string | null;
  modified_args?: Record<string, unknown>;
}

function describeValue(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `a ${typeof v}`;
}

/**
 * Why a pre_tool_call result is not a directive that resolveToolDirective acts on (undefined when it
 * is one). Such results are ignored, as the original does; the dispatcher names the callback once.
 */
export function directiveProblem(r: unknown): string | undefined {
  if (!r || typeof r !== "object" || Array.isArray(r))
    return (
      'expected a directive object ({action: "block" | "approve" | "modify", …}), ' + `got ${describeValue(r)}; ignored`
    );
  const d = r as Record<string, unknown>;
  if (d.action === "modify") {
    const a = d.args;
    return a && typeof a === "object" && !Array.isArray(a) && Object.keys(a).length
      ? undefined
      : "action 'modify' needs a non-empty args object; ignored";
  }
  if (d.action === "block")
    return typeof d.message === "string" && d.message.trim()
      ? undefined
      : "action 'block' needs a non-empty message; ignored (the call is not blocked by it)";
  if (d.action === "approve") return undefined;
  return (
    "unknown action " +
    `${d.action === undefined ? "(none)" : typeof d.action === "string" ? JSON.stringify(d.action) : ""}` +
    `${d.action !== undefined && typeof d.action !== "string" ? describeValue(d.action) : ""}` +
    " (expected block, approve or modify); ignored"
  );
}

/**
 * pre_tool_call resolution: modify merges shallowly in order; a block needs a
 * non-empty message and wins at once over any approve; otherwise the first valid approve goes to
 * the approval gate; else only the merged args.
 */
export function resolveToolDirective(
  results: readonly unknown[],
  originalArgs: Record<string, unknown>,
): ToolDirective {
  let modified: Record<string, unknown> | undefined;
  let approve: { message: string | null; rule_key: string | null } | undefined;
  for (const r of results) {
    if (!r || typeof r !== "object" || Array.isArray(r)) continue;
    const d = r as Record<string, unknown>;
    if (d.action === "modify") {
      const args = d.args;
      if (args && typeof args === "object" && !Array.isArray(args) && Object.keys(args).length)
        modified = { ...(modified ?? originalArgs), ...(args as Record<string, unknown>) };
      continue;
    }
    if (d.action === "block") {
      if (typeof d.message === "string" && d.message.trim())
        return { action: "block", message: d.message, ...(modified ? { modified_args: modified } : {}) };
      continue;
    }
    if (d.action === "approve" && !approve) {
      approve = {
        message: typeof d.message === "string" && d.message ? d.message : null,
        rule_key: typeof d.rule_key === "string" && d.rule_key.trim() ? d.rule_key.trim() : null,
      };
    }
  }
  if (approve) return { action: "approve", ...approve, ...(modified ? { modified_args: modified } : {}) };
  return modified ? { modified_args: modified } : {};
}
