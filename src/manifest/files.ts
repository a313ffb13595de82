import { existsSync, promises as fsp } from "node:fs";
import { join } from "node:path";
import { HermesError } from "../core/errors.js";
import { logger } from "../core/log.js";
import { sha256Hex } from "../core/hash.js";
import { readTextCappedSync, SIZE_LIMITS } from "../core/size-limit.js";
import type { PluginKind } from "../contracts/plugin-record.js";

// Finding and reading a plugin's manifest apart from parse.ts: a scan the parse cache answers loads no YAML parser.

/** Version-control folders: their content is the VCS's, not the plugin's, so nothing may load from them. */
export const VCS_DIRS: ReadonlySet<string> = new Set([".git", ".hg", ".svn"]);

/** The VCS folder a relative path runs through (case-insensitive: some filesystems are), if any. */
export function vcsFolderOf(p: string): string | undefined {
  return p.split(/[\\/]+/).find((seg) => VCS_DIRS.has(seg.toLowerCase()));
}

/** Manifest file names, in the order a plugin folder is searched. */
export const MANIFEST_FILES = ["plugin.yaml", "plugin.yml"] as const;

/** Files any one of which makes a folder a plugin (loadable or not: portable packages and python plugins count). */
export const PLUGIN_FOLDER_FILES = [...MANIFEST_FILES, "plugin.json", "__init__.py"] as const;

/** Whether `dir` holds any of PLUGIN_FOLDER_FILES. */
export async function isPluginFolder(dir: string): Promise<boolean> {
  for (const f of PLUGIN_FOLDER_FILES) {
    if (
      await fsp.access(join(dir, f)).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

/** The manifest file of a plugin folder: the first of MANIFEST_FILES that exists, or `undefined`. */
export function findManifestFile(dir: string): string | undefined {
  for (const name of MANIFEST_FILES) {
    const file = join(dir, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** A manifest file's text, refused (E_MANIFEST_TOO_LARGE) over the manifest size limit. */
export function readManifestText(file: string): string {
  return readTextCappedSync(file, SIZE_LIMITS.manifest, "E_MANIFEST_TOO_LARGE");
}

/** What the lock records as `manifest_sha256`. */
export function manifestSha256(text: string): string {
  return sha256Hex(text);
}

/**
 * The manifest of a plugin folder as text (the file discovery picks: findManifestFile);
 * `undefined` when there is none or it cannot be read. A manifest over the limit is refused.
 */
export function readManifestFile(dir: string): { file: string; text: string } | undefined {
  const file = findManifestFile(dir);
  if (!file) return undefined;
  try {
    return { file, text: readManifestText(file) };
  } catch (e) {
    if (e instanceof HermesError) throw e;
    return undefined;
  }
}

/** When `kind` is absent, the entry file's markers decide it (memory provider → exclusive, …). */
export function inferKind(entrySource: string): PluginKind | undefined {
  const head = entrySource.slice(0, 8192);
  if (head.includes("register_memory_provider") || head.includes("MemoryProvider")) return "exclusive";
  if (head.includes("register_provider") && head.includes("ProviderProfile")) return "model-provider";
  return undefined;
}

/** The debug line for the fields a parse ignored quietly; a cached parse replays it (manifest/parse-cache.ts). */
export function logQuietFields(file: string, quietFields: readonly string[]): void {
  if (quietFields.length)
    logger().debug(
      { file },
      `unknown manifest field(s) ignored: ${quietFields.join(", ")} (newer manifest schema or typo; plugin ` +
        "still loads)",
    );
}
