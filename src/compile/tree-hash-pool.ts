import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { TreeEntry } from "./tree-hash.js";

/**
 * Lists and hashes plugin trees on one worker thread beside the main thread. A cold compile of many
 * plugins is thousands of small directory reads, stats and hashes: discovery offers each plugin folder
 * as it finds it, so the worker hashes while the main thread parses manifests; afterwards the main
 * thread takes every tree the worker has not started (a claim per job in shared memory decides who does
 * it) and waits only for those the worker is on. Results are tree-hash.ts's; a job the worker could not
 * do, or every job of a worker that died, is done on the main thread, which reports errors as it always has.
 */

/** Below this many trees a thread's start (~30–50 ms of the other core) buys nothing. */
export const POOL_MIN_TREES = 200;

export interface TreeJob {
  index: number;
  realPath: string;
  /** The cached fingerprint: when the listing still has it, the worker does not hash. */
  knownFp?: string;
}

export interface TreeListing {
  entries: TreeEntry[];
  fp: string;
  integrity?: string;
  files?: Record<string, string>;
}

export type TreeJobResult = ({ index: number } & TreeListing) | { index: number; failed: true };

/** Messages to the worker: its claims array once, then batches of jobs. */
export type TreeWorkerMessage = { claims: SharedArrayBuffer } | { jobs: TreeJob[] };

const WORKER_URL = new URL("./tree-hash-worker.js", import.meta.url);
/** A job's claim in shared memory: whichever thread swaps it from `free` does the job. */
export const CLAIM = { free: 0, worker: 1, main: 2 } as const;
/** Jobs go to the worker in batches: a message costs ~0.1 ms here, and 32 folders are ~10 ms of discovery. */
const BATCH = 32;

export class TreePool {
  private readonly byPath = new Map<string, number>();
  private batch: TreeJob[] = [];
  private readonly results = new Map<number, TreeJobResult>();
  private readonly waiting = new Map<number, (r: TreeJobResult | undefined) => void>();
  private ended = false;

  private constructor(
    private readonly worker: Worker,
    private readonly claims: Int32Array,
  ) {
    worker.on("message", (batch: TreeJobResult[]) => {
      for (const r of batch) {
        this.results.set(r.index, r);
        this.waiting.get(r.index)?.(r);
        this.waiting.delete(r.index);
      }
    });
    const end = () => {
      this.ended = true;
      for (const resolve of this.waiting.values()) resolve(undefined);
      this.waiting.clear();
    };
    worker.on("error", end); // a dead worker's jobs are done by the main thread
    worker.on("exit", end);
  }

  /**
   * A worker started now, ready by the time discovery offers trees; room for `capacity` of them (later
   * ones are the main thread's). Undefined without the built worker (tests of the TypeScript sources) or
   * a thread. It holds no event-loop reference while idle, so it never keeps the process alive.
   */
  static start(capacity: number): TreePool | undefined {
    if (!existsSync(fileURLToPath(WORKER_URL))) return undefined;
    try {
      const claims = new SharedArrayBuffer(4 * capacity);
      const worker = new Worker(WORKER_URL);
      worker.unref();
      worker.postMessage({ claims } satisfies TreeWorkerMessage);
      return new TreePool(worker, new Int32Array(claims));
    } catch {
      return undefined;
    }
  }

  /** Give the worker a tree to list (and hash unless its fingerprint is `knownFp`), if there is room. */
  offer(realPath: string, knownFp?: string): void {
    if (this.ended || this.byPath.has(realPath) || this.byPath.size >= this.claims.length) return;
    const job = { index: this.byPath.size, realPath, knownFp };
    this.byPath.set(realPath, job.index);
    this.batch.push(job);
    if (this.batch.length >= BATCH) this.flush();
  }

  /** Send the jobs offered since the last batch. */
  flush(): void {
    if (!this.batch.length || this.ended) return;
    this.worker.postMessage({ jobs: this.batch } satisfies TreeWorkerMessage);
    this.batch = [];
  }

  /**
   * Claim `realPath` for the main thread: true when the worker has not started it (or never had it),
   * false when the worker is on it or done, and `result()` then gives its outcome.
   */
  claim(realPath: string): boolean {
    const i = this.byPath.get(realPath);
    return (
      i === undefined || this.ended || Atomics.compareExchange(this.claims, i, CLAIM.free, CLAIM.main) === CLAIM.free
    );
  }

  /** The worker's listing of a tree it claimed; undefined when it failed or died (the main thread does it). */
  async result(realPath: string): Promise<TreeListing | undefined> {
    const i = this.byPath.get(realPath);
    if (i === undefined) return undefined;
    this.worker.ref();
    const r =
      this.results.get(i) ??
      (this.ended ? undefined : await new Promise<TreeJobResult | undefined>((res) => this.waiting.set(i, res)));
    this.worker.unref();
    return r && !("failed" in r) ? r : undefined;
  }

  close(): void {
    this.ended = true;
    void this.worker.terminate();
  }
}
