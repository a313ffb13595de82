/**
 * `hermes-bundle.json`, the manifest inside a bundle (docs/index-and-packs.md "Bundles").
 *
 * ```
 * hermes-bundle.json          this manifest
 * hermes-pack.yaml            the exported pack (what `pack export` prints)
 * plugins/<folder>/…          each plugin's tree at its revision, exactly as git stores it
 * ```
 */

import { sortKeys } from "../../core/canonical-json.js";

export const BUNDLE_FORMAT = "hermes-bundle/1";
export const MANIFEST_FILE = "hermes-bundle.json";
export const PACK_FILE = "hermes-pack.yaml";
export const PLUGINS_DIR = "plugins";

export interface BundlePlugin {
  /** Plugin key at export. */
  name: string;
  /** Folder under `plugins/` in the bundle. */
  folder: string;
  /** Canonical source (`<url>[#<subdir>]`), as in the install metadata. */
  source: string;
  repo: string;
  subdir?: string;
  /** The commit (40-hex). */
  revision: string;
  /** Git tree id of the plugin folder at `revision` (`<revision>^{tree}` or `<revision>:<subdir>`). */
  tree: string;
  /** `sha256-tree:…` of the plugin tree (src/compile/tree-hash.ts), before any install step. */
  integrity: string;
  /** Regular files and symlinks. */
  files: number;
  bytes: number;
  /** Submodule entries of the tree (placed as empty folders, as a clone without submodules does). */
  gitlinks?: Array<{ path: string; commit: string }>;
  /** Raw commit object and the raw trees from the root to the plugin folder, base64. */
  proof: { commit: string; trees: string[] };
}

export interface BundleManifest {
  format: typeof BUNDLE_FORMAT;
  pack: { file: typeof PACK_FILE; sha256: string };
  plugins: BundlePlugin[];
}

const HEX40 = /^[0-9a-f]{40}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const B64 = /^[A-Za-z0-9+/]*={0,2}$/;
const FOLDER = /^(?!\.)[^/\\\u0000-\u001f]{1,200}$/;

export function serializeManifest(m: BundleManifest): string {
  return `${JSON.stringify(sortKeys(m), null, 2)}\n`;
}

/** Shape check of a parsed manifest; returns the problems (empty when valid). */
export function manifestProblems(v: unknown): string[] {
  const p: string[] = [];
  if (!v || typeof v !== "object" || Array.isArray(v)) return ["it is not a JSON object"];
  const m = v as Record<string, unknown>;
  if (m.format !== BUNDLE_FORMAT) p.push(`format is ${JSON.stringify(m.format)}, expected "${BUNDLE_FORMAT}"`);
  const pack = m.pack as Record<string, unknown> | undefined;
  if (!pack || pack.file !== "hermes-pack.yaml" || typeof pack.sha256 !== "string" || !HEX64.test(pack.sha256))
    p.push("pack must be {file: hermes-pack.yaml, sha256: <64 hex>}");
  if (!Array.isArray(m.plugins) || !m.plugins.length) {
    p.push("plugins must be a non-empty list");
    return p;
  }
  const folders = new Set<string>();
  m.plugins.forEach((x, i) => {
    const at = `plugins[${i}]`;
    if (!x || typeof x !== "object") return void p.push(`${at} is not an object`);
    const e = x as Record<string, unknown>;
    const str = (k: string) => typeof e[k] === "string" && (e[k] as string).length > 0;
    for (const k of ["name", "folder", "source", "repo", "revision", "tree", "integrity"])
      if (!str(k)) p.push(`${at}.${k} is missing`);
    if (str("folder")) {
      if (!FOLDER.test(e.folder as string) || e.folder === "..")
        p.push(`${at}.folder ${JSON.stringify(e.folder)} is not a folder name`);
      if (folders.has(e.folder as string)) p.push(`${at}.folder ${JSON.stringify(e.folder)} appears twice`);
      folders.add(e.folder as string);
    }
    if (str("revision") && !HEX40.test(e.revision as string)) p.push(`${at}.revision is not a 40-hex commit`);
    if (str("tree") && !HEX40.test(e.tree as string)) p.push(`${at}.tree is not a 40-hex tree id`);
    if (str("integrity") && !/^sha256-tree:[0-9a-f]{64}$/.test(e.integrity as string))
      p.push(`${at}.integrity is not a sha256-tree hash`);
    if (
      e.subdir !== undefined &&
      (typeof e.subdir !== "string" || !e.subdir || e.subdir.split("/").some((s) => !s || s === "." || s === ".."))
    )
      p.push(`${at}.subdir is not a relative path`);
    if (!Number.isInteger(e.files) || !Number.isInteger(e.bytes)) p.push(`${at}.files and .bytes must be integers`);
    const proof = e.proof as Record<string, unknown> | undefined;
    if (
      !proof ||
      typeof proof.commit !== "string" ||
      !B64.test(proof.commit) ||
      !Array.isArray(proof.trees) ||
      proof.trees.some((t) => typeof t !== "string" || !B64.test(t))
    ) {
      p.push(`${at}.proof must be {commit: base64, trees: [base64…]}`);
    }
    if (e.gitlinks !== undefined) {
      if (
        !Array.isArray(e.gitlinks) ||
        e.gitlinks.some(
          (g) => !g || typeof g.path !== "string" || typeof g.commit !== "string" || !HEX40.test(g.commit),
        )
      ) {
        p.push(`${at}.gitlinks must be [{path, commit}]`);
      }
    }
  });
  return p;
}
