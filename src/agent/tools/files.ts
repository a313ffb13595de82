import { readdir, readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { writeFileAtomic } from "../../core/atomic-fs.js";
import { HermesError } from "../../core/errors.js";
import type { ToolEntry } from "../../runtime/registries.js";

const MAX_READ_BYTES = 1024 * 1024;
const DEFAULT_LINES = 2000;
const MAX_ENTRIES = 1000;

function pathArg(args: Record<string, unknown>): string {
  const p = args.path;
  if (typeof p !== "string" || !p.trim())
    throw new HermesError("E_AGENT_TOOL_ARGS", { message: "a non-empty 'path' string is required" });
  return resolve(p);
}

function tool(
  name: string,
  description: string,
  properties: Record<string, unknown>,
  required: string[],
  handler: ToolEntry["handler"],
): Omit<ToolEntry, "owner"> {
  return {
    name,
    toolset: "file",
    schema: { name, description, parameters: { type: "object", properties, required } },
    requires_env: [],
    description,
    emoji: "📄",
    handler,
  };
}

export const readFileTool = tool(
  "read_file",
  "Read a text file. Returns its lines from `offset` (1-based) up to `limit` lines.",
  {
    path: { type: "string", description: "File path" },
    offset: { type: "integer", description: "First line to return (1-based, default 1)" },
    limit: { type: "integer", description: `Maximum number of lines (default ${DEFAULT_LINES})` },
  },
  ["path"],
  async (args) => {
    const file = pathArg(args);
    const st = await stat(file);
    if (st.isDirectory())
      throw new HermesError("E_AGENT_TOOL_FAILED", { message: `${file} is a directory; use list_dir` });
    if (st.size > MAX_READ_BYTES * 16)
      throw new HermesError("E_AGENT_TOOL_FAILED", { message: `${file} is ${st.size} bytes; too large to read` });
    const text = await readFile(file, "utf8");
    const lines = text.split("\n");
    const offset = typeof args.offset === "number" && args.offset >= 1 ? Math.floor(args.offset) : 1;
    const limit = typeof args.limit === "number" && args.limit >= 1 ? Math.floor(args.limit) : DEFAULT_LINES;
    let content = lines.slice(offset - 1, offset - 1 + limit).join("\n");
    let truncated = offset - 1 + limit < lines.length;
    if (content.length > MAX_READ_BYTES) {
      content = content.slice(0, MAX_READ_BYTES);
      truncated = true;
    }
    return JSON.stringify({ path: file, content, total_lines: lines.length, offset, truncated });
  },
);

export const writeFileTool = tool(
  "write_file",
  "Write a text file (created or replaced atomically; parent folders are created).",
  {
    path: { type: "string", description: "File path" },
    content: { type: "string", description: "The whole new content" },
  },
  ["path", "content"],
  async (args) => {
    const file = pathArg(args);
    if (typeof args.content !== "string")
      throw new HermesError("E_AGENT_TOOL_ARGS", { message: "'content' must be a string" });
    await writeFileAtomic(file, args.content);
    return JSON.stringify({ path: file, bytes_written: Buffer.byteLength(args.content) });
  },
);

export const listDirTool = tool(
  "list_dir",
  "List the entries of a directory (name and type), sorted by name.",
  { path: { type: "string", description: "Directory path (default: the current directory)" } },
  [],
  async (args) => {
    const dir = typeof args.path === "string" && args.path.trim() ? resolve(args.path) : process.cwd();
    const entries = await readdir(dir, { withFileTypes: true });
    const list = entries
      .map((e) => ({
        name: e.name,
        type: e.isDirectory() ? "dir" : e.isSymbolicLink() ? "link" : e.isFile() ? "file" : "other",
      }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    return JSON.stringify({ path: dir, entries: list.slice(0, MAX_ENTRIES), truncated: list.length > MAX_ENTRIES });
  },
);
