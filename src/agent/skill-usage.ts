import { join } from "node:path";
import { readTextIfExists, writeFileAtomic } from "../core/atomic-fs.js";
import { withFileLock } from "../core/file-lock.js";

/** What one use of a skill changed in its usage record (the fields on_skill_lifecycle reports). */
export interface SkillUse {
  use_count: number;
  reused: boolean;
  reuse_after_patch: boolean;
}

interface UsageRecord {
  use_count?: number;
  last_used_at?: string;
  [k: string]: unknown;
}

/** `<home>/skills/.usage.json`: per skill name, how often it was used; the original keeps the same file. */
export function usageFile(home: string): string {
  return join(home, "skills", ".usage.json");
}

function parse(text: string | undefined): Record<string, UsageRecord> {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, UsageRecord>) : {};
  } catch {
    // A damaged record only loses counts: usage is telemetry, never a reason to refuse a skill.
    return {};
  }
}

/**
 * Count one use of `name` under the home's file lock (chat and serve may share a home). Plugin skills
 * are read-only, so a use is never after a patch.
 */
export async function recordSkillUse(home: string, name: string): Promise<SkillUse> {
  const file = usageFile(home);
  return withFileLock(file, async () => {
    const data = parse(await readTextIfExists(file));
    const rec = data[name] && typeof data[name] === "object" ? data[name] : {};
    const before = typeof rec.use_count === "number" && rec.use_count >= 0 ? Math.floor(rec.use_count) : 0;
    data[name] = { ...rec, use_count: before + 1, last_used_at: new Date().toISOString() };
    await writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`);
    return { use_count: before + 1, reused: before > 0, reuse_after_patch: false };
  });
}
