import { randomBytes } from "node:crypto";
import { sha256Hex } from "../core/hash.js";
import { constants, promises as fsp } from "node:fs";
import { dirname, join } from "node:path";
import { mkdirOwned, ownLikeParent, symlinkAtomic, writeFileAtomic } from "../core/atomic-fs.js";
import { HermesError } from "../core/errors.js";
import { faultPoint } from "../core/fault.js";
import type { HomePaths } from "../core/paths.js";
import { parseLockText, type Lock, type LockLink } from "../contracts/lock.js";
import { farmName, linkValue } from "./link-farm.js";
import { CURRENT, currentGeneration } from "./current-generation.js";

/**
 * Generations: `generations/<n>/` holds a lock, the declared overlay and a link farm
 * (`links/<name>` → plugin folder). `generations/current` → `<n>` is the one switch; the home's
 * `hermes.lock.json` and every deployment link point through it, so one rename moves the lock and
 * all link targets together. A killed apply leaves either the old or the new generation current.
 */
export { CURRENT, currentGeneration };
export const LOCK_POINTER = "generations/current/hermes.lock.json";
export const KEEP_GENERATIONS = 20;

export interface GenerationMeta {
  generation: number;
  created_at: string;
  reason: "compile" | "rollback";
  spec: string | null;
  kind: string | null;
  from?: number;
}

export interface GenerationInfo extends GenerationMeta {
  current: boolean;
  /** Why the current generation is current (null for the others). */
  current_reason: string | null;
  plugins: number;
  loading: number;
}

/**
 * `generations/pending.json`: written before an apply touches anything, removed when it is done.
 * Present at a start, it means the apply was killed; it names the spec to re-run.
 */
export interface PendingRecord {
  spec: string | null;
  kind: string | null;
  at: string;
}

const PENDING_RECORD = "pending.json";

export async function writePendingRecord(paths: HomePaths, rec: PendingRecord): Promise<void> {
  await mkdirOwned(paths.generations);
  await writeFileAtomic(join(paths.generations, PENDING_RECORD), `${JSON.stringify(rec)}\n`);
}

export async function clearPendingRecord(paths: HomePaths): Promise<void> {
  await fsp.rm(join(paths.generations, PENDING_RECORD), { force: true });
}

export async function readPendingRecord(paths: HomePaths): Promise<PendingRecord | undefined> {
  try {
    const v = JSON.parse(await fsp.readFile(join(paths.generations, PENDING_RECORD), "utf8")) as Partial<PendingRecord>;
    if (typeof v.at !== "string") return undefined;
    return {
      spec: typeof v.spec === "string" ? v.spec : null,
      kind: typeof v.kind === "string" ? v.kind : null,
      at: v.at,
    };
  } catch {
    return undefined;
  }
}

/** `generations/rollback.json`: the last rollback, so the listing can say why a generation is current. */
export interface RollbackRecord {
  to: number;
  from: number | null;
  at: string;
}

const ROLLBACK_RECORD = "rollback.json";

export async function writeRollbackRecord(paths: HomePaths, rec: RollbackRecord): Promise<void> {
  await writeFileAtomic(join(paths.generations, ROLLBACK_RECORD), `${JSON.stringify(rec)}\n`);
}

async function readRollbackRecord(paths: HomePaths): Promise<RollbackRecord | undefined> {
  try {
    const v = JSON.parse(
      await fsp.readFile(join(paths.generations, ROLLBACK_RECORD), "utf8"),
    ) as Partial<RollbackRecord>;
    return typeof v.to === "number" && typeof v.at === "string"
      ? { to: v.to, from: typeof v.from === "number" ? v.from : null, at: v.at }
      : undefined;
  } catch {
    return undefined;
  }
}

async function fsyncPath(p: string): Promise<void> {
  const h = await fsp.open(p, constants.O_RDONLY).catch(() => undefined);
  if (!h) return;
  await h.sync().catch(() => undefined);
  await h.close();
}

export async function listGenerationNumbers(paths: HomePaths): Promise<number[]> {
  const names = await fsp.readdir(paths.generations).catch(() => [] as string[]);
  return names
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
}

/** config.yaml's read/write bits; without a config, undefined (a new file: the umask decides). */
async function generationMode(paths: HomePaths): Promise<number | undefined> {
  const st = await fsp.stat(paths.config).catch(() => undefined);
  return st ? st.mode & 0o666 : undefined;
}

