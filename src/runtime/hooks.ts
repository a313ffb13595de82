import { HOOK_CATALOG, type HookName, type HookPayloadOf, type HooksFoldedBy } from "../contracts/hook-catalog.js";
import { safeString } from "../core/safe-string.js";
import { CallbackLists } from "./callback-lists.js";
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
const SUPPRESS_MS = 60_000;
const ABANDONED_CAP = 3;
const TIMED_OUT = Symbol("timed-out");

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

/**
 * Hook registry and dispatch. Callbacks run in registration order
 * (which the loader makes equal to the lock's load order). A promise-returning callback on a
 * bounded or fail-closed hook is raced against the timeout and, if late, abandoned: JavaScript
 * cannot pre-empt a synchronous busy loop, so only asynchronous work is bounded.
 */
export class HookBus {
  private readonly entries = new CallbackLists<HookEntry>();
  /**
   * Timeout bookkeeping keyed by callback identity, never by name: two
   * anonymous callbacks of one plugin are different callbacks. Suppression is per (hook, callback);
   * the running gate per (hook, callback, call identity); the abandoned count per callback.
   */
  private readonly running = new Map<HookCallback, Set<string>>();
  private readonly suppressedUntil = new Map<HookCallback, Map<string, number>>();
  private readonly abandoned = new Map<HookCallback, number>();
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
    this.running.clear();
    this.suppressedUntil.clear();
    this.abandoned.clear();
  }

  private gate(cb: HookCallback, key: string, on: boolean): void {
    let set = this.running.get(cb);
    if (on) {
      if (!set) this.running.set(cb, (set = new Set()));
      set.add(key);
    } else if (set) {
      set.delete(key);
      if (!set.size) this.running.delete(cb);
    }
  }

  /** Race a bounded callback's promise against the timeout; a late call is abandoned, suppressed and counted. */
  private async raceBounded(
    e: HookEntry,
    name: string,
    gateKey: string,
    value: PromiseLike<unknown>,
  ): Promise<unknown> {
    this.gate(e.cb, gateKey, true);
    const pending = Promise.resolve(value);
    let timer: NodeJS.Timeout | undefined;
    const raced = await Promise.race([
      pending,
      new Promise<typeof TIMED_OUT>((r) => {
        timer = setTimeout(() => r(TIMED_OUT), this.timeoutSeconds * 1000);
      }),
    ]).finally(() => clearTimeout(timer));
    if (raced === TIMED_OUT) {
      const sup = this.suppressedUntil.get(e.cb) ?? new Map<string, number>();
      sup.set(name, Date.now() + SUPPRESS_MS);
      this.suppressedUntil.set(e.cb, sup);
      this.abandoned.set(e.cb, (this.abandoned.get(e.cb) ?? 0) + 1);
      // The abandoned call keeps its gate until it settles; then it stops counting.
      pending
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          this.gate(e.cb, gateKey, false);
          this.abandoned.set(e.cb, Math.max(0, (this.abandoned.get(e.cb) ?? 1) - 1));
        });
      this.reporter.notice(
        e.owner,
        `hook ${name} callback ${cbName(e.cb)} timed out after ${this.timeoutSeconds}s — skipping`,
      );
      return TIMED_OUT;
    }
    this.gate(e.cb, gateKey, false);
    return raced;
  }

  /** Run every callback; the list of non-null results (fail-closed blocks appended as directives). */
  async invoke(name: string, payload: HookPayload = {}): Promise<unknown[]> {
    const list = this.entries.snapshot(name);
    if (!list.length) return [];
    const spec = HOOK_CATALOG[name as HookName];
    // Object.assign, not spread: spread copies through V8's slow path here (bench/runtime.bench.mjs).
    const body: HookPayload =
      spec?.telemetry === false || "telemetry_schema_version" in payload
        ? payload
        : Object.assign({}, payload, { telemetry_schema_version: OBSERVER_SCHEMA_VERSION });
    const bounded = this.timeoutSeconds > 0 && (spec?.timeout === "bounded" || spec?.timeout === "fail-closed");
    const failClosed = spec?.timeout === "fail-closed";
    const callId = [body.tool_call_id, body.turn_id].find((x) => typeof x === "string" && x) as string | undefined;
    const results: unknown[] = [];
    const gateKey = bounded ? `${name}\0${callId ?? ""}` : "";
    for (const e of list) {
      const raced = bounded && !e.ownTimeout;
      if (raced) {
        const until = this.suppressedUntil.get(e.cb)?.get(name) ?? 0;
        if (this.running.get(e.cb)?.has(gateKey) || (until > 0 && until > Date.now())) {
          this.reporter.notice(
            e.owner,
            `hook ${name} callback ${cbName(e.cb)} skipped after previous timeout or while still running`,
          );
          if (failClosed) results.push({ action: "block", message: FAIL_CLOSED_TIMEOUT_MESSAGE });
          continue;
        }
        const stuck = this.abandoned.get(e.cb) ?? 0;
        if (stuck >= ABANDONED_CAP) {
          this.reporter.notice(
            e.owner,
            `hook ${name} callback ${cbName(e.cb)} skipped: ${stuck} abandoned call(s) still running — the ` +
              "plugin is hung",
          );
          if (failClosed) results.push({ action: "block", message: FAIL_CLOSED_TIMEOUT_MESSAGE });
          continue;
        }
      }
      try {
        let value = e.cb(body);
        if (isThenable(value)) {
          if (raced) {
            value = await this.raceBounded(e, name, gateKey, value);
            if (value === TIMED_OUT) {
              if (failClosed) results.push({ action: "block", message: FAIL_CLOSED_TIMEOUT_MESSAGE });
              continue;
            }
          } else value = await value;
        }
        if (value !== null && value !== undefined) {
          if (spec?.combine === "directive") {
            const problem = directiveProblem(value);
            if (problem) this.reporter.malformed("Hook", name, e.owner, cbName(e.cb), problem);
          }
          if (spec?.combine === "last-writer-per-field" && typeof value === "object" && "file_path" in value)
            this.reporter.malformed("Hook", name, e.owner, cbName(e.cb), "file_path is read-only; ignored");
          results.push(value);
        }
      } catch (err) {
        if (raced) this.gate(e.cb, gateKey, false);
        this.reporter.report("Hook", name, e.owner, cbName(e.cb), err, Object.keys(body));
        if (failClosed) {
          const ex = err instanceof Error ? err : new Error(String(err));
          results.push({
            action: "block",
            message: `${name} plugin callback ${cbName(e.cb)} raised ${ex.name}: ${ex.message.slice(0, 200)}`,
          });
        }
      }
    }
    return results;
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
