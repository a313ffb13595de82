import { createHash, createHmac, type Hash } from "node:crypto";
import { createReadStream, promises as fsp, readFileSync } from "node:fs";

/**
 * The one place hermes-kit makes a sha256: lock checksums, manifest and consent hashes, tree
 * hashes, bundle checksums and cache keys all come from here. Strings are hashed as UTF-8.
 */

/** A running sha256, for hashes built from many parts. */
export function sha256(): Hash {
  return createHash("sha256");
}

/** sha256 of `data` as raw bytes. */
export function sha256Bytes(data: string | Uint8Array): Buffer {
  return createHash("sha256").update(data).digest();
}

/** HMAC-SHA256 as hex: an id nobody can derive without the key. */
export function hmacSha256Hex(key: string | Uint8Array, data: string): string {
  return createHmac("sha256", key).update(data).digest("hex");
}

/** sha256 of `data` as 64 lowercase hex digits. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Files up to this size are read whole; larger ones are streamed. */
const SMALL_FILE = 1024 * 1024;

/** Files up to this size (and over SMALL_FILE) are read whole and hashed on the libuv pool. */
const POOLED_FILE = 16 * 1024 * 1024;

/**
 * sha256 (hex) of a file's bytes; `size`, when known, picks how: small files are read and hashed
 * here (a pool round trip costs more than the work), mid-sized ones are read and hashed on the
 * libuv pool (WebCrypto digest runs there, so several such files hash in parallel), larger ones stream.
 */
export async function sha256File(path: string, size?: number): Promise<string> {
  if (size !== undefined && size <= SMALL_FILE) return sha256Hex(readFileSync(path));
  if (size !== undefined && size <= POOLED_FILE) {
    const digest = await globalThis.crypto.subtle.digest("SHA-256", await fsp.readFile(path));
    return Buffer.from(digest).toString("hex");
  }
  const h = sha256();
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}
