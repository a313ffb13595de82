import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { readTextIfExists, writeFileAtomic } from "../../core/atomic-fs.js";
import { readTextCappedIfExists } from "../../core/size-limit.js";
import { diagnostic, formatDiagnostic, HermesError, type Diagnostic } from "../../core/errors.js";
import { PACKAGE_ROOT, type HomePaths } from "../../core/paths.js";
import type { ConfigValue } from "../../config/config-file.js";
import { pluginsSetting } from "../../config/plugin-lists.js";
import { parseIndexDocument, type IndexEntry } from "./parse.js";
import { closestNames } from "./search.js";

/**
 * The community plugin index, with every fallback reported:
 *
 *   fresh cache (≤ 24 h by mtime) → remote (`plugins.index_url`) → stale cache → seed copy
 *
 * - The remote answer is fetched with a 10 s timeout (`HERMES_INDEX_TIMEOUT_MS` overrides),
 *   redirects followed, non-2xx refused, bodies over 5 MiB refused while streaming; it is written
 *   to `$HERMES_HOME/cache/plugin_index.json` (atomically) only when it parses as an index.
 * - `--refresh` skips the fresh cache; `offline` never touches the network.
 * - The answer always says where it came from (`source`). A stale cache or the seed copy comes
 *   with a warning that says so, with the cache's age or "offline seed copy", the URL and why
 *   the remote failed: the original served a dead URL's seed for months and nobody noticed.
 * - Entries are validated one by one (schemas/index.schema.json); an invalid entry is dropped
 *   with a W_INDEX_ENTRY_DROPPED warning that names it. A document of the wrong shape is a
 *   failed source (E_INDEX_INVALID), never cached.
 */

export const DEFAULT_INDEX_URL = "https://raw.githubusercontent.com/NousResearch/hermes-plugin-index/main/index.json";
export const INDEX_TTL_MS = 24 * 3600 * 1000;
export const INDEX_MAX_BYTES = 5 * 1024 * 1024;
export const INDEX_TIMEOUT_MS = 10_000;
/** The seed copy shipped in the package (NousResearch seed index, plugin_index.json@015d866e). */
export const SEED_INDEX = join(PACKAGE_ROOT, "data", "plugin_index.json");

export const INDEX_TRUST_NOTE =
  "Indexed ≠ audited: inclusion in the index is a metadata review only, not a code audit. Review a plugin " +
  "before enabling it.";

export type IndexSource = "remote" | "cache" | "seed";

export interface LoadedIndex {
  entries: IndexEntry[];
  source: IndexSource;
  /** Dropped entries (W_INDEX_ENTRY_DROPPED) and source problems (W_INDEX_*). */
  diagnostics: Diagnostic[];
  /** What a person must see: stale cache, seed copy, dropped entries. Already passed to `warn`. */
  warnings: string[];
  url: string;
  /** The file or URL the entries came from. */
  from: string;
  /** Age of the cache file (source "cache"). */
  ageMs?: number;
  /** True for a cache older than the TTL and for the seed copy. */
  stale: boolean;
  /** `generated_at` of the document, when it has one. */
  generatedAt?: string;
}

export interface LoadIndexOptions {
  /** Skip the fresh cache (the remote is tried first). */
  refresh?: boolean;
  /** Never touch the network. */
  offline?: boolean;
  /**
   * Where warnings go. Default: stderr, because a stale or seed answer must never be silent
   * (callers with an Io pass `io.warn`).
   */
  warn?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  /** For tests: the clock. */
  now?: () => number;
}

export function indexUrl(config: ConfigValue): string {
  const v = pluginsSetting<unknown>(config, "index_url");
  return typeof v === "string" && v.trim() ? v.trim() : DEFAULT_INDEX_URL;
}

export function cacheFileOf(paths: HomePaths): string {
  return join(paths.cache, "plugin_index.json");
}

interface Parsed {
  entries: IndexEntry[];
  diagnostics: Diagnostic[];
  generatedAt?: string;
}

/** Parse an index text; throws E_INDEX_INVALID (with the reason) when it is not an index. */
export function parseIndexText(text: string, source: string): Parsed {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    throw new HermesError("E_INDEX_INVALID", {
      message: `plugin index ${source} is not valid JSON: ${(e as Error).message}`,
      file: source,
    });
  }
  const r = parseIndexDocument(doc, source);
  const g =
    doc && typeof doc === "object" && !Array.isArray(doc)
      ? (doc as { generated_at?: unknown }).generated_at
      : undefined;
  return { ...r, generatedAt: typeof g === "string" ? g : undefined };
}

function tryParse(text: string | undefined, source: string, problems: string[]): Parsed | undefined {
  if (text === undefined) return undefined;
  try {
    return parseIndexText(text, source);
  } catch (e) {
    problems.push((e as Error).message);
    return undefined;
  }
}

