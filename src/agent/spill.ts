import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic-fs.js";

export const DEFAULT_SPILL_MAX_CHARS = 10_000;
const PREVIEW = 500;

/** `hooks.output_spill.max_chars` from config.yaml (default 10 000). */
export function spillLimit(config: Record<string, unknown>): number {
  const hooks = config.hooks as { output_spill?: { max_chars?: unknown } } | undefined;
  const v = hooks?.output_spill?.max_chars;
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : DEFAULT_SPILL_MAX_CHARS;
}

/**
 * One hook's output over the limit is written to `<home>/hook_outputs/<session>/<uuid>.txt` and
 * replaced by its first and last 500 characters plus the path: one hook cannot flood the context.
 */
export async function spillIfLong(
  text: string,
  opts: { home: string; sessionId: string; maxChars: number },
): Promise<{ text: string; file?: string }> {
  if (text.length <= opts.maxChars) return { text };
  const file = join(opts.home, "hook_outputs", opts.sessionId.replace(/[^\w.-]/g, "_"), `${randomUUID()}.txt`);
  await writeFileAtomic(file, text, { mode: 0o600 });
  const omitted = text.length - 2 * PREVIEW;
  return {
    text:
      `${text.slice(0, PREVIEW)}\n… [${omitted} characters omitted; the full hook output (${text.length} ` +
      `characters) is in ${file}] …\n${text.slice(-PREVIEW)}`,
    file,
  };
}
