import { promises as fsp } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { HermesError } from "../core/errors.js";
import { fetchCapped } from "../install/index/load.js";
import { parsePackText, type Pack } from "./parse.js";

/**
 * Where a pack comes from: an `https://` URL (15 s, redirects followed but
 * only to https, 1 MiB), or a local file (`~` expanded, 1 MiB). `http://`, `file://`, `ftp://`
 * and other schemes are refused. A local `*.tar.gz`/`*.tgz` (or any file starting with the gzip
 * magic) is a bundle (src/pack/bundle/), read elsewhere.
 */

export const PACK_MAX_BYTES = 1024 * 1024;
export const PACK_TIMEOUT_MS = 15_000;

export interface LoadedPack {
  /** How the pack is named in messages: the URL or the path as given. */
  src: string;
  text: string;
  pack: Pack;
}

function expandHome(p: string): string {
  return p === "~" || p.startsWith("~/") ? `${homedir()}${p.slice(1)}` : p;
}

export function isRemoteSource(src: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(src.trim());
}

/** A local path that looks like a bundle (by name, or by the gzip magic of its first bytes). */
export async function isBundleSource(src: string): Promise<boolean> {
  if (isRemoteSource(src)) return false;
  const p = resolve(expandHome(src.trim()));
  if (/\.(tar\.gz|tgz)$/i.test(p)) return true;
  // A folder is no bundle (and reading it is EISDIR): readPackText then says what it is.
  if (
    !(await fsp.stat(p).then(
      (st) => st.isFile(),
      () => false,
    ))
  )
    return false;
  const fh = await fsp.open(p, "r").catch(() => undefined);
  if (!fh) return false;
  try {
    const b = Buffer.alloc(2);
    const { bytesRead } = await fh.read(b, 0, 2, 0);
    return bytesRead === 2 && b[0] === 0x1f && b[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

export function localPath(src: string): string {
  return resolve(expandHome(src.trim()));
}

function timeoutOf(env: NodeJS.ProcessEnv): number {
  const v = Number(env.HERMES_PACK_TIMEOUT_MS);
  return Number.isFinite(v) && v > 0 ? v : PACK_TIMEOUT_MS;
}

export async function readPackText(src: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const s = src.trim();
  if (isRemoteSource(s)) {
    if (!/^https:\/\//i.test(s)) {
      throw new HermesError("E_PACK_URL_SCHEME", {
        message: `pack URLs must use https:// (or pass a local file path); refusing ${s.split(/[?#]/)[0]}`,
      });
    }
    try {
      return await fetchCapped(s, {
        timeoutMs: timeoutOf(env),
        maxBytes: PACK_MAX_BYTES,
        what: "the pack",
        httpsOnly: true,
      });
    } catch (e) {
      const msg = (e as Error).message;
      if (/limit/.test(msg)) throw new HermesError("E_PACK_TOO_LARGE", { message: `pack ${s}: ${msg}` });
      throw new HermesError("E_PACK_FETCH_FAILED", { message: `could not fetch pack from ${s}: ${msg}` });
    }
  }
  const p = localPath(s);
  const st = await fsp.stat(p).catch(() => undefined);
  if (!st || !st.isFile())
    throw new HermesError("E_PACK_NOT_FOUND", {
      message: st?.isDirectory()
        ? `${p} is a folder, not a pack file (hermes-pack.yaml) or bundle`
        : `pack file not found: ${p}`,
      file: p,
    });
  if (st.size > PACK_MAX_BYTES)
    throw new HermesError("E_PACK_TOO_LARGE", {
      message: `pack file ${p} is ${st.size} bytes, over the 1 MiB limit`,
      file: p,
    });
  return fsp.readFile(p, "utf8");
}

/** Parse and check a pack; every problem is reported at once, the first one as the error. */
export function parsePackOrThrow(text: string, src: string): Pack {
  const r = parsePackText(text, src);
  const errors = r.diagnostics.filter((d) => d.severity === "error");
  if (errors.length || !r.pack) {
    const first = errors[0];
    throw new HermesError(first?.code ?? "E_PACK_INVALID", {
      message:
        errors.length > 1
          ? `pack ${src} is not valid (${errors.length} problems); first: ${first!.message}`
          : (first?.message ?? `pack ${src} is not valid`),
      file: first?.file,
      line: first?.line,
      col: first?.col,
      path: first?.path,
      diagnostics: errors.slice(1),
    });
  }
  if (!r.pack.name) throw new HermesError("E_PACK_INVALID", { message: `pack ${src} is missing a 'name'`, file: src });
  return r.pack;
}

export async function loadPack(src: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedPack> {
  const text = await readPackText(src, env);
  return { src, text, pack: parsePackOrThrow(text, src) };
}
