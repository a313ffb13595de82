import { isAbsolute, resolve } from "node:path";
import { diagnostic, type Diagnostic } from "../../core/errors.js";

/**
 * `mcp_servers` of config.yaml: name → a stdio server `{command, args, env, cwd}` or an HTTP
 * server `{url, headers}`, each with optional `timeout` (per call, seconds), `connect_timeout`,
 * `enabled` and `tools: {include, exclude}`. `${VAR}` in args, env, cwd, url and headers is taken
 * from the environment, so secrets stay out of the file.
 */

export const MCP_TOOL_TIMEOUT_DEFAULT = 120;
export const MCP_CONNECT_TIMEOUT_DEFAULT = 60;
const MIN_TIMEOUT = 1;
const MAX_TIMEOUT = 600;

interface McpServerBase {
  name: string;
  /** Seconds a model's call of one of this server's tools may take (1–600). */
  timeout: number;
  /** Seconds starting the server and the MCP handshake may take (1–600). */
  connect_timeout: number;
  enabled: boolean;
  /** Tool names to register (all when absent) and to leave out. */
  include?: string[];
  exclude: string[];
}

export interface McpStdioServer extends McpServerBase {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface McpHttpServer extends McpServerBase {
  transport: "http";
  url: string;
  headers: Record<string, string>;
}

export type McpServerSpec = McpStdioServer | McpHttpServer;

export interface McpConfig {
  servers: McpServerSpec[];
  diagnostics: Diagnostic[];
}

export interface ParseMcpOptions {
  /** Relative `cwd` values resolve against this folder (the home). */
  baseDir: string;
  env?: NodeJS.ProcessEnv;
  file?: string;
}

const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const KNOWN = new Set([
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "timeout",
  "connect_timeout",
  "enabled",
  "tools",
]);
/** Keys of the original's server settings that hermes-kit accepts without acting on them (see the schema). */
const ACCEPTED = new Set(["ssl_verify", "supports_parallel_tool_calls", "sampling", "elicitation"]);

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function scalar(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/** `mcp_<server>_<tool>` with every character outside [A-Za-z0-9_] made `_`. */
export function sanitizeMcpName(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, "_");
}

export function mcpToolName(server: string, tool: string): string {
  return `mcp_${sanitizeMcpName(server)}_${sanitizeMcpName(tool)}`;
}

export function parseMcpServers(config: Record<string, unknown>, opts: ParseMcpOptions): McpConfig {
  const env = opts.env ?? process.env;
  const diagnostics: Diagnostic[] = [];
  const servers: McpServerSpec[] = [];
  const raw = config.mcp_servers;
  if (raw === undefined || raw === null) return { servers, diagnostics };
  const where = (path: string) => ({ file: opts.file, path });
  if (!isMap(raw)) {
    diagnostics.push(
      diagnostic(
        "E_MCP_CONFIG_INVALID",
        "mcp_servers must be a mapping of server name to server settings; no MCP server is started",
        where("mcp_servers"),
      ),
    );
    return { servers, diagnostics };
  }
  const sanitized = new Map<string, string>();
  for (const [name, value] of Object.entries(raw)) {
    const at = `mcp_servers.${name}`;
    const bad = (msg: string, path = at) =>
      void diagnostics.push(diagnostic("E_MCP_CONFIG_INVALID", `${msg}; server '${name}' is skipped`, where(path)));
    const adjusted = (msg: string, path: string) =>
      void diagnostics.push(diagnostic("W_MCP_CONFIG_ADJUSTED", msg, where(path)));
    if (!SERVER_NAME.test(name)) {
      bad(`server name '${name}' must be 1–64 letters, digits, '_', '-' or '.', starting with a letter or digit`);
      continue;
    }
    const clash = sanitized.get(sanitizeMcpName(name));
    if (clash) {
      bad(`server names '${clash}' and '${name}' give the same tool prefix mcp_${sanitizeMcpName(name)}_`);
      continue;
    }
    if (!isMap(value)) {
      bad("the server settings must be a mapping");
      continue;
    }
    const server = parseServer({ name, at, value, env, baseDir: opts.baseDir, bad, adjusted });
    if (!server) continue;
    servers.push(server);
    sanitized.set(sanitizeMcpName(name), name);
  }
  return { servers, diagnostics };
}

/** One server's settings and how to report on them; each step below reads this. */
interface ServerInput {
  name: string;
  at: string;
  value: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  baseDir: string;
  /** The server is skipped for this reason. */
  bad: (msg: string, path?: string) => void;
  /** The server is kept, with this setting ignored or changed. */
  adjusted: (msg: string, path: string) => void;
}

type ServerBase = Pick<McpServerBase, "name" | "timeout" | "connect_timeout" | "enabled" | "include" | "exclude">;

/** Validate one server's settings; undefined when it was reported as skipped. */
function parseServer(s: ServerInput): McpServerSpec | undefined {
  warnIgnoredFields(s);
  const base = parseServerBase(s);
  if (!base) return undefined;
  const hasCommand = s.value.command !== undefined;
  const hasUrl = s.value.url !== undefined;
  if (hasCommand === hasUrl) {
    s.bad(
      hasCommand
        ? "give either command (stdio) or url (HTTP), not both"
        : "missing command (a stdio server) or url (an HTTP server)",
    );
    return undefined;
  }
  return hasCommand ? parseStdioServer(s, base) : parseHttpServer(s, base);
}

function warnIgnoredFields({ name, at, value, adjusted }: ServerInput): void {
  for (const k of Object.keys(value))
    if (!KNOWN.has(k) && !ACCEPTED.has(k))
      adjusted(`unknown field '${k}' of MCP server '${name}' is ignored`, `${at}.${k}`);
  if (value.ssl_verify === false)
    adjusted(
      `ssl_verify: false is not supported; TLS certificates of '${name}' are always verified`,
      `${at}.ssl_verify`,
    );
  for (const k of ["sampling", "elicitation"] as const) {
    const v = value[k];
    if (isMap(v) && v.enabled === true)
      adjusted(
        `${k} is not offered to MCP servers by hermes-kit; ${k}.enabled of '${name}' is ignored`,
        `${at}.${k}.enabled`,
      );
  }
}

/** `${VAR}` from the environment; an unset one becomes "" with a warning. */
function interpolate(s: ServerInput, text: string, path: string): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, v: string) => {
    const got = s.env[v];
    if (got === undefined)
      s.adjusted(`\${${v}} is not set in the environment; it is replaced by an empty string`, path);
    return got ?? "";
  });
}

