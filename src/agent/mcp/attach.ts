import type { Logger } from "pino";
import { formatDiagnostic } from "../../core/errors.js";
import { loadConfig } from "../../config/config-file.js";
import type { Runtime } from "../../runtime/runtime.js";
import { parseMcpServers } from "./config.js";
import { McpManager, type McpServerStatus } from "./manager.js";

export interface AttachMcpOptions {
  /** The parsed config.yaml; read from the runtime's home when absent. */
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  /**
   * Connect every enabled server now and register its tools (default true). With false, nothing
   * starts until the first `ctx.call_mcp` (and tools appear once a server has been reached).
   */
  discover?: boolean;
}

export interface AttachedMcp {
  manager: McpManager;
  /** Per-server outcome of discovery (empty when discovery was skipped or no server is configured). */
  servers: McpServerStatus[];
}

/**
 * Attach the MCP client to a runtime: read `mcp_servers`, register each server's tools as
 * `mcp_<server>_<tool>` (owner `mcp:<server>`, toolset `mcp-<server>`) beside the built-ins, and
 * route `ctx.call_mcp` through the same connections. Call it from the `beforeLoad` option of
 * `startRuntime` (so a plugin can replace an MCP tool only with `tools.override`), or after start
 * (then a tool name a plugin already holds is skipped with W_MCP_TOOL_SKIPPED). Close with
 * `manager.close()` (or `runtime.mcp.close()`) on shutdown.
 */
export async function attachMcp(runtime: Runtime, opts: AttachMcpOptions = {}): Promise<AttachedMcp> {
  const log = (opts.log ?? runtime.log).child({ component: "mcp" });
  if (runtime.mcp) await runtime.mcp.close().catch(() => undefined);
  const config = opts.config ?? (await loadConfig(runtime.configFile)).value;
  const parsed = parseMcpServers(config as Record<string, unknown>, {
    baseDir: runtime.home,
    env: opts.env,
    file: runtime.configFile,
  });
  for (const d of parsed.diagnostics) log.warn({ code: d.code }, formatDiagnostic(d, { hint: false }));
  const manager = new McpManager(parsed.servers, {
    log,
    onTool: (info, call) => {
      const held = runtime.tools.get(info.name);
      if (held) {
        log.warn(
          { code: "W_MCP_TOOL_SKIPPED", mcp_server: info.server, tool: info.tool },
          `MCP tool ${info.name} not registered: the name is held by '${held.owner}'`,
        );
        return undefined;
      }
      return runtime.tools.lease(info.name, {
        name: info.name,
        toolset: `mcp-${info.server}`,
        schema: { name: info.name, description: info.description, parameters: info.inputSchema },
        // A failure (crash, hang, refusal) throws, so the agent reports the call with status error.
        handler: (args, extra) => {
          const signal = extra?.signal instanceof AbortSignal ? extra.signal : undefined;
          return call(args && typeof args === "object" && !Array.isArray(args) ? args : {}, signal);
        },
        requires_env: [],
        description: info.description,
        emoji: "",
        owner: `mcp:${info.server}`,
      });
    },
  });
  runtime.mcp = manager;
  const servers = opts.discover === false || parsed.servers.length === 0 ? [] : await manager.discover();
  return { manager, servers };
}
