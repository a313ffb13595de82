import type { HookSite } from "./hook-site.js";

export interface InterimInfo {
  turn_id: string;
  iteration: number;
  session_id: string;
  model: string;
  provider: string;
  surface: string;
  /** Whether the provider streamed the reply, so its text already reached the reader as deltas. */
  already_streamed: boolean;
}

/**
 * on_interim_message for assistant text that arrives with tool calls, before the tools run. Delivered
 * in order off the loop's path (the loop never waits for an observer), and drained at the end of the turn.
 */
export class InterimMessages {
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;

  constructor(private readonly hooks: HookSite) {}

  push(text: string | null | undefined, info: InterimInfo): void {
    if (!text?.trim() || !this.hooks.has("on_interim_message")) return;
    this.pending++;
    this.chain = this.chain
      .then(() => this.hooks.observe("on_interim_message", { text, ...info }))
      .catch(() => undefined)
      .finally(() => this.pending--);
  }

  /** Wait (at most `ms`) for queued messages to be delivered: once per turn, never per message. */
  async flush(ms = 2000): Promise<void> {
    if (!this.pending) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.chain, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
}
