import type { Logger } from "pino";
import type { Ownership } from "../config/managed.js";
import type { EventBus } from "./events.js";
import type { HookBus } from "./hooks.js";
import type { Ledger, SlotMap } from "./ledger.js";
import type { MiddlewareEngine } from "./middleware.js";
import type {
  ApprovalTransportEntry,
  CliCommandEntry,
  CommandEntry,
  PromptSection,
  ProviderRegistry,
  SkillEntry,
  ToolRegistry,
} from "./registries.js";

/** What a running agent session offers plugins (src/agent attaches it; absent outside a session). */
export interface AgentBridge {
  /** The `ctx.llm` object of one plugin. */
  pluginLlm(pluginKey: string): unknown;
  /** Queue a message into the CLI session (`ctx.inject_message`); true when queued. */
  injectMessage(pluginKey: string, text: string): boolean;
  /** `ctx.dispatch_tool`: run a tool through the session's tool pipeline; resolves to what the model would get. */
  dispatchTool(pluginKey: string, name: string, args: unknown, extra: Record<string, unknown>): Promise<string>;
}

/** The result of a platform action: never thrown into the calling hook. */
export type PlatformActionResult = { ok: true; action: string } | { ok: false; error: string; detail?: string };

/** What hermes serve's gateway offers plugins (absent when no gateway runs). */
export interface GatewayBridge {
  /** Run a platform action on a checked, connected adapter (the capability is checked by the caller). */
  platformAction(verb: PlatformVerb, args: Readonly<Record<string, string>>): Promise<PlatformActionResult>;
  /** ctx.inject_message with a session_key: true when the gateway took it. */
  injectMessage(sessionKey: string, text: string): boolean;
}

export type PlatformVerb = "add_reaction" | "set_thread_title";

/** What a PluginContext needs from the runtime that owns it (kept narrow so the two stay decoupled). */
export interface RuntimeHost {
  readonly home: string;
  readonly configFile: string;
  readonly log: Logger;
  /** Locked runtime: unknown hook and middleware names fail the registering plugin. */
  readonly strict: boolean;
  readonly ledger: Ledger;
  readonly tools: ToolRegistry;
  readonly hooks: HookBus;
  readonly middleware: MiddlewareEngine;
  readonly events: EventBus;
  readonly commands: SlotMap<CommandEntry>;
  readonly cliCommands: SlotMap<CliCommandEntry>;
  readonly skills: SlotMap<SkillEntry>;
  readonly approvalTransports: SlotMap<ApprovalTransportEntry>;
  readonly providers: ProviderRegistry;
  readonly promptSections: SlotMap<PromptSection>;
  readonly builtinCliCommands: ReadonlySet<string>;
  /** The agent session attached to this runtime (hermes chat, hermes demo): ctx.llm and ctx.inject_message go through
   * it. */
  readonly agent?: AgentBridge;
  /** hermes serve's gateway: ctx.platform_actions and ctx.inject_message(…, {session_key}) go through it. */
  readonly gateway?: GatewayBridge;
  loadedPlugins(): Array<{ key: string; name: string }>;
  grantedCapabilities(key: string): readonly string[];
  isRequired(key: string): boolean;
  pluginEntry(key: string): Record<string, unknown>;
  managedOwnership(): { kind: string; owned: Ownership } | undefined;
  dispatchTool(name: string, args: Record<string, unknown>, extra: Record<string, unknown>): Promise<string>;
  skillView(qualified: string): string | null;
  noteRegistration(kind: "hook" | "middleware", name: string, owner: string): void;
  configChanged(): Promise<void>;
  /** Raw result of an MCP tool call through the attached MCP client (src/runtime/mcp-call.ts). */
  callMcp(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    timeoutSeconds: number,
    caller: string,
  ): Promise<string>;
}
