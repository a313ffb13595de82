import { CallbackLists } from "./callback-lists.js";
import { HermesError } from "../core/errors.js";
import type { MiddlewareKind } from "../contracts/hook-catalog.js";
import { OBSERVER_SCHEMA_VERSION } from "./hooks.js";
import type { FailureReporter } from "./reporter.js";

export const MIDDLEWARE_SCHEMA_VERSION = "hermes.middleware.v1";

export type MiddlewareCallback = (kwargs: Record<string, unknown>) => unknown;

export interface MiddlewareEntry {
  kind: string;
  cb: MiddlewareCallback;
  owner: string;
  /** A required plugin's middleware fails the call instead of being skipped: it is never silently bypassed. */
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
export class RequiredMiddlewareError extends HermesError {
  constructor(
    readonly kind: string,
    readonly plugin: string,
    readonly causeError: unknown,
  ) {
    super("E_AGENT_MIDDLEWARE_FAILED", {
      message:
        `required plugin ${plugin}: ${kind} middleware ` +
        `failed: ${causeError instanceof Error ? causeError.message : String(causeError)}`,
    });
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

const noop = (): void => undefined;
/** Already resolved: it loses a race only against a promise that has already fulfilled. */
const PENDING_MARK = Symbol("pending");
const PENDING = Promise.resolve(PENDING_MARK);
const EMPTY_CONTEXT: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * The four middleware chains. Request middleware is chained: each callback sees the payload as
 * rewritten by the ones before it, so no rewrite is lost (the original fans out and keeps the
 * last writer). Execution middleware nests in registration order around the real call, with a single-use `next_call`.
 */
export class MiddlewareEngine {
  private readonly chains = new CallbackLists<MiddlewareEntry>();

  constructor(private readonly reporter: FailureReporter) {}

  add(entry: MiddlewareEntry): () => void {
    return this.chains.add(entry.kind, entry);
  }

  has(kind: MiddlewareKind): boolean {
    return this.chains.has(kind);
  }

  owners(kind: string): string[] {
    return this.chains.owners(kind);
  }

  kinds(): string[] {
    return this.chains.names();
  }

  /**
   * `llm_request` (payload key `request`) or `tool_request` (payload key `args`). With no callbacks
   * the input comes back as is, uncopied: the no-middleware path costs nothing.
   */
  async applyRequest<T>(
    kind: "llm_request" | "tool_request",
    input: T,
    context: Record<string, unknown> = {},
  ): Promise<RequestResult<T>> {
    const list = this.chains.snapshot(kind);
    if (!list.length) return { payload: input, original_payload: input, changed: false, trace: [] };
    const key = kind === "llm_request" ? "request" : "args";
    const originalKey = kind === "llm_request" ? "original_request" : "original_args";
    const original = copy(input);
    let current = copy(original);
    const trace: TraceEntry[] = [];
    for (const e of list) {
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
      for (const f of ["source", "reason", "name"] as const)
        if (typeof result[f] === "string" && result[f]) entry[f] = result[f] as string;
      trace.push(Object.keys(entry).length ? entry : { source: "plugin" });
    }
    return { payload: current, original_payload: original, changed: trace.length > 0, trace };
  }

  /**
   * `llm_execution` (payload key `request`) or `tool_execution` (key `args`, plus `tool_name`)
   * around `terminal`. Frame rules: a throw before `next_call` skips the frame
   * (fail open) unless its plugin is required; a throw after a successful `next_call` keeps the
   * downstream result (the call never runs twice); a downstream error propagates unchanged unless
   * the frame translates it; a frame that never calls `next_call` short-circuits.
   *
   * Per frame this costs the kwargs, two closures and the one promise reaction that catches the
   * frame's errors (bench/runtime.bench.mjs: per-layer cost against koa-compose); whether the
   * downstream had already succeeded, and marking dropped promises handled, are paid for only on
   * the error path.
   */
  runExecution<T, R>(
    kind: "llm_execution" | "tool_execution",
    payload: T,
    terminal: (payload: T) => R | Promise<R>,
    context: Readonly<Record<string, unknown>> = EMPTY_CONTEXT,
  ): Promise<R> {
    const chain = this.chains.snapshot(kind);
    if (chain.length === 0) return settle(terminal, payload);
    const isLlm = kind === "llm_execution";
    const originalKey = isLlm ? "original_request" : "original_args";
    const hasContext = context !== EMPTY_CONTEXT && Object.keys(context).length > 0;
    const original = hasContext && originalKey in context ? context[originalKey] : payload;
    const reporter = this.reporter;
    const n = chain.length;

    const callAt = (i: number, p: T): Promise<R> => {
      if (i >= n) {
        const out = settle(terminal, p);
        // A frame that drops the promise (never awaits it) must not crash the process.
        out.then(undefined, noop);
        return out;
      }
      const e = chain[i]!;
      let downstream: Promise<R> | undefined;
      let settled: Promise<R> | undefined;
      // Not async: a second call throws synchronously (as the original's does), so a frame that
      // calls it again without awaiting cannot leave an unhandled rejection behind.
      const next_call = (nextPayload?: T): Promise<R> => {
        if (downstream !== undefined) {
          throw new HermesError("E_PLUGIN_NEXT_CALL_REUSED", {
            message:
              `Middleware '${kind}' callback ${cbName(e.cb)} called next_call() more than once; downstream ` +
              "execution is single-use",
          });
        }
        downstream = callAt(i + 1, nextPayload === undefined ? p : nextPayload);
        return downstream;
      };
      const onError = (err: unknown): R | Promise<R> => {
        // The caller above may have dropped this level's promise: mark it handled here, on the
        // error path, rather than paying a reaction on every call.
        settled?.catch(noop);
        if (downstream !== undefined) {
          // Did the downstream already succeed? Asked only now, on the error path: a fulfilled
          // downstream wins the race against the already-resolved sentinel, so the frame's
          // throw after it is reported and the result kept (the call never runs twice); a
          // pending or failed one means the throw is the downstream's (or the frame's
          // translation of it) and propagates.
          return Promise.race([downstream, PENDING]).then(
            (v) => {
              if (v === PENDING_MARK) throw err;
              reporter.report("Middleware", kind, e.owner, cbName(e.cb), err, fieldsOf(context, isLlm));
              return v as R;
            },
            () => {
              throw err;
            },
          );
        }
        if (e.required) throw new RequiredMiddlewareError(kind, e.owner, err);
        reporter.report("Middleware", kind, e.owner, cbName(e.cb), err, fieldsOf(context, isLlm));
        return callAt(i + 1, p);
      };
      let out: unknown;
      try {
        out = e.cb(frameKwargs(hasContext ? context : undefined, isLlm, original, p, next_call));
      } catch (err) {
        return handleSync(onError, err);
      }
      // A frame that hands back next_call's own promise (a plain `return next_call(args)`) can
      // only fail by failing downstream, which propagates unchanged anyway: no reaction needed.
      if (out === downstream && downstream !== undefined) return downstream;
      settled = Promise.resolve(out as R).then(undefined, onError);
      return settled;
    };
    return callAt(0, payload);
  }
}

/** One execution frame's kwargs; `context` is undefined when there is none to merge. */
function frameKwargs<T, R>(
  context: Readonly<Record<string, unknown>> | undefined,
  isLlm: boolean,
  original: unknown,
  p: T,
  next_call: (nextPayload?: T) => Promise<R>,
): Record<string, unknown> {
  // Literals (and Object.assign for context): object spread copies through V8's slow path
  // here (~1 µs a frame), and literals keep one object shape per kind.
  return context
    ? Object.assign(
        { telemetry_schema_version: OBSERVER_SCHEMA_VERSION, middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION },
        context,
        isLlm
          ? { original_request: original, request: p, next_call, nextCall: next_call }
          : { original_args: original, args: p, next_call, nextCall: next_call },
      )
    : isLlm
      ? {
          telemetry_schema_version: OBSERVER_SCHEMA_VERSION,
          middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
          original_request: original,
          request: p,
          next_call,
          nextCall: next_call,
        }
      : {
          telemetry_schema_version: OBSERVER_SCHEMA_VERSION,
          middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
          original_args: original,
          args: p,
          next_call,
          nextCall: next_call,
        };
}

/** A synchronous throw from a frame, run through its error handler; never throws, always a promise. */
function handleSync<R>(onError: (err: unknown) => R | Promise<R>, err: unknown): Promise<R> {
  try {
    return Promise.resolve(onError(err));
  } catch (thrown) {
    const rejected = Promise.reject(thrown);
    rejected.catch(noop);
    return rejected;
  }
}

/** What the reporter's first warning lists: the fields an execution callback really receives. */
function fieldsOf(context: Readonly<Record<string, unknown>>, isLlm: boolean): string[] {
  const originalKey = isLlm ? "original_request" : "original_args";
  return [
    "telemetry_schema_version",
    "middleware_schema_version",
    ...Object.keys(context).filter((k) => k !== originalKey),
    originalKey,
    isLlm ? "request" : "args",
    "next_call",
    "nextCall",
  ];
}

/** Call `terminal` so that a synchronous throw becomes a rejection, like an async function's. */
function settle<T, R>(terminal: (payload: T) => R | Promise<R>, payload: T): Promise<R> {
  try {
    return Promise.resolve(terminal(payload));
  } catch (err) {
    return Promise.reject(err);
  }
}
