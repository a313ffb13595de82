import { parentPort } from "node:worker_threads";
import { faultThreadExit } from "../core/fault.js";
import { fingerprint, hashTree, listTree } from "./tree-hash.js";
import { CLAIM, type TreeJob, type TreeJobResult, type TreeWorkerMessage } from "./tree-hash-pool.js";

/**
 * The worker side of tree-hash-pool.ts: jobs in offer order, each done only when its claim is won (the
 * main thread may have taken it), results posted a few at a time and whenever the queue runs dry.
 */
const POST_EVERY = 16;
let claims: Int32Array | undefined;
const queue: TreeJob[] = [];
let running = false;
let done = 0;

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

async function drain(): Promise<void> {
  running = true;
  let out: TreeJobResult[] = [];
  for (let job = queue.shift(); job; job = queue.shift()) {
    if (Atomics.compareExchange(claims!, job.index, CLAIM.free, CLAIM.worker) !== CLAIM.free) continue;
    out.push(await run(job));
    faultThreadExit("tree-hash", ++done);
    if (out.length >= POST_EVERY) {
      parentPort!.postMessage(out);
      out = [];
      await new Promise((r) => setImmediate(r)); // let new batches of jobs arrive
    }
  }
  if (out.length) parentPort!.postMessage(out);
  running = false;
}

parentPort!.on("message", (m: TreeWorkerMessage) => {
  if ("claims" in m) claims = new Int32Array(m.claims);
  else {
    queue.push(...m.jobs);
    if (!running) void drain();
  }
});
