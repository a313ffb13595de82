import { sha256Bytes } from "../../core/hash.js";
import { constants, gunzipSync, gzipSync } from "node:zlib";
import type { ReadEntry } from "tar";

/**
 * The bundle's container: a POSIX tar (ustar, with pax records only for long or non-ASCII
 * names), gzip-compressed, written byte-for-byte deterministically:
 *
 * - entries sorted by path (UTF-8 bytes), folders included, each folder before its contents;
 * - mtime 0, uid/gid 0, empty user/group names, mode 0755 for folders and executables, 0644
 *   for other files, 0777 for symlinks; nothing from the exporting machine (umask, owner, clock);
 * - gzip level 9, header without name or timestamp and with OS = 255 ("unknown"), so the same
 *   entries give the same bytes on Linux and macOS (zlib writes a platform byte otherwise);
 * - the gzip header's extra field (RFC 1952 FEXTRA, subfield `HK`) holds the sha256 of
 *   everything after the header (compressed data, CRC-32, length). Gzip's own CRC covers the
 *   *uncompressed* bytes only, and a deflate stream has bits that inflate ignores (padding,
 *   unused code lengths), so without this a changed byte could still inflate to the same tar.
 *
 * Reading checks the header byte for byte and the sha256 before inflating; then node-tar's
 * strict parser (checksums, pax) lists the entries. Any changed, added or missing byte of the
 * file is refused before a single entry is looked at.
 */

export type TarType = "file" | "dir" | "symlink";

export interface TarEntry {
  /** `/`-separated, relative; folders without a trailing slash. */
  path: string;
  type: TarType;
  /** Permission bits (0o644, 0o755); ignored for symlinks (0o777). */
  mode?: number;
  data?: Buffer;
  linkpath?: string;
}

const BLOCK = 512;
/**
 * The 16 bytes every bundle starts with: gzip magic, deflate, FLG = FEXTRA, mtime 0, max
 * compression, OS unknown, XLEN 36, subfield `HK` of 32 bytes (the sha256 that follows).
 */
export const GZIP_HEADER = Buffer.from([
  0x1f, 0x8b, 0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff, 36, 0, 0x48, 0x4b, 32, 0,
]);
const HEADER_LEN = GZIP_HEADER.length + 32;