function timeoutOf(env: NodeJS.ProcessEnv): number {
  const v = Number(env.HERMES_INDEX_TIMEOUT_MS);
  return Number.isFinite(v) && v > 0 ? v : INDEX_TIMEOUT_MS;
}

/**
 * GET `url` with a wall-clock timeout (connect and body), redirects followed, 2xx only, and the
 * body read in chunks so an oversized payload is cut off at `max` bytes instead of buffered.
 * Throws plain Errors: each caller wraps the message in its own code (index or pack).
 */
export async function fetchCapped(
  url: string,
  opts: { timeoutMs: number; maxBytes: number; what: string; httpsOnly?: boolean },
): Promise<string> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), opts.timeoutMs);
  try {
    let res: Response;
    try {
      res = await fetch(url, {
        redirect: "follow",
        signal: ac.signal,
        headers: { accept: "application/json, application/yaml, text/plain, */*" },
      });
    } catch (e) {
      if (ac.signal.aborted) throw new Error(`no answer within ${Math.round(opts.timeoutMs / 100) / 10} s`);
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code
        ? `${cause.code}${cause.message && !cause.message.includes(cause.code) ? ` (${cause.message})` : ""}`
        : cause?.message;
      throw new Error(detail ? `${(e as Error).message}: ${detail}` : (e as Error).message);
    }
    if (opts.httpsOnly && !res.url.toLowerCase().startsWith("https://")) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`redirected to a non-https URL (${res.url})`);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`);
    }
    const declared = Number(res.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`${opts.what} is ${declared} bytes, over the ${opts.maxBytes / 1024 / 1024} MiB limit`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    if (res.body) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          total += value.byteLength;
          if (total > opts.maxBytes) {
            await reader.cancel().catch(() => undefined);
            throw new Error(`${opts.what} is over the ${opts.maxBytes / 1024 / 1024} MiB limit`);
          }
          chunks.push(Buffer.from(value));
        }
      } catch (e) {
        if (ac.signal.aborted) throw new Error(`no complete answer within ${Math.round(opts.timeoutMs / 100) / 10} s`);
        throw e;
      }
    }
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    clearTimeout(timer);
  }
}

/** `3 d 4 h`, `5 h 12 min`, `7 min`, `40 s`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d} d${h ? ` ${h} h` : ""}`;
  if (h) return `${h} h${m ? ` ${m} min` : ""}`;
  if (m) return `${m} min`;
  return `${s} s`;
}

function droppedWarnings(ds: readonly Diagnostic[]): string[] {
  return ds
    .filter((d) => d.code === "W_INDEX_ENTRY_DROPPED")
    .map((d) => `warning: ${formatDiagnostic(d, { hint: false }).replace(/^warning /, "")}`);
}

/** The cached index text (a read failure becomes a problem) and its age, both undefined when there is none. */
async function readCache(
  cacheFile: string,
  now: () => number,
  problems: string[],
): Promise<{ cached: string | undefined; age: number | undefined }> {
  const cached = await readTextCappedIfExists(cacheFile, INDEX_MAX_BYTES, "E_INDEX_INVALID").catch(
    (e: Error) => void problems.push(e.message),
  );
  const age =
    cached === undefined
      ? undefined
      : await fsp.stat(cacheFile).then(
          (s) => Math.max(0, now() - s.mtimeMs),
          () => undefined,
        );
  return { cached, age };
}

/** The warning for falling back to the cached copy after a failed fetch; `stale` past the index's TTL. */
function staleWarning(failed: Diagnostic, a: number, stale: boolean, cacheFile: string): Diagnostic {
  return diagnostic(
    "W_INDEX_STALE",
    `${failed.message}; using the ${stale ? "STALE " : ""}cached copy from ${formatAge(a)} ago ` +
      `(${cacheFile})${stale ? ", older than the 24 h the index is trusted for" : ""}.`,
    { file: cacheFile },
  );
}

/** The warning for falling back to the seed copy shipped with the kit, which is likely out of date. */
function seedWarning(failed: Diagnostic, hadCache: boolean, seed: Parsed): Diagnostic {
  return diagnostic(
    "W_INDEX_SEED",
    `${failed.message}` +
      `${hadCache ? " and the cached copy is unreadable" : " and there is no cached copy"}; ` +
      `using the OFFLINE SEED COPY shipped with hermes-kit (${seed.entries.length} plugins` +
      `${seed.generatedAt ? `, generated ${seed.generatedAt}` : ""}). It is likely out of date: check ` +
      "plugins.index_url and the network, then retry with --refresh.",
    { file: SEED_INDEX },
  );
}

