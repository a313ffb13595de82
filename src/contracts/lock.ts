import { readTextIfExists } from "../core/atomic-fs.js";
import { diagnostic, HermesError, type Diagnostic } from "../core/errors.js";
import { validateSchema } from "../core/schema.js";
import { sha256Hex } from "../core/hash.js";
import { sortKeys } from "../core/canonical-json.js";
import type { PluginKind, PluginRecord } from "./plugin-record.js";
import { HOOK_CATALOG_VERSION } from "./hook-catalog.js";

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

/** One plugin as the lock records it; `path` is where discovery found it (under the home for links). */
export interface LockPlugin extends PluginRecord {
  version: string;
  kind: PluginKind;
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
  /** sha256 over the canonical JSON of every other field: a hand edit of the lock is detected. */
  checksum?: string;
  inputs_hash: string;
  hook_catalog: string;
  settings: LockSettings;
  load_order: string[];
  chains: { hooks: Record<string, string[]>; middleware: Record<string, string[]> };
  deployment: LockDeployment;
  plugins: LockPlugin[];
  /** Gateway event hooks, sorted by name; absent when there are none (older locks stay byte-identical). */
  event_hooks?: LockEventHook[];
}

/** One gateway event hook: a folder with HOOK.yaml and a handler module exporting handle(event_type, context). */
export interface LockEventHook {
  name: string;
  path: string;
  handler: "handler.js" | "handler.mjs";
  events: string[];
  description: string;
  integrity: string;
  source: "home" | "spec";
}

/** The lock's own checksum: canonical JSON of everything but the checksum field. */
export function lockChecksum(lock: Lock): string {
  return canonicalBody(lock).checksum;
}

/** The lock without its checksum, keys sorted at every depth, and the checksum of its canonical JSON. */
function canonicalBody(lock: Lock): { body: Record<string, unknown>; checksum: string } {
  const { checksum: _ignored, ...rest } = lock;
  const body = sortKeys(rest) as Record<string, unknown>;
  return { body, checksum: `sha256:${sha256Hex(JSON.stringify(body))}` };
}

/** Deterministic bytes: sorted keys, two-space indent, trailing newline, sealed by a fresh checksum. */
export function serializeLock(lock: Lock): string {
  return sealLock({ ...lock });
}

/** `serializeLock`, setting `lock.checksum` to the checksum it seals with: one canonical pass for both. */
export function sealLock(lock: Lock): string {
  const { body, checksum } = canonicalBody(lock);
  lock.checksum = checksum;
  const sealed: Record<string, unknown> = {};
  for (const k of [...Object.keys(body), "checksum"].sort()) sealed[k] = k === "checksum" ? checksum : body[k];
  return `${JSON.stringify(sealed, null, 2)}\n`;
}

/** Why a schema-valid lock cannot be trusted (no checksum, or one that does not match), else undefined. */
export function lockSealProblem(lock: Lock): string | undefined {
  if (typeof lock.checksum !== "string") return "it carries no checksum (written by hand or by an older hermes-kit)";
  if (lock.checksum !== lockChecksum(lock))
    return "it was edited after it was compiled: its checksum does not match its content";
  return undefined;
}

/** Nesting deeper than any lock hermes-kit writes; deeper input is refused before the schema pass recurses. */
const MAX_LOCK_DEPTH = 64;

function depthExceeds(v: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (d > max) return true;
    if (x && typeof x === "object")
      for (const c of Object.values(x as Record<string, unknown>))
        if (c && typeof c === "object") stack.push([c, d + 1]);
  }
  return false;
}

export function parseLockText(text: string, file: string): { lock?: Lock; diagnostics: Diagnostic[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { diagnostics: [diagnostic("E_LOCK_INVALID", `not valid JSON: ${(e as Error).message}`, { file })] };
  }
  if (depthExceeds(raw, MAX_LOCK_DEPTH))
    return { diagnostics: [diagnostic("E_LOCK_INVALID", `nested deeper than ${MAX_LOCK_DEPTH} levels`, { file })] };
  const ds = validateSchema("lock", raw, { file, unknownFields: "error" }).map((d) => ({
    ...d,
    code: "E_LOCK_INVALID" as const,
    severity: "error" as const,
  }));
  if (ds.length) return { diagnostics: ds };
  const lock = raw as Lock;
  const seal = lockSealProblem(lock);
  if (seal) return { diagnostics: [diagnostic("E_LOCK_TAMPERED", `the lock cannot be trusted: ${seal}`, { file })] };
  return { lock, diagnostics: [] };
}

/**
 * Parse lock bytes known to have been checked before (their sha256 was recorded by a compile or a
 * verified start, see quick-check.ts): JSON only, no schema pass. `undefined` if they do not parse.
 */
export function parseTrustedLockText(text: string, opts: { sealed?: boolean } = {}): Lock | undefined {
  try {
    const lock = JSON.parse(text) as Lock;
    // The checksum is checked unless the caller's record vouches for these very bytes as a compile sealed them
    // (`sealed`); a caller that read the lock twice cannot say so, and a hand edit between the reads is caught here.
    return lock && typeof lock === "object" && (opts.sealed || lockSealProblem(lock) === undefined) ? lock : undefined;
  } catch {
    return undefined;
  }
}

/** Read the lock; `undefined` when there is none, an error when it is there but broken. */
export async function readLock(file: string): Promise<Lock | undefined> {
  const text = await readTextIfExists(file);
  if (text === undefined) return undefined;
  const { lock, diagnostics } = parseLockText(text, file);
  if (!lock) {
    // The first problem is the error itself; the rest ride along (printed once each).
    const [first, ...rest] = diagnostics;
    throw new HermesError(first?.code ?? "E_LOCK_INVALID", {
      message: first?.message ?? "not a valid lock",
      file,
      line: first?.line,
      col: first?.col,
      path: first?.path,
      diagnostics: rest,
    });
  }
  return lock;
}

/** Why a lock cannot run with this hook catalog (it names hooks compiled against another), or undefined. */
export function lockCatalogProblem(lock: Pick<Lock, "hook_catalog">): string | undefined {
  if (lock.hook_catalog === HOOK_CATALOG_VERSION) return undefined;
  return (
    `hermes.lock.json was compiled for hook catalog ${lock.hook_catalog}; this hermes-kit ` +
    `runs ${HOOK_CATALOG_VERSION}`
  );
}
