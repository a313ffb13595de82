import { promises as fsp } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../compile/compile.js";
import { editConfig } from "../config/config-file.js";
import type { OwnershipGuard } from "../config/enable.js";
import type { Io } from "../consent/flow.js";
import { HermesError, isHermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import type { YamlEdit } from "../core/yaml-edit.js";
import { formatJsonPath } from "../core/yaml-source.js";
import { loadConfig } from "../config/config-file.js";
import { loadIndex } from "../install/index/load.js";
import { installPlugin, type InstallOptions, type InstallResult } from "../install/install.js";
import { recoverInterrupted } from "../install/stage.js";
import { materializeVerified, readBundle, scratchDir, sweepScratch, type VerifiedBundle } from "./bundle/bundle.js";
import { placeBundledPlugin } from "./bundle/place.js";
import type { Pack, PackEntry } from "./parse.js";
import { resolvePack, type ResolvedPack } from "./resolve.js";
import { reviewLines, unresolvedCount } from "./review.js";
import { findSeedProblems } from "./seed-hygiene.js";
import { isBundleSource, loadPack, localPath } from "./source.js";

/**
 * `hermes plugins pack show|install <src>`.
 *
 * install: load and check the pack (all errors at once) → resolve → review → refuse without a
 * terminal (no --yes) → one confirmation → each plugin independently through the ordinary
 * pinned install (`installPlugin` with the entry's ref: scan, staging, metadata, per-plugin
 * consent; pack plugins are enabled, the confirmation counting as the consent to enable) →
 * config seeds, fill-only → one compile → summary; any failure makes the command fail
 * (E_PACK_INSTALL_FAILED) while the plugins that installed stay.
 *
 * A bundle (`pack export --bundle`) is verified completely (bundle.ts) before the review; its
 * plugins are then placed from the verified trees instead of cloned (bundle/place.ts).
 */

export interface PackCommandOptions {
  paths: HomePaths;
  src: string;
  io: Io;
  force?: boolean;
  guard?: OwnershipGuard;
  env?: NodeJS.ProcessEnv;
  /** The single-plugin installer (tests may wrap it). */
  installer?: (o: InstallOptions) => Promise<InstallResult>;
}

export interface PackInstallSummary {
  pack: string;
  installed: Array<{ display: string; name: string; key: string }>;
  failed: Array<{ display: string; error: string; code?: string }>;
}

interface Prepared {
  pack: Pack;
  resolved: ResolvedPack;
  bundle?: VerifiedBundle;
  lines: string[];
}

async function prepare(o: PackCommandOptions): Promise<Prepared> {
  const warn = (l: string) => o.io.warn(l);
  if (await isBundleSource(o.src)) {
    const bundle = await readBundle(localPath(o.src));
    const resolved = await resolvePack(bundle.pack, () =>
      Promise.reject(
        new HermesError("E_PACK_UNRESOLVED", {
          message: "a bundle installs offline: entries without a repo are not looked up in the index",
        }),
      ),
    );
    const notes = new Map<number, string>();
    for (const p of bundle.plugins) notes.set(p.entry.index, `(bundled, tree ${p.meta.tree.slice(0, 12)} verified)`);
    const banner = [
      `  Bundle ${o.src}: sha256 ${bundle.sha256}; ${bundle.plugins.length} plugin tree(s), each verified ` +
        "against its revision; installs offline.",
    ];
    return { pack: bundle.pack, resolved, bundle, lines: reviewLines(bundle.pack, resolved, { notes, banner }) };
  }
  const { pack } = await loadPack(o.src, o.env);
  const config = (await loadConfig(o.paths.config)).value;
  const resolved = await resolvePack(pack, () => loadIndex(o.paths, config, { warn, env: o.env }));
  return { pack, resolved, lines: reviewLines(pack, resolved) };
}

/** `pack show`: the review, dry run. Unresolved entries are reported, not fatal. */
export async function showPack(
  o: PackCommandOptions,
): Promise<{ pack: Pack; resolved: ResolvedPack; bundle?: VerifiedBundle }> {
  const p = await prepare(o);
  if (p.bundle) {
    // Integrity needs the trees on disk: check them in a throw-away folder.
    const tmp = await fsp.mkdtemp(join(tmpdir(), "hermes-bundle-show-"));
    try {
      for (const b of p.bundle.plugins) await materializeVerified(p.bundle.file, b, join(tmp, b.meta.folder));
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  }
  for (const l of p.lines) o.io.out(l);
  const k = unresolvedCount(p.resolved);
  if (k)
    o.io.out(
      `\n${k} ${k === 1 ? "entry" : "entries"} could not be resolved — install would ` +
        `skip ${k === 1 ? "it" : "them"} and exit non-zero.`,
    );
  o.io.out(`\nDry run only. Install with \`hermes plugins pack install ${o.src}\`.`);
  return { pack: p.pack, resolved: p.resolved, bundle: p.bundle };
}

/** The seed for an installed plugin: `config[key]`, else `config[name]`, else `config[entry.name]`. */
function seedFor(
  pack: Pack,
  entry: PackEntry,
  key: string,
  name: string,
): { id: string; seed: Record<string, unknown> } | undefined {
  for (const id of [key, name, entry.name]) {
    if (id && Object.prototype.hasOwnProperty.call(pack.config, id)) return { id, seed: pack.config[id]! };
  }
  return undefined;
}

/**
 * Apply a pack's config seed fill-only, so a pack never overwrites a setting: keys already
 * present in `plugins.entries.<key>` keep the user's value; new keys are written (comments and
 * layout of config.yaml kept). Hygiene is checked again right before writing. Returns whether config.yaml changed.
 */
export async function applySeed(
  paths: HomePaths,
  key: string,
  seed: Record<string, unknown>,
  io: Io,
  guard?: OwnershipGuard,
): Promise<boolean> {
  const bad = findSeedProblems(seed);
  const badTop = new Set(bad.map((f) => String(f.path[0])));
  for (const f of bad)
    io.warn(
      `warning: pack config for '${key}' ` +
        `sets ${f.code === "E_PACK_SEED_RESERVED" ? "reserved" : "secret-shaped"} key ` +
        `'${formatJsonPath(f.path)}' — not written.`,
    );
  const written: string[] = [];
  const res = await editConfig(paths.config, (cur) => {
    const plugins = cur.value.plugins as Record<string, unknown> | undefined;
    const entries =
      plugins && typeof plugins === "object" ? (plugins.entries as Record<string, unknown> | undefined) : undefined;
    const existing = entries && typeof entries === "object" ? entries[key] : undefined;
    if (existing !== undefined && existing !== null && (typeof existing !== "object" || Array.isArray(existing))) {
      io.warn(`Warning: plugins.entries.${key} is not a mapping; skipping the pack's config seed.`);
      return [];
    }
    const have = (existing ?? {}) as Record<string, unknown>;
    const edits: YamlEdit[] = [];
    for (const [k, v] of Object.entries(seed)) {
      if (badTop.has(k)) continue;
      if (Object.prototype.hasOwnProperty.call(have, k)) {
        io.out(`  plugins.entries.${key}.${k} already set — keeping your value.`);
        continue;
      }
      const path = ["plugins", "entries", key, k];
      guard?.(path);
      edits.push({ op: "set", path, value: v });
      written.push(k);
    }
    return edits;
  });
  if (written.length) io.out(`  Seeded plugins.entries.${key} from the pack: ${written.join(", ")}.`);
  return res.changed;
}

function oneLine(s: string): string {
  const t = s
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ");
  return t.length > 300 ? `${t.slice(0, 299)}…` : t;
}

type ResolvedEntry = ResolvedPack["entries"][number];

/** Unpack and verify every bundled tree into scratch before anything is asked or installed. */
async function materializeTrees(bundle: VerifiedBundle, scratch: string, trees: Map<number, string>): Promise<void> {
  for (const b of bundle.plugins) {
    const dest = join(scratch, b.meta.folder);
    await materializeVerified(bundle.file, b, dest);
    trees.set(b.entry.index, dest);
  }
}

/** A person confirms the pack at a terminal; without one nothing is installed. */
async function confirmInstall(io: Io, pack: Pack, resolved: ResolvedPack): Promise<void> {
  if (!io.interactive) {
    // The one way to install without a person at a prompt: each plugin on its own, pinned as the pack pins it.
    const commands = resolved.entries
      .filter((r) => r.identifier)
      .map((r) => `  hermes plugins install ${r.identifier} --ref ${r.entry.ref}`);
    const how = commands.length ? `. To install without a terminal, run per entry:\n${commands.join("\n")}` : "";
    throw new HermesError("E_PACK_NOT_INTERACTIVE", {
      message:
        "pack install requires an interactive terminal to review and confirm the pack contents (there is no " +
        `--yes); nothing was installed${how}`,
    });
  }
  const n = pack.plugins.length;
  if (!(await io.confirm(`\nInstall ${n} plugin${n === 1 ? "" : "s"} from pack '${pack.name}'? [y/N] `))) {
    throw new HermesError("E_PACK_ABORTED", { message: "Aborted — nothing installed." });
  }
}

/** Install one entry (bundled tree or network install) and record the outcome; a failure does not stop the pack. */
async function installEntry(
  o: PackCommandOptions,
  p: Prepared,
  r: ResolvedEntry,
  trees: Map<number, string>,
  summary: PackInstallSummary,
  progress: { changed: boolean },
): Promise<void> {
  const io = o.io;
  const display = r.entry.display;
  if (!r.identifier) {
    const error = r.error ?? "unresolved";
    summary.failed.push({ display, error, code: "E_PACK_UNRESOLVED" });
    io.out(`✗ ${display}: ${error}`);
    return;
  }
  io.out(`\nInstalling ${display} @ ${r.entry.ref.slice(0, 12)}...`);
  try {
    let key: string;
    let name: string;
    const tree = trees.get(r.entry.index);
    const b = p.bundle?.plugins.find((x) => x.entry.index === r.entry.index);
    if (b && tree) {
      const placed = await placeBundledPlugin(
        { paths: o.paths, io, force: o.force, guard: o.guard, env: o.env },
        b,
        tree,
      );
      key = placed.key;
      name = placed.name;
    } else {
      const installer = o.installer ?? installPlugin;
      const res = await installer({
        paths: o.paths,
        identifier: r.identifier,
        ref: r.entry.ref,
        force: o.force,
        enable: true,
        io,
        guard: o.guard,
        env: o.env,
      });
      key = res.key;
      name = res.name;
    }
    progress.changed = true;
    const s = seedFor(p.pack, r.entry, key, name);
    if (s) {
      try {
        await applySeed(o.paths, key, s.seed, io, o.guard);
      } catch (e) {
        io.warn(`warning: the config seed for ${key} was not applied: ${(e as Error).message}`);
      }
    }
    summary.installed.push({ display, name, key });
    io.out(`✓ ${display} installed as ${name}.`);
  } catch (e) {
    const error = oneLine(isHermesError(e) ? e.message : (e as Error).message);
    summary.failed.push({ display, error, code: isHermesError(e) ? e.code : undefined });
    io.out(`✗ ${display}: ${error}`);
    if (isHermesError(e)) for (const d of e.diagnostics.slice(0, 5)) io.out(`    ${d.message}`);
  }
}

async function recompile(o: PackCommandOptions): Promise<void> {
  try {
    const compiled = await compile({ home: o.paths.home, env: o.env });
    if (compiled.applied) o.io.out(`lock updated: generation ${compiled.generation}`);
  } catch (e) {
    o.io.warn(`warning: the lock was not updated: ${(e as Error).message}`);
  }
}

/** Print the totals; any failed entry makes the command fail (the installed ones stay). */
function reportSummary(io: Io, pack: Pack, summary: PackInstallSummary): void {
  io.out("");
  io.out(`Pack '${pack.name}': ${summary.installed.length} installed, ${summary.failed.length} failed.`);
  for (const f of summary.failed) io.out(`  ✗ ${f.display}: ${f.error}`);
  if (summary.installed.length) io.out("Takes effect on next session.");
  if (summary.failed.length) {
    throw new HermesError("E_PACK_INSTALL_FAILED", {
      message:
        `pack '${pack.name}': ${summary.failed.length} of ${pack.plugins.length} plugin(s) failed (` +
        `${summary.failed.map((f) => f.display).join(", ")}); ` +
        `${
          summary.installed.length
            ? `the ${summary.installed.length} installed stay installed`
            : "nothing was installed"
        }`,
    });
  }
}

export async function installPack(o: PackCommandOptions): Promise<PackInstallSummary> {
  const io = o.io;
  for (const note of await recoverInterrupted(o.paths).catch(() => [] as string[])) io.warn(`note: ${note}`);
  await sweepScratch(o.paths.plugins);
  const p = await prepare(o);
  const { pack, resolved, bundle } = p;
  // Bundles: every tree is materialized and integrity-checked before anything is asked or installed.
  let scratch: string | undefined;
  const trees = new Map<number, string>();
  try {
    if (bundle) {
      scratch = await scratchDir(o.paths.plugins);
      await materializeTrees(bundle, scratch, trees);
    }
    for (const l of p.lines) io.out(l);
    await confirmInstall(io, pack, resolved);
    const summary: PackInstallSummary = { pack: pack.name, installed: [], failed: [] };
    const progress = { changed: false };
    for (const r of resolved.entries) await installEntry(o, p, r, trees, summary, progress);
    if (progress.changed) await recompile(o);
    reportSummary(io, pack, summary);
    return summary;
  } finally {
    if (scratch) await fsp.rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}
