import type { Logger } from "pino";
import type { HooksFoldedBy } from "../contracts/hook-catalog.js";
import type { HookBus } from "../runtime/hooks.js";
import type { StreamEvent } from "./types.js";

const MAX_QUEUE = 512;

/** The stream observer hooks: all fold nothing, so the drain only observes. */
type StreamHook = Extract<HooksFoldedBy<"ignored">, `on_stream_${string}`>;

/**
 * on_stream_start / on_stream_delta / on_stream_end, delivered off the token path: the provider's
 * callback only appends to a bounded queue and returns; a background drain invokes the hooks in
 * order. When observers fall behind, the oldest queued deltas are dropped (never start or end),
 * with one warning per stream. Nothing is queued when no plugin listens.
 */
export class StreamObservers {
  private readonly queue: Array<{ name: StreamHook; payload: Record<string, unknown> }> = [];
  private draining: Promise<void> | undefined;
  private dropped = 0;
  deltas = 0;
  started = false;

  constructor(
    private readonly hooks: HookBus,
    private readonly common: Record<string, unknown>,
    private readonly log: Logger,
    private readonly opts: { reasoning: boolean },
  ) {}

  get listening(): boolean {
    return this.hooks.has("on_stream_start") || this.hooks.has("on_stream_delta") || this.hooks.has("on_stream_end");
  }

  /** The provider's stream callback: constant time, never awaits a plugin. */
  readonly push = (ev: StreamEvent): void => {
    if (ev.type === "start") {
      this.started = true;
      this.enqueue("on_stream_start", {});
    } else if (ev.type === "delta") {
      if (ev.kind === "reasoning" && !this.opts.reasoning) return;
      this.deltas++;
      this.enqueue("on_stream_delta", { delta: ev.text, kind: ev.kind });
    } else this.enqueue("on_stream_end", { final_text: ev.final_text, finished: ev.finished, error: ev.error ?? null });
  };

  private enqueue(name: StreamHook, fields: Record<string, unknown>): void {
    if (!this.hooks.has(name)) return;
    if (this.queue.length >= MAX_QUEUE) {
      const i = this.queue.findIndex((q) => q.name === "on_stream_delta");
      if (i >= 0) {
        this.queue.splice(i, 1);
        if (this.dropped++ === 0)
          this.log.warn(
            "stream observers are falling behind; dropping the oldest on_stream_delta events (queue " +
              `limit ${MAX_QUEUE})`,
          );
      }
    }
    this.queue.push({ name, payload: { ...this.common, ...fields } });
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const next = this.queue.shift()!;
      await this.hooks.observe(next.name, next.payload).catch(() => undefined);
    }
    this.draining = undefined;
  }

  /** Wait (at most `ms`) for queued events to be delivered: at the end of a turn, never per token. */
  async flush(ms = 2000): Promise<void> {
    const pending = this.draining;
    if (!pending) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([pending, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
}
