import type { MiddlewareKind } from "./hook-catalog.js";
import { OBSERVER_SCHEMA_VERSION } from "./hooks.js";
import type { FailureReporter } from "./reporter.js";

export const MIDDLEWARE_SCHEMA_VERSION = "hermes.middleware.v1";

export type MiddlewareCallback = (kwargs: Record<string, unknown>) => unknown;

export interface MiddlewareEntry {
  kind: string;
  cb: MiddlewareCallback;
  owner: string;
  /** A required plugin's middleware fails the call instead of being skipped (DESIGN.md deviation 2). */
  required: boolean;
}

export interface TraceEntry {
  source?: string;
  reason?: string;
  name?: string;
}

export interface RequestResult<T> {
  payload: T;
  original_payload: T;
  changed: boolean;
  trace: TraceEntry[];
}

/** Raised when a required plugin's middleware fails; the call fails with it. */
export class RequiredMiddlewareError extends Error {
  constructor(
    readonly kind: string,
    readonly plugin: string,
    readonly causeError: unknown,
  ) {
    super(`required plugin ${plugin}: ${kind} middleware failed: ${causeError instanceof Error ? causeError.message : String(causeError)}`);
    this.name = "RequiredMiddlewareError";
  }
}

function copy<T>(v: T): T {
  try {
    return structuredClone(v);
  } catch {
    return v && typeof v === "object" && !Array.isArray(v) ? ({ ...(v as object) } as T) : v;
  }
}

function cbName(cb: MiddlewareCallback): string {
  return cb.name || "<anonymous>";
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The four middleware chains (runtime spec §6). Request middleware is chained: each callback
 * sees the payload as rewritten by the ones before it (DESIGN.md deviation 1; the original fans
 * out and keeps the last writer). Execution middleware nests in registration order around the
 * real call, with a single-use `next_call`.
 */
export class MiddlewareEngine {
  private readonly chains = new Map<string, MiddlewareEntry[]>();

  constructor(private readonly reporter: FailureReporter) {}

  add(entry: MiddlewareEntry): () => void {
    const list = this.chains.get(entry.kind) ?? [];
    list.push(entry);
    this.chains.set(entry.kind, list);
    return () => {
      const cur = this.chains.get(entry.kind);
      const i = cur ? cur.lastIndexOf(entry) : -1;
      if (i >= 0) cur!.splice(i, 1);
    };
  }

  has(kind: MiddlewareKind): boolean {
    return (this.chains.get(kind)?.length ?? 0) > 0;
  }

  owners(kind: string): string[] {
    return (this.chains.get(kind) ?? []).map((e) => e.owner);
  }

  kinds(): string[] {
    return [...this.chains.keys()].filter((k) => (this.chains.get(k)?.length ?? 0) > 0).sort();
  }

  /**
   * `llm_request` (payload key `request`) or `tool_request` (payload key `args`). With no callbacks
   * the input comes back as is, uncopied: the no-middleware path costs nothing.
   */
  async applyRequest<T>(kind: "llm_request" | "tool_request", input: T, context: Record<string, unknown> = {}): Promise<RequestResult<T>> {
    const list = this.chains.get(kind);
    if (!list?.length) return { payload: input, original_payload: input, changed: false, trace: [] };
    const key = kind === "llm_request" ? "request" : "args";
    const originalKey = kind === "llm_request" ? "original_request" : "original_args";
    const original = copy(input);
    let current = copy(original);
    const trace: TraceEntry[] = [];
    for (const e of [...list]) {
      const kwargs = {
        telemetry_schema_version: OBSERVER_SCHEMA_VERSION,
        middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
        ...context,
        [key]: copy(current),
        [originalKey]: copy(original),
      };
      let result: unknown;
      try {
        result = await e.cb(kwargs);
      } catch (err) {
        if (e.required) throw new RequiredMiddlewareError(kind, e.owner, err);
        this.reporter.report("Middleware", kind, e.owner, cbName(e.cb), err, Object.keys(kwargs));
        continue;
      }
      if (!isMapping(result) || !isMapping(result[key])) continue;
      current = copy(result[key] as T);
      const entry: TraceEntry = {};
      for (const f of ["source", "reason", "name"] as const) if (typeof result[f] === "string" && result[f]) entry[f] = result[f] as string;
      trace.push(Object.keys(entry).length ? entry : { source: "plugin" });
    }
    return { payload: current, original_payload: original, changed: trace.length > 0, trace };
  }

  /**
   * `llm_execution` (payload key `request`) or `tool_execution` (key `args`, plus `tool_name`)
   * around `terminal`. Frame rules (runtime spec §6.3): a throw before `next_call` skips the frame
   * (fail open) unless its plugin is required; a throw after a successful `next_call` keeps the
   * downstream result (the call never runs twice); a downstream error propagates unchanged unless
   * the frame translates it; a frame that never calls `next_call` short-circuits.
   */
  async runExecution<T, R>(
    kind: "llm_execution" | "tool_execution",
    payload: T,
    terminal: (payload: T) => R | Promise<R>,
    context: Record<string, unknown> = {},
  ): Promise<R> {
    const list = this.chains.get(kind);
    if (!list?.length) return terminal(payload);
    const chain = [...list];
    const key = kind === "llm_execution" ? "request" : "args";
    const originalKey = kind === "llm_execution" ? "original_request" : "original_args";
    const original = originalKey in context ? context[originalKey] : payload;
    const callAt = async (i: number, p: T): Promise<R> => {
      if (i >= chain.length) return terminal(p);
      const e = chain[i]!;
      // Written inside next_call; read after the callback settles (TypeScript cannot see that).
      const frame: { state: "idle" | "ok" | "failed" } = { state: "idle" };
      let downstream: R | undefined;
      // Not async: a second call throws synchronously (as the original's does), so a frame that
      // calls it again without awaiting cannot leave an unhandled rejection behind.
      const next_call = (nextPayload?: T): Promise<R> => {
        if (frame.state !== "idle") {
          throw new Error(`Middleware '${kind}' callback ${cbName(e.cb)} called next_call() more than once; downstream execution is single-use`);
        }
        // Until it succeeds, a throw from here on is the downstream's (or the frame's translation).
        frame.state = "failed";
        const run = (async () => {
          downstream = await callAt(i + 1, nextPayload ?? p);
          frame.state = "ok";
          return downstream;
        })();
        // A frame that drops the promise (never awaits it) must not crash the process on rejection;
        // whoever awaits it still sees the rejection.
        run.catch(() => undefined);
        return run;
      };
      const kwargs = {
        telemetry_schema_version: OBSERVER_SCHEMA_VERSION,
        middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
        ...context,
        [originalKey]: original,
        [key]: p,
        next_call,
        nextCall: next_call,
      };
      try {
        return (await e.cb(kwargs)) as R;
      } catch (err) {
        if (frame.state === "ok") {
          this.reporter.report("Middleware", kind, e.owner, cbName(e.cb), err, Object.keys(kwargs));
          return downstream as R;
        }
        if (frame.state === "failed") throw err;
        if (e.required) throw new RequiredMiddlewareError(kind, e.owner, err);
        this.reporter.report("Middleware", kind, e.owner, cbName(e.cb), err, Object.keys(kwargs));
        return callAt(i + 1, p);
      }
    };
    return callAt(0, payload);
  }
}
