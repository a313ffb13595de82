import { readTextIfExists } from "../core/atomic-fs.js";
import { diagnostic, HermesError, type Diagnostic } from "../core/errors.js";
import { validateSchema } from "../core/schema.js";
import { sortKeys } from "../core/canonical-json.js";

export const LOCK_SCHEMA = "hermes.lock.v1";

export type ConsentSource = "interactive" | "flag" | "declarative";

export interface LockCapabilities {
  declared: string[];
  granted: string[];
  /** Hash of the declared set the grants are bound to. */
  consent_hash: string;
  consent: ConsentSource | null;
  /** Capabilities granted earlier but not carried (declared set changed, or no longer declared). */
  not_carried: string[];
}

export interface LockGitOrigin {
  source: string;
  revision: string;
  pinned: boolean;
}

export interface LockPlugin {
  key: string;
  name: string;
  version: string;
  kind: string;
  source: string;
  origin: string;
  /** Where discovery found it (under the home for links). */
  path: string;
  /** The folder after resolving links. */
  target: string;
  entry: string | null;
  integrity: string;
  manifest_sha256: string;
  state: "enabled" | "disabled" | "not-enabled";
  action: "load" | "load_now" | "defer" | "skip";
  reason: string;
  load_position: number | null;
  required: boolean;
  capabilities: LockCapabilities;
  hooks: string[];
  middleware: string[];
  git: LockGitOrigin | null;
  /** Owned by the deploy spec (a nix-managed link or an npm package link). */
  managed: boolean;
}

export interface LockLink {
  /** Path of the link relative to the home, e.g. `plugins/nix-managed-foo`. */
  link: string;
  target: string;
}

export interface LockDeployment {
  kind: string | null;
  spec: string | null;
  list_policy: "union" | "replace";
  /** config.yaml leaves the deployment owns (JSON paths as segment lists). */
  owned_leaves: string[][];
  /** List items the deployment contributed under the union policy, per list path (JSON-encoded segments). */
  owned_items: Record<string, string[]>;
  links: LockLink[];
  /** What the spec said per plugin key, so recompiles without --spec keep declarative grants. */
  plugins: Record<string, { grants: string[]; required: boolean }>;
}

export interface LockSettings {
  hook_callback_timeout: number;
  load_timeout_seconds: number;
  approval_transport: string | null;
  approval_transport_fallback: string;
  memory_provider: string | null;
  context_engine: string | null;
}

export interface Lock {
  schema: typeof LOCK_SCHEMA;
  inputs_hash: string;
  hook_catalog: string;
  settings: LockSettings;
  load_order: string[];
  chains: { hooks: Record<string, string[]>; middleware: Record<string, string[]> };
  deployment: LockDeployment;
  plugins: LockPlugin[];
}

/** Deterministic bytes: sorted keys, two-space indent, trailing newline. */
export function serializeLock(lock: Lock): string {
  return `${JSON.stringify(sortKeys(lock), null, 2)}\n`;
}

export function parseLockText(text: string, file: string): { lock?: Lock; diagnostics: Diagnostic[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { diagnostics: [diagnostic("E_LOCK_INVALID", `${file} is not valid JSON: ${(e as Error).message}`, { file })] };
  }
  const ds = validateSchema("lock", raw, { file, unknownFields: "error" }).map((d) => ({ ...d, code: "E_LOCK_INVALID" as const, severity: "error" as const }));
  return ds.length ? { diagnostics: ds } : { lock: raw as Lock, diagnostics: [] };
}

/**
 * Parse lock bytes known to have been checked before (their sha256 was recorded by a compile or a
 * verified start, see quick-check.ts): JSON only, no schema pass. `undefined` if they do not parse.
 */
export function parseTrustedLockText(text: string): Lock | undefined {
  try {
    return JSON.parse(text) as Lock;
  } catch {
    return undefined;
  }
}

/** Read the lock; `undefined` when there is none, an error when it is there but broken. */
export async function readLock(file: string): Promise<Lock | undefined> {
  const text = await readTextIfExists(file);
  if (text === undefined) return undefined;
  const { lock, diagnostics } = parseLockText(text, file);
  if (!lock) throw new HermesError("E_LOCK_INVALID", { message: diagnostics[0]?.message ?? `${file} is not a valid lock`, file, diagnostics });
  return lock;
}
