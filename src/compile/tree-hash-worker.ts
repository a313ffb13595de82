import { parentPort } from "node:worker_threads";
import { fingerprint, hashTree, listTree } from "./tree-hash.js";
import type { TreeJob, TreeJobResult, TreeWorkerRequest } from "./tree-hash-pool.js";

/** The worker side of tree-hash-pool.ts: takes jobs off the shared counter until none is left, then posts. */
async function run(job: TreeJob): Promise<TreeJobResult> {
  try {
    const entries = await listTree(job.realPath, job.realPath);
    const fp = fingerprint(entries);
    if (job.knownFp === fp) return { index: job.index, entries, fp };
    const { integrity, files } = await hashTree(job.realPath, entries, job.realPath);
    return { index: job.index, entries, fp, integrity, files };
  } catch {
    // The main thread runs a job that failed here again itself, so its error is reported one way only.
    return { index: job.index, failed: true };
  }
}

parentPort!.once("message", async ({ jobs, next }: TreeWorkerRequest) => {
  const counter = new Int32Array(next);
  const results: TreeJobResult[] = [];
  for (let i = Atomics.add(counter, 0, 1); i < jobs.length; i = Atomics.add(counter, 0, 1))
    results.push(await run(jobs[i]!));
  parentPort!.postMessage(results);
});
