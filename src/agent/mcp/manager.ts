import type { Readable } from "node:stream";
import type { Logger } from "pino";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ErrorCode as HermesCode } from "../../core/errors.js";
import type { McpDispatcher } from "../../runtime/mcp-call.js";
import { mcpToolName, type McpServerSpec } from "./config.js";

/**
 * The MCP client side of the agent: one lazily started connection per configured server,
 * shared by the model's tool calls and by `ctx.call_mcp` (no parallel connection). Every call is
 * bounded by its timeout; a server that exits, hangs or refuses gives an `{"error": …}` result
 * and a logged outcome, and a crashed server is started again on the next call.
 */

/** The SDK's JSON-RPC error codes the manager tells apart (ErrorCode in the SDK's types). */
const RPC_CONNECTION_CLOSED = -32000;
const RPC_REQUEST_TIMEOUT = -32001;

/** Consecutive call timeouts after which a connection is recycled (a server stuck for good). */
const RECYCLE_AFTER_TIMEOUTS = 3;
/** Consecutive failed connection attempts after which the server rests before the next try. */
const BREAKER_THRESHOLD = 3;
const BREAKER_COOLDOWN_MS = 30_000;
const STDERR_TAIL_LINES = 20;
const CLIENT_INFO = { name: "hermes-kit", version: "0.1.0" };

/** A failure with its catalog code; turned into the `{"error": …}` raw result at the boundary. */
export class McpCallFailure extends Error {
  constructor(
    readonly code: HermesCode,
    message: string,
  ) {
    super(message);
    this.name = "McpCallFailure";
  }
}

export interface McpToolInfo {
  /** Runtime tool name, `mcp_<server>_<tool>`. */
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  enabled: boolean;
  connected: boolean;
  /** Tools the server listed (after include/exclude), once it was reached. */
  tools?: string[];
  last_error?: string;
  /** Times a connection was made (1 = never restarted). */
  connections: number;
  pid?: number | null;
}

/**
 * Called for each tool a server lists; returns a release, or undefined when not registered. `call`
 * resolves with the raw result (a tool-level error included, as `{"error": …}`) and rejects with
 * McpCallFailure when the server crashed, hung, refused or the signal aborted the call.
 */
export type McpToolSink = (
  info: McpToolInfo,
  call: (args: Record<string, unknown>, signal?: AbortSignal) => Promise<string>,
) => (() => void) | undefined;

export interface McpCallMeta {
  /** Who called: a plugin key (ctx.call_mcp) or "model"; logged. */
  caller?: string;
  /** Aborts the call (the agent's interrupt); the server is sent a cancellation. */
  signal?: AbortSignal;
}

export interface McpManagerOptions {
  log: Logger;
  /** Where tools go (attachMcp registers them in the runtime's tool registry). */
  onTool?: McpToolSink;
}

interface Conn {
  spec: McpServerSpec;
  client?: Client;
  transport?: Transport;
  connecting?: Promise<Client>;
  connections: number;
  failures: number;
  restUntil: number;
  timeouts: number;
  lastError?: string;
  stderr: string[];
  tools?: McpToolInfo[];
  listing?: Promise<McpToolInfo[]>;
  releases: Array<() => void>;
}

function errMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function rpcCode(e: unknown): number | undefined {
  const c = (e as { code?: unknown })?.code;
  return typeof c === "number" ? c : undefined;
}

/** One CallToolResult as the raw string of the native handler: `{"result": text, "structuredContent"?}` or `{"error":
 * text}`. */
