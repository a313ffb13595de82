import { isHermesError } from "../core/errors.js";
import { hasScheme, parseIdentifier } from "../install/identifier.js";
import type { IndexEntry } from "../install/index/parse.js";
import { installIdentifierOf, resolveIndexName, type LoadedIndex } from "../install/index/load.js";
import type { Pack, PackEntry } from "./parse.js";

/**
 * What each pack entry installs:
 *
 * - `repo` wins: `owner/repo[/subdir]` (shorthand) or `<url>#<subdir>` (any git URL);
 * - a bare `name` resolves through the community index by exact, case-insensitive name only;
 *   an ambiguous or unknown name stays unresolved with the closest names as suggestions (never
 *   a guess). The pack's ref is used, never the index's.
 * - Resolution never throws: problems are carried per entry (`pack show` exits 0 with them,
 *   `pack install` fails those entries and installs the rest).
 */

export interface ResolvedEntry {
  entry: PackEntry;
  /** The identifier handed to the installer. */
  identifier?: string;
  /** The index entry a bare name resolved to. */
  index?: IndexEntry;
  /** Index capability labels, for display. */
  capabilities?: string[];
  /** Why the entry cannot be installed. */
  error?: string;
  suggestions?: string[];
}

export interface ResolvedPack {
  entries: ResolvedEntry[];
  /** Set when the index was consulted. */
  indexSource?: LoadedIndex["source"];
  indexStale?: boolean;
}

export function repoIdentifier(repo: string, subdir?: string): string {
  if (!subdir) return repo;
  return hasScheme(repo) ? `${repo.replace(/#.*$/, "")}#${subdir}` : `${repo.replace(/\/+$/, "")}/${subdir}`;
}

/** Resolve every entry; the index is loaded (once) only when some entry has a name and no repo. */
export async function resolvePack(pack: Pack, loadIndex: () => Promise<LoadedIndex>): Promise<ResolvedPack> {
  let index: LoadedIndex | undefined;
  let indexError: string | undefined;
  const needIndex = pack.plugins.some((p) => !p.repo && p.name);
  if (needIndex) {
    try {
      index = await loadIndex();
    } catch (e) {
      indexError = `community index unavailable: ${isHermesError(e) ? e.message : (e as Error).message}`;
    }
  }
  const entries = pack.plugins.map((entry): ResolvedEntry => {
    if (entry.repo) {
      const identifier = repoIdentifier(entry.repo, entry.subdir);
      try {
        const id = parseIdentifier(identifier);
        if (id.kind === "index") return { entry, error: `'${entry.repo}' is neither owner/repo nor a git URL` };
      } catch (e) {
        return { entry, error: (e as Error).message };
      }
      return { entry, identifier };
    }
    if (!index) return { entry, error: indexError ?? "community index unavailable" };
    const r = resolveIndexName(index.entries, entry.name!);
    if (r.kind === "found") {
      return { entry, identifier: installIdentifierOf(r.entry), index: r.entry, capabilities: r.entry.capabilities };
    }
    if (r.kind === "ambiguous") {
      return {
        entry,
        error:
          "ambiguous in the community index " +
          `(${index.source}): ${r.candidates.map((c) => `${c.name} → ${installIdentifierOf(c)}`).join(", ")}`,
        suggestions: r.candidates.map((c) => installIdentifierOf(c)),
      };
    }
    const close = r.closest.map((c) => c.name);
    return {
      entry,
      error:
        "not found in the community index " +
        `(${index.source})${close.length ? `; closest names: ${close.join(", ")}` : ""}`,
      suggestions: close,
    };
  });
  return { entries, indexSource: index?.source, indexStale: index?.stale };
}
