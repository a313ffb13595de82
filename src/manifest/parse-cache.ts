import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ContentCache } from "../core/content-cache.js";
import { sha256Hex } from "../core/hash.js";
import { kitVersion } from "../core/kit-version.js";
import { SCHEMAS_DIR } from "../core/paths.js";
import { logQuietFields, manifestSha256 } from "./files.js";
import type { ManifestParse } from "./parse.js";
import { HERMES_COMPAT_VERSION } from "./requires-hermes.js";

/**
 * Bump when parse.ts returns something else for the same bytes (a new field, a new warning, a
 * changed message): every cached parse is then made again. The kit version, the Hermes version
 * `requires_hermes` is checked against and the manifest schema's bytes are part of the key too.
 */
export const MANIFEST_PARSER_VERSION = 3;

/** The cache file in a home's `cache/` folder. */
export const MANIFEST_CACHE_FILE = "manifests.v8";

interface Stored {
  dirName: string;
  parse: ManifestParse;
  quietFields: string[];
}

/** The code a parse depends on: what a cached parse must have been made by to be used. */
export function manifestParserTag(): string {
  const schema = sha256Hex(readFileSync(join(SCHEMAS_DIR, "plugin-manifest.schema.json")));
  return `manifest parser ${MANIFEST_PARSER_VERSION}, kit ${kitVersion()}, hermes ${HERMES_COMPAT_VERSION}, ${schema}`;
}

/** A stored parse is used only for the bytes and path it names (the lock records its sha256) and in its shape. */
function usable(s: Stored, hash: string, file: string, dirName: string): boolean {
  return (
    s.dirName === dirName &&
    s.parse?.sha256 === hash &&
    s.parse.file === file &&
    Array.isArray(s.parse.diagnostics) &&
    Array.isArray(s.quietFields)
  );
}

/**
 * Manifest parses keyed by the manifest's path and the sha256 of its bytes (the lock's
 * `manifest_sha256`), in `<home>/cache/manifests.v8`. A hit is a fresh copy of the stored parse,
 * warnings included, and replays the parser's debug line; a miss parses (loading the YAML parser
 * only then) and is kept for `save()`. Compile saves it; read-only commands only read it.
 */
export class ManifestCache {
  private constructor(private readonly store: ContentCache<Stored>) {}

  static open(cacheDir: string, tag: string = manifestParserTag()): ManifestCache {
    return new ManifestCache(ContentCache.open<Stored>(join(cacheDir, MANIFEST_CACHE_FILE), tag));
  }

  async parse(text: string, file: string, dirName: string): Promise<ManifestParse> {
    const hash = manifestSha256(text);
    const hit = this.store.get(file, hash);
    if (hit && usable(hit, hash, file, dirName)) {
      logQuietFields(file, hit.quietFields);
      return hit.parse;
    }
    const { parseManifestParts } = await import("./parse.js");
    const { parse, quietFields } = parseManifestParts(text, file, dirName);
    logQuietFields(file, quietFields);
    this.store.set(file, hash, { dirName, parse, quietFields });
    return parse;
  }

  save(): Promise<void> {
    return this.store.save();
  }
}