function stringMap(s: ServerInput, key: "env" | "headers"): Record<string, string> | undefined {
  const m = s.value[key];
  if (m === undefined || m === null) return {};
  if (!isMap(m)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) {
    const str = scalar(v);
    if (str === undefined) return undefined;
    out[k] = interpolate(s, str, `${s.at}.${key}.${k}`);
  }
  return out;
}

function seconds(s: ServerInput, key: "timeout" | "connect_timeout", fallback: number): number | undefined {
  const v = s.value[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) return undefined;
  const clamped = Math.min(MAX_TIMEOUT, Math.max(MIN_TIMEOUT, v));
  if (clamped !== v) s.adjusted(`${key} ${v} is outside 1–600 seconds and is clamped to ${clamped}`, `${s.at}.${key}`);
  return clamped;
}

/** Settings both transports share: timeouts, enabled and the tool filter. */
function parseServerBase(s: ServerInput): ServerBase | undefined {
  const { at, value, bad } = s;
  const timeout = seconds(s, "timeout", MCP_TOOL_TIMEOUT_DEFAULT);
  if (timeout === undefined) return void bad("timeout must be a positive number of seconds", `${at}.timeout`);
  const connect_timeout = seconds(s, "connect_timeout", MCP_CONNECT_TIMEOUT_DEFAULT);
  if (connect_timeout === undefined)
    return void bad("connect_timeout must be a positive number of seconds", `${at}.connect_timeout`);
  const enabled = value.enabled ?? true;
  if (typeof enabled !== "boolean") return void bad("enabled must be true or false", `${at}.enabled`);
  const filter = parseToolFilter(s);
  if (!filter) return undefined;
  return { name: s.name, timeout, connect_timeout, enabled, include: filter.include, exclude: filter.exclude };
}

