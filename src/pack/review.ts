import type { Pack } from "./parse.js";
import type { ResolvedPack } from "./resolve.js";

/**
 * The review screen shared by `pack show` and `pack install`: what would be
 * installed, from where, at which commit, with which declared capabilities (index labels for
 * names; manifest capabilities are shown per plugin at install, where consent asks for them),
 * the config seeds, the skills, and the reminder that a pack never bulk-grants.
 */

function columns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

function seedValue(v: unknown): string {
  return JSON.stringify(v) ?? String(v);
}

/** `seed` lines: `<id>.<key> = <json>` for every top-level key. */
export function seedLines(config: Pack["config"]): string[] {
  const out: string[] = [];
  for (const [id, seed] of Object.entries(config)) {
    for (const [k, v] of Object.entries(seed)) out.push(`  ${id}.${k} = ${seedValue(v)}`);
  }
  return out;
}

export interface ReviewExtras {
  /** Per entry index: extra text after the source (bundle verification). */
  notes?: Map<number, string>;
  /** Shown under the header (bundle provenance). */
  banner?: string[];
}

export function reviewLines(pack: Pack, resolved: ResolvedPack, extras: ReviewExtras = {}): string[] {
  const lines: string[] = [];
  lines.push(`${pack.name}${pack.version ? ` v${pack.version}` : ""}${pack.author ? ` — by ${pack.author}` : ""}`);
  if (pack.description.trim()) lines.push(`  ${pack.description.trim()}`);
  for (const b of extras.banner ?? []) lines.push(b);
  lines.push("");
  const rows: string[][] = [["Plugin", "Source", "Pinned ref", "Capabilities (declared)"]];
  for (const r of resolved.entries) {
    const src = r.identifier
      ? `${r.identifier}${extras.notes?.get(r.entry.index) ? ` ${extras.notes.get(r.entry.index)}` : ""}`
      : `unresolved: ${r.error ?? "unknown"}`;
    const caps = r.capabilities && r.capabilities.length ? r.capabilities.join(", ") : "(shown at install)";
    rows.push([r.entry.display, src, r.entry.ref.slice(0, 12), caps]);
  }
  lines.push(...columns(rows));
  if (resolved.indexSource) {
    lines.push(
      "Names resolved through the community index " +
        `(source: ${resolved.indexSource}${resolved.indexStale ? ", possibly out of date" : ""}); exact names ` +
        "only.",
    );
  }
  const seeds = seedLines(pack.config);
  if (seeds.length) {
    lines.push("");
    lines.push("Config seeds (plugins.entries.<id>, non-secret; only keys you have not set are written):");
    lines.push(...seeds);
  }
  if (pack.skills.length) {
    lines.push("");
    lines.push(`Pack lists skills (NOT auto-installed yet): ${pack.skills.join(", ")}`);
    lines.push("  Install them manually, e.g. `hermes skills install <id>`.");
  }
  lines.push("");
  lines.push(
    `Installing a pack runs third-party code × ${pack.plugins.length} ` +
      `plugin${pack.plugins.length === 1 ? "" : "s"}. Each plugin's declared capabilities still require ` +
      "individual consent after install — a pack never bulk-grants.",
  );
  return lines;
}

export function unresolvedCount(resolved: ResolvedPack): number {
  return resolved.entries.filter((e) => !e.identifier).length;
}
