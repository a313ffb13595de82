import type { Logger } from "pino";
import { nearest } from "../core/suggest.js";
import { BUILTIN_ENGINE, readSelection } from "../config/provider-selection.js";
import type { Runtime } from "../runtime/runtime.js";
import { errorMessage } from "./providers/errors.js";
import { providerMethod, registerProviderTools } from "./exclusive-tools.js";
import type { Session } from "./session.js";
import type { ChatMessage, Usage } from "./types.js";

/**
 * The context engine contract (the original's `ContextEngine`), as a JS object a plugin passes to
 * `ctx.register_context_engine`: `compress` is required, the rest optional (camelCase aliases work).
 */
export interface ContextEngine {
  name: string;
  /** Once per session, on its first turn. */
  on_session_start?(session_id: string, kwargs: { platform: string; model: string }): unknown;
  /** When the engine is chosen: the model and its budget (`model.context_length`). */
  update_model?(model: string, context_length: number): unknown;
  /** After every model call, with the provider's usage. */
  update_from_response?(usage: Usage): unknown;
  /** Whether to compact now; without it, the host compacts at `compression.threshold` of the budget. */
  should_compress?(prompt_tokens: number): boolean | Promise<boolean>;
  /** A new (usually shorter) OpenAI-format message list for the conversation. */
  compress(messages: ChatMessage[], current_tokens: number): ChatMessage[] | Promise<ChatMessage[]>;
  get_tool_schemas?(): unknown[] | Promise<unknown[]>;
  handle_tool_call?(name: string, args: Record<string, unknown>, extra: Record<string, unknown>): unknown;
}

export interface CompressionSettings {
  /** The model's context window in tokens (`model.context_length`). */
  contextLength: number;
  /** Compact when the conversation reaches this fraction of the window (`compression.threshold`). */
  threshold: number;
  /** Messages at the end kept verbatim (`compression.protect_last_n`). */
  protectLastN: number;
}

export const DEFAULT_CONTEXT_LENGTH = 128_000;

export function compressionSettings(config: Record<string, unknown>): CompressionSettings {
  const m = (config.model && typeof config.model === "object" ? config.model : {}) as Record<string, unknown>;
  const c = (config.compression && typeof config.compression === "object" ? config.compression : {}) as Record<
    string,
    unknown
  >;
  const int = (v: unknown, d: number) => (typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : d);
  const ratio = typeof c.threshold === "number" && c.threshold > 0 && c.threshold <= 1 ? c.threshold : 0.5;
  return {
    contextLength: int(m.context_length, DEFAULT_CONTEXT_LENGTH),
    threshold: ratio,
    protectLastN: int(c.protect_last_n, 20),
  };
}

/** A rough token count (four characters a token), for when the provider has not reported one. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  return Math.ceil(JSON.stringify(messages).length / 4);
}

export const SUMMARY_PREFIX = "[Summary of the earlier conversation, compacted to fit the context window]";

const SUMMARY_SYSTEM =
  "You compact conversations between a user and an AI assistant. Summarise the transcript you are given so " +
  "that the assistant can carry on: keep facts, decisions, names, paths, numbers and open tasks; drop " +
  "pleasantries. Reply with the summary only.";

/** The transcript of the messages to summarise, one line (or block) per message. */
function transcript(messages: readonly ChatMessage[]): string {
  const cut = (s: string) => (s.length > 2000 ? `${s.slice(0, 2000)} …` : s);
  return messages
    .map((m) => {
      const calls = (m.tool_calls ?? []).map((t) => ` [calls ${t.function.name}(${cut(t.function.arguments)})]`);
      const who = m.role === "tool" ? `tool result${m.name ? ` (${m.name})` : ""}` : m.role;
      return `${who}: ${cut(m.content ?? "")}${calls.join("")}`;
    })
    .join("\n");
}

/**
 * The built-in engine (`context.engine` empty or `compressor`): once the conversation reaches the
 * threshold, the older messages are summarised through the session's model (one auxiliary call) and
 * replaced by that summary; the system prompt and the last `protect_last_n` messages (always from the
 * turn's user message on) stay verbatim.
 */
export class Compressor implements ContextEngine {
  readonly name = BUILTIN_ENGINE;
  compression_count = 0;
  last_prompt_tokens = 0;

  constructor(
    private readonly settings: CompressionSettings,
    private readonly summarize: (messages: ChatMessage[]) => Promise<string>,
  ) {}

  get threshold_tokens(): number {
    return Math.floor(this.settings.contextLength * this.settings.threshold);
  }

  update_from_response(usage: Usage): void {
    if (typeof usage?.prompt_tokens === "number") this.last_prompt_tokens = usage.prompt_tokens;
  }

  should_compress(prompt_tokens: number): boolean {
    return Math.max(prompt_tokens, this.last_prompt_tokens) >= this.threshold_tokens;
  }

  async compress(messages: ChatMessage[]): Promise<ChatMessage[]> {
    let start = 0;
    while (start < messages.length && messages[start]!.role === "system") start++;
    const body = messages.slice(start);
    let cut = body.length - this.settings.protectLastN;
    let lastUser = body.length - 1;
    while (lastUser >= 0 && body[lastUser]!.role !== "user") lastUser--;
    if (lastUser >= 0) cut = Math.min(cut, lastUser);
    // A tool result stays with the assistant message that called it.
    while (cut > 0 && body[cut]!.role === "tool") cut--;
    if (cut <= 0) return messages;
    const summary = (await this.summarize(body.slice(0, cut))).trim();
    if (!summary) throw new Error("the summary call returned no text");
    this.compression_count++;
    this.last_prompt_tokens = 0;
    return [
      ...messages.slice(0, start),
      { role: "user", content: `${SUMMARY_PREFIX}\n${summary}` },
      ...body.slice(cut),
    ];
  }
}

