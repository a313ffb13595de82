import type { ConfigValue } from "./config-file.js";

/**
 * Which exclusive plugin config.yaml selects: `memory.provider` (a memory provider) and `context.engine`
 * (a context engine). Selecting one is the consent: `plugins.enabled` does not gate an exclusive plugin
 * (`plugins.disabled` still does).
 */
export type ExclusiveSlot = "memory" | "context_engine";

export const SLOT_KEY: Readonly<Record<ExclusiveSlot, string>> = {
  memory: "memory.provider",
  context_engine: "context.engine",
};

/** `context.engine: compressor` is the built-in compressor, never a plugin (as in the original). */
export const BUILTIN_ENGINE = "compressor";

export interface Selection {
  memory: string | null;
  context_engine: string | null;
}

function str(v: unknown): string | null {
  return typeof v === "string" && v.trim() ? v.trim() : null;
}

function section(config: ConfigValue, name: string): Record<string, unknown> {
  const s = config[name];
  return s && typeof s === "object" && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
}

/** What config.yaml selects; an empty value, or the built-in compressor, selects no plugin. */
export function readSelection(config: ConfigValue): Selection {
  const engine = str(section(config, "context").engine);
  return {
    memory: str(section(config, "memory").provider),
    context_engine: engine === BUILTIN_ENGINE ? null : engine,
  };
}

/** An exclusive plugin in `context_engine/` is an engine; any other exclusive plugin is a memory provider. */
export function slotOf(category: string | undefined): ExclusiveSlot {
  return category === "context_engine" ? "context_engine" : "memory";
}

/** A selection names a plugin by its folder (the last part of its key) or its manifest name. */
export function selects(value: string | null, key: string, name: string): boolean {
  return value !== null && (key.split("/").pop() === value || name === value);
}
