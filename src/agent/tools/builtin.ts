import type { Runtime } from "../../runtime/runtime.js";
import { listDirTool, readFileTool, writeFileTool } from "./files.js";
import { mediaTools } from "./media.js";
import { agentTools, type AgentToolHost } from "./agent-tools.js";
import { terminalTool, type TerminalDeps } from "./terminal.js";
import { voiceTools, type VoiceHost } from "./voice.js";

export const BUILTIN_TOOL_NAMES = [
  "terminal",
  "read_file",
  "write_file",
  "list_dir",
  "image_generate",
  "video_generate",
  "skill_view",
  "delegate_task",
  "text_to_speech",
  "transcribe_audio",
] as const;

/**
 * Register the agent's own tools (owner `builtin`) in the runtime's tool registry, the one every
 * tool source shares (plugins, MCP servers). Call it before plugins load, so a plugin replaces a
 * built-in only through `override: true` with the tools.override consent; a name already taken
 * is left to its owner. `transformOutput` runs transform_terminal_output (the agent routes it through its
 * timeline). Returns a disposer.
 */
export function registerBuiltinTools(
  runtime: Pick<Runtime, "registerBuiltinTool" | "tools" | "providers"> & AgentToolHost & VoiceHost,
  deps: TerminalDeps,
): () => void {
  const releases: Array<() => void> = [];
  for (const entry of [
    terminalTool(deps, runtime.providers),
    readFileTool,
    writeFileTool,
    listDirTool,
    ...mediaTools({ providers: runtime.providers, config: deps.config }),
    ...agentTools(runtime, deps),
    ...voiceTools(runtime),
  ]) {
    if (runtime.tools.get(entry.name)) continue;
    releases.push(runtime.registerBuiltinTool(entry));
  }
  return () => {
    for (const r of releases.reverse()) r();
  };
}