/** gzip `raw` in the canonical form described in the module comment. */
export function gzipCanonical(raw: Buffer): Buffer {
  const gz = gzipSync(raw, { level: 9, memLevel: 8, strategy: constants.Z_DEFAULT_STRATEGY });
  // zlib's own 10-byte header (no flags) is replaced; the rest is deflate data, CRC-32, length.
  const body = gz.subarray(10);
  return Buffer.concat([GZIP_HEADER, sha256Bytes(body), body]);
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, "0")}\0`;
}

function isAscii(s: string): boolean {
  return /^[\x20-\x7e]*$/.test(s);
}

function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return Buffer.from(`${len}${body}`, "utf8");
}

/** ustar name/prefix split, when the path fits: name ≤ 100 bytes, prefix ≤ 155, split at a '/'. */
function splitUstar(p: string): { name: string; prefix: string } | undefined {
  if (!isAscii(p)) return undefined;
  if (p.length <= 100) return { name: p, prefix: "" };
  for (let i = p.length - 1; i > 0; i--) {
    if (p[i] !== "/") continue;
    const prefix = p.slice(0, i);
    const name = p.slice(i + 1);
    if (prefix.length <= 155 && name.length <= 100 && name.length > 0) return { name, prefix };
  }
  return undefined;
}

function header(f: {
  name: string;
  prefix: string;
  mode: number;
  size: number;
  typeflag: string;
  linkname: string;
}): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  h.write(f.name, 0, 100, "utf8");
  h.write(octal(f.mode, 8), 100, 8, "ascii");
  h.write(octal(0, 8), 108, 8, "ascii");
  h.write(octal(0, 8), 116, 8, "ascii");
  h.write(octal(f.size, 12), 124, 12, "ascii");
  h.write(octal(0, 12), 136, 12, "ascii");
  h.write("        ", 148, 8, "ascii");
  h.write(f.typeflag, 156, 1, "ascii");
  h.write(f.linkname, 157, 100, "utf8");
  h.write("ustar\0", 257, 6, "ascii");
  h.write("00", 263, 2, "ascii");
  h.write(f.prefix, 345, 155, "utf8");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return h;
}

function pad(n: number): Buffer {
  const r = n % BLOCK;
  return r ? Buffer.alloc(BLOCK - r, 0) : Buffer.alloc(0);
}

function entryBytes(e: TarEntry): Buffer[] {
  const full = e.type === "dir" ? `${e.path}/` : e.path;
  const typeflag = e.type === "dir" ? "5" : e.type === "symlink" ? "2" : "0";
  const mode = e.type === "symlink" ? 0o777 : e.type === "dir" ? 0o755 : (e.mode ?? 0o644) & 0o111 ? 0o755 : 0o644;
  const data = e.type === "file" ? (e.data ?? Buffer.alloc(0)) : Buffer.alloc(0);
  const link = e.linkpath ?? "";
  const split = splitUstar(full);
  const linkFits = isAscii(link) && link.length <= 100;
  const out: Buffer[] = [];
  if (!split || !linkFits) {
    const records: Buffer[] = [];
    if (!split) records.push(paxRecord("path", full));
    if (!linkFits) records.push(paxRecord("linkpath", link));
    const body = Buffer.concat(records);
    const base = full.replace(/\/$/, "").split("/").pop()!;
    const paxName = `PaxHeader/${isAscii(base) ? base.slice(0, 90) : "entry"}`;
    out.push(
      header({ name: paxName, prefix: "", mode: 0o644, size: body.length, typeflag: "x", linkname: "" }),
      body,
      pad(body.length),
    );
  }
  const name = split ?? {
    name: Buffer.from(full, "utf8")
      .subarray(0, 100)
      .toString("latin1")
      .replace(/[^\x20-\x7e]/g, "_"),
    prefix: "",
  };
  out.push(
    header({ name: name.name, prefix: name.prefix, mode, size: data.length, typeflag, linkname: linkFits ? link : "" }),
  );
  if (data.length) out.push(data, pad(data.length));
  return out;
}

function comparePaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** A deterministic .tar.gz of `entries` (sorted here; folders implied by paths are added). */
export function writeTarGz(entries: readonly TarEntry[]): Buffer {
  const all = new Map<string, TarEntry>();
  for (const e of entries) {
    const segs = e.path.split("/");
    for (let i = 1; i < segs.length; i++) {
      const d = segs.slice(0, i).join("/");
      if (!all.has(d)) all.set(d, { path: d, type: "dir" });
    }
    all.set(e.path, e);
  }
  // Sort with folders as `path/` so a folder precedes its contents.
  const sorted = [...all.values()].sort((a, b) =>
    comparePaths(a.type === "dir" ? `${a.path}/` : a.path, b.type === "dir" ? `${b.path}/` : b.path),
  );
  const parts: Buffer[] = [];
  for (const e of sorted) parts.push(...entryBytes(e));
  parts.push(Buffer.alloc(BLOCK * 2, 0));
  return gzipCanonical(Buffer.concat(parts));
}

export interface ReadTarEntry {
  path: string;
  type: string;
  mode: number;
  size: number;
  linkpath?: string;
  data: Buffer;
}

export class TarReadError extends Error {
  constructor(
    message: string,
    readonly kind: "corrupt" | "too-large",
  ) {
    super(message);
  }

  /** The catalog code readBundle reports it under. */
  get code(): "E_BUNDLE_CORRUPT" | "E_BUNDLE_TOO_LARGE" {
    return this.kind === "too-large" ? "E_BUNDLE_TOO_LARGE" : "E_BUNDLE_CORRUPT";
  }
}

/**
 * Check the gzip layer and inflate it (refusing more than `maxBytes` unpacked), then list the
 * tar's entries with their contents. Throws TarReadError.
 */
export async function readTarGz(
  buf: Buffer,
  limits: { maxBytes: number; maxEntries: number },
): Promise<ReadTarEntry[]> {
  if (buf.length < HEADER_LEN + 8 || !buf.subarray(0, GZIP_HEADER.length).equals(GZIP_HEADER)) {
    throw new TarReadError(
      buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b
        ? "its gzip header is not the one hermes-kit writes (the file was modified, truncated or re-compressed)"
        : "it is not a gzip file",
      "corrupt",
    );
  }
  const want = buf.subarray(GZIP_HEADER.length, HEADER_LEN);
  const got = sha256Bytes(buf.subarray(HEADER_LEN));
  if (!got.equals(want))
    throw new TarReadError("its checksum does not match its content (the file was modified or truncated)", "corrupt");
  let tarBytes: Buffer;
  try {
    tarBytes = gunzipSync(buf, { maxOutputLength: limits.maxBytes });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError)
      throw new TarReadError(`it unpacks to more than ${limits.maxBytes} bytes`, "too-large");
    throw new TarReadError(`its compressed data is damaged or truncated (${(e as Error).message})`, "corrupt");
  }
  const out: ReadTarEntry[] = [];
  // Loaded on the first read: only bundle commands parse tar archives.
  const { Parser } = await import("tar");
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (e: Error) => {
      if (failed) return;
      failed = true;
      reject(e);
    };
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        if (out.length >= limits.maxEntries) {
          fail(new TarReadError(`it has more than ${limits.maxEntries} entries`, "too-large"));
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on("data", (c: Buffer) => chunks.push(c));
        entry.on("end", () => {
          out.push({
            path: entry.path,
            type: entry.type,
            mode: entry.mode ?? 0,
            size: entry.size ?? 0,
            linkpath: entry.linkpath || undefined,
            data: Buffer.concat(chunks),
          });
        });
      },
    });
    parser.on("error", (e: Error) => fail(new TarReadError(`its tar data is not valid (${e.message})`, "corrupt")));
    parser.on("end", () => {
      if (!failed) resolve();
    });
    parser.end(tarBytes);
  });
  return out;
}
