import type { HookName, HookPayloadOf, HooksFoldedBy } from "../contracts/hook-catalog.js";
import type { FirstValid, HookBus, ToolDirective, TranscriptionFields, TtsPolicy } from "../runtime/hooks.js";
import type { TimelineSink } from "./timeline.js";

/**
 * Every hook the agent fires goes through here, so the timeline shows each fire site in order,
 * with its owners, whether or not any plugin listens. Each method is the bus's typed dispatcher for
 * one fold rule; with no callbacks nothing is copied or awaited.
 */
export class HookSite {
  constructor(
    private readonly hooks: HookBus,
    private readonly emit: TimelineSink,
  ) {}

  has(name: HookName): boolean {
    return this.hooks.has(name);
  }

  /** Puts the fire site on the timeline; false when no plugin listens. */
  private note(name: HookName, detail?: string): boolean {
    const owners = this.hooks.owners(name);
    this.emit({ type: "hook", name, owners, ...(detail ? { detail } : {}) });
    return owners.length > 0;
  }

  async observe<H extends HooksFoldedBy<"ignored">>(
    name: H,
    payload: HookPayloadOf<H>,
    detail?: string,
  ): Promise<void> {
    if (this.note(name, detail)) await this.hooks.observe(name, payload);
  }

  async firstString<H extends HooksFoldedBy<"first-string">>(
    name: H,
    payload: HookPayloadOf<H>,
  ): Promise<string | undefined> {
    return this.note(name) ? this.hooks.firstString(name, payload) : undefined;
  }

  async firstNonEmpty<H extends HooksFoldedBy<"first-non-empty">>(
    name: H,
    payload: HookPayloadOf<H>,
  ): Promise<string | undefined> {
    return this.note(name) ? this.hooks.firstNonEmpty(name, payload) : undefined;
  }

  async contexts<H extends HooksFoldedBy<"joined">>(name: H, payload: HookPayloadOf<H>): Promise<string[]> {
    return this.note(name) ? this.hooks.contexts(name, payload) : [];
  }

  async directive<H extends HooksFoldedBy<"directive">>(
    name: H,
    payload: HookPayloadOf<H>,
    originalArgs: Record<string, unknown>,
  ): Promise<ToolDirective> {
    return this.note(name) ? this.hooks.directive(name, payload, originalArgs) : {};
  }

  async firstValid<H extends HooksFoldedBy<"first-valid">, T>(
    name: H,
    payload: HookPayloadOf<H>,
    validate: (r: unknown) => T | undefined,
  ): Promise<FirstValid<T>> {
    return this.note(name) ? this.hooks.firstValid(name, payload, validate) : { skipped: 0 };
  }

  async lastWriterPerField<H extends HooksFoldedBy<"last-writer-per-field">>(
    name: H,
    payload: HookPayloadOf<H>,
  ): Promise<TranscriptionFields> {
    return this.note(name) ? this.hooks.lastWriterPerField(name, payload) : {};
  }

  async ttsPolicy<H extends HooksFoldedBy<"tts-policy">>(
    name: H,
    payload: HookPayloadOf<H> & { text: string },
  ): Promise<TtsPolicy> {
    return this.note(name) ? this.hooks.ttsPolicy(name, payload) : { text: payload.text };
  }
}
