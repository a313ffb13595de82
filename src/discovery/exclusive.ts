import { diagnostic, type Diagnostic } from "../core/errors.js";
import { nearest } from "../core/suggest.js";
import { BUILTIN_ENGINE, SLOT_KEY, selects, slotOf, type Selection } from "../config/provider-selection.js";
import type { Candidate } from "./scan.js";

/** Category folders whose plugins are exclusive (selected by config) unless their manifest declares another kind. */
export const EXCLUSIVE_CATEGORIES: ReadonlySet<string> = new Set(["memory", "context_engine"]);

/** The selected plugin of each slot is among the discovered exclusive plugins; else a warning with the nearest name. */
export function selectionDiagnostics(selection: Selection, winners: readonly Candidate[], file?: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const slot of ["memory", "context_engine"] as const) {
    const value = selection[slot];
    if (value === null) continue;
    const pool = winners.filter((c) => c.manifest?.kind === "exclusive" && slotOf(c.category) === slot);
    if (pool.some((c) => selects(value, c.key, c.name))) continue;
    const near = nearest(
      value,
      pool.flatMap((c) => [c.key.split("/").pop()!, c.name]),
      { fragments: true },
    );
    const what = slot === "memory" ? "memory provider" : "context engine";
    const builtin = slot === "memory" ? "built-in memory only" : `the built-in ${BUILTIN_ENGINE}`;
    out.push(
      diagnostic(
        "W_PROVIDER_NOT_FOUND",
        `${SLOT_KEY[slot]} '${value}' names no discovered ${what} plugin${near ? `; did you mean '${near}'?` : ""} ` +
          `(unless an enabled plugin registers one by that name, the agent uses ${builtin})`,
        { file, path: SLOT_KEY[slot] },
      ),
    );
  }
  return out;
}
