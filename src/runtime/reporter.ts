import type { Logger } from "pino";

/**
 * Warn once, then debug (runtime spec §6.6): a misbehaving callback on a hot path must not flood
 * the log. Identity is the callback's owner and name plus the error, not object identity, so a
 * reload does not re-warn for a different object of the same code; unload-all resets it.
 */
export class FailureReporter {
  private readonly seen = new Set<string>();

  constructor(private readonly log: Logger) {}

  report(surface: "Hook" | "Middleware" | "Event", name: string, owner: string, cbName: string, err: unknown, fields: readonly string[]): void {
    const e = err instanceof Error ? err : new Error(String(err));
    const key = `${name}\0${owner}\0${cbName}\0${e.name}\0${e.message.slice(0, 200)}`;
    if (this.seen.has(key)) {
      this.log.debug({ plugin: owner }, `${surface} '${name}' callback ${cbName} raised again: ${e.message}`);
      return;
    }
    this.seen.add(key);
    const provides = fields.length ? [...fields].sort().join(", ") : "no fields";
    this.log.warn(
      { plugin: owner },
      `${surface} '${name}' callback ${cbName} raised: ${e.message} (${surface.toLowerCase()} provides: ${provides}; identical failures are logged at DEBUG from now on)`,
    );
  }

  reset(): void {
    this.seen.clear();
  }
}
