import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { HookPayloadOf } from "../../contracts/hook-catalog.js";
import { HermesError } from "../../core/errors.js";
import { superviseGroup } from "../../core/process-group.js";
import type { ProviderRegistry, ToolEntry } from "../../runtime/registries.js";
import {
  type BackendCommand,
  type BackendRun,
  LOCAL_BACKEND,
  runOnBackend,
  terminalBackendName,
} from "./terminal-backend.js";

export interface TerminalSettings {
  timeoutSeconds: number;
  maxTimeoutSeconds: number;
  outputLimit: number;
}

/** `terminal.timeout` (default 180 s), `terminal.max_timeout` (600 s), `terminal.output_limit` (50 000 characters). */
export function terminalSettings(config: Record<string, unknown>): TerminalSettings {
  const t = (config.terminal ?? {}) as Record<string, unknown>;
  const num = (v: unknown, d: number) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : d);
  const max = num(t.max_timeout, 600);
  return {
    timeoutSeconds: Math.min(num(t.timeout, 180), max),
    maxTimeoutSeconds: max,
    outputLimit: Math.floor(num(t.output_limit, 50_000)),
  };
}

/** Keep the head and the tail (where errors usually are) of an over-long output. */
export function limitOutput(output: string, limit: number): string {
  if (output.length <= limit) return output;
  const head = Math.floor(limit * 0.4);
  const tail = limit - head;
  return (
    `${output.slice(0, head)}\n… [${output.length - limit} characters truncated; output limit ${limit}] ` +
    `…\n${output.slice(-tail)}`
  );
}

export const TERMINAL_SCHEMA = {
  name: "terminal",
  description:
    "Run a shell command and return its combined output and exit code. Commands that could destroy data need " +
    "the user's approval.",
  parameters: {
    type: "object",
    properties: {
      command: { type: "string", description: "The shell command to run" },
      workdir: { type: "string", description: "Working directory (default: the current directory)" },
      timeout: {
        type: "integer",
        description: "Seconds before the command is killed (default 180, at most terminal.max_timeout)",
      },
    },
    required: ["command"],
  },
};

/**
 * The `terminal` tool: the command runs through execa in a shell, in `workdir`, under a timeout,
 * cancelled by an interrupt. `transform_terminal_output` may rewrite the output before the output
 * limit applies. Policy (hardline blocks, approvals) runs before the tool,
 * in the tool-call pipeline, on the effective arguments.
 */
/** What the terminal tool needs from its host: the transform_terminal_output fold, and the live config. */
export interface TerminalDeps {
  transformOutput: (payload: HookPayloadOf<"transform_terminal_output">) => Promise<string | undefined>;
  config: () => Record<string, unknown>;
}

/** The command's directory: `workdir` resolved, or the current one; it must be an existing directory. */
function terminalWorkdir(requested: string | null): string {
  const workdir = resolve(requested ?? process.cwd());
  let isDir = false;
  try {
    isDir = statSync(workdir).isDirectory();
  } catch {
    /* reported below */
  }
  if (!isDir)
    throw new HermesError("E_AGENT_TOOL_FAILED", {
      message: `workdir ${workdir} does not exist or is not a directory`,
    });
  return workdir;
}

/** Run the command in a shell under the timeout, killing its whole process group on timeout or interrupt. */
async function runInGroup(command: string, workdir: string, timeoutS: number, signal: AbortSignal | undefined) {
  // Its own process group, so an interrupt or the timeout ends the whole command (a shell's
  // children included), not just the shell; Ctrl-C at the terminal reaches only hermes.
  const { execa } = await import("execa");
  const sub = execa(command, {
    shell: true,
    cwd: workdir,
    detached: process.platform !== "win32",
    reject: false,
    all: true,
    stdin: "ignore",
    stripFinalNewline: false,
    maxBuffer: 16 * 1024 * 1024,
  });
  const watch = superviseGroup(sub, timeoutS, signal);
  let r: Awaited<typeof sub>;
  try {
    r = await sub;
  } finally {
    watch.release();
  }
  return { r, timedOut: watch.timedOut, canceled: watch.canceled };
}

/** The built-in `local` backend: the command in a shell here, in `workdir` (an existing directory). */
async function runLocal(cmd: BackendCommand): Promise<BackendRun> {
  const workdir = terminalWorkdir(cmd.workdir);
  const { r, timedOut, canceled } = await runInGroup(cmd.command, workdir, cmd.timeoutS, cmd.signal);
  const returncode = typeof r.exitCode === "number" ? r.exitCode : null;
  return {
    output: typeof r.all === "string" ? r.all : "",
    returncode,
    timedOut,
    canceled,
    error: r.failed && returncode === null ? (r.shortMessage ?? "failed") : null,
  };
}

export function terminalTool(deps: TerminalDeps, providers: ProviderRegistry): Omit<ToolEntry, "owner"> {
  return {
    name: "terminal",
    toolset: "terminal",
    schema: TERMINAL_SCHEMA,
    requires_env: [],
    description: TERMINAL_SCHEMA.description,
    emoji: "💻",
    handler: async (args, extra) => {
      const config = deps.config();
      const s = terminalSettings(config);
      const command = args.command;
      if (typeof command !== "string" || !command.trim())
        throw new HermesError("E_AGENT_TOOL_ARGS", { message: "terminal needs a non-empty 'command' string" });
      const requested = typeof args.timeout === "number" && args.timeout > 0 ? args.timeout : s.timeoutSeconds;
      const timeoutS = Math.min(requested, s.maxTimeoutSeconds);
      const backend = terminalBackendName(config);
      const cmd: BackendCommand = {
        command,
        workdir: typeof args.workdir === "string" && args.workdir.trim() ? args.workdir : null,
        timeoutS,
        signal: extra.signal instanceof AbortSignal ? extra.signal : undefined,
        task_id: typeof extra.task_id === "string" ? extra.task_id : null,
      };
      const run = backend === LOCAL_BACKEND ? await runLocal(cmd) : await runOnBackend(providers, backend, cmd);
      if (run.canceled)
        throw new HermesError("E_AGENT_INTERRUPTED", { message: `interrupted; the command was killed (${command})` });
      let output = run.output;
      const replaced = await deps.transformOutput({
        command,
        output,
        returncode: run.returncode,
        task_id: cmd.task_id,
        env_type: backend,
      });
      if (replaced !== undefined) output = replaced;
      output = limitOutput(output, s.outputLimit);
      const stopped = backend === LOCAL_BACKEND ? "the command was killed" : `backend '${backend}' was told to stop`;
      const error = run.timedOut ? `timed out after ${timeoutS}s; ${stopped}` : run.error;
      return JSON.stringify({ output, exit_code: run.timedOut ? 124 : run.returncode, error });
    },
  };
}
