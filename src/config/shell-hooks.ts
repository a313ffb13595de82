import { FIRED_HOOKS, HOOK_CATALOG, HOOK_NAMES, isHookName, type HookName } from "../contracts/hook-catalog.js";
import { SHELL_HOOK_DEFAULT_TIMEOUT, SHELL_HOOK_MAX_TIMEOUT } from "../contracts/shell-hooks.js";
import { diagnostic, type Diagnostic } from "../core/errors.js";
import { nearest } from "../core/suggest.js";
import type { ConfigValue } from "./config-file.js";

/** One entry of the top-level `hooks:` mapping of config.yaml. */
export interface ShellHookEntry {
  hook: HookName;
  /** Position in `hooks.<hook>`: the entry's owner is `shell:<index>`. */
  index: number;
  command: string;
  matcher?: RegExp;
  timeoutSeconds: number;
}

/** Hooks whose payload names a tool: the only ones a `matcher` can select on. */
export function takesMatcher(hook: HookName): boolean {
  return (HOOK_CATALOG[hook].payload as readonly string[]).includes("tool_name");
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function entryOf(hook: HookName, index: number, raw: unknown): ShellHookEntry | string {
  if (!isMapping(raw)) return "an entry must be a mapping with a `command`";
  if (typeof raw.command !== "string" || !raw.command.trim()) return "`command` must be a non-empty string";
  const entry: ShellHookEntry = { hook, index, command: raw.command, timeoutSeconds: SHELL_HOOK_DEFAULT_TIMEOUT };
  if (raw.timeout !== undefined && raw.timeout !== null) {
    if (typeof raw.timeout !== "number" || !(raw.timeout > 0) || raw.timeout > SHELL_HOOK_MAX_TIMEOUT)
      return `\`timeout\` must be a number of seconds above 0 and at most ${SHELL_HOOK_MAX_TIMEOUT}`;
    entry.timeoutSeconds = raw.timeout;
  }
  if (raw.matcher !== undefined && raw.matcher !== null) {
    if (!takesMatcher(hook)) return `\`matcher\` selects tools, and ${hook} is not about a tool call`;
    if (typeof raw.matcher !== "string") return "`matcher` must be a regular expression string";
    try {
      entry.matcher = new RegExp(raw.matcher);
    } catch (e) {
      return `\`matcher\` is not a valid regular expression: ${(e as Error).message}`;
    }
  }
  return entry;
}

/**
 * The shell hooks config.yaml declares, and why any entry is not run (W_SHELL_HOOK_SKIPPED): an
 * unknown hook, one hermes-kit never fires, or a malformed entry is skipped, never half-accepted.
 */
export function readShellHooks(config: ConfigValue): { entries: ShellHookEntry[]; problems: Diagnostic[] } {
  const entries: ShellHookEntry[] = [];
  const problems: Diagnostic[] = [];
  const skip = (path: Array<string | number>, why: string) =>
    problems.push(
      diagnostic("W_SHELL_HOOK_SKIPPED", `${["hooks", ...path].join(".")}: ${why}; not run`, {
        path: ["hooks", ...path].join("."),
      }),
    );
  const raw = config.hooks;
  if (raw === undefined || raw === null) return { entries, problems };
  if (!isMapping(raw)) {
    skip([], "`hooks` must map hook names to lists of entries");
    return { entries, problems };
  }
  for (const [name, list] of Object.entries(raw)) {
    if (!isHookName(name)) {
      const near = nearest(name, HOOK_NAMES);
      skip([name], `unknown hook${near ? ` (did you mean ${near}?)` : ""}`);
      continue;
    }
    if (!FIRED_HOOKS.has(name)) {
      skip([name], "hermes-kit never fires this hook (see docs/hooks.md)");
      continue;
    }
    if (!Array.isArray(list)) {
      skip([name], "must be a list of entries");
      continue;
    }
    list.forEach((item, i) => {
      const e = entryOf(name, i, item);
      if (typeof e === "string") skip([name, i], e);
      else entries.push(e);
    });
  }
  return { entries, problems };
}
