/** Small helpers for tests of errors and timing, shared by every folder. */
import { readFileSync } from "node:fs";

/** A small seeded generator (mulberry32), so that a failing random run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Run `fn`, expect it to reject, return the error. */
export async function rejection(fn: () => Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await fn();
  } catch (e) {
    return e as Error & Record<string, unknown>;
  }
  throw new Error("expected a rejection, but the call resolved");
}

/** Run `fn`, expect it to throw synchronously, return the error. */
export function thrown(fn: () => unknown): Error & Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    return e as Error & Record<string, unknown>;
  }
  throw new Error("expected a throw, but the call returned");
}

/** Whether a process runs: gone, or a zombie nobody reaped yet, is not running (Linux /proc). */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
