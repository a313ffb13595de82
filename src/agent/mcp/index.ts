export { attachMcp, type AttachMcpOptions, type AttachedMcp } from "./attach.js";
export {
  mcpToolName,
  parseMcpServers,
  sanitizeMcpName,
  MCP_CONNECT_TIMEOUT_DEFAULT,
  MCP_TOOL_TIMEOUT_DEFAULT,
  type McpConfig,
  type McpServerSpec,
} from "./config.js";
export { McpCallFailure, McpManager, rawFromCallResult, type McpServerStatus, type McpToolInfo } from "./manager.js";
export { buildMcpEnvelope, McpPermissionError, normalizeMcpTimeout, type McpEnvelope } from "../../runtime/mcp-call.js";