export function rawFromCallResult(res: Record<string, unknown>): string {
  if (Object.prototype.hasOwnProperty.call(res, "toolResult") && !Array.isArray(res.content)) {
    return JSON.stringify({ result: res.toolResult ?? null });
  }
  const parts: string[] = [];
  for (const c of Array.isArray(res.content) ? (res.content as Array<Record<string, unknown>>) : []) {
    switch (c?.type) {
      case "text":
        parts.push(String(c.text ?? ""));
        break;
      case "image":
      case "audio":
        parts.push(
          `[${String(c.type)}: ${String(c.mimeType ?? "unknown type")}, ${String(c.data ?? "").length} base64 chars]`,
        );
        break;
      case "resource": {
        const r = (c.resource ?? {}) as Record<string, unknown>;
        parts.push(
          typeof r.text === "string"
            ? r.text
            : `[resource: ${String(r.uri ?? "")}${r.mimeType ? ` (${String(r.mimeType)})` : ""}]`,
        );
        break;
      }
      case "resource_link":
        parts.push(`[resource link: ${String(c.uri ?? "")}${c.name ? ` (${String(c.name)})` : ""}]`);
        break;
      default:
        parts.push(JSON.stringify(c));
    }
  }
  const text = parts.join("\n");
  if (res.isError === true)
    return JSON.stringify({ error: text || "the MCP tool reported an error without a message" });
  const out: Record<string, unknown> = { result: text };
  if (res.structuredContent !== undefined && res.structuredContent !== null)
    out.structuredContent = res.structuredContent;
  return JSON.stringify(out);
}

/** Resolve with `p`, or reject with `onTimeout()` after `ms`; `p` keeps running either way. */
function withDeadline<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_r, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(0, ms));
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** Resolve with `p`, or reject with `onAbort()` as soon as the signal aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined, onAbort: () => Error): Promise<T> {
  if (!signal) return p;
  let listener: (() => void) | undefined;
  const aborted = new Promise<never>((_r, reject) => {
    listener = () => reject(onAbort());
    signal.addEventListener("abort", listener, { once: true });
  });
  return Promise.race([p, aborted]).finally(() => signal.removeEventListener("abort", listener!));
}

export class McpManager implements McpDispatcher {
  private readonly conns = new Map<string, Conn>();
  private readonly log: Logger;
  private closed = false;
  private readonly onTool?: McpToolSink;

  constructor(
    readonly specs: readonly McpServerSpec[],
    opts: McpManagerOptions,
  ) {
    this.log = opts.log;
    this.onTool = opts.onTool;
    for (const spec of specs) {
      this.conns.set(spec.name, {
        spec,
        connections: 0,
        failures: 0,
        restUntil: 0,
        timeouts: 0,
        stderr: [],
        releases: [],
      });
    }
  }

  /** Names of the configured servers (enabled or not). */
  serverNames(): string[] {
    return [...this.conns.keys()];
  }

  status(): McpServerStatus[] {
    return [...this.conns.values()].map((c) => ({
      name: c.spec.name,
      transport: c.spec.transport,
      enabled: c.spec.enabled,
      connected: Boolean(c.client),
      tools: c.tools?.map((t) => t.tool),
      last_error: c.lastError,
      connections: c.connections,
      pid: c.transport && "pid" in c.transport ? (c.transport as { pid: number | null }).pid : undefined,
    }));
  }

  /** Registered tool infos of one server (after its first successful listing). */
  tools(server: string): McpToolInfo[] {
    return this.conns.get(server)?.tools ?? [];
  }

  /**
   * Connect every enabled server (concurrently, each bounded by its connect_timeout), list its
   * tools and hand them to the sink. A server that cannot be reached is logged and retried on
   * its next use; discovery itself never throws.
   */
  async discover(): Promise<McpServerStatus[]> {
    await Promise.all(
      [...this.conns.values()]
        .filter((c) => c.spec.enabled)
        .map(async (c) => {
          try {
            await this.ensureTools(c, c.spec.connect_timeout * 1000);
          } catch (e) {
            const f = this.asFailure(c, e, "listing tools", c.spec.connect_timeout);
            c.lastError = f.message;
            this.log.warn(
              { code: f.code, mcp_server: c.spec.name },
              `MCP server '${c.spec.name}' is not available: ${f.message}; its tools are registered when it ` +
                "can be reached",
            );
          }
        }),
    );
    return this.status();
  }

  /** The native MCP tool handler (what `ctx.call_mcp` uses): never rejects; a failure is `{"error": message}`. */
  async callRaw(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    timeoutSeconds: number,
    meta: McpCallMeta = {},
  ): Promise<string> {
    try {
      return await this.callLogged(server, tool, args, timeoutSeconds, meta);
    } catch (e) {
      return JSON.stringify({ error: errMessage(e) });
    }
  }

