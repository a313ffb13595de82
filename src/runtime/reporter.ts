import type { Logger } from "pino";

/**
 * Warn once, then debug: a misbehaving callback on a hot path must not flood
 * the log. Identity is the callback's owner and name plus the error, not object identity, so a
 * reload does not re-warn for a different object of the same code; unload-all resets it.
 */
export class FailureReporter {
  private readonly seen = new Set<string>();
  /** Told about every first warning (the runtime keeps them for `hermes plugins why`). */
  onWarn?: (owner: string, message: string) => void;

  constructor(private readonly log: Logger) {}

  report(
    surface: "Hook" | "Middleware" | "Event",
    name: string,
    owner: string,
    cbName: string,
    err: unknown,
    fields: readonly string[],
  ): void {
    const e = err instanceof Error ? err : new Error(String(err));
    const key = `${name}\0${owner}\0${cbName}\0${e.name}\0${e.message.slice(0, 200)}`;
    if (this.seen.has(key)) {
      this.log.debug({ plugin: owner }, `${surface} '${name}' callback ${cbName} raised again: ${e.message}`);
      return;
    }
    this.seen.add(key);
    const provides = fields.length ? [...fields].sort().join(", ") : "no fields";
    this.warn(
      owner,
      `${surface} '${name}' callback ${cbName} raised: ${e.message} (${surface.toLowerCase()} ` +
        `provides: ${provides}; identical failures are logged at DEBUG from now on)`,
    );
  }

  /** A callback returned something the dispatcher cannot use (e.g. a malformed directive): warn once, then debug. */
  malformed(surface: "Hook" | "Middleware", name: string, owner: string, cbName: string, problem: string): void {
    const key = `${name}\0${owner}\0${cbName}\0<malformed>\0${problem}`;
    if (this.seen.has(key)) {
      this.log.debug(
        { plugin: owner },
        `${surface} '${name}' callback ${cbName} returned a malformed result again: ${problem}`,
      );
      return;
    }
    this.seen.add(key);
    this.warn(
      owner,
      `${surface} '${name}' callback ${cbName} returned a malformed result: ${problem} (identical problems ` +
        "are logged at DEBUG from now on)",
    );
  }

  /** A warning about one plugin that is not deduplicated (timeouts suppress themselves). */
  notice(owner: string, message: string): void {
    this.warn(owner, message);
  }

  private warn(owner: string, message: string): void {
    this.log.warn({ plugin: owner }, message);
    try {
      this.onWarn?.(owner, message);
    } catch {
      // bookkeeping must never turn a reported failure into a new one
    }
  }

  reset(): void {
    this.seen.clear();
  }
}
