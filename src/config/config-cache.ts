import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ContentCache } from "../core/content-cache.js";
import type { Diagnostic } from "../core/errors.js";
import { sha256Hex } from "../core/hash.js";
import { kitVersion } from "../core/kit-version.js";
import { SCHEMAS_DIR } from "../core/paths.js";
import { readTextCappedIfExists, SIZE_LIMITS } from "../core/size-limit.js";
import type { ConfigValue, LoadedConfig } from "./config-file.js";

/**
 * Bump when parseConfigText returns other values or problems for the same bytes; the kit version
 * and the config schema's bytes are part of the key too.
 */
export const CONFIG_PARSER_VERSION = 2;

/** The cache file in a home's `cache/` folder. */
export const CONFIG_CACHE_FILE = "config.v8";

/** config.yaml as read for its values and problems: a LoadedConfig without the positioned source. */
export type ConfigRead = Omit<LoadedConfig, "source">;

interface Stored {
  value: ConfigValue;
  diagnostics: Diagnostic[];
}

/** The problem that makes a config.yaml unreadable as a whole (it does not parse, or is not a mapping). */
export function unreadableConfig(config: Pick<LoadedConfig, "diagnostics">): Diagnostic | undefined {
  return config.diagnostics.find((d) => d.code === "E_YAML_PARSE" || d.code === "E_CONFIG_NOT_MAPPING");
}

function configParserTag(): string {
  const schema = sha256Hex(readFileSync(join(SCHEMAS_DIR, "config.schema.json")));
  return `config parser ${CONFIG_PARSER_VERSION}, kit ${kitVersion()}, ${schema}`;
}

/**
 * Parses of config.yaml (schema-checked, as `loadConfig` makes them) keyed by the sha256 of its
 * bytes, in `<home>/cache/config.v8` (core/content-cache.ts): an unchanged config is read without
 * loading the YAML parser. Compile saves it; the read-only `plugins` commands only read it.
 */
export class ConfigCache {
  private constructor(private readonly store: ContentCache<Stored>) {}

  static open(cacheDir: string, tag: string = configParserTag()): ConfigCache {
    return new ConfigCache(ContentCache.open<Stored>(join(cacheDir, CONFIG_CACHE_FILE), tag));
  }

  /** What `loadConfig(file)` returns, but `source`; parsed only when these bytes were not seen. */
  async read(file: string): Promise<ConfigRead> {
    const text = await readTextCappedIfExists(file, SIZE_LIMITS.config, "E_CONFIG_TOO_LARGE");
    const hash = text === undefined ? "absent" : sha256Hex(text);
    const hit = this.store.get(file, hash);
    if (hit && typeof hit.value === "object" && hit.value !== null && Array.isArray(hit.diagnostics))
      return { file, exists: text !== undefined, text: text ?? "", value: hit.value, diagnostics: hit.diagnostics };
    const { parseConfigText } = await import("./config-file.js");
    const { value, diagnostics } = parseConfigText(text ?? "", file);
    this.store.set(file, hash, { value, diagnostics });
    return { file, exists: text !== undefined, text: text ?? "", value, diagnostics };
  }

  /**
   * The config's values only (the runtime's read): from the cache when these bytes were seen,
   * else parsed without the schema check and not stored (the runtime reports nothing from it).
   */
  async readValue(file: string): Promise<ConfigValue> {
    const text = await readTextCappedIfExists(file, SIZE_LIMITS.config, "E_CONFIG_TOO_LARGE");
    const hit = this.store.get(file, text === undefined ? "absent" : sha256Hex(text));
    if (hit && typeof hit.value === "object" && hit.value !== null) return hit.value;
    const { parseConfigText } = await import("./config-file.js");
    return parseConfigText(text ?? "", file, { schema: false }).value;
  }

  save(): Promise<void> {
    return this.store.save();
  }

  /**
   * Make sure the config as it is now is in the cache file (compile calls it after applying);
   * `parsed` is the compile's own parse of `text`, stored as is when the file still holds those bytes.
   */
  async keep(file: string, parsed?: { text: string; value: ConfigValue; diagnostics: Diagnostic[] }): Promise<void> {
    const now = parsed && (await readTextCappedIfExists(file, SIZE_LIMITS.config, "E_CONFIG_TOO_LARGE"));
    if (parsed && now === parsed.text) {
      const hash = sha256Hex(now);
      if (!this.store.get(file, hash))
        this.store.set(file, hash, { value: parsed.value, diagnostics: parsed.diagnostics });
    } else await this.read(file);
    await this.save();
  }
}
