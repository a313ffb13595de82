import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic-fs.js";
import { fingerprint, hashTree, listTree, type TreeEntry, type TreeHash } from "./tree-hash.js";
import type { TreeListing } from "./tree-hash-pool.js";

export interface IntegrityOptions {
  /** false: hash store paths like any other. */
  trustStore?: boolean;
  /** Hash every tree, whatever the cache holds. */
  full?: boolean;
}

interface CacheEntry {
  fp: string;
  integrity: string;
  files: Record<string, string>;
}

interface CacheFile {
  version: 1;
  entries: Record<string, CacheEntry>;
}

/** Nix store paths are immutable: their content is fixed by their path. */
export function isStorePath(p: string): boolean {
  return p.startsWith("/nix/store/");
}

/**
 * Tree hashes keyed by real path and a stat fingerprint, so a recompile re-reads only files whose
 * size, mtime, inode or mode changed. A cache entry is a hint: when in doubt the tree is hashed.
 */
export class IntegrityCache {
  private data: CacheFile = { version: 1, entries: {} };
  private dirty = false;
  private readonly used = new Set<string>();
  /** Trees listed by this run (store paths are immutable and not listed), for the no-op check. */
  readonly listed = new Map<string, TreeEntry[]>();

  constructor(private readonly file: string) {}

  static async open(cacheDir: string): Promise<IntegrityCache> {
    const c = new IntegrityCache(join(cacheDir, "integrity.json"));
    try {
      const raw = JSON.parse(await fsp.readFile(c.file, "utf8")) as CacheFile;
      if (raw?.version === 1 && raw.entries && typeof raw.entries === "object") c.data = raw;
    } catch {
      // absent or corrupt: start empty
    }
    return c;
  }

  /** Integrity (and per-file hashes) of the tree at `realPath`; store paths are trusted by path. */
  async integrity(realPath: string, opts: IntegrityOptions = {}): Promise<TreeHash> {
    this.used.add(realPath);
    const stored = this.storeHit(realPath, opts);
    if (stored) return stored;
    // `realPath` is real already (callers resolve it): no second realpath per tree.
    const entries = await listTree(realPath, realPath);
    return this.settle(realPath, entries, fingerprint(entries), opts, () => hashTree(realPath, entries, realPath));
  }

  /**
   * What the pool's worker needs to list (and maybe hash) a tree: the fingerprint the cache holds for it.
   * Undefined when the store record answers without a listing. Read-only: a tree offered but never asked
   * for (a folder that loses to another) is not kept.
   */
  offer(realPath: string, opts: IntegrityOptions = {}): { knownFp?: string } | undefined {
    if (this.storeHit(realPath, opts)) return undefined;
    const cached = this.data.entries[realPath];
    return { knownFp: !opts.full && cached?.files ? cached.fp : undefined };
  }

  /** A listing (and the hash, when one was made) done by the pool's worker, taken as `integrity()` takes its own. */
  adopt(realPath: string, r: TreeListing, opts: IntegrityOptions = {}): Promise<TreeHash> {
    this.used.add(realPath);
    const hashed = r.integrity !== undefined && r.files ? { integrity: r.integrity, files: r.files } : undefined;
    return this.settle(realPath, r.entries, r.fp, opts, async () => hashed ?? hashTree(realPath, r.entries, realPath));
  }

  private storeHit(realPath: string, opts: IntegrityOptions): TreeHash | undefined {
    const cached = this.data.entries[realPath];
    return !opts.full && opts.trustStore !== false && isStorePath(realPath) && cached?.fp === "store" && cached.files
      ? cached
      : undefined;
  }

  /** The cached hashes when the listing's fingerprint still matches them, else `hash()`'s, recorded. */
  private async settle(
    realPath: string,
    entries: TreeEntry[],
    listingFp: string,
    opts: IntegrityOptions,
    hash: () => Promise<TreeHash>,
  ): Promise<TreeHash> {
    this.listed.set(realPath, entries);
    const cached = this.data.entries[realPath];
    const fp = isStorePath(realPath) && opts.trustStore !== false ? "store" : listingFp;
    if (!opts.full && cached && cached.fp === fp && cached.files) return cached;
    const { integrity, files } = await hash();
    if (!cached || cached.fp !== fp || cached.integrity !== integrity) {
      this.data.entries[realPath] = { fp, integrity, files };
      this.dirty = true;
    }
    return { integrity, files };
  }

  /**
   * The hashes recorded for `realPath` when its stat fingerprint (`entries`) still matches the one
   * they were computed under; `undefined` means "hash it". Read-only: `lock verify`'s quick check.
   */
  recorded(realPath: string, entries: readonly TreeEntry[]): TreeHash | undefined {
    const cached = this.data.entries[realPath];
    return cached?.files && cached.fp === fingerprint(entries) ? cached : undefined;
  }

  /** Persist when something changed; entries not used by this run are dropped. */
  async save(): Promise<void> {
    for (const k of Object.keys(this.data.entries)) {
      if (!this.used.has(k)) {
        delete this.data.entries[k];
        this.dirty = true;
      }
    }
    if (!this.dirty) return;
    await writeFileAtomic(this.file, `${JSON.stringify(this.data)}\n`);
    this.dirty = false;
  }
}
