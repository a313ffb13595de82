import type { Logger } from "pino";
import type { PromptSection } from "../runtime/registries.js";

export const DEFAULT_SYSTEM_PROMPT =
  "You are Hermes, an AI assistant running in hermes-kit. Use the tools you are given when they help, " +
  "one step at a time; when you have the answer, reply plainly and concisely.";

export const MAX_SECTIONS = 32;
export const MAX_SECTIONS_TOTAL = 8000;
const OPEN = "<plugin-section";
const CLOSE = "</plugin-section>";

export interface SectionInfo {
  session_id: string;
  model: string;
  provider: string;
  platform: string;
  profile_name: string;
  cwd: string;
}

export interface RenderedSections {
  text: string;
  used: string[];
  skipped: Array<{ id: string; reason: string }>;
}

/**
 * Render `register_system_prompt_section` sections once per session: sorted
 * by id, at most 32, at most 8000 characters in all including the framing. A section that
 * raises, is not a string, is empty after trimming, contains the framing markers or exceeds its
 * own max_chars is skipped with a warning naming it; the rest still render.
 */
export async function renderSections(
  sections: readonly PromptSection[],
  info: SectionInfo,
  log: Logger,
): Promise<RenderedSections> {
  const frozen = Object.freeze({ ...info });
  const used: string[] = [];
  const skipped: Array<{ id: string; reason: string }> = [];
  const parts: string[] = [];
  let total = 0;
  const skip = (s: PromptSection, reason: string) => {
    skipped.push({ id: s.id, reason });
    log.warn({ plugin: s.plugin_key }, `system prompt section '${s.id}' skipped: ${reason}`);
  };
  for (const s of [...sections].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    if (used.length >= MAX_SECTIONS) {
      skip(s, `more than ${MAX_SECTIONS} sections`);
      continue;
    }
    let value: unknown;
    try {
      value = typeof s.content === "function" ? await s.content(frozen) : s.content;
    } catch (e) {
      skip(s, `its content function raised ${(e as Error)?.name ?? "Error"}: ${(e as Error)?.message ?? String(e)}`);
      continue;
    }
    if (typeof value !== "string") {
      skip(s, `content is ${value === null ? "null" : typeof value}, not a string`);
      continue;
    }
    const text = value.trim();
    if (!text) {
      skip(s, "content is empty");
      continue;
    }
    if (text.includes(OPEN) || text.includes(CLOSE)) {
      skip(s, "content contains the reserved section markers");
      continue;
    }
    if (text.length > s.max_chars) {
      skip(s, `content has ${text.length} characters, over its max_chars ${s.max_chars}`);
      continue;
    }
    const framed = `${OPEN} id="${s.id}" plugin="${s.plugin_key}">\n${text}\n${CLOSE}`;
    const add = (parts.length ? 2 : 0) + framed.length;
    if (total + add > MAX_SECTIONS_TOTAL) {
      skip(s, `the sections would exceed ${MAX_SECTIONS_TOTAL} characters in all`);
      continue;
    }
    total += add;
    parts.push(framed);
    used.push(s.id);
  }
  return { text: parts.join("\n\n"), used, skipped };
}

/** The session's system prompt: the base prompt, then the plugin sections (frozen for the session). */
export function composeSystemPrompt(base: string, sections: RenderedSections): string {
  return sections.text ? `${base}\n\n${sections.text}` : base;
}