/** Write a complete generation under a temp name and rename it into place (invisible until then). */
export async function writeGeneration(
  paths: HomePaths,
  lockText: string,
  links: readonly LockLink[],
  declared: Record<string, unknown> | null,
  meta: Omit<GenerationMeta, "generation">,
  files: Record<string, Record<string, string>> = {},
  /** config.yaml as this generation runs it (null: none), so a rollback restores it whole. */
  configText?: string | null,
): Promise<number> {
  await mkdirOwned(paths.generations);
  const n = Math.max(0, ...(await listGenerationNumbers(paths))) + 1;
  const tmp = join(paths.generations, `.${n}.${randomBytes(4).toString("hex")}.tmp`);
  await mkdirOwned(join(tmp, "links"));
  // The overlay carries the spec's settings (secrets included): no generation file is more readable than config.yaml.
  const mode = await generationMode(paths);
  await writeFileAtomic(join(tmp, "hermes.lock.json"), lockText, { mode });
  await writeFileAtomic(join(tmp, "overlay.json"), `${JSON.stringify({ declared }, null, 2)}\n`, { mode });
  await writeFileAtomic(join(tmp, "files.json"), `${JSON.stringify(files)}\n`, { mode });
  await writeFileAtomic(join(tmp, "meta.json"), `${JSON.stringify({ generation: n, ...meta }, null, 2)}\n`, { mode });
  if (configText !== undefined)
    await writeFileAtomic(join(tmp, "config.json"), `${JSON.stringify({ text: configText })}\n`, { mode });
  for (const l of links) {
    await fsp.symlink(l.target, join(tmp, "links", farmName(l.link)));
    await ownLikeParent(join(tmp, "links", farmName(l.link)));
    faultPoint();
  }
  await fsyncPath(join(tmp, "links"));
  await fsyncPath(tmp);
  await fsp.rename(tmp, join(paths.generations, String(n)));
  await fsyncPath(paths.generations);
  faultPoint();
  return n;
}

/**
 * Keep the deployment's store paths alive while a generation uses them: an indirect GC root
 * (`/nix/var/nix/gcroots/auto/<hash>` → farm link), as `nix-store --add-root --indirect` makes.
 * Pruning the generation leaves the root dangling, and Nix's collector then drops it.
 */
export async function registerGcRoots(
  paths: HomePaths,
  generation: number,
  links: readonly LockLink[],
  autoDir = "/nix/var/nix/gcroots/auto",
): Promise<number> {
  const store = links.filter((l) => l.target.startsWith("/nix/store/"));
  if (!store.length) return 0;
  try {
    await fsp.access(autoDir, constants.W_OK);
  } catch {
    return 0;
  }
  let made = 0;
  for (const l of store) {
    const farm = join(paths.generations, String(generation), "links", farmName(l.link));
    const name = sha256Hex(farm).slice(0, 32);
    await fsp.symlink(farm, join(autoDir, name)).then(
      () => made++,
      () => undefined,
    );
  }
  return made;
}

/** Make every deployment link in the home point through `generations/current`. */
export async function syncLinks(paths: HomePaths, want: readonly LockLink[]): Promise<void> {
  for (const l of want) {
    const abs = join(paths.home, l.link);
    const value = linkValue(l.link);
    const cur = await fsp.readlink(abs).catch(() => undefined);
    if (cur === value) continue;
    await mkdirOwned(dirname(abs));
    await symlinkAtomic(value, abs);
  }
}

/** Check before any write that no deployment link would replace something that is not a link. */
export async function assertLinkSlotsFree(paths: HomePaths, want: readonly LockLink[]): Promise<void> {
  for (const l of want) {
    const st = await fsp.lstat(join(paths.home, l.link)).catch(() => undefined);
    if (st && !st.isSymbolicLink()) {
      throw new HermesError("E_FS_WRITE", {
        message:
          `${join(paths.home, l.link)} exists and is not a link; hermes compile never replaces real files or ` +
          "folders",
        file: join(paths.home, l.link),
        hint: "move it away (it may be a hand-installed plugin with the same name) and compile again",
      });
    }
  }
}

/** Remove deployment links that are not wanted any more; only symlinks are ever removed. */
export async function removeLinks(paths: HomePaths, links: readonly string[]): Promise<void> {
  for (const link of links) {
    const abs = join(paths.home, link);
    const st = await fsp.lstat(abs).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      await fsp.rm(abs, { force: true });
      faultPoint();
    }
  }
}

