import { promises as fsp } from "node:fs";
import { writeFileAtomic } from "../core/atomic-fs.js";
import { readTextCappedIfExists, SIZE_LIMITS } from "../core/size-limit.js";
import { diagnostic, HermesError, type Diagnostic } from "../core/errors.js";
import { withFileLock } from "../core/file-lock.js";
import { validateSchema } from "../core/schema.js";
import { applyYamlEdits, type YamlEdit } from "../core/yaml-edit.js";
import { SourceDoc } from "../core/yaml-source.js";

export type ConfigValue = Record<string, unknown>;

export interface LoadedConfig {
  file: string;
  exists: boolean;
  text: string;
  source: SourceDoc;
  /** The parsed mapping; `{}` when the file is missing, empty or broken. */
  value: ConfigValue;
  diagnostics: Diagnostic[];
}

export interface ParseConfigOptions {
  /**
   * Check against the config schema (default). The runtime skips it: it reads the config for
   * values only and reports nothing from it (compile and `hermes config validate` do).
   */
  schema?: boolean;
}

/** Parse + validate config.yaml. Never throws for bad content: problems come back as diagnostics. */
export function parseConfigText(text: string, file: string, opts: ParseConfigOptions = {}): LoadedConfig {
  const source = new SourceDoc(text, file);
  const diagnostics: Diagnostic[] = [...source.errors];
  let value: ConfigValue = {};
  if (source.ok) {
    const v = source.value;
    if (v === null || v === undefined) value = {};
    else if (typeof v !== "object" || Array.isArray(v)) {
      diagnostics.push(
        diagnostic(
          "E_CONFIG_NOT_MAPPING",
          `config.yaml must be a mapping (got ${Array.isArray(v) ? "a list" : typeof v})`,
          { file, line: 1, col: 1 },
        ),
      );
    } else {
      value = v as ConfigValue;
      if (opts.schema !== false) diagnostics.push(...validateSchema("config", value, { source }));
    }
  }
  return { file, exists: true, text, source, value, diagnostics };
}

export async function loadConfig(file: string, opts: ParseConfigOptions = {}): Promise<LoadedConfig> {
  const text = await readTextCappedIfExists(file, SIZE_LIMITS.config, "E_CONFIG_TOO_LARGE");
  if (text === undefined) return { ...parseConfigText("", file, opts), exists: false };
  return parseConfigText(text, file, opts);
}

export { unreadableConfig } from "./config-cache.js";

export interface EditResult {
  changed: boolean;
  before: LoadedConfig;
  after: LoadedConfig;
}

/**
 * Read-modify-write of config.yaml under the inter-process lock: `plan` sees the freshest
 * config and returns the edits; the file is rewritten atomically only when bytes change.
 * A config that does not parse is refused, never overwritten.
 */
/** Runs under the lock with the text about to be written; throwing refuses the edit (nothing is written). */
export type EditCheck = (before: LoadedConfig, nextText: string) => Promise<void>;

export async function editConfig(
  file: string,
  plan: (current: LoadedConfig) => YamlEdit[] | Promise<YamlEdit[]>,
  check?: EditCheck,
): Promise<EditResult> {
  return withFileLock(file, async () => {
    const before = await loadConfig(file);
    const fatal = before.diagnostics.filter((d) => d.code === "E_YAML_PARSE" || d.code === "E_CONFIG_NOT_MAPPING");
    if (fatal.length) {
      throw new HermesError(fatal[0]!.code, {
        message: `refusing to edit ${file}: it does not parse`,
        file,
        line: fatal[0]!.line,
        col: fatal[0]!.col,
        diagnostics: fatal,
      });
    }
    const edits = await plan(before);
    if (edits.length === 0) return { changed: false, before, after: before };
    const text = applyYamlEdits(before.text, edits);
    if (text === before.text) return { changed: false, before, after: before };
    if (check) await check(before, text);
    await writeFileAtomic(file, text);
    return { changed: true, before, after: parseConfigText(text, file) };
  });
}

export async function configMtime(file: string): Promise<number | undefined> {
  return fsp.stat(file).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
}
