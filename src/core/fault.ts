import { existsSync, writeFileSync } from "node:fs";

/**
 * Crash-test hook: with HERMES_FAULT_KILL_AT=N set, the process kills itself (SIGKILL, no
 * cleanup) at the N-th fault point it passes. Fault points sit after every durable filesystem
 * step of apply, so the test suite can stop a compile between any two steps and check that the
 * home still holds the previous generation or the new one. Unset (always, outside tests), this
 * is one counter increment.
 */
let passed = 0;

export function faultPoint(): void {
  const at = process.env.HERMES_FAULT_KILL_AT;
  if (at === undefined) return;
  passed++;
  if (String(passed) === at) process.kill(process.pid, "SIGKILL");
}

/**
 * Race-test hook: with HERMES_FAULT_HOLD=<name> and HERMES_FAULT_HOLD_FILE=<file>, the process
 * creates `<file>.reached` at the hold point `name` and waits (up to 30 s) until `<file>` is gone,
 * so a test can change the disk at exactly that moment. Unset, this is one property read.
 */
export function faultHold(name: string): void {
  if (process.env.HERMES_FAULT_HOLD !== name) return;
  const file = process.env.HERMES_FAULT_HOLD_FILE;
  if (!file) return;
  writeFileSync(`${file}.reached`, "");
  const tick = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; existsSync(file) && waited < 30_000; waited += 20) Atomics.wait(tick, 0, 0, 20);
}

/**
 * Thread-death hook: with HERMES_FAULT_THREAD_EXIT=<name>:<n>, the worker thread `name` ends itself
 * (as a crash would) when it has done `n` jobs, so a test can check that its work is not lost. Unset,
 * this is one property read.
 */
export function faultThreadExit(name: string, done: number): void {
  const v = process.env.HERMES_FAULT_THREAD_EXIT;
  if (v === undefined || v !== `${name}:${done}`) return;
  process.exit(1); // in a worker thread: ends that thread only
}