/** The summary request of the built-in compressor: what `ctx.llm.complete` takes. */
export function summaryRequest(messages: readonly ChatMessage[]): ChatMessage[] {
  return [
    { role: "system", content: SUMMARY_SYSTEM },
    { role: "user", content: `Transcript to summarise:\n\n${transcript(messages)}` },
  ];
}

function validMessages(v: unknown): v is ChatMessage[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((m) => m && typeof m === "object" && typeof (m as { role?: unknown }).role === "string")
  );
}

const toolsRegistered = new WeakMap<Runtime, Promise<unknown>>();

export interface ContextDeps {
  runtime: Runtime;
  log: Logger;
  /** One auxiliary completion through the session's provider (fires pre/post_auxiliary_call). */
  summarize: (messages: ChatMessage[]) => Promise<string>;
  model: () => string;
}

/** The engine one agent session uses, and when it compacts. */
export class ContextManager {
  private chosen: { engine: ContextEngine; owner: string | null } | undefined;

  constructor(private readonly d: ContextDeps) {}

  /** `context.engine` names a registered engine, else the built-in compressor (with a warning for an unknown name). */
  private async engine(): Promise<{ engine: ContextEngine; owner: string | null }> {
    if (this.chosen) return this.chosen;
    const settings = compressionSettings(this.d.runtime.config);
    const wanted = readSelection(this.d.runtime.config).context_engine;
    const all = this.d.runtime.providers.list("context_engine");
    const entry =
      wanted === null ? undefined : all.find((p) => p.name === wanted || p.plugin_key.endsWith(`/${wanted}`));
    if (wanted !== null && (!entry || !providerMethod(entry.provider, "compress"))) {
      const near = nearest(
        wanted,
        all.map((p) => p.name),
        { fragments: true },
      );
      const why = entry
        ? "the registered engine has no compress()"
        : `no loaded plugin registered a context engine by that name${near ? `; did you mean '${near}'?` : ""}`;
      this.d.log.warn(
        { code: "W_PROVIDER_NOT_FOUND" },
        `context.engine '${wanted}': ${why}; the built-in ${BUILTIN_ENGINE} is used`,
      );
    }
    if (entry && providerMethod(entry.provider, "compress")) {
      const engine = entry.provider as ContextEngine;
      await this.call(entry.plugin_key, engine, "update_model", this.d.model(), settings.contextLength);
      if (!toolsRegistered.has(this.d.runtime))
        toolsRegistered.set(
          this.d.runtime,
          registerProviderTools(this.d.runtime, engine, entry.plugin_key, this.d.log).catch((e) =>
            this.d.log.warn({ plugin: entry.plugin_key }, `context engine tools: ${errorMessage(e)}`),
          ),
        );
      await toolsRegistered.get(this.d.runtime);
      this.chosen = { engine, owner: entry.plugin_key };
    } else this.chosen = { engine: new Compressor(settings, this.d.summarize), owner: null };
    return this.chosen;
  }

  private async call(
    owner: string | null,
    engine: ContextEngine,
    method: string,
    ...args: unknown[]
  ): Promise<unknown> {
    const fn = providerMethod(engine, method);
    if (!fn) return undefined;
    try {
      return await fn(...args);
    } catch (e) {
      this.d.log.warn(
        { ...(owner ? { plugin: owner } : {}), code: "W_AGENT_COMPRESS_FAILED" },
        `context engine '${engine.name}': ${method}() failed: ${errorMessage(e)}`,
      );
      return undefined;
    }
  }

  /** The first turn of a session: the engine's on_session_start. */
  async sessionStart(sessionId: string, platform: string): Promise<void> {
    const { engine, owner } = await this.engine();
    await this.call(owner, engine, "on_session_start", sessionId, { platform, model: this.d.model() });
  }

  /** After a model call: the provider's usage for the engine's accounting. */
  async observe(usage: Usage | undefined): Promise<void> {
    if (!usage) return;
    const { engine, owner } = await this.engine();
    await this.call(owner, engine, "update_from_response", usage);
  }

  /**
   * Compact the session's messages in place when the engine says so. A failure (a summary call that
   * failed, an invalid result) keeps the conversation as it was. Returns the counts when it compacted.
   */
  async compact(session: Session): Promise<{ before: number; after: number } | undefined> {
    const { engine, owner } = await this.engine();
    const tokens = estimateTokens(session.messages);
    const should = providerMethod(engine, "should_compress");
    let due: unknown;
    if (should) due = await this.call(owner, engine, "should_compress", tokens);
    else {
      const s = compressionSettings(this.d.runtime.config);
      due = tokens >= s.contextLength * s.threshold;
    }
    if (due !== true) return undefined;
    const input = structuredClone(session.messages);
    let out: unknown;
    try {
      out = await engine.compress(input, tokens);
    } catch (e) {
      this.d.log.warn(
        { ...(owner ? { plugin: owner } : {}), code: "W_AGENT_COMPRESS_FAILED" },
        `context engine '${engine.name}': compress() failed: ${errorMessage(e)}; the conversation is kept as it was`,
      );
      return undefined;
    }
    if (!validMessages(out)) {
      this.d.log.warn(
        { ...(owner ? { plugin: owner } : {}), code: "W_AGENT_COMPRESS_FAILED" },
        `context engine '${engine.name}': compress() returned no valid message list; the conversation is kept`,
      );
      return undefined;
    }
    // The same list back: nothing was old enough to compact.
    if (out === input) return undefined;
    const before = session.messages.length;
    session.messages.splice(0, session.messages.length, ...out);
    return { before, after: out.length };
  }
}
