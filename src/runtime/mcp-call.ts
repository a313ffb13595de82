import { HermesError } from "../core/errors.js";

/**
 * `ctx.call_mcp`: the allowlist gate, the timeout rule and the envelope.
 * The MCP client itself lives in src/agent/mcp; the runtime only sees it through `McpDispatcher`.
 */

/** Results longer than this many characters are cut and marked. */
export const MCP_RESULT_LIMIT = 65536;
export const MCP_TRUNCATION_MARKER = "… [truncated]";
export const MCP_DEFAULT_TIMEOUT = 30;
export const MCP_MIN_TIMEOUT = 1;
export const MCP_MAX_TIMEOUT = 600;

export type McpEnvelope =
  | { ok: true; result: unknown; structuredContent?: unknown; truncated?: true }
  | { ok: false; error: string; truncated?: true };

/** Thrown (as a rejection) when a plugin calls a server outside its allowlist; the original raises PermissionError. */
export class McpPermissionError extends HermesError {
  readonly plugin_id: string;
  readonly server: string;

  constructor(pluginName: string, pluginKey: string, server: string) {
    super("E_MCP_NOT_ALLOWED", {
      message:
        `Plugin '${pluginName}' is not allowed to call MCP server '${server}'. ` +
        `Add it to plugins.entries.${pluginKey}.mcp_allowlist in config.yaml to grant access (default is no ` +
        "MCP access).",
      path: `plugins.entries.${pluginKey}.mcp_allowlist`,
    });
    this.name = "PermissionError";
    this.plugin_id = pluginKey;
    this.server = server;
  }
}

/** The allowlist as the gate reads it: a list, items stringified; anything else is the empty list. */
export function readMcpAllowlist(entry: Record<string, unknown>): string[] {
  let raw: unknown;
  try {
    raw = entry.mcp_allowlist;
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  return raw.map((x) =>
    typeof x === "string" ? x : x !== null && typeof x === "object" ? JSON.stringify(x) : String(x),
  );
}

/** Exact membership: no wildcard, no case folding, no trimming. */
export function mcpAllowed(allowlist: readonly string[], server: string): boolean {
  return allowlist.includes(server);
}

/** `Number(timeout)`; missing or unparseable → 30; then clamped to [1, 600] (±Infinity clamp too). */
export function normalizeMcpTimeout(timeout: unknown): number {
  let n: number;
  if (timeout === undefined || timeout === null) n = NaN;
  else if (typeof timeout === "string" && !timeout.trim()) n = NaN;
  else if (typeof timeout === "object" || typeof timeout === "symbol" || typeof timeout === "function") n = NaN;
  else n = Number(timeout);
  if (Number.isNaN(n)) n = MCP_DEFAULT_TIMEOUT;
  return Math.min(MCP_MAX_TIMEOUT, Math.max(MCP_MIN_TIMEOUT, n));
}

/** A raw handler result as a string: null/undefined → "", strings as they are, the rest serialised. */
export function rawToString(raw: unknown): string {
  if (raw === null || raw === undefined) return "";
  if (typeof raw === "string") return raw;
  if (typeof raw === "object") {
    try {
      return JSON.stringify(raw) ?? String(raw);
    } catch {
      return String(raw);
    }
  }
  return String(raw);
}

/**
 * Keep the first `limit` characters (code points, so a surrogate pair is never split) and append
 * the marker when the text is longer.
 */
export function truncateMcpText(text: string, limit = MCP_RESULT_LIMIT): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  let count = 0;
  let i = 0;
  while (i < text.length && count < limit) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
    count++;
  }
  if (i >= text.length) return { text, truncated: false };
  return { text: `${text.slice(0, i)}${MCP_TRUNCATION_MARKER}`, truncated: true };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Build the `ctx.call_mcp` result envelope from what the native MCP tool handler returned. */
export function buildMcpEnvelope(raw: unknown): McpEnvelope {
  const { text, truncated } = truncateMcpText(rawToString(raw));
  let env: McpEnvelope;
  let parsed: unknown;
  let parsedOk = false;
  try {
    parsed = JSON.parse(text);
    parsedOk = true;
  } catch {
    parsedOk = false;
  }
  if (parsedOk && isPlainObject(parsed) && Object.prototype.hasOwnProperty.call(parsed, "error")) {
    const e = parsed.error;
    env = { ok: false, error: typeof e === "string" ? e : rawToString(e) };
  } else if (parsedOk && isPlainObject(parsed) && Object.prototype.hasOwnProperty.call(parsed, "result")) {
    env = { ok: true, result: parsed.result };
    if (Object.prototype.hasOwnProperty.call(parsed, "structuredContent"))
      env.structuredContent = parsed.structuredContent;
  } else if (parsedOk) {
    env = { ok: true, result: parsed ?? text };
  } else {
    env = { ok: true, result: text };
  }
  if (truncated) env.truncated = true;
  return env;
}

/** What the runtime needs from an MCP client (src/agent/mcp's manager implements it). */
export interface McpDispatcher {
  /**
   * Call one tool through the native MCP tool handler and return its raw result: a JSON string,
   * `{"result": text, "structuredContent"?: …}` or `{"error": message}`. Never rejects for a
   * server's failure (crash, hang, refusal): those come back as `{"error": …}`.
   */
  callRaw(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    timeoutSeconds: number,
    meta?: { caller?: string },
  ): Promise<string>;
  close(): Promise<void>;
}

export const NO_MCP_RAW = JSON.stringify({
  error:
    "no MCP servers are attached to this runtime (configure mcp_servers in config.yaml; the agent (`hermes " +
    "chat`) starts them)",
});
