import type { Logger } from "pino";
import { homePaths } from "../core/paths.js";
import type { HookPayloadOf } from "../contracts/hook-catalog.js";
import { loadConfig, unreadableConfig } from "../config/config-file.js";
import { HermesError } from "../core/errors.js";
import type { Runtime } from "../runtime/runtime.js";
import { startRuntime, type VerifyMode } from "./start-runtime.js";
import { Agent } from "../agent/agent.js";
import { attachMcp } from "../agent/mcp/attach.js";
import { shutdownMemory } from "../agent/memory.js";
import type { ApprovalPrompter } from "../agent/approvals/prompt.js";
import {
  isBuiltinProvider,
  resolveProvider,
  selectedProvider,
  type ProviderFlags,
} from "../agent/providers/resolve.js";
import type { ModelProviderProfile } from "../runtime/model-profile.js";
import type { TimelineSink } from "../agent/timeline.js";
import { registerBuiltinTools } from "../agent/tools/builtin.js";
import type { Provider } from "../agent/types.js";
import type { HookSite } from "../agent/hook-site.js";

export interface StartAgentOptions {
  home: string;
  flags?: ProviderFlags;
  maxTurns?: number;
  emit?: TimelineSink;
  prompter?: ApprovalPrompter;
  verify?: VerifyMode;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  /** Use this provider instead of resolving one from the flags and config (hermes demo records what it receives). */
  provider?: Provider;
  /** More tool sources, registered before plugins load like the built-ins (e.g. MCP servers). */
  beforeLoad?: (runtime: Runtime, config: Record<string, unknown>) => unknown;
}

export interface AgentHandle {
  runtime: Runtime;
  agent: Agent;
  provider: Provider;
  close(): Promise<void>;
}

/** A runtime with the agent's tools, and the provider the config names: what every agent of a home shares. */
export interface AgentRuntime {
  runtime: Runtime;
  provider: Provider;
  fallback?: () => Promise<Provider | undefined>;
  config: Record<string, unknown>;
  /** Settle hooks, close MCP servers, unload plugins (on_unload). Idempotent. */
  close(): Promise<void>;
}

/**
 * The provider (flags, then config.yaml `model:`; refused before anything starts when it is missing or
 * wrong) and the runtime started from the lock with the built-in tools and the MCP servers' tools
 * registered before plugins load (so a plugin replaces one only with tools.override).
 * `hooks` names the hook site transform_terminal_output fires through once an agent runs.
 */
export async function startAgentRuntime(
  opts: StartAgentOptions,
  hooks: () => HookSite | undefined = () => undefined,
): Promise<AgentRuntime> {
  const env = opts.env ?? process.env;
  const paths = homePaths(opts.home);
  const loaded = await loadConfig(paths.config);
  // A broken config.yaml would read as "no model configured": name the real problem instead.
  const fatal = unreadableConfig(loaded);
  if (fatal)
    throw new HermesError(fatal.code, {
      message: `${paths.config} cannot be read: ${fatal.message}`,
      file: fatal.file,
      line: fatal.line,
      col: fatal.col,
    });
  const config = loaded.value;
  const flags = opts.flags ?? {};
  const early = opts.provider ?? (await builtinProvider(flags, config, paths.home, env));
  const runtime = await startRuntime({
    home: paths.home,
    ...(opts.verify ? { verify: opts.verify } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    env,
    ...(opts.log ? { log: opts.log } : {}),
    beforeLoad: async (rt) => {
      const transformOutput = (payload: HookPayloadOf<"transform_terminal_output">) =>
        (hooks() ?? rt.hooks).firstString("transform_terminal_output", payload);
      registerBuiltinTools(rt, { transformOutput, config: () => rt.config });
      // MCP servers of config.yaml: their tools beside the built-ins, and ctx.call_mcp's client.
      await attachMcp(rt, { config, env, ...(opts.log ? { log: opts.log } : {}) });
      await opts.beforeLoad?.(rt, config);
    },
  });
  const resolveOpts = { home: paths.home, env, profiles: modelProfiles(runtime) };
  const provider = early ?? (await afterStart(runtime, () => resolveProvider(flags, config, resolveOpts)));
  const fallbackCfg = (config.model as { fallback?: unknown } | undefined)?.fallback;
  const fallback =
    fallbackCfg && typeof fallbackCfg === "object" && !Array.isArray(fallbackCfg)
      ? () => resolveProvider({}, { model: fallbackCfg as Record<string, unknown> }, resolveOpts)
      : undefined;
  let closed = false;
  return {
    runtime,
    provider,
    ...(fallback ? { fallback } : {}),
    config,
    async close() {
      if (closed) return;
      closed = true;
      await runtime.settle().catch(() => undefined);
      await shutdownMemory(runtime).catch(() => undefined);
      await runtime.mcp?.close().catch(() => undefined);
      await runtime.unloadAll().catch(() => undefined);
    },
  };
}

/**
 * A built-in provider is resolved (or refused) before anything starts; any other name can only be a
 * model-provider plugin's profile, known once the runtime has loaded them (undefined: resolve after the start).
 */
async function builtinProvider(
  flags: ProviderFlags,
  config: Record<string, unknown>,
  home: string,
  env: NodeJS.ProcessEnv,
): Promise<Provider | undefined> {
  const name = selectedProvider(flags, config);
  if (name && !isBuiltinProvider(name)) return undefined;
  return resolveProvider(flags, config, { home, env });
}

/** The profiles model-provider plugins registered; the later registration of a name holds its slot. */
function modelProfiles(runtime: Runtime): ModelProviderProfile[] {
  return runtime.providers.list("model").map((e) => e.provider as ModelProviderProfile);
}

/** A provider resolved from the plugins' profiles: refused, the started runtime is unloaded again. */
async function afterStart(runtime: Runtime, resolveIt: () => Promise<Provider>): Promise<Provider> {
  try {
    return await resolveIt();
  } catch (e) {
    await runtime.mcp?.close().catch(() => undefined);
    await runtime.unloadAll().catch(() => undefined);
    throw e;
  }
}

/**
 * Everything `hermes chat` and `hermes demo` need: the runtime and provider of startAgentRuntime, and
 * an agent session attached for ctx.llm and ctx.inject_message.
 */
export async function startAgent(opts: StartAgentOptions): Promise<AgentHandle> {
  let agent: Agent | undefined;
  const base = await startAgentRuntime(opts, () => agent?.hooks);
  agent = new Agent({
    runtime: base.runtime,
    provider: base.provider,
    ...(base.fallback ? { fallback: base.fallback } : {}),
    ...(opts.emit ? { emit: opts.emit } : {}),
    ...(opts.prompter ? { prompter: opts.prompter } : {}),
    ...(opts.maxTurns !== undefined ? { maxTurns: opts.maxTurns } : {}),
    env: opts.env ?? process.env,
  });
  const detach = agent.attach();
  return {
    runtime: base.runtime,
    agent,
    provider: base.provider,
    async close() {
      detach();
      await base.close();
    },
  };
}
