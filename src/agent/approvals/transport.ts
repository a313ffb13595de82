import { isApprovalDecision, type ApprovalRequest } from "./request.js";

export type TransportFailure = "busy" | "error" | "interrupted" | "timeout" | "invalid" | "stale" | "unavailable";

export interface TransportResult {
  /** "deny" for every failure. */
  choice: string;
  failure: TransportFailure | null;
  detail?: string;
}

/** Process-wide: at most 8 transport calls in flight, abandoned late ones included. */
export const TRANSPORT_POOL_SIZE = 8;
let inFlight = 0;

export function transportCallsInFlight(): number {
  return inFlight;
}

type Outcome = { kind: "value"; value: unknown; at: number } | { kind: "error"; error: unknown; at: number };

/**
 * Run a plugin's `present(request)` under the host's deadline and validate what
 * comes back, in order: late → timeout; threw → error; not an ApprovalDecision (e.g. a plain
 * object) → invalid; bound to another request (id or digest) → stale; a choice the request did
 * not offer → invalid. A late answer is discarded and can never approve anything.
 */
export async function invokeApprovalTransport(
  present: (request: ApprovalRequest) => unknown,
  request: ApprovalRequest,
  opts: { timeout_seconds: number; signal?: AbortSignal },
): Promise<TransportResult> {
  const deny = (failure: TransportFailure, detail?: string): TransportResult => ({
    choice: "deny",
    failure,
    ...(detail ? { detail } : {}),
  });
  if (inFlight >= TRANSPORT_POOL_SIZE)
    return deny("busy", `${TRANSPORT_POOL_SIZE} approval transport calls are already running`);
  if (opts.signal?.aborted) return deny("interrupted");
  const deadline = Date.now() + Math.max(opts.timeout_seconds, 0) * 1000;
  inFlight++;
  let outcome: Promise<Outcome>;
  try {
    const value = present(request);
    outcome = Promise.resolve(value).then(
      (v): Outcome => ({ kind: "value", value: v, at: Date.now() }),
      (e): Outcome => ({ kind: "error", error: e, at: Date.now() }),
    );
  } catch (e) {
    outcome = Promise.resolve({ kind: "error", error: e, at: Date.now() });
  }
  // The slot is held until the plugin's call settles, even when the host stopped waiting.
  void outcome.finally(() => inFlight--);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const raced = await Promise.race<Outcome | "timeout" | "interrupted">([
    outcome,
    new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), Math.max(0, deadline - Date.now())))),
    new Promise<"interrupted">((r) => {
      if (!opts.signal) return;
      onAbort = () => r("interrupted");
      opts.signal.addEventListener("abort", onAbort, { once: true });
    }),
  ]);
  clearTimeout(timer);
  if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
  if (raced === "interrupted") return deny("interrupted");
  if (raced === "timeout") return deny("timeout", `no answer within ${opts.timeout_seconds}s`);
  if (raced.at > deadline) return deny("timeout", "the answer came after the deadline");
  if (raced.kind === "error") {
    const e = raced.error as Error;
    return deny("error", `${e?.name ?? "Error"}: ${e?.message ?? String(e)}`.slice(0, 300));
  }
  const d = raced.value;
  if (!isApprovalDecision(d)) return deny("invalid", "the transport did not return request.respond(choice)");
  if (d.request_id !== request.request_id || d.request_digest !== request.digest)
    return deny("stale", "the decision is bound to another request (id or digest differs)");
  if (!request.allowed_choices.includes(d.choice))
    return deny("invalid", `choice '${d.choice}' was not offered (offered: ${request.allowed_choices.join(", ")})`);
  return { choice: d.choice, failure: null };
}
