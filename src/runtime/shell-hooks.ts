import { basename, dirname } from "node:path";
import { readShellHooks, type ShellHookEntry } from "../config/shell-hooks.js";
import { HOOK_CATALOG } from "../contracts/hook-catalog.js";
import { runArgvInGroup } from "../core/process-group.js";
import { splitWords } from "../core/split-words.js";
import type { Logger } from "pino";
import type { ConfigValue } from "../config/config-file.js";
import type { HookBus, HookPayload } from "./hooks.js";

/** The ledger key every shell hook registration is filed under, so unload and reload drop them. */
export const SHELL_HOOKS_KEY = "shell";

const FIELDS_OUTSIDE_EXTRA = new Set(["tool_name", "args", "session_id", "telemetry_schema_version"]);

/** The original's stdin shape: the event, the tool, the session, and every other field under `extra`. */
export function shellHookInput(hook: string, payload: HookPayload, home: string): string {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(payload)) if (!FIELDS_OUTSIDE_EXTRA.has(k)) extra[k] = v;
  const profile = basename(dirname(home)) === "profiles" ? basename(home) : "default";
  return JSON.stringify(
    {
      hook_event_name: hook,
      tool_name: typeof payload.tool_name === "string" ? payload.tool_name : null,
      tool_input: payload.args ?? null,
      session_id: payload.session_id ?? null,
      cwd: process.cwd(),
      profile,
      extra,
    },
    // Values JSON cannot carry are stringified rather than dropped, as the original does.
    (_k, v) => (typeof v === "bigint" || typeof v === "function" || typeof v === "symbol" ? String(v) : v),
  );
}

/** Claude-Code shaped directives (`decision`/`reason`, `tool_input`) become the kit's `action` shape. */
function normalize(hook: string, value: unknown): unknown {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  const d = value as Record<string, unknown>;
  if (!Object.keys(d).length) return undefined;
  if (HOOK_CATALOG[hook as keyof typeof HOOK_CATALOG]?.combine !== "directive" || d.action !== undefined) return d;
  if (d.decision === "block") return { action: "block", message: d.reason ?? d.message };
  if (d.decision === "modify") return { action: "modify", args: d.tool_input ?? d.args };
  return d;
}

/**
 * The callback one entry becomes: the command runs in its own process group with the payload on stdin;
 * its JSON stdout is the return. Exit 2 on pre_tool_call blocks; any other failure throws, so the bus
 * treats it like a failing plugin callback of that hook (fail-closed for pre_tool_call).
 */
function shellCallback(e: ShellHookEntry, home: string): (payload: HookPayload) => Promise<unknown> {
  const run = async (payload: HookPayload): Promise<unknown> => {
    if (e.matcher && !(typeof payload.tool_name === "string" && e.matcher.test(payload.tool_name))) return undefined;
    const argv = splitWords(e.command, process.env.HOME);
    const r = await runArgvInGroup(argv, {
      env: { ...process.env, HERMES_HOME: home },
      timeoutSeconds: e.timeoutSeconds,
      input: shellHookInput(e.hook, payload, home),
    });
    if (r.timedOut) throw new Error(`timed out after ${e.timeoutSeconds}s; its process group was killed`);
    if (r.startError) throw new Error(`could not start ${argv[0]}: ${r.startError}`);
    const text = r.stdout.trim();
    let parsed: unknown;
    if (text) {
      try {
        parsed = normalize(e.hook, JSON.parse(text));
      } catch {
        if (r.exitCode === 0) throw new Error(`stdout is not JSON: ${text.slice(0, 200)}`);
      }
    }
    if (r.exitCode === 2 && e.hook === "pre_tool_call") {
      const block = parsed as { action?: unknown; message?: unknown } | undefined;
      if (block?.action === "block" && typeof block.message === "string" && block.message.trim()) return block;
      return { action: "block", message: r.stderr.trim().slice(0, 400) || "Blocked by shell hook." };
    }
    if (r.exitCode !== 0) throw new Error(`exited with code ${r.exitCode}: ${r.stderr.trim().slice(0, 200)}`);
    return parsed;
  };
  // The reporter names callbacks by function name: the command says which entry failed.
  Object.defineProperty(run, "name", { value: e.command.length > 80 ? `${e.command.slice(0, 80)}…` : e.command });
  return run;
}

/**
 * Register config.yaml's `hooks:` on the bus after the plugins' callbacks, each entry owned by
 * `shell:<index>`; returns the disposers. Entries that cannot run are logged (W_SHELL_HOOK_SKIPPED).
 */
export function registerShellHooks(bus: HookBus, config: ConfigValue, home: string, log: Logger): Array<() => void> {
  const { entries, problems } = readShellHooks(config);
  for (const p of problems) log.warn({ code: p.code }, p.message);
  return entries.map((e) => bus.add(e.hook, shellCallback(e, home), `shell:${e.index}`, { ownTimeout: true }));
}
