import type { Runtime } from "../../runtime/runtime.js";
import { listDirTool, readFileTool, writeFileTool } from "./files.js";
import { terminalTool, type TerminalDeps } from "./terminal.js";

export const BUILTIN_TOOL_NAMES = ["terminal", "read_file", "write_file", "list_dir"] as const;

/**
 * Register the agent's own tools (owner `builtin`) in the runtime's tool registry, the one every
 * tool source shares (plugins, MCP servers). Call it before plugins load, so a plugin replaces a
 * built-in only through `override: true` with the tools.override consent; a name already taken
 * is left to its owner. `transformOutput` runs transform_terminal_output (the agent routes it through its
 * timeline). Returns a disposer.
 */
export function registerBuiltinTools(
  runtime: Pick<Runtime, "registerBuiltinTool" | "tools">,
  deps: TerminalDeps,
): () => void {
  const releases: Array<() => void> = [];
  for (const entry of [terminalTool(deps), readFileTool, writeFileTool, listDirTool]) {
    if (runtime.tools.get(entry.name)) continue;
    releases.push(runtime.registerBuiltinTool(entry));
  }
  return () => {
    for (const r of releases.reverse()) r();
  };
}
