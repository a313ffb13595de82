import { AsyncLocalStorage } from "node:async_hooks";
import { Agent } from "../agent/agent.js";
import { PermanentApprovals } from "../agent/approvals/gate.js";
import type { ApprovalPrompter } from "../agent/approvals/prompt.js";
import { Session } from "../agent/session.js";
import type { TimelineSink } from "../agent/timeline.js";
import type { Provider, StreamEvent } from "../agent/types.js";
import type { Runtime } from "../runtime/runtime.js";

/** A runtime started from one generation of the lock, with the provider its config names. */
export interface LoadedGeneration {
  generation: number;
  runtime: Runtime;
  provider: Provider;
  fallback?: () => Promise<Provider | undefined>;
  /** Settle hooks, close MCP servers, unload the plugins (on_unload). */
  close(): Promise<void>;
}

/** Loads the home's current generation: verify the lock, start a runtime, load every plugin. */
export type GenerationLoader = () => Promise<LoadedGeneration>;

/** A session as the service holds it between turns. */
export interface LiveSession {
  session: Session;
  lastUsed: number;
  /** Messages plugins injected during a turn: they run as the session's next turns. */
  injected: string[];
}

/** The platform of a session: a chat session's key names it (`agent:main:<platform>:…`), else the API's. */
export function platformOf(live: LiveSession): string {
  const m = /^agent:[^:]+:([^:]+):/.exec(live.session.session_id);
  return m ? m[1]! : "api_server";
}

/** The turn a plugin's ctx.llm or ctx.inject_message call belongs to. */
const turnScope = new AsyncLocalStorage<{ agent: Agent; live: LiveSession }>();

export interface TurnAgentOptions {
  emit: TimelineSink;
  prompter: ApprovalPrompter;
  onStream?: (ev: StreamEvent) => void;
  env: NodeJS.ProcessEnv;
}

/**
 * One generation serving turns. Each turn gets its own Agent over the shared runtime (sessions are
 * independent); plugins' ctx.llm and ctx.inject_message reach the turn they run in through an async
 * context. Retiring waits for the turns in flight, then unloads the plugins.
 */
export class Generation {
  private inflight = 0;
  private drained: (() => void) | undefined;
  private background: Agent | undefined;
  readonly permanent: PermanentApprovals;

  constructor(
    readonly loaded: LoadedGeneration,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.permanent = new PermanentApprovals(loaded.runtime.home);
    loaded.runtime.agent = {
      pluginLlm: (key) => (turnScope.getStore()?.agent ?? this.backgroundAgent()).pluginLlm(key),
      dispatchTool: (key, name, args, extra) =>
        (turnScope.getStore()?.agent ?? this.backgroundAgent()).dispatchTool(key, name, args, extra),
      injectMessage: (_key, text) => {
        const turn = turnScope.getStore();
        if (!turn) {
          loaded.runtime.log.warn("inject_message: called outside any turn of hermes serve; nothing was queued");
          return false;
        }
        turn.live.injected.push(text);
        return true;
      },
    };
  }

  get number(): number {
    return this.loaded.generation;
  }

  get runtime(): Runtime {
    return this.loaded.runtime;
  }

  get turnsInFlight(): number {
    return this.inflight;
  }

  /** Run one turn of `live` on this generation. */
  async runTurn(live: LiveSession, text: string, o: TurnAgentOptions, bind: (agent: Agent) => void) {
    const agent = new Agent({
      runtime: this.loaded.runtime,
      provider: this.loaded.provider,
      ...(this.loaded.fallback ? { fallback: this.loaded.fallback } : {}),
      session: live.session,
      emit: o.emit,
      prompter: o.prompter,
      ...(o.onStream ? { onStream: o.onStream } : {}),
      platform: platformOf(live),
      surface: "gateway",
      permanent: this.permanent,
      env: o.env,
    });
    bind(agent);
    this.inflight++;
    try {
      return await turnScope.run({ agent, live }, () => agent.runTurn(text));
    } finally {
      this.inflight--;
      if (!this.inflight) this.drained?.();
    }
  }

  /** ctx.llm and ctx.dispatch_tool outside any turn (a plugin's timer): a session of its own. */
  private backgroundAgent(): Agent {
    this.background ??= new Agent({
      runtime: this.loaded.runtime,
      provider: this.loaded.provider,
      platform: "api_server",
      surface: "gateway",
      permanent: this.permanent,
      session: new Session(),
      env: this.env,
    });
    return this.background;
  }

  /** Wait for the turns in flight, then unload the plugins. */
  async retire(): Promise<void> {
    if (this.inflight) await new Promise<void>((r) => (this.drained = r));
    this.loaded.runtime.agent = undefined;
    await this.loaded.close();
  }
}
