import { resolve } from "node:path";
import { checkCommand, checkWritePath } from "./approvals/dangerous.js";

export interface GuardVerdict {
  /** Refused outright, before any approval is asked. */
  hardline?: { key: string; description: string };
  /** Needs a person's approval; the pattern keys name what an "always" answer approves. */
  approval?: { command: string; description: string; pattern_key: string; pattern_keys: string[] };
}

/**
 * The built-in guardrails, evaluated on the effective arguments (after tool_request middleware
 * and pre_tool_call modifications): terminal commands against the hardline and dangerous
 * patterns (whatever backend `terminalBackend` names runs them), write_file against sensitive paths.
 */
export function guard(toolName: string, args: Record<string, unknown>, terminalBackend = "local"): GuardVerdict {
  if (toolName === "terminal" && typeof args.command === "string") {
    const v = checkCommand(args.command);
    if (v.hardline) return { hardline: { key: v.hardline.key, description: v.hardline.description } };
    if (v.dangerous.length) {
      // A person approving a command should know where it runs when that is not this machine.
      const where = terminalBackend === "local" ? "" : ` (on terminal backend '${terminalBackend}')`;
      return {
        approval: {
          command: args.command,
          description: v.dangerous.map((d) => d.description).join(", ") + where,
          pattern_key: v.dangerous[0]!.key,
          pattern_keys: v.dangerous.map((d) => d.key),
        },
      };
    }
  }
  if (toolName === "write_file" && typeof args.path === "string") {
    const p = checkWritePath(resolve(args.path));
    if (p)
      return {
        approval: {
          command: `write_file ${resolve(args.path)}`,
          description: p.description,
          pattern_key: p.key,
          pattern_keys: [p.key],
        },
      };
  }
  return {};
}
