import { randomUUID } from "node:crypto";
import { sha256Hex } from "../../core/hash.js";
import { canonicalJson } from "../../core/canonical-json.js";

export type ApprovalChoice = "once" | "session" | "always" | "deny";

/** A transport's answer, bound to one request by its id and digest. Only `respond()` makes these. */
export interface ApprovalDecision {
  readonly request_id: string;
  readonly request_digest: string;
  readonly choice: string;
}

/** What an approval transport is shown. Immutable; `session_key` is bound into the digest but not exposed. */
export interface ApprovalRequest {
  readonly schema_version: 1;
  readonly request_id: string;
  readonly digest: string;
  readonly command: string;
  readonly description: string;
  readonly pattern_key: string;
  readonly pattern_keys: readonly string[];
  readonly surface: string;
  readonly timeout_seconds: number;
  readonly allowed_choices: readonly string[];
  respond(choice: string): ApprovalDecision;
}

export interface ApprovalRequestInit {
  command: string;
  description: string;
  pattern_key: string;
  pattern_keys: readonly string[];
  session_key: string;
  surface: string;
  allow_session: boolean;
  allow_permanent: boolean;
  timeout_seconds?: number;
}

const decisions = new WeakSet<object>();

export function isApprovalDecision(v: unknown): v is ApprovalDecision {
  return v !== null && typeof v === "object" && decisions.has(v);
}

export function createApprovalRequest(init: ApprovalRequestInit): ApprovalRequest {
  const allowed_choices = Object.freeze([
    "once",
    ...(init.allow_session ? ["session"] : []),
    ...(init.allow_permanent ? ["always"] : []),
    "deny",
  ]);
  const request_id = randomUUID().replace(/-/g, "");
  const pattern_keys = Object.freeze([...init.pattern_keys]);
  const timeout_seconds = init.timeout_seconds ?? 300;
  const shown = {
    command: init.command,
    description: init.description,
    pattern_key: init.pattern_key,
    pattern_keys,
    surface: init.surface,
    timeout_seconds,
    allowed_choices,
  };
  // The digest binds what the transport is shown plus the session key it is not.
  const digest = sha256Hex(canonicalJson({ schema_version: 1, request_id, ...shown, session_key: init.session_key }));
  const request: ApprovalRequest = {
    schema_version: 1,
    request_id,
    digest,
    ...shown,
    respond(choice: string): ApprovalDecision {
      const d = Object.freeze({ request_id, request_digest: digest, choice: String(choice) });
      decisions.add(d);
      return d;
    },
  };
  return Object.freeze(request);
}

/**
 * Force-redaction of what a transport is shown: assignments and flags of secret-shaped names,
 * bearer tokens and well-known key formats. A transport never sees the raw text.
 */
export function redactCommandText(text: string): string {
  return text
    .replace(/\b([A-Za-z_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Za-z_]*)=("[^"]*"|'[^']*'|\S+)/gi, "$1=[redacted]")
    .replace(/(--?(?:password|passwd|token|api-key|apikey|secret)[= ])\S+/gi, "$1[redacted]")
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g, "$1 [redacted]")
    .replace(/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}/g, "[redacted]")
    .replace(/\b(?:ghp|gho|ghu|ghs|github_pat|xox[abpr])_[A-Za-z0-9_]{16,}/g, "[redacted]");
}
