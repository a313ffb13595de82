import type { Diagnostic } from "../core/errors.js";
import { resolveWinners, type Resolution } from "./precedence.js";
import type { ManifestCache } from "../manifest/parse-cache.js";
import { sourceRoots, type RootOptions, type SourceRoot } from "./roots.js";
import { BUNDLED_SKIP, scanNodeModules, scanRoot, type Candidate, type Looked } from "./scan.js";

export { sourceRoots, type SourceRoot };

export interface DiscoverOptions extends RootOptions {
  /** Parses kept by content hash; the caller opens it and decides whether to save it. */
  manifests?: ManifestCache;
  /** Told the real path of each plugin folder as soon as it is found (scan.ts). */
  onPluginFolder?: (realPath: string) => void;
  /** Rewrite the scanned candidates before precedence (the compiler swaps in a deploy spec's links). */
  adjust?: (candidates: Candidate[]) => Candidate[];
}

export interface Discovery {
  roots: SourceRoot[];
  candidates: Candidate[];
  resolution: Resolution;
  diagnostics: Diagnostic[];
  /** What the scan read outside plugin trees (scan.ts), for the no-op record. */
  looked: Looked;
}

/** Manifest-only discovery of every source; imports no plugin code. */
export async function discover(opts: DiscoverOptions): Promise<Discovery> {
  const roots = sourceRoots(opts);
  const scans = await Promise.all(
    roots.map((r) =>
      r.source === "npm"
        ? scanNodeModules(r.dir, opts.manifests)
        : scanRoot(r.dir, r.source, {
            skipTop: r.source === "bundled" ? BUNDLED_SKIP : undefined,
            manifests: opts.manifests,
            onPluginFolder: opts.onPluginFolder,
          }),
    ),
  );
  const scanned = scans.flatMap((s) => s.candidates);
  const candidates = opts.adjust ? opts.adjust(scanned) : scanned;
  const resolution = resolveWinners(candidates);
  return {
    roots,
    candidates,
    resolution,
    diagnostics: [...scans.flatMap((s) => s.diagnostics), ...resolution.diagnostics],
    looked: { dirs: scans.flatMap((s) => s.looked.dirs), files: scans.flatMap((s) => s.looked.files) },
  };
}
