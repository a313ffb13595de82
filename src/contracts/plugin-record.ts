/** The kinds a manifest may declare; anything else loads as `standalone`. */
export const PLUGIN_KINDS = ["standalone", "backend", "exclusive", "platform", "model-provider"] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** The roots discovery scans, in the order precedence breaks ties. */
export const PLUGIN_SOURCES = ["bundled", "user", "project", "npm"] as const;
export type PluginSource = (typeof PLUGIN_SOURCES)[number];

/** Where a plugin came from, for people: a user plugin may be a git checkout or a Nix link. */
export const PLUGIN_ORIGINS = ["bundled", "local", "git", "nix", "npm", "project"] as const;
export type PluginOrigin = (typeof PLUGIN_ORIGINS)[number];

/** Deployment links in the user plugins folder carry this prefix; nothing else may. */
export const NIX_LINK_PREFIX = "nix-managed-";

/** A plugin folder's name as its plugin's: without the deployment link prefix. */
export function withoutNixPrefix(dirName: string): string {
  return dirName.startsWith(NIX_LINK_PREFIX) ? dirName.slice(NIX_LINK_PREFIX.length) : dirName;
}

/** The entry of a plugin of the original Hermes (Python, no JavaScript entry): it runs through the Python bridge. */
export const PYTHON_ENTRY = "__init__.py";

export const isPythonPlugin = (p: { entry?: string | null }): boolean => p.entry === PYTHON_ENTRY;

/**
 * One plugin as every stage names it: discovery finds it, compile locks it, the runtime loads it and
 * install places it. Each stage's record extends this one, so the identity fields mean one thing.
 */
export interface PluginRecord {
  /** Canonical id: a flat plugin's manifest name, or `category/dir` for a plugin in a category folder. */
  key: string;
  /** The manifest's name (or the folder's, when the manifest has none). */
  name: string;
  source: PluginSource;
  origin: PluginOrigin;
  /** The folder as found under its root (may be a symlink). */
  path: string;
}