export async function loadIndex(
  paths: HomePaths,
  config: ConfigValue,
  opts: LoadIndexOptions = {},
): Promise<LoadedIndex> {
  const warn = opts.warn ?? ((l: string) => process.stderr.write(`${l}\n`));
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  const cacheFile = cacheFileOf(paths);
  const url = indexUrl(config);
  const problems: string[] = [];
  const finish = (
    p: Parsed,
    rest: Omit<LoadedIndex, "entries" | "diagnostics" | "warnings" | "url" | "generatedAt">,
    sourceWarnings: Diagnostic[],
  ): LoadedIndex => {
    const diagnostics = [...sourceWarnings, ...p.diagnostics];
    const warnings = [...sourceWarnings.map((d) => `WARNING: ${d.message}`), ...droppedWarnings(p.diagnostics)];
    for (const w of warnings) warn(w);
    return { entries: p.entries, diagnostics, warnings, url, generatedAt: p.generatedAt, ...rest };
  };

  // The cache is a file anyone with the home can write: it gets the same cap as a download.
  const { cached, age } = await readCache(cacheFile, now, problems);
  let cacheParsed: Parsed | undefined;
  if (!opts.refresh && cached !== undefined && age !== undefined && age <= INDEX_TTL_MS) {
    cacheParsed = tryParse(cached, cacheFile, problems);
    if (cacheParsed) return finish(cacheParsed, { source: "cache", from: cacheFile, ageMs: age, stale: false }, []);
  }

  let why = "offline: the network was not tried";
  if (!opts.offline) {
    try {
      const text = await fetchCapped(url, { timeoutMs: timeoutOf(env), maxBytes: INDEX_MAX_BYTES, what: "the index" });
      const parsed = parseIndexText(text, url);
      await fsp.mkdir(paths.cache, { recursive: true }).catch(() => undefined);
      await writeFileAtomic(cacheFile, text).catch((e: Error) =>
        warn(`warning: could not cache the index at ${cacheFile}: ${e.message}`),
      );
      return finish(parsed, { source: "remote", from: url, stale: false }, []);
    } catch (e) {
      why = e instanceof HermesError ? e.message : `${url}: ${(e as Error).message}`;
    }
  }
  const failed = diagnostic("W_INDEX_FETCH_FAILED", `the community plugin index could not be fetched (${why})`, {
    file: url,
  });

  if (cached !== undefined) {
    cacheParsed ??= tryParse(cached, cacheFile, problems);
    if (cacheParsed) {
      const a = age ?? 0;
      const stale = a > INDEX_TTL_MS;
      const w = staleWarning(failed, a, stale, cacheFile);
      return finish(cacheParsed, { source: "cache", from: cacheFile, ageMs: a, stale }, [w]);
    }
  }

  const seedText = await readTextIfExists(SEED_INDEX).catch(() => undefined);
  const seed = tryParse(seedText, SEED_INDEX, problems);
  if (seed) {
    const w = seedWarning(failed, cached !== undefined, seed);
    return finish(seed, { source: "seed", from: SEED_INDEX, stale: true }, [w]);
  }
  throw new HermesError("E_INDEX_UNAVAILABLE", {
    message:
      "the community plugin index could not be " +
      `loaded: ${why}${problems.length ? `; ${problems.join("; ")}` : ""}; no cached or seed copy is available`,
  });
}

export type NameResolution =
  | { kind: "found"; entry: IndexEntry }
  | { kind: "ambiguous"; candidates: IndexEntry[] }
  | { kind: "unknown"; closest: IndexEntry[] };

/**
 * Bare-name resolution for install and packs: only an exact,
 * case-insensitive name match resolves; two exact matches are ambiguous; anything else is
 * unknown, with the closest names (the search's ranking: prefixes, words, typos) as
 * suggestions. The original's "unique substring resolves" rule is dropped on purpose:
 * `telegram` must not silently install `hermes-telegram-business`.
 */
export function resolveIndexName(entries: readonly IndexEntry[], name: string): NameResolution {
  const n = name.trim().toLowerCase();
  const exact = entries.filter((e) => e.name.toLowerCase() === n);
  if (exact.length === 1) return { kind: "found", entry: exact[0]! };
  if (exact.length > 1) return { kind: "ambiguous", candidates: exact };
  return { kind: "unknown", closest: n ? closestNames(entries, n) : [] };
}

/** `repo` plus `/subdir`: what the entry installs. */
export function installIdentifierOf(e: IndexEntry): string {
  return e.subdir ? `${e.repo}/${e.subdir}` : e.repo;
}

/** Serialization for JSON output: fixed keys, optional ones only when set. */
export function entryToJson(e: IndexEntry): Record<string, unknown> {
  const o: Record<string, unknown> = {
    name: e.name,
    description: e.description,
    author: e.author,
    tags: e.tags,
    repo: e.repo,
    ref: e.ref,
  };
  if (e.subdir) o.subdir = e.subdir;
  if (e.homepage) o.homepage = e.homepage;
  if (e.capabilities.length) o.capabilities = e.capabilities;
  if (e.api_version !== null) o.api_version = e.api_version;
  if (e.added_at) o.added_at = e.added_at;
  return o;
}
