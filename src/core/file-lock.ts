import { pidAlive } from "./pid.js";
import { promises as fsp } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { HermesError } from "./errors.js";
import { mkdirOwned, ownLikeParent, resolveWriteTarget } from "./atomic-fs.js";

export interface LockOptions {
  /** How long to wait for another holder, in ms. */
  timeoutMs?: number;
}

interface LockOwner {
  pid: number;
  host: string;
  at: number;
}

async function readOwner(lockPath: string): Promise<LockOwner | undefined> {
  try {
    return JSON.parse(await fsp.readFile(lockPath, "utf8")) as LockOwner;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Inter-process lock for read-modify-write of a shared file: `<file>.lock` created with O_EXCL.
 * A lock left by a dead process on this host is broken; one from a live process is waited for.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const target = await resolveWriteTarget(file);
  const lockPath = `${target}.lock`;
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  const me: LockOwner = { pid: process.pid, host: hostname(), at: Date.now() };
  await mkdirOwned(dirname(lockPath));
  let delay = 5;
  for (;;) {
    try {
      const handle = await fsp.open(lockPath, "wx", 0o644);
      await ownLikeParent(lockPath);
      await handle.writeFile(JSON.stringify(me));
      await handle.close();
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new HermesError("E_FS_WRITE", {
          message: `could not create lock ${lockPath}: ${(e as Error).message}`,
          file: lockPath,
        });
      }
      const owner = await readOwner(lockPath);
      // An unreadable owner is a lock being written right now, or one torn by a crash; only age tells.
      const stale = owner
        ? owner.host === me.host && !pidAlive(owner.pid)
        : Date.now() -
            (await fsp.stat(lockPath).then(
              (s) => s.mtimeMs,
              () => Date.now(),
            )) >
          5_000;
      if (stale) {
        await fsp.rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new HermesError("E_FS_LOCK_TIMEOUT", {
          message: `timed out waiting for ${lockPath}${owner ? ` (held by pid ${owner.pid} on ${owner.host})` : ""}`,
          file: lockPath,
        });
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 100);
    }
  }
  try {
    return await fn();
  } finally {
    await fsp.rm(lockPath, { force: true });
  }
}
