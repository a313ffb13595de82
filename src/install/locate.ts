import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { nearest } from "../core/suggest.js";
import { NIX_LINK_PREFIX, type PluginRecord } from "../contracts/plugin-record.js";
import { scanRoot, type Candidate } from "../discovery/scan.js";

/** A folder of the user plugins dir, named as discovery keys it. */
export interface InstalledPlugin extends Pick<PluginRecord, "key" | "name"> {
  /** Absolute folder under the plugins dir. */
  dir: string;
  /** Folder relative to the plugins dir (`name` or `category/name`): the metadata key. */
  rel: string;
  category?: string;
  candidate?: Candidate;
}

function relOf(c: Candidate): string {
  return c.category ? `${c.category}/${c.dirName}` : c.dirName;
}

/**
 * Find a plugin of the user plugins dir by folder name, key or manifest name (update/remove act
 * on folders, people type keys). `/` is allowed for category keys; `..` and `\` never.
 */
export async function locateInstalled(paths: HomePaths, name: string): Promise<InstalledPlugin> {
  const n = name.trim();
  if (
    !n ||
    n.includes("..") ||
    n.includes("\\") ||
    n.startsWith("/") ||
    n.split("/").length > 2 ||
    n.split("/").some((s) => !s || s.startsWith("."))
  ) {
    throw new HermesError("E_INSTALL_NAME_INVALID", { message: `invalid plugin name '${name}'` });
  }
  const { candidates } = await scanRoot(paths.plugins, "user");
  const byRel = candidates.filter((c) => relOf(c) === n);
  const byKey = byRel.length ? byRel : candidates.filter((c) => c.key === n);
  const hits = byKey.length ? byKey : candidates.filter((c) => c.name === n);
  if (hits.length > 1) {
    throw new HermesError("E_PLUGIN_AMBIGUOUS", {
      message: `'${name}' matches ${hits.map((c) => relOf(c)).join(", ")} in ${paths.plugins}`,
    });
  }
  const c = hits[0];
  if (!c) {
    // A folder without a manifest (or a broken one) is still removable by its folder name.
    const dir = join(paths.plugins, ...n.split("/"));
    const st = await fsp.lstat(dir).catch(() => undefined);
    if (st && (st.isDirectory() || st.isSymbolicLink()) && !n.includes("/")) {
      if (n.startsWith(NIX_LINK_PREFIX)) throw managed(n);
      return { dir, rel: n, key: n, name: n };
    }
    const installed = candidates.map(relOf);
    const close = nearest(n, [...installed, ...candidates.map((x) => x.key)], { fragments: true });
    throw new HermesError("E_PLUGIN_NOT_FOUND", {
      message:
        `plugin '${name}' not found in ${paths.plugins}${close ? `; did you mean '${close}'?` : ""}\ninstalled ` +
        `plugins: ${installed.join(", ") || "(none)"}`,
    });
  }
  if (c.dirName.startsWith(NIX_LINK_PREFIX)) throw managed(c.key);
  return { dir: c.path, rel: relOf(c), key: c.key, name: c.name, category: c.category, candidate: c };
}

function managed(name: string): HermesError {
  return new HermesError("E_PLUGIN_MANAGED", {
    message: `plugin '${name}' is linked by the deployment (nix-managed-*); hermes plugins will not change it`,
  });
}
