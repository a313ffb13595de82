import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { TreeEntry } from "./tree-hash.js";

/**
 * Lists and hashes plugin trees on one worker thread beside the main thread. A cold compile of many
 * plugins is thousands of small directory reads, stats and hashes; two threads take jobs off one shared
 * counter, so neither waits while the other has work. Results are the same functions' results
 * (tree-hash.ts); a job the worker could not do, or every job of a worker that died, is done on the main
 * thread, which reports errors as it always has.
 */

/** Below this many trees a thread's start (~30–50 ms of the other core) buys nothing. */
export const POOL_MIN_TREES = 200;

export interface TreeJob {
  index: number;
  realPath: string;
  /** The cached fingerprint: when the listing still has it, the worker does not hash. */
  knownFp?: string;
}

export type TreeJobResult =
  | { index: number; entries: TreeEntry[]; fp: string; integrity?: string; files?: Record<string, string> }
  | { index: number; failed: true };

export interface TreeWorkerRequest {
  jobs: TreeJob[];
  /** An Int32 counter: the next job index any thread may take. */
  next: SharedArrayBuffer;
}

const WORKER_URL = new URL("./tree-hash-worker.js", import.meta.url);

export class TreePool {
  private constructor(private readonly worker: Worker) {}

  /**
   * A worker started now, so it has loaded its modules by the time the trees are known (discovery runs
   * meanwhile). Undefined without the built worker (a test running the TypeScript sources) or a thread.
   * It holds no event-loop reference until `run`, so an unused pool never keeps the process alive.
   */
  static start(): TreePool | undefined {
    if (!existsSync(fileURLToPath(WORKER_URL))) return undefined;
    try {
      const worker = new Worker(WORKER_URL);
      worker.unref();
      worker.on("error", () => {}); // a dead worker's jobs are done by the main thread (run)
      return new TreePool(worker);
    } catch {
      return undefined;
    }
  }

  /**
   * Run `jobs`: `own(job)` runs one on this thread; the worker's results come back through `adopt`.
   * Resolves when every job has been done by one of the two; the worker is then stopped.
   */
  async run(
    jobs: TreeJob[],
    own: (job: TreeJob) => Promise<void>,
    adopt: (result: Extract<TreeJobResult, { entries: TreeEntry[] }>) => Promise<void>,
  ): Promise<{ byWorker: number }> {
    const next = new SharedArrayBuffer(4);
    const counter = new Int32Array(next);
    const done = new Set<number>();
    const fromWorker = this.results();
    this.worker.ref();
    this.worker.postMessage({ jobs, next } satisfies TreeWorkerRequest);
    for (let i = Atomics.add(counter, 0, 1); i < jobs.length; i = Atomics.add(counter, 0, 1)) {
      await own(jobs[i]!);
      done.add(i);
    }
    let byWorker = 0;
    for (const r of (await fromWorker) ?? []) {
      if ("failed" in r) continue;
      await adopt(r);
      done.add(r.index);
      byWorker++;
    }
    // A failed job, or all of a worker that died: done here.
    for (const job of jobs) if (!done.has(job.index)) await own(job);
    return { byWorker };
  }

  /** Stop the worker (after `run`, or when there were too few trees to use it). */
  close(): void {
    void this.worker.terminate();
  }

  /** The worker's results, or undefined when it ended without posting them. */
  private results(): Promise<TreeJobResult[] | undefined> {
    return new Promise((resolve) => {
      this.worker.once("message", (m: TreeJobResult[]) => resolve(m));
      this.worker.once("error", () => resolve(undefined));
      this.worker.once("exit", () => resolve(undefined));
    });
  }
}
