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
