import { diagnostic, HermesError, type Diagnostic } from "../../core/errors.js";
import { schemaId, validateSchema } from "../../core/schema.js";

export interface IndexEntry {
  name: string;
  description: string;
  author: string;
  tags: string[];
  repo: string;
  ref: string;
  subdir: string | null;
  homepage: string | null;
  capabilities: string[];
  api_version: number | null;
  added_at: string | null;
}

export interface IndexParse {
  entries: IndexEntry[];
  /** Dropped entries and other non-fatal findings. */
  diagnostics: Diagnostic[];
}

const ENTRY = schemaId("index", "#/$defs/entry");
const CATALOG_ENTRY = schemaId("index", "#/$defs/catalogEntry");

function str(v: unknown): string {
  return v === undefined || v === null ? "" : String(v);
}

function normalize(o: Record<string, unknown>): IndexEntry {
  const subdir = typeof o.subdir === "string" ? o.subdir.trim().replace(/^\/+|\/+$/g, "") : "";
  const api =
    typeof o.api_version === "number"
      ? o.api_version
      : typeof o.api_version === "string" && /^\d+$/.test(o.api_version.trim())
        ? Number(o.api_version)
        : null;
  return {
    name: str(o.name).trim(),
    description: str(o.description),
    author: str(o.author),
    tags: Array.isArray(o.tags) ? o.tags.filter((t) => typeof t === "string" || typeof t === "number").map(String) : [],
    repo: str(o.repo).trim(),
    ref: str(o.ref).trim(),
    subdir: subdir || null,
    homepage: typeof o.homepage === "string" && o.homepage ? o.homepage : null,
    capabilities: Array.isArray(o.capabilities) ? o.capabilities.filter((c): c is string => typeof c === "string") : [],
    api_version: api,
    added_at: typeof o.added_at === "string" ? o.added_at : null,
  };
}

/**
 * An index document: an object with a `plugins` list or a bare list. The
 * wrapper's shape is fatal (the source counts as failed); each bad entry is dropped with a warning
 * that names it, and the rest load.
 */
export function parseIndexDocument(doc: unknown, source: string): IndexParse {
  let items: unknown[];
  if (Array.isArray(doc)) items = doc;
  else if (doc && typeof doc === "object") {
    const plugins = (doc as Record<string, unknown>).plugins;
    if (!Array.isArray(plugins)) {
      throw new HermesError("E_INDEX_INVALID", {
        message: `plugin index ${source}: 'plugins' must be a list`,
        file: source,
        path: "plugins",
      });
    }
    items = plugins;
  } else {
    throw new HermesError("E_INDEX_INVALID", {
      message: `plugin index ${source} must be a JSON object or list`,
      file: source,
    });
  }
  const entries: IndexEntry[] = [];
  const diagnostics: Diagnostic[] = [];
  items.forEach((item, i) => {
    const base = Array.isArray(doc) ? [i] : ["plugins", i];
    const problems = validateSchema(ENTRY, item, { file: source, basePath: base }).filter(
      (d) => d.severity === "error",
    );
    if (problems.length) {
      const label =
        item && typeof item === "object" && typeof (item as { name?: unknown }).name === "string"
          ? `'${(item as { name: string }).name}'`
          : `#${i + 1}`;
      diagnostics.push(
        diagnostic(
          "W_INDEX_ENTRY_DROPPED",
          `index entry ${label} dropped: ${problems.map((p) => `${p.path} ${p.message}`).join("; ")}`,
          {
            file: source,
            path: problems[0]!.path,
          },
        ),
      );
      return;
    }
    entries.push(normalize(item as Record<string, unknown>));
  });
  return { entries, diagnostics };
}

/** A file of the later curated catalog (`plugin-catalog/<name>.yaml`) as an index entry. */
export function catalogEntryToIndex(doc: unknown, source: string): IndexEntry {
  const problems = validateSchema(CATALOG_ENTRY, doc, { file: source }).filter((d) => d.severity === "error");
  if (problems.length) {
    throw new HermesError("E_INDEX_INVALID", {
      message: `catalog entry ${source}: ${problems.map((p) => `${p.path} ${p.message}`).join("; ")}`,
      file: source,
      diagnostics: problems,
    });
  }
  const o = doc as Record<string, unknown>;
  const url = str(o.repo).trim();
  const m = /^(?:https?:\/\/[^/]+\/|git@[^:]+:)?([^/\s]+)\/([^/\s]+?)(?:\.git)?\/?$/.exec(url);
  const repo = m ? `${m[1]}/${m[2]}` : url;
  return normalize({
    name: o.name,
    description: o.description,
    author: o.maintainer,
    tags: [o.category, o.tier].filter((x) => typeof x === "string"),
    repo,
    ref: o.sha,
    subdir: o.subdir,
    homepage: o.docs_url,
    capabilities: [],
  });
}