  /** One call, logged with its outcome; rejects with McpCallFailure when the call itself failed. */
  async callLogged(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    timeoutSeconds: number,
    meta: McpCallMeta = {},
  ): Promise<string> {
    const started = Date.now();
    const caller = meta.caller ?? "model";
    try {
      const raw = await this.call(server, tool, args, timeoutSeconds, meta.signal);
      this.log.info(
        {
          mcp_server: server,
          tool,
          caller,
          ms: Date.now() - started,
          outcome: raw.startsWith('{"error"') ? "tool_error" : "ok",
        },
        "mcp call",
      );
      return raw;
    } catch (e) {
      const f = e instanceof McpCallFailure ? e : new McpCallFailure("E_MCP_CALL_FAILED", errMessage(e));
      this.log.warn(
        { code: f.code, mcp_server: server, tool, caller, ms: Date.now() - started, outcome: "failed" },
        f.message,
      );
      throw f;
    }
  }

  private async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    timeoutSeconds: number,
    signal?: AbortSignal,
  ): Promise<string> {
    if (this.closed) throw new McpCallFailure("E_MCP_UNKNOWN_SERVER", "MCP is shut down; no call is made");
    const c = this.conns.get(server);
    if (!c) {
      const known = this.serverNames();
      throw new McpCallFailure(
        "E_MCP_UNKNOWN_SERVER",
        `MCP server '${server}' is not configured (mcp_servers in ` +
          `config.yaml${known.length ? `; configured: ${known.join(", ")}` : ""})`,
      );
    }
    if (!c.spec.enabled)
      throw new McpCallFailure(
        "E_MCP_UNKNOWN_SERVER",
        `MCP server '${server}' is disabled (mcp_servers.${server}.enabled: false)`,
      );
    const interrupted = () =>
      new McpCallFailure("E_MCP_CALL_FAILED", `the call of MCP tool '${tool}' of server '${server}' was interrupted`);
    if (signal?.aborted) throw interrupted();
    const budget = Math.round(timeoutSeconds * 1000);
    const started = Date.now();
    const client = await withDeadline(
      abortable(this.ensureConnected(c), signal, interrupted),
      budget,
      () =>
        new McpCallFailure(
          "E_MCP_TIMEOUT",
          `MCP server '${server}' did not finish starting within the call's ${timeoutSeconds}s timeout (it ` +
            `keeps starting in the background, up to ${c.spec.connect_timeout}s)`,
        ),
    ).catch((e: unknown) => {
      throw this.asFailure(c, e, "connecting", timeoutSeconds);
    });
    // A server reached for the first time by this call (discovery failed earlier) gets its tools registered.
    if (!c.tools) this.ensureTools(c, c.spec.connect_timeout * 1000).catch(() => undefined);
    const remaining = Math.max(1, budget - (Date.now() - started));
    try {
      const res = await withDeadline(
        client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: remaining,
          ...(signal ? { signal } : {}),
        }),
        remaining + 1000,
        () =>
          new McpCallFailure(
            "E_MCP_TIMEOUT",
            `MCP tool '${tool}' of server '${server}' did not answer within ${timeoutSeconds}s; the call was abandoned`,
          ),
      );
      c.timeouts = 0;
      return rawFromCallResult(res as Record<string, unknown>);
    } catch (e) {
      if (signal?.aborted) throw interrupted();
      const f = this.asFailure(c, e, `calling '${tool}'`, timeoutSeconds, client);
      if (f.code === "E_MCP_TIMEOUT" && ++c.timeouts >= RECYCLE_AFTER_TIMEOUTS && c.client === client) {
        this.log.warn(
          { code: f.code, mcp_server: server },
          `MCP server '${server}' timed out ${c.timeouts} times in a row; restarting it on the next call`,
        );
        c.timeouts = 0;
        this.drop(c, client);
      }
      throw f;
    }
  }

  /** Classify an error of the SDK (or of our deadlines) into one catalog code and a clear message. */
  private asFailure(c: Conn, e: unknown, doing: string, timeoutSeconds: number, client?: Client): McpCallFailure {
    if (e instanceof McpCallFailure) return e;
    const name = c.spec.name;
    const code = rpcCode(e);
    const msg = errMessage(e);
    if (code === RPC_REQUEST_TIMEOUT)
      return new McpCallFailure(
        "E_MCP_TIMEOUT",
        `MCP server '${name}' did not answer within ${timeoutSeconds}s while ${doing}; the request was cancelled`,
      );
    const closed = code === RPC_CONNECTION_CLOSED || (client !== undefined && c.client !== client);
    if (closed) {
      const tail = c.stderr.length ? ` (last stderr: ${c.stderr[c.stderr.length - 1]})` : "";
      return new McpCallFailure(
        "E_MCP_SERVER_CLOSED",
        `MCP server '${name}' closed the connection while ${doing}: the ` +
          `server ${c.spec.transport === "stdio" ? "process exited" : "went away"}${tail}; it is restarted on ` +
          "the next call",
      );
    }
    if (client === undefined) return new McpCallFailure("E_MCP_CONNECT_FAILED", msg);
    return new McpCallFailure("E_MCP_CALL_FAILED", `MCP server '${name}' refused ${doing}: ${msg}`);
  }

  /** The live client, connecting (single flight) when there is none. */
  private ensureConnected(c: Conn): Promise<Client> {
    if (this.closed) return Promise.reject(new McpCallFailure("E_MCP_UNKNOWN_SERVER", "MCP is shut down"));
    if (c.client) return Promise.resolve(c.client);
    if (c.connecting) return c.connecting;
    const now = Date.now();
    if (c.restUntil > now) {
      return Promise.reject(
        new McpCallFailure(
          "E_MCP_CONNECT_FAILED",
          `MCP server '${c.spec.name}' failed to start ${c.failures} times in a row; next attempt ` +
            `in ${Math.ceil((c.restUntil - now) / 1000)}s (last error: ${c.lastError ?? "unknown"})`,
        ),
      );
    }
    const p = this.connect(c).finally(() => {
      if (c.connecting === p) c.connecting = undefined;
    });
    c.connecting = p;
    p.catch(() => undefined);
    return p;
  }

  private async connect(c: Conn): Promise<Client> {
    const spec = c.spec;
    const [{ Client }, transport] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      this.makeTransport(c),
    ]);
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.onerror = (e) => this.log.debug({ mcp_server: spec.name, err: errMessage(e) }, "mcp transport error");
    client.onclose = () => {
      if (c.client !== client) return;
      c.client = undefined;
      c.transport = undefined;
      if (!this.closed)
        this.log.warn(
          { code: "E_MCP_SERVER_CLOSED", mcp_server: spec.name },
          `MCP server '${spec.name}' closed the connection; it is restarted on the next call`,
        );
    };
    const ms = spec.connect_timeout * 1000;
    try {
      await withDeadline(
        client.connect(transport, { timeout: ms }),
        ms + 1000,
        () => new Error(`no MCP handshake within ${spec.connect_timeout}s`),
      );
    } catch (e) {
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      c.failures++;
      if (c.failures >= BREAKER_THRESHOLD) c.restUntil = Date.now() + BREAKER_COOLDOWN_MS;
      const tail = c.stderr.length ? `; stderr: ${c.stderr.slice(-3).join(" | ")}` : "";
      const what =
        spec.transport === "stdio" ? `start '${[spec.command, ...spec.args].join(" ")}'` : `connect to ${spec.url}`;
      c.lastError =
        `could not ${what}: ` +
        `${rpcCode(e) === RPC_REQUEST_TIMEOUT ? `no MCP handshake within ${spec.connect_timeout}s` : errMessage(e)}` +
        `${tail}`;
      throw new McpCallFailure("E_MCP_CONNECT_FAILED", `MCP server '${spec.name}': ${c.lastError}`);
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new McpCallFailure("E_MCP_UNKNOWN_SERVER", "MCP is shut down");
    }
    c.failures = 0;
    c.restUntil = 0;
    c.timeouts = 0;
    c.lastError = undefined;
    c.connections++;
    c.client = client;
    c.transport = transport;
    this.log.info(
      { mcp_server: spec.name, connection: c.connections },
      c.connections > 1 ? `MCP server '${spec.name}' reconnected` : `MCP server '${spec.name}' connected`,
    );
    return client;
  }

  private async makeTransport(c: Conn): Promise<Transport> {
    const spec = c.spec;
    if (spec.transport === "stdio") {
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      const t = new StdioClientTransport({
        command: spec.command,
        args: spec.args,
        env: Object.keys(spec.env).length ? spec.env : undefined,
        cwd: spec.cwd,
        stderr: "pipe",
      });
      const stream = t.stderr as Readable | null;
      if (stream) {
        let buf = "";
        stream.on("data", (chunk: Buffer | string) => {
          buf += chunk.toString();
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trimEnd();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            c.stderr.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
            if (c.stderr.length > STDERR_TAIL_LINES) c.stderr.shift();
            this.log.debug({ mcp_server: spec.name }, `stderr: ${line}`);
          }
        });
        stream.on("error", () => undefined);
      }
      return t;
    }
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers } });
  }

  /** List (all pages) and register a server's tools once; later calls return the first listing. */
  private ensureTools(c: Conn, budgetMs: number): Promise<McpToolInfo[]> {
    if (c.tools) return Promise.resolve(c.tools);
    if (c.listing) return c.listing;
    const p = (async () => {
      const client = await withDeadline(
        this.ensureConnected(c),
        budgetMs,
        () =>
          new McpCallFailure(
            "E_MCP_CONNECT_FAILED",
            `MCP server '${c.spec.name}' did not start within ${budgetMs / 1000}s`,
          ),
      );
      const listed: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: budgetMs });
        listed.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      if (c.tools) return c.tools;
      const infos = this.register(c, listed);
      c.tools = infos;
      return infos;
    })().finally(() => {
      if (c.listing === p) c.listing = undefined;
    });
    c.listing = p;
    return p;
  }

  private register(c: Conn, listed: readonly Tool[]): McpToolInfo[] {
    const spec = c.spec;
    const out: McpToolInfo[] = [];
    const seen = new Set<string>();
    for (const t of listed) {
      if (spec.include && !spec.include.includes(t.name)) continue;
      if (spec.exclude.includes(t.name)) continue;
      const info: McpToolInfo = {
        name: mcpToolName(spec.name, t.name),
        server: spec.name,
        tool: t.name,
        description: t.description ?? t.title ?? "",
        inputSchema: (t.inputSchema as Record<string, unknown>) ?? { type: "object", properties: {} },
      };
      if (seen.has(info.name)) {
        this.log.warn(
          { code: "W_MCP_TOOL_SKIPPED", mcp_server: spec.name, tool: t.name },
          `MCP tool '${t.name}' of server '${spec.name}' maps to ${info.name}, already taken by another tool ` +
            "of that server; not registered",
        );
        continue;
      }
      seen.add(info.name);
      if (this.onTool) {
        const release = this.onTool(info, (args, signal) =>
          this.callLogged(spec.name, t.name, args, spec.timeout, { caller: "model", ...(signal ? { signal } : {}) }),
        );
        if (!release) continue;
        c.releases.push(release);
      }
      out.push(info);
    }
    this.log.info(
      { mcp_server: spec.name, tools: out.map((i) => i.name) },
      `MCP server '${spec.name}': ${out.length} tool(s) registered`,
    );
    return out;
  }

  /** Forget a connection (the next call starts the server again). */
  private drop(c: Conn, client: Client): void {
    if (c.client !== client) return;
    c.client = undefined;
    c.transport = undefined;
    client.close().catch(() => undefined);
  }

  /** Close every connection (stdio servers get stdin closed, then SIGTERM, then SIGKILL) and unregister the tools. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing: Array<Promise<unknown>> = [];
    for (const c of this.conns.values()) {
      for (const r of c.releases.splice(0).reverse()) {
        try {
          r();
        } catch {
          // a release never blocks shutdown
        }
      }
      const client = c.client;
      c.client = undefined;
      c.transport = undefined;
      if (client) closing.push(client.close().catch(() => undefined));
      if (c.connecting) closing.push(c.connecting.then((cl) => cl.close()).catch(() => undefined));
    }
    await Promise.all(closing);
  }
}
