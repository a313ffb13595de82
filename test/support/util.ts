/** Small helpers for tests of errors and timing, shared by every folder. */

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