export async function switchTo(paths: HomePaths, n: number): Promise<void> {
  await mkdirOwned(paths.generations);
  const lockValue = await fsp.readlink(paths.lock).catch(() => undefined);
  // The pointer is fixed; it is created before the switch so the two never disagree.
  if (lockValue !== LOCK_POINTER) await symlinkAtomic(LOCK_POINTER, paths.lock);
  await symlinkAtomic(String(n), join(paths.generations, CURRENT));
}

export async function readGeneration(
  paths: HomePaths,
  n: number,
): Promise<{
  lock: Lock;
  declared: Record<string, unknown> | null;
  meta: GenerationMeta;
  config?: { text: string | null };
}> {
  const dir = join(paths.generations, String(n));
  let lockText: string;
  try {
    lockText = await fsp.readFile(join(dir, "hermes.lock.json"), "utf8");
  } catch {
    throw new HermesError("E_COMPILE_NO_GENERATION", {
      message: `generation ${n} does not exist in ${paths.generations}`,
    });
  }
  const { lock, diagnostics } = parseLockText(lockText, join(dir, "hermes.lock.json"));
  if (!lock) throw new HermesError("E_LOCK_INVALID", { message: `generation ${n} has an invalid lock`, diagnostics });
  const overlay = JSON.parse(await fsp.readFile(join(dir, "overlay.json"), "utf8").catch(() => "{}")) as {
    declared?: Record<string, unknown> | null;
  };
  const meta = JSON.parse(await fsp.readFile(join(dir, "meta.json"), "utf8").catch(() => "{}")) as GenerationMeta;
  // Generations written before config snapshots existed have none: rollback re-applies their overlay instead.
  let config: { text: string | null } | undefined;
  try {
    const c = JSON.parse(await fsp.readFile(join(dir, "config.json"), "utf8")) as { text?: unknown };
    if (typeof c.text === "string" || c.text === null) config = { text: c.text };
  } catch {
    config = undefined;
  }
  return { lock, declared: overlay.declared ?? null, meta: { ...meta, generation: n }, config };
}

/** Per-plugin file hashes recorded with a generation (for drift reports). */
export async function readGenerationFiles(
  paths: HomePaths,
  n: number,
): Promise<Record<string, Record<string, string>>> {
  try {
    return JSON.parse(await fsp.readFile(join(paths.generations, String(n), "files.json"), "utf8")) as Record<
      string,
      Record<string, string>
    >;
  } catch {
    return {};
  }
}

export async function listGenerations(paths: HomePaths): Promise<GenerationInfo[]> {
  const cur = await currentGeneration(paths);
  const rb = await readRollbackRecord(paths);
  const nums = await listGenerationNumbers(paths);
  const reason = (n: number) =>
    n !== cur
      ? null
      : rb && rb.to === n
        ? `rolled back to at ${rb.at}${rb.from !== null ? ` from generation ${rb.from}` : ""}; stays until the ` +
          "next change is compiled"
        : n === nums[nums.length - 1]
          ? "the latest compile"
          : "current";
  const out: GenerationInfo[] = [];
  for (const n of nums) {
    try {
      const g = await readGeneration(paths, n);
      out.push({
        ...g.meta,
        current: n === cur,
        current_reason: reason(n),
        plugins: g.lock.plugins.length,
        loading: g.lock.load_order.length,
      });
    } catch {
      // an unreadable generation is skipped in the listing; rollback to it reports the error
    }
  }
  return out;
}

/** Drop old generations (never the current one) and leftovers of interrupted writes. */
export async function pruneGenerations(paths: HomePaths, keep = KEEP_GENERATIONS): Promise<void> {
  const cur = await currentGeneration(paths);
  const nums = await listGenerationNumbers(paths);
  const drop = nums.slice(0, Math.max(0, nums.length - keep)).filter((n) => n !== cur);
  for (const n of drop) {
    await fsp.rm(join(paths.generations, String(n)), { recursive: true, force: true });
    faultPoint();
  }
  for (const name of await fsp.readdir(paths.generations).catch(() => [] as string[])) {
    if (name.startsWith(".") && name.endsWith(".tmp"))
      await fsp.rm(join(paths.generations, name), { recursive: true, force: true });
  }
}
