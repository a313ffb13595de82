import { readTextIfExists } from "../core/atomic-fs.js";
import { HermesError } from "../core/errors.js";

/**
 * `plugins/.install-metadata.json`: for each installed plugin folder, where it
 * came from and which commit is on disk. Only `source`, `revision` and `pinned`: never config,
 * environment values, credentials or grants.
 */
export interface InstallRecord {
  pinned: boolean;
  revision: string;
  source: string;
}

export type InstallMetadata = Record<string, InstallRecord>;

function corrupt(
  file: string,
  message: string,
  where: { line?: number; col?: number; path?: string } = {},
): HermesError {
  return new HermesError("E_INSTALL_METADATA_CORRUPT", {
    message: `could not read plugin install metadata ${file}: ${message}`,
    file,
    ...where,
  });
}

function positionOf(text: string, e: Error): { line?: number; col?: number } {
  const m = /position (\d+)/.exec(e.message);
  if (!m) return {};
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split("\n").length;
  return { line, col: pos - before.lastIndexOf("\n") };
}

/** Parse the sidecar; a missing or empty file is `{}`, anything malformed is a positioned error. */
export function parseMetadata(text: string | undefined, file: string): InstallMetadata {
  if (text === undefined) return {};
  const body = text.replace(/^\uFEFF/, "");
  if (!body.trim()) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (e) {
    throw corrupt(file, (e as Error).message, positionOf(body, e as Error));
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    throw corrupt(file, "it must be a JSON object keyed by plugin folder name");
  const out: InstallMetadata = {};
  for (const [name, rec] of Object.entries(raw as Record<string, unknown>)) {
    if (!rec || typeof rec !== "object" || Array.isArray(rec))
      throw corrupt(file, `the record of '${name}' is not an object`, { path: name });
    const r = rec as Record<string, unknown>;
    if (typeof r.source !== "string" || !r.source)
      throw corrupt(file, `the record of '${name}' has no source`, { path: `${name}.source` });
    if (typeof r.revision !== "string" || !/^[0-9a-f]{40}$/i.test(r.revision)) {
      throw corrupt(file, `the record of '${name}' has no 40-character revision`, { path: `${name}.revision` });
    }
    out[name] = { pinned: r.pinned === true, revision: r.revision.toLowerCase(), source: r.source };
  }
  return out;
}

export async function readMetadata(file: string): Promise<InstallMetadata> {
  return parseMetadata(await readTextIfExists(file), file);
}
