import { pidAlive } from "./pid.js";
import { randomBytes } from "node:crypto";
import { constants, promises as fsp } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { HermesError } from "./errors.js";
import { faultPoint } from "./fault.js";

/**
 * Resolve where a write must land: a symlinked config.yaml (home-manager, dotfile repos) is
 * written through to its target, never replaced by a regular file.
 */
export async function resolveWriteTarget(file: string): Promise<string> {
  let current = resolve(file);
  for (let hops = 0; hops < 40; hops++) {
    let st;
    try {
      st = await fsp.lstat(current);
    } catch {
      return current;
    }
    if (!st.isSymbolicLink()) return current;
    const link = await fsp.readlink(current);
    current = isAbsolute(link) ? link : resolve(dirname(current), link);
  }
  throw new HermesError("E_FS_WRITE", { message: `too many symlink levels at ${file}`, file });
}

interface Owner {
  uid: number;
  gid: number;
}

const asRoot = (): boolean => process.getuid?.() === 0;

/**
 * Root writing into someone's home (`sudo hermes …`): the owner a new entry at `path` takes, its
 * nearest existing parent's. Undefined when not root (a user's own writes are theirs already).
 */
export async function inheritedOwner(path: string): Promise<Owner | undefined> {
  if (!asRoot()) return undefined;
  for (let d = dirname(resolve(path)); ; d = dirname(d)) {
    const st = await fsp.stat(d).catch(() => undefined);
    if (st) return { uid: st.uid, gid: st.gid };
    if (dirname(d) === d) return undefined;
  }
}

/** Give a just-created entry (file, folder or link itself) its parent's owner when root made it. */
export async function ownLikeParent(path: string): Promise<void> {
  const owner = await inheritedOwner(path);
  if (owner) await fsp.lchown(path, owner.uid, owner.gid).catch(() => undefined);
}

/** mkdirOwned calls of this process, one after another (see there). */
let mkdirQueue: Promise<unknown> = Promise.resolve();

/**
 * `mkdir -p` whose new folders take the owner of the folder they were made in (see inheritedOwner).
 * Calls run one at a time: two concurrent writes into a new folder would otherwise see it made (by the
 * other) before it is chown'ed, and take root's ownership from it.
 */
export function mkdirOwned(dir: string): Promise<void> {
  const run = mkdirQueue.then(() => mkdirOwnedNow(dir));
  mkdirQueue = run.catch(() => undefined);
  return run;
}

async function mkdirOwnedNow(dir: string): Promise<void> {
  const first = await fsp.mkdir(dir, { recursive: true });
  if (first === undefined || !asRoot()) return;
  const owner = await inheritedOwner(first);
  if (!owner) return;
  for (let d = resolve(dir); ; d = dirname(d)) {
    await fsp.chown(d, owner.uid, owner.gid).catch(() => undefined);
    if (d === resolve(first) || dirname(d) === d) break;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await fsp.open(dir, constants.O_RDONLY);
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic there.
  } finally {
    await handle?.close();
  }
}

const TEMP_RE = /^\.(.+)\.(\d+)\.[0-9a-f]{12}\.tmp$/;

/**
 * Remove `.<name>.<pid>.<hex>.tmp` files left by a writer that was killed mid-write (only those
 * of processes that are gone; `name` limits the sweep to one file's temps).
 */
export async function sweepStaleTemps(dir: string, name?: string): Promise<void> {
  for (const f of await fsp.readdir(dir).catch(() => [] as string[])) {
    const m = TEMP_RE.exec(f);
    if (!m || (name !== undefined && m[1] !== name)) continue;
    const pid = Number(m[2]);
    if (pid !== process.pid && !pidAlive(pid)) await fsp.rm(join(dir, f), { force: true }).catch(() => undefined);
  }
}

export interface AtomicWriteOptions {
  mode?: number;
  /** Write to the path itself even when it is a symlink (replace the link). */
  replaceLink?: boolean;
}

/** temp file in the same folder → fsync → rename → fsync folder. Readers see old or new bytes. */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): Promise<void> {
  const target = opts.replaceLink ? resolve(file) : await resolveWriteTarget(file);
  const dir = dirname(target);
  const tmp = join(dir, `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  let mode = opts.mode;
  // The file replaced keeps its owner; a new one takes its folder's (root never takes over a home).
  let owner: Owner | undefined;
  try {
    const st = await fsp.stat(target);
    if (mode === undefined) mode = st.mode & 0o7777;
    if (asRoot()) owner = { uid: st.uid, gid: st.gid };
  } catch {
    // A new file: open() with 0666 lets the umask decide (077 gives 0600), and no chmod overrides it.
  }
  try {
    await mkdirOwned(dir);
    owner ??= await inheritedOwner(target);
    const handle = await fsp.open(tmp, "wx", mode ?? 0o666);
    try {
      if (owner) await handle.chown(owner.uid, owner.gid);
      // open() applies the umask; a replaced file must keep the mode it had (e.g. 0664 for a group).
      if (mode !== undefined) await handle.chmod(mode);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    faultPoint();
    await fsp.rename(tmp, target);
    await fsyncDir(dir);
    faultPoint();
    await sweepStaleTemps(dir, basename(target));
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    if (e instanceof HermesError) throw e;
    throw new HermesError("E_FS_WRITE", {
      message: `could not write ${target}: ${(e as Error).message}`,
      file: target,
      cause: e,
    });
  }
}

/** Atomically point `link` at `target` (symlink to a temp name, then rename over). */
export async function symlinkAtomic(target: string, link: string): Promise<void> {
  const tmp = join(dirname(link), `.${basename(link)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await fsp.symlink(target, tmp);
    await ownLikeParent(tmp);
    faultPoint();
    await fsp.rename(tmp, link);
    await fsyncDir(dirname(link));
    faultPoint();
    await sweepStaleTemps(dirname(link), basename(link));
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw new HermesError("E_FS_WRITE", {
      message: `could not link ${link} → ${target}: ${(e as Error).message}`,
      file: link,
      cause: e,
    });
  }
}

export async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new HermesError("E_FS_READ", { message: `could not read ${file}: ${(e as Error).message}`, file, cause: e });
  }
}
