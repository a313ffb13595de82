import type { HomePaths } from "../core/paths.js";
import { loadConfig } from "../config/config-file.js";
import { loadIndex, type LoadedIndex } from "../install/index/load.js";
import { searchIndex, type SearchHit } from "../install/index/search.js";

/** `hermes plugins search [term]`: the home's index (remote, cache or seed copy) and what matches. */
export async function searchPlugins(o: {
  paths: HomePaths;
  term: string;
  capability?: string;
  refresh?: boolean;
  warn: (line: string) => void;
}): Promise<{ index: LoadedIndex; hits: SearchHit[] }> {
  const config = (await loadConfig(o.paths.config)).value;
  const index = await loadIndex(o.paths, config, { refresh: o.refresh, warn: o.warn });
  return { index, hits: searchIndex(index.entries, o.term, { capability: o.capability }) };
}
