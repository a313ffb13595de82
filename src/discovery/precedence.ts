import { diagnostic, type Diagnostic } from "../core/errors.js";
import { withoutNixPrefix } from "../contracts/plugin-record.js";
import type { Candidate } from "./scan.js";

export interface Shadow {
  candidate: Candidate;
  by: Candidate;
  reason: "shadowed" | "impostor" | "directory-wins";
}

export interface Resolution {
  /** One candidate per key, in key order. */
  winners: Candidate[];
  shadowed: Shadow[];
  /** Keys claimed by two plugins of the same source: none of them wins. */
  conflicts: Map<string, Candidate[]>;
  diagnostics: Diagnostic[];
}

const RANK = { bundled: 0, user: 1, project: 2 } as const;

function folderName(c: Candidate): string {
  return withoutNixPrefix(c.dirName);
}

/**
 * Later sources win (project > user > bundled); a user/project plugin that takes a bundled key
 * from a differently named folder is an impostor and is ignored; npm packages never shadow a
 * directory plugin. Two plugins of one source with one key is an error naming both paths.
 */
export function resolveWinners(candidates: readonly Candidate[]): Resolution {
  const diagnostics: Diagnostic[] = [];
  const shadowed: Shadow[] = [];
  const conflicts = new Map<string, Candidate[]>();
  const bySource = new Map<string, Map<string, Candidate[]>>();
  for (const c of candidates) {
    const m = bySource.get(c.source) ?? new Map<string, Candidate[]>();
    m.set(c.key, [...(m.get(c.key) ?? []), c]);
    bySource.set(c.source, m);
  }
  const single = new Map<string, Map<string, Candidate>>();
  for (const [source, byKey] of bySource) {
    const ok = new Map<string, Candidate>();
    for (const [key, list] of byKey) {
      if (list.length > 1) {
        conflicts.set(key, [...(conflicts.get(key) ?? []), ...list]);
        diagnostics.push({
          ...diagnostic(
            "E_DISCOVERY_DUPLICATE_KEY",
            `plugin key '${key}' is claimed by ${list.map((c) => c.path).join(" and ")}`,
            {
              file: list[1]!.manifestFile ?? list[1]!.path,
            },
          ),
          // Each is still addressable by its folder; the fix is one rename or one removal.
          hint:
            `neither loads: rename the \`name:\` in one plugin.yaml or remove one folder; inspect each ` +
            `with ${list.map((c) => `\`hermes plugins why ${c.path}\``).join(" / ")}`,
        });
      } else ok.set(key, list[0]!);
    }
    single.set(source, ok);
  }
  const winners = new Map<string, Candidate>();
  const bundled = single.get("bundled") ?? new Map<string, Candidate>();
  for (const source of ["bundled", "user", "project"] as const) {
    for (const [key, c] of single.get(source) ?? []) {
      if (conflicts.has(key)) continue;
      const prev = winners.get(key);
      const b = bundled.get(key);
      if (source !== "bundled" && b && folderName(b) !== folderName(c)) {
        shadowed.push({ candidate: c, by: b, reason: "impostor" });
        diagnostics.push(
          diagnostic(
            "W_DISCOVERY_IMPOSTOR",
            `${c.path} claims the bundled key '${key}' from a folder named '${c.dirName}'; ignored (rename ` +
              `the folder to '${b.dirName}' to override the bundled plugin)`,
            { file: c.manifestFile ?? c.path },
          ),
        );
        continue;
      }
      if (prev && RANK[source] > RANK[prev.source as keyof typeof RANK])
        shadowed.push({ candidate: prev, by: c, reason: "shadowed" });
      winners.set(key, c);
    }
  }
  for (const [key, c] of single.get("npm") ?? []) {
    if (conflicts.has(key)) continue;
    const dir = winners.get(key);
    if (dir) shadowed.push({ candidate: c, by: dir, reason: "directory-wins" });
    else winners.set(key, c);
  }
  const sorted = [...winners.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { winners: sorted, shadowed, conflicts, diagnostics };
}
