import { randomUUID } from "node:crypto";

/** Correlation ids: opaque, unique, readable in logs (`sess_…`, `turn_…`, `req_…`, `call_…`). */
export function newId(prefix: "sess" | "task" | "turn" | "req" | "call" | "aux" | "subagent"): string {
  return `${prefix}_${randomUUID().replace(/-/g, "")}`;
}
