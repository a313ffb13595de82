import type { Logger } from "pino";
import { nearest } from "../core/suggest.js";
import { readSelection } from "../config/provider-selection.js";
import type { ProviderEntry } from "../runtime/registries.js";
import type { Runtime } from "../runtime/runtime.js";
import { errorMessage } from "./providers/errors.js";
import { providerMethod, registerProviderTools } from "./exclusive-tools.js";
import type { ChatMessage } from "./types.js";

/**
 * The memory provider contract (the original's `MemoryProvider`), as a JS object a plugin passes to
 * `ctx.register_memory_provider`. Every method is optional but `name`; each has a camelCase alias
 * (`syncTurn`, …). A method may return a promise.
 */
export interface MemoryProvider {
  name: string;
  /** No network: whether the provider can run here (an API key set). False: the agent runs without it. */
  is_available?(): boolean | Promise<boolean>;
  /** Once, before the first turn the provider serves. */
  initialize?(session_id: string, kwargs: { hermes_home: string; platform: string }): unknown;
  /** Static text for the system prompt of each new session, before the plugin prompt sections. */
  system_prompt_block?(): string | Promise<string>;
  /** Before each turn: recalled context for the user's message, fenced and added to it for the model. */
  prefetch?(query: string, kwargs: { session_id: string }): string | Promise<string>;
  /** After each completed turn. */
  sync_turn?(user: string, assistant: string, kwargs: { session_id: string; messages: ChatMessage[] }): unknown;
  get_tool_schemas?(): unknown[] | Promise<unknown[]>;
  handle_tool_call?(name: string, args: Record<string, unknown>, extra: Record<string, unknown>): unknown;
  /** When the agent stops (chat exit, serve stop or reload). */
  shutdown?(): unknown;
}

const OPEN = "<memory-context>";
const CLOSE = "</memory-context>";

/** Recalled text as the model sees it: fenced and labelled as memory, never as the user's words. */
export function memoryContextBlock(provider: string, raw: string): string {
  const clean = raw.split(OPEN).join("").split(CLOSE).join("").trim();
  return (
    `${OPEN}\n[Recalled by the memory provider '${provider}': reference data from earlier ` +
    `sessions, not part of the user's message.]\n\n${clean}\n${CLOSE}`
  );
}

/** The messages of one model call with the memory block added to the turn's user message (the last one). */
export function withMemoryContext(messages: ChatMessage[], block: string | undefined): ChatMessage[] {
  if (!block) return messages;
  let i = messages.length - 1;
  while (i >= 0 && messages[i]!.role !== "user") i--;
  if (i < 0) return messages;
  const out = [...messages];
  out[i] = { ...out[i]!, content: `${out[i]!.content ?? ""}\n\n${block}` };
  return out;
}

/** The active memory provider of one runtime: started once, shared by every session (chat or serve). */
export class ActiveMemory {
  private started: Promise<boolean> | undefined;

  constructor(
    readonly entry: ProviderEntry,
    private readonly runtime: Runtime,
    private readonly log: Logger,
  ) {}

  get name(): string {
    return this.entry.name;
  }

  private warn(what: string, e: unknown): void {
    this.log.warn(
      { plugin: this.entry.plugin_key, code: "W_AGENT_MEMORY_FAILED" },
      `memory provider '${this.name}': ${what} failed: ${errorMessage(e)}`,
    );
  }

  /** One call of a provider method; a throw is logged and answers `undefined`. */
  private async call(method: string, ...args: unknown[]): Promise<unknown> {
    const fn = providerMethod(this.entry.provider, method);
    if (!fn) return undefined;
    try {
      return await fn(...args);
    } catch (e) {
      this.warn(`${method}()`, e);
      return undefined;
    }
  }

  /** is_available, initialize and the tools, once; false when the provider cannot serve (it is then left out). */
  begin(sessionId: string, platform: string): Promise<boolean> {
    this.started ??= this.start(sessionId, platform);
    return this.started;
  }

  private async start(sessionId: string, platform: string): Promise<boolean> {
    const p = this.entry.provider;
    try {
      const available = providerMethod(p, "is_available");
      if (available && !(await available())) {
        this.log.warn(
          { plugin: this.entry.plugin_key, code: "W_AGENT_MEMORY_FAILED" },
          `memory provider '${this.name}' is not available here (is_available() is false); built-in memory only`,
        );
        return false;
      }
      await providerMethod(p, "initialize")?.(sessionId, { hermes_home: this.runtime.home, platform });
      const tools = await registerProviderTools(this.runtime, p, this.entry.plugin_key, this.log);
      this.log.info(
        { plugin: this.entry.plugin_key },
        `memory provider '${this.name}' active${tools.length ? ` (tools: ${tools.join(", ")})` : ""}`,
      );
      return true;
    } catch (e) {
      this.warn("starting", e);
      return false;
    }
  }

  async systemPromptBlock(): Promise<string | undefined> {
    const r = await this.call("system_prompt_block");
    return typeof r === "string" && r.trim() ? r.trim() : undefined;
  }

  /** The fenced recall for this turn, or undefined when the provider recalls nothing. */
  async prefetch(query: string, sessionId: string): Promise<string | undefined> {
    const r = await this.call("prefetch", query, { session_id: sessionId });
    return typeof r === "string" && r.trim() ? memoryContextBlock(this.name, r) : undefined;
  }

  async syncTurn(user: string, assistant: string, sessionId: string, messages: ChatMessage[]): Promise<void> {
    await this.call("sync_turn", user, assistant, { session_id: sessionId, messages });
  }

  async shutdown(): Promise<void> {
    if (this.started && (await this.started)) await this.call("shutdown");
  }
}

const byRuntime = new WeakMap<Runtime, ActiveMemory | null>();

/** The provider `memory.provider` names: by the name it registered, else by its plugin's folder or key. */
function pick(all: readonly ProviderEntry[], wanted: string): ProviderEntry | undefined {
  return (
    all.find((p) => p.name === wanted) ??
    all.find((p) => p.plugin_key === wanted || p.plugin_key.split("/").pop() === wanted)
  );
}

/** The runtime's active memory provider, resolved from `memory.provider` on first use; undefined = built-in only. */
export function memoryOf(runtime: Runtime): ActiveMemory | undefined {
  const known = byRuntime.get(runtime);
  if (known !== undefined) return known ?? undefined;
  const wanted = readSelection(runtime.config).memory;
  let active: ActiveMemory | null = null;
  if (wanted !== null) {
    const all = runtime.providers.list("memory");
    const entry = pick(all, wanted);
    if (entry) active = new ActiveMemory(entry, runtime, runtime.log);
    else {
      // Registered names, and the memory plugins the lock knows (not loaded, since nothing selects them).
      const known = runtime.lock.plugins
        .filter((p) => p.kind === "exclusive" && !p.key.startsWith("context_engine/"))
        .flatMap((p) => [p.key.split("/").pop()!, p.name]);
      const near = nearest(wanted, [...all.map((p) => p.name), ...known], { fragments: true });
      runtime.log.warn(
        { code: "W_PROVIDER_NOT_FOUND" },
        `memory.provider '${wanted}': no loaded plugin registered a memory provider by that name` +
          `${near ? `; did you mean '${near}'?` : ""}; built-in memory only (hermes plugins why memory/${wanted})`,
      );
    }
  }
  byRuntime.set(runtime, active);
  return active ?? undefined;
}

/** Shut the runtime's memory provider down (before its plugins unload). */
export async function shutdownMemory(runtime: Runtime): Promise<void> {
  await byRuntime.get(runtime)?.shutdown();
}
