import type { Logger } from "pino";
import type { FailureReporter } from "./reporter.js";

export type EventCallback = (payload: Record<string, unknown>) => unknown;

interface Subscription {
  event: string;
  cb: EventCallback;
  owner: string;
}

const MAX_DEPTH = 8;
const MAX_PENDING = 64;

/**
 * Plugin event bus: `<plugin>:<event>` names, FIFO delivery off the emitter's
 * path, a fresh deep copy per subscriber, bounded recursion and backlog. Unload bumps the
 * generation so queued events for removed subscriptions are dropped.
 */
export class EventBus {
  private readonly subs: Subscription[] = [];
  private readonly queue: Array<() => Promise<void>> = [];
  private draining = false;
  private pending = 0;
  private depth = 0;
  private generation = 0;

  constructor(
    private readonly log: Logger,
    private readonly reporter: FailureReporter,
  ) {}

  subscribe(event: string, cb: EventCallback, owner: string): () => void {
    const s: Subscription = { event, cb, owner };
    this.subs.push(s);
    return () => {
      const i = this.subs.indexOf(s);
      if (i >= 0) this.subs.splice(i, 1);
    };
  }

  /** Schedule delivery; returns how many subscribers were scheduled (0 when dropped). */
  emit(event: string, payload: Record<string, unknown>, emitter: string): number {
    if (this.depth >= MAX_DEPTH) {
      this.log.warn({ plugin: emitter }, `event ${event} dropped: emit depth ${MAX_DEPTH} reached (recursive emits?)`);
      return 0;
    }
    const targets = this.subs.filter((s) => s.event === event);
    if (!targets.length) return 0;
    if (this.pending + targets.length > MAX_PENDING) {
      this.log.warn({ plugin: emitter }, `event ${event} dropped: ${MAX_PENDING} events already pending`);
      return 0;
    }
    const gen = this.generation;
    const depth = this.depth + 1;
    for (const s of targets) {
      this.pending++;
      this.queue.push(async () => {
        this.pending--;
        if (gen !== this.generation || !this.subs.includes(s)) return;
        const saved = this.depth;
        this.depth = depth;
        try {
          await s.cb(structuredClone(payload));
        } catch (err) {
          this.reporter.report("Event", event, s.owner, s.cb.name || "<anonymous>", err, Object.keys(payload));
        } finally {
          this.depth = saved;
        }
      });
    }
    void this.drain();
    return targets.length;
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    // Deliver on a later tick: the emitter returns before any subscriber runs.
    await Promise.resolve();
    while (this.queue.length) await this.queue.shift()!();
    this.draining = false;
  }

  /** Resolves when everything queued so far has been delivered (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.draining || this.queue.length) await new Promise((r) => setTimeout(r, 1));
  }

  bumpGeneration(): void {
    this.generation++;
  }
}
