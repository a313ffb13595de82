import { existsSync, readFileSync } from "node:fs";
import { deserialize, serialize } from "node:v8";
import { writeFileAtomic } from "./atomic-fs.js";

/**
 * Results derived from files' contents (a parse), kept across processes in one file: an entry per
 * source path, valid only for the content hash it was derived from, and the whole file only for
 * the tag it was written with (the deriving code's version; the V8 version, whose serializer
 * writes it, is added here). V8's serializer keeps what JSON cannot (`undefined` fields). Any
 * entry may be derived again, so a missing, corrupt or foreign file is an empty cache, and the
 * file may be deleted at any time.
 */
const FORMAT = 1;

interface CacheFile {
  format: number;
  tag: string;
  entries: Array<[path: string, hash: string, data: Uint8Array]>;
}

export class ContentCache<T> {
  private dirty = false;
  /** Paths read or stored by this process: they exist (they were just read), so save() need not check them. */
  private readonly touched = new Set<string>();

  private constructor(
    readonly file: string,
    private readonly tag: string,
    private readonly entries: Map<string, { hash: string; data: Uint8Array }>,
  ) {}

  static open<T>(file: string, tag: string): ContentCache<T> {
    const full = `${tag}\0v8 ${process.versions.v8}`;
    const entries = new Map<string, { hash: string; data: Uint8Array }>();
    try {
      const c = deserialize(readFileSync(file)) as CacheFile;
      if (c?.format === FORMAT && c.tag === full && Array.isArray(c.entries))
        for (const [path, hash, data] of c.entries)
          if (typeof path === "string" && typeof hash === "string" && data instanceof Uint8Array)
            entries.set(path, { hash, data });
    } catch {
      // absent, torn or foreign: start empty
    }
    return new ContentCache<T>(file, full, entries);
  }

  /** A fresh copy of what was stored for `path` when its content hashed to `hash`; else undefined. */
  get(path: string, hash: string): T | undefined {
    const e = this.entries.get(path);
    if (!e || e.hash !== hash) return undefined;
    this.touched.add(path);
    try {
      return deserialize(e.data) as T;
    } catch {
      this.entries.delete(path);
      return undefined;
    }
  }

  set(path: string, hash: string, value: T): void {
    this.entries.set(path, { hash, data: serialize(value) });
    this.touched.add(path);
    this.dirty = true;
  }

  /** Write the file when something was added; entries of paths that are gone are dropped then. */
  async save(): Promise<void> {
    if (!this.dirty) return;
    for (const path of this.entries.keys()) if (!this.touched.has(path) && !existsSync(path)) this.entries.delete(path);
    const c: CacheFile = {
      format: FORMAT,
      tag: this.tag,
      entries: [...this.entries].map(([path, e]) => [path, e.hash, e.data]),
    };
    await writeFileAtomic(this.file, serialize(c));
    this.dirty = false;
  }
}
