import { writeFileAtomic } from "../core/atomic-fs.js";
import { withFileLock } from "../core/file-lock.js";
import { readMetadata, type InstallMetadata, type InstallRecord } from "../contracts/install-metadata.js";

/** The reader lives in contracts (compile reads the file too); writing and locking are install's. */
export {
  parseMetadata,
  readMetadata,
  type InstallMetadata,
  type InstallRecord,
} from "../contracts/install-metadata.js";

/** 2-space JSON, keys sorted at every level, trailing newline, so equal metadata is equal bytes. */
export function renderMetadata(meta: InstallMetadata): string {
  const sorted: Record<string, InstallRecord> = {};
  for (const name of Object.keys(meta).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const r = meta[name]!;
    sorted[name] = { pinned: r.pinned, revision: r.revision, source: r.source };
  }
  return `${JSON.stringify(sorted, null, 2)}\n`;
}

export async function writeMetadata(file: string, meta: InstallMetadata): Promise<void> {
  await writeFileAtomic(file, renderMetadata(meta));
}

/** Read-modify-write of one record under the metadata file's lock. `undefined` drops the record. */
export async function setRecord(file: string, name: string, rec: InstallRecord | undefined): Promise<void> {
  await withMetadataLock(file, async () => {
    const meta = await readMetadata(file);
    const had = Object.prototype.hasOwnProperty.call(meta, name);
    if (rec === undefined) {
      if (!had) return;
      delete meta[name];
    } else meta[name] = rec;
    await writeMetadata(file, meta);
  });
}

export function withMetadataLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  return withFileLock(file, fn, { timeoutMs: 60_000 });
}