function parseToolFilter({
  at,
  value,
  bad,
  adjusted,
}: ServerInput): { include: string[] | undefined; exclude: string[] } | undefined {
  if (value.tools === undefined || value.tools === null) return { include: undefined, exclude: [] };
  const t = value.tools;
  const list = (v: unknown) =>
    Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined;
  if (!isMap(t) || (t.include !== undefined && !list(t.include)) || (t.exclude !== undefined && !list(t.exclude))) {
    return void bad("tools must be a mapping with optional include and exclude lists of tool names", `${at}.tools`);
  }
  const include = t.include === undefined ? undefined : list(t.include);
  const exclude = list(t.exclude) ?? [];
  for (const k of ["resources", "prompts"] as const) {
    if (t[k] === true)
      adjusted(
        `tools.${k}: true is not supported (hermes-kit registers the server's tools only); ignored`,
        `${at}.tools.${k}`,
      );
  }
  return { include, exclude };
}

function parseStdioServer(s: ServerInput, base: ServerBase): McpStdioServer | undefined {
  const { name, at, value, bad, adjusted } = s;
  if (typeof value.command !== "string" || !value.command.trim())
    return void bad("command must be a non-empty string", `${at}.command`);
  const args = value.args ?? [];
  if (!Array.isArray(args) || args.some((a) => scalar(a) === undefined))
    return void bad("args must be a list of strings", `${at}.args`);
  const envMap = stringMap(s, "env");
  if (!envMap) return void bad("env must be a mapping of names to string values", `${at}.env`);
  let cwd: string | undefined;
  if (value.cwd !== undefined && value.cwd !== null) {
    if (typeof value.cwd !== "string" || !value.cwd.trim())
      return void bad("cwd must be a non-empty string", `${at}.cwd`);
    const c = interpolate(s, value.cwd, `${at}.cwd`);
    cwd = isAbsolute(c) ? c : resolve(s.baseDir, c);
  }
  if (value.headers !== undefined)
    adjusted(`headers apply to HTTP servers only; ignored for the stdio server '${name}'`, `${at}.headers`);
  return {
    ...base,
    transport: "stdio",
    command: interpolate(s, value.command, `${at}.command`),
    args: (args as unknown[]).map((a, i) => interpolate(s, scalar(a)!, `${at}.args[${i}]`)),
    env: envMap,
    cwd,
  };
}

function parseHttpServer(s: ServerInput, base: ServerBase): McpHttpServer | undefined {
  const { name, at, value, bad, adjusted } = s;
  const url = typeof value.url === "string" ? interpolate(s, value.url.trim(), `${at}.url`) : "";
  let ok = false;
  try {
    const u = new URL(url);
    ok = u.protocol === "http:" || u.protocol === "https:";
  } catch {
    ok = false;
  }
  if (!ok) return void bad("url must be an http:// or https:// URL", `${at}.url`);
  const headers = stringMap(s, "headers");
  if (!headers) return void bad("headers must be a mapping of names to string values", `${at}.headers`);
  for (const k of ["args", "env", "cwd"])
    if (value[k] !== undefined)
      adjusted(`${k} applies to stdio servers only; ignored for the HTTP server '${name}'`, `${at}.${k}`);
  return { ...base, transport: "http", url, headers };
}
