import { basename, resolve } from "node:path";
import type { Logger } from "pino";
import { joinContexts } from "../runtime/hooks.js";
import type { Runtime } from "../runtime/runtime.js";
import { ApprovalGate, PermanentApprovals } from "./approvals/gate.js";
import type { ApprovalPrompter } from "./approvals/prompt.js";
import { runningAgent } from "./agent-scope.js";
import { HookSite } from "./hook-site.js";
import { InterimMessages } from "./interim.js";
import { newId } from "./ids.js";
import { callModel, InterruptedError, LlmCallFailed } from "./llm-call.js";
import { PluginLlm } from "./plugin-llm.js";
import { ContextManager, summaryRequest } from "./context-engine.js";
import { memoryOf, withMemoryContext, type ActiveMemory } from "./memory.js";
import { dispatchForPlugin, type DispatchContext } from "./plugin-dispatch.js";
import { errorMessage } from "./providers/errors.js";
import { Session } from "./session.js";
import { spillIfLong, spillLimit } from "./spill.js";
import { composeSystemPrompt, DEFAULT_SYSTEM_PROMPT, renderSections } from "./system-prompt.js";
import type { TimelineEvent, TimelineSink } from "./timeline.js";
import { runToolCall, type ToolCallContext, type ToolCallOutcome } from "./tool-call.js";
import { skillsIndex } from "./tools/skills.js";
import { maxVerifyNudges, VerifyGate } from "./verify-gate.js";
import type { ChatMessage, LlmResponse, Provider, StreamEvent, ToolDefinition } from "./types.js";

export type TurnExitReason = "completed" | "interrupted" | "max_turns" | "api_error" | "middleware_failed";

export interface TurnResult {
  turn_id: string;
  answer: string | null;
  exit_reason: TurnExitReason;
  completed: boolean;
  failed: boolean;
  interrupted: boolean;
  api_calls: number;
  tool_calls: ToolCallOutcome[];
  error?: { code: string; message: string };
}

export interface AgentSettings {
  maxTurns: number;
  maxRetries: number;
  backoffMs: number;
  systemPrompt: string;
  streamReasoning: boolean;
  maxTokens?: number;
  temperature?: number;
}

/** `agent.*` of config.yaml: max_turns (90), api_max_retries (3), retry_backoff_ms (1000), system_prompt. */
export function agentSettings(config: Record<string, unknown>): AgentSettings {
  const a = (config.agent ?? {}) as Record<string, unknown>;
  const m = (config.model && typeof config.model === "object" ? config.model : {}) as Record<string, unknown>;
  const int = (v: unknown, d: number, min: number) =>
    typeof v === "number" && Number.isInteger(v) && v >= min ? v : d;
  const plugins = (config.plugins ?? {}) as Record<string, unknown>;
  return {
    maxTurns: int(a.max_turns, 90, 1),
    maxRetries: int(a.api_max_retries, 3, 0),
    backoffMs: int(a.retry_backoff_ms, 1000, 0),
    systemPrompt:
      typeof a.system_prompt === "string" && a.system_prompt.trim() ? a.system_prompt : DEFAULT_SYSTEM_PROMPT,
    streamReasoning: plugins.stream_reasoning_deltas === true,
    ...(typeof m.max_tokens === "number" ? { maxTokens: m.max_tokens } : {}),
    ...(typeof m.temperature === "number" ? { temperature: m.temperature } : {}),
  };
}

export interface AgentOptions {
  runtime: Runtime;
  provider: Provider;
  fallback?: () => Promise<Provider | undefined>;
  /** Timeline events (hermes demo, hermes chat --timeline). */
  emit?: TimelineSink;
  /** Who approves dangerous actions; absent (no terminal) means deny without waiting. */
  prompter?: ApprovalPrompter;
  /** Overrides agent.max_turns. */
  maxTurns?: number;
  platform?: string;
  /** Who the turns serve: `cli` (default) or `gateway` (hermes serve); hooks see it as `surface`. */
  surface?: string;
  /** Streamed text of every model call as it arrives (hermes serve relays it as SSE). */
  onStream?: (ev: StreamEvent) => void;
  /** "Always" approvals of the home, shared by the agents of one service. */
  permanent?: PermanentApprovals;
  env?: NodeJS.ProcessEnv;
  session?: Session;
  /** Set on a delegate_task child: its parent's session (pre_llm_call's parent_session_id) and its own id. */
  child?: { parentSessionId: string; subagentId: string };
}

/**
 * The agent loop of one CLI session. A turn: system prompt (first turn only, with plugin
 * sections) → on_session_start (first turn) → pre_llm_call (context appended to the user message)
 * → model calls and tool calls until the model answers or max_turns model calls were made →
 * transform_llm_output → post_llm_call → on_session_end. Interrupting (Ctrl-C, or an injected
 * message mid-turn) cancels the running model call or tool and ends the turn cleanly with
 * interrupted: true.
 */
export class Agent {
  readonly session: Session;
  readonly runtime: Runtime;
  readonly hooks: HookSite;
  readonly gate: ApprovalGate;
  readonly log: Logger;
  readonly platform: string;
  readonly surface: string;
  private readonly provider: { current: Provider; fallback?: () => Promise<Provider | undefined>; fellBack?: boolean };
  private readonly emitFn: TimelineSink;
  private readonly opts: AgentOptions;
  private running: { controller: AbortController; turn_id: string } | undefined;
  private readonly pending: string[] = [];
  private readonly llms = new Map<string, PluginLlm>();
  /** The context engine (context.engine, else the built-in compressor) that compacts this session. */
  private readonly context: ContextManager;
  /** Called when a message is queued while idle (the REPL starts a turn for it). */
  onQueued?: () => void;

  constructor(opts: AgentOptions) {
    this.opts = opts;
    this.runtime = opts.runtime;
    this.log = opts.runtime.log;
    this.platform = opts.platform ?? "cli";
    this.surface = opts.surface ?? "cli";
    this.session = opts.session ?? new Session();
    this.provider = { current: opts.provider, ...(opts.fallback ? { fallback: opts.fallback } : {}) };
    this.emitFn = opts.emit ?? (() => undefined);
    this.hooks = new HookSite(opts.runtime.hooks, (ev) => this.emit(ev));
    this.context = new ContextManager({
      runtime: opts.runtime,
      log: this.log,
      model: () => this.model,
      summarize: async (m) =>
        (await this.pluginLlm("hermes", "compression").complete(summaryRequest(m), { purpose: "compression" })).text,
    });
    this.gate = new ApprovalGate({
      home: opts.runtime.home,
      config: () => this.runtime.config,
      transports: opts.runtime.approvalTransports,
      hooks: this.hooks,
      ...(opts.prompter ? { prompter: opts.prompter } : {}),
      emit: (ev) => this.emit(ev),
      log: this.log,
      surface: this.surface,
      permanent: opts.permanent ?? new PermanentApprovals(opts.runtime.home),
    });
  }

  private emit(ev: TimelineEvent): void {
    try {
      this.emitFn(ev);
    } catch {
      /* a printer must never break the loop */
    }
  }

  get model(): string {
    return this.provider.current.model;
  }

  get providerName(): string {
    return this.provider.current.name;
  }

  /** The delegate_task id of a child agent; undefined for a top-level agent. */
  get subagentId(): string | undefined {
    return this.opts.child?.subagentId;
  }

  /**
   * A delegate_task child: this agent's runtime, provider and approvals, a session of its own, `maxTurns`
   * model calls per turn. Its timeline and stream are not the parent's reader's.
   */
  child(o: { maxTurns: number; subagentId: string }): Agent {
    const { onStream: _stream, emit: _emit, session: _session, ...shared } = this.opts;
    return new Agent({
      ...shared,
      provider: this.provider.current,
      maxTurns: o.maxTurns,
      child: { parentSessionId: this.session.session_id, subagentId: o.subagentId },
    });
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Connect ctx.llm and ctx.inject_message of every plugin to this session. */
  attach(): () => void {
    this.runtime.agent = {
      pluginLlm: (key: string) => this.pluginLlm(key),
      injectMessage: (_key: string, text: string) => this.inject(text),
      dispatchTool: (key, name, args, extra) => this.dispatchTool(key, name, args, extra),
    };
    return () => {
      if (this.runtime.agent) this.runtime.agent = undefined;
    };
  }

  /** ctx.dispatch_tool: this session's tool pipeline, with the running turn's id and signal (when one runs). */
  dispatchTool(caller: string, name: string, args: unknown, extra: Record<string, unknown>): Promise<string> {
    const ctx: DispatchContext = {
      ...this.toolPipeline(this.running?.controller.signal ?? new AbortController().signal),
      turn_id: this.running?.turn_id ?? null,
    };
    return dispatchForPlugin(ctx, caller, name, args, extra);
  }

  /** The parts of this session's tool pipeline that the model's calls and ctx.dispatch_tool share. */
  private toolPipeline(signal: AbortSignal): Omit<ToolCallContext, "ids" | "extra"> {
    return {
      tools: this.runtime.tools,
      middleware: this.runtime.middleware,
      hooks: this.hooks,
      gate: this.gate,
      log: this.log,
      emit: (ev) => this.emit(ev),
      signal,
      session: this.session,
      ...(this.opts.env ? { env: this.opts.env } : {}),
    };
  }

  /** ctx.llm of plugin `key`; with `auxTask`, a call the host makes itself (the compressor's summary). */
  pluginLlm(key: string, auxTask?: string): PluginLlm {
    const slot = auxTask ? `\0${auxTask}` : key;
    let l = this.llms.get(slot);
    if (!l) {
      l = new PluginLlm({
        pluginKey: key,
        ...(auxTask ? { auxTask } : {}),
        provider: () => this.provider.current,
        hooks: this.hooks,
        middleware: this.runtime.middleware,
        log: this.log.child({ plugin: key }),
        granted: (cap) => this.runtime.grantedCapabilities(key).includes(cap),
        entry: () => this.runtime.pluginEntry(key),
        ids: () => ({
          session_id: this.session.session_id,
          task_id: this.session.task_id,
          turn_id: this.running?.turn_id ?? null,
        }),
        platform: this.platform,
      });
      this.llms.set(slot, l);
    }
    return l;
  }

  /**
   * Queue a message (ctx.inject_message in the CLI). Idle: it becomes the next input and a turn
   * starts for it. Mid-turn: it interrupts the turn, as a person typing a new message would, and
   * runs next. Returns true (queued).
   */
  inject(text: string): boolean {
    this.pending.push(text);
    if (this.running) {
      this.log.info("an injected message interrupts the running turn");
      this.running.controller.abort(new Error("interrupted by an injected message"));
    } else this.onQueued?.();
    return true;
  }

  /** The next queued (injected) message, if any. */
  takeQueued(): string | undefined {
    return this.pending.shift();
  }

  get queued(): number {
    return this.pending.length;
  }

  /** Interrupt the running turn (Ctrl-C). Returns false when idle. */
  interrupt(reason = "interrupted"): boolean {
    if (!this.running) return false;
    this.running.controller.abort(new Error(reason));
    return true;
  }

  toolDefinitions(): ToolDefinition[] {
    // A delegate_task child is a leaf: it is not offered delegation itself.
    const tools = this.runtime.tools.list(this.opts.env).filter((t) => !this.subagentId || t.name !== "delegate_task");
    return tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        // A tool's registry description is metadata: the model sees only what its schema says.
        ...(t.schema.description !== undefined ? { description: t.schema.description } : {}),
        parameters: (t.schema.parameters as Record<string, unknown> | undefined) ?? { type: "object", properties: {} },
      },
    }));
  }

  private async ensureSystemPrompt(
    settings: { systemPrompt: string },
    memory: ActiveMemory | undefined,
  ): Promise<void> {
    if (this.session.systemPrompt !== undefined) return;
    // The memory provider's block comes before the plugin sections (their position is after_memory).
    const block = await memory?.systemPromptBlock();
    const home = this.runtime.home;
    const parent = basename(resolve(home, ".."));
    const sections = await renderSections(
      this.runtime.promptSections.values(),
      {
        session_id: this.session.session_id,
        model: this.model,
        provider: this.providerName,
        platform: this.platform,
        profile_name: parent === "profiles" ? basename(home) : "default",
        cwd: process.cwd(),
      },
      this.log,
    );
    if (sections.used.length) this.emit({ type: "note", text: `system prompt sections: ${sections.used.join(", ")}` });
    this.session.systemPrompt = withSkillsIndex(
      composeSystemPrompt(block ? `${settings.systemPrompt}\n\n${block}` : settings.systemPrompt, sections),
      this.runtime.tools.available("skill_view", this.opts.env) ? skillsIndex(this.runtime.skills.values()) : "",
    );
    this.session.messages.unshift({ role: "system", content: this.session.systemPrompt });
  }

  /** pre_llm_call contexts, each spilled to a file when too long, joined for the user message. */
  private async pluginContext(userText: string, ids: TurnIds, first: boolean): Promise<string | undefined> {
    const s = this.session;
    const contexts = await this.hooks.contexts("pre_llm_call", {
      ...ids,
      user_message: userText,
      conversation_history: s.history(),
      is_first_turn: first,
      model: this.model,
      platform: this.platform,
      parent_session_id: this.opts.child?.parentSessionId ?? null,
      sender_id: null,
    });
    if (!contexts.length) return undefined;
    const limit = spillLimit(this.runtime.config);
    const spilled: string[] = [];
    for (const text of contexts) {
      const sp = await spillIfLong(text, { home: this.runtime.home, sessionId: s.session_id, maxChars: limit });
      if (sp.file) this.log.info(`pre_llm_call context of ${text.length} characters spilled to ${sp.file}`);
      spilled.push(sp.text);
    }
    return joinContexts(spilled);
  }

  private modelCallContext(
    settings: AgentSettings,
    signal: AbortSignal,
    ids: TurnIds,
    userText: string,
    counters: { api_call_count: number },
    iteration: number,
    recall?: string,
  ): Parameters<typeof callModel>[0] {
    const s = this.session;
    return {
      hooks: this.hooks,
      hookBus: this.runtime.hooks,
      middleware: this.runtime.middleware,
      log: this.log,
      emit: (ev) => this.emit(ev),
      signal,
      provider: this.provider,
      ids,
      platform: this.platform,
      user_message: userText,
      history: () => s.history(),
      // The memory recall reaches the model with this turn's message; the session keeps the message as typed.
      messages: () => withMemoryContext(s.messages, recall),
      tools: () => this.toolDefinitions(),
      retry: { maxRetries: settings.maxRetries, backoffMs: settings.backoffMs },
      counters,
      extraKwargs: {
        ...(settings.maxTokens !== undefined ? { max_tokens: settings.maxTokens } : {}),
        ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
      },
      streamReasoning: settings.streamReasoning,
      iteration,
      surface: this.surface,
      ...(this.opts.onStream ? { onStream: this.opts.onStream } : {}),
    };
  }

  /** Run the model's tool calls in order; after an interrupt the rest are answered without running. */
  private async runToolCalls(
    calls: NonNullable<ChatMessage["tool_calls"]>,
    signal: AbortSignal,
    ids: TurnIds & { api_request_id: string },
    toolCalls: ToolCallOutcome[],
  ): Promise<void> {
    const s = this.session;
    for (const call of calls) {
      if (signal.aborted) {
        s.messages.push({
          role: "tool",
          tool_call_id: call.id,
          name: call.function.name,
          content: JSON.stringify({ error: "interrupted; the tool was not run" }),
        });
        continue;
      }
      const o = await runToolCall({ ...this.toolPipeline(signal), ids }, call);
      toolCalls.push(o);
      s.messages.push({ role: "tool", tool_call_id: call.id, name: call.function.name, content: o.result });
    }
  }

  /** transform_llm_output may replace the answer (in the conversation too); post_llm_call sees the final one. */
  private async finishAnswer(answer: string, ids: TurnIds, userText: string): Promise<string> {
    const s = this.session;
    const replaced = await this.hooks.firstNonEmpty("transform_llm_output", {
      response_text: answer,
      session_id: s.session_id,
      model: this.model,
      platform: this.platform,
    });
    if (replaced !== undefined) {
      answer = replaced;
      const last = s.messages[s.messages.length - 1];
      if (last?.role === "assistant") last.content = replaced;
    }
    await this.hooks.observe("post_llm_call", {
      ...ids,
      user_message: userText,
      assistant_response: answer,
      conversation_history: s.history(),
      model: this.model,
      platform: this.platform,
    });
    return answer;
  }

  /** The runtime's memory provider, once it has started for a session; undefined = built-in memory only. */
  private async activeMemory(): Promise<ActiveMemory | undefined> {
    const m = memoryOf(this.runtime);
    return m && (await m.begin(this.session.session_id, this.platform)) ? m : undefined;
  }

  /** Let the context engine compact the conversation when it is over the model's budget. */
  private async compactContext(): Promise<void> {
    const r = await this.context.compact(this.session);
    if (!r) return;
    this.log.info(`context compacted: ${r.before} → ${r.after} messages`);
    this.emit({ type: "note", text: `context compacted: ${r.before} → ${r.after} messages` });
  }

  /**
   * Before the first model call: system prompt, on_session_start, compaction, pre_llm_call context and the
   * user's message. Returns the memory provider's recall for this turn.
   */
  private async prepareTurn(
    settings: AgentSettings,
    ids: TurnIds,
    first: boolean,
    userText: string,
    memory: ActiveMemory | undefined,
  ): Promise<string | undefined> {
    const s = this.session;
    await this.ensureSystemPrompt(settings, memory);
    if (first) {
      await this.hooks.observe("on_session_start", {
        session_id: s.session_id,
        model: this.model,
        platform: this.platform,
      });
      await this.context.sessionStart(s.session_id, this.platform);
    }
    await this.compactContext();
    const context = await this.pluginContext(userText, ids, first);
    s.messages.push({ role: "user", content: context ? `${userText}\n\n${context}` : userText });
    return memory?.prefetch(userText, s.session_id);
  }

  /** One turn, run as the running agent of its async context (delegate_task finds its parent there). */
  runTurn(userText: string): Promise<TurnResult> {
    return runningAgent.run(this, () => this.turn(userText));
  }

  /**
   * A model reply's outcome: the final answer, or null when the loop goes on because tool calls ran
   * (their text first goes to on_interim_message) or pre_verify sent a nudge back as a user message.
   */
  private async settleReply(
    msg: LlmResponse["choices"][number]["message"],
    loop: TurnLoop,
    ids: TurnIds & { api_request_id: string },
    iteration: number,
  ): Promise<string | null> {
    if (!msg.tool_calls?.length) {
      const info = { session_id: ids.session_id, platform: this.platform, model: this.model };
      const nudge = await loop.verify.nudge(msg.content ?? "", loop.toolCalls, info);
      if (nudge === undefined) return msg.content ?? "";
      this.session.messages.push({ role: "user", content: nudge });
      return null;
    }
    loop.interim.push(msg.content, {
      turn_id: ids.turn_id,
      iteration,
      session_id: ids.session_id,
      model: this.model,
      provider: this.providerName,
      surface: this.surface,
      already_streamed: this.provider.current.stream,
    });
    await this.runToolCalls(msg.tool_calls, loop.signal, ids, loop.toolCalls);
    return null;
  }

  private verifyGate(): VerifyGate {
    return new VerifyGate(this.hooks, maxVerifyNudges(this.runtime.config));
  }

  private async turn(userText: string): Promise<TurnResult> {
    if (this.running)
      throw new Error("internal error: runTurn called while a turn is running (callers queue input instead)");
    const settings = agentSettings(this.runtime.config);
    const maxTurns = this.opts.maxTurns ?? settings.maxTurns;
    const controller = new AbortController();
    const turn_id = newId("turn");
    this.running = { controller, turn_id };
    const signal = controller.signal;
    const s = this.session;
    s.turns++;
    const first = s.turns === 1;
    const ids = { session_id: s.session_id, task_id: s.task_id, turn_id };
    const counters = { api_call_count: 0 };
    const toolCalls: ToolCallOutcome[] = [];
    const loop: TurnLoop = { signal, toolCalls, verify: this.verifyGate(), interim: new InterimMessages(this.hooks) };
    let answer: string | null = null;
    let exit: TurnExitReason = "completed";
    let error: TurnResult["error"];
    this.emit({ type: "turn_start", turn: s.turns, turn_id, user_message: userText });
    const memory = await this.activeMemory();
    try {
      const recall = await this.prepareTurn(settings, ids, first, userText, memory);
      for (let iteration = 1; ; iteration++) {
        if (signal.aborted) throw new InterruptedError();
        if (counters.api_call_count >= maxTurns) {
          exit = "max_turns";
          error = maxTurnsError(counters.api_call_count, maxTurns);
          this.log.warn({ code: "E_AGENT_MAX_TURNS" }, error.message);
          break;
        }
        if (iteration > 1) await this.compactContext();
        const r = await callModel(this.modelCallContext(settings, signal, ids, userText, counters, iteration, recall));
        await this.context.observe(r.response.usage);
        const msg = r.response.choices[0]!.message;
        s.messages.push(assistantMessage(msg));
        answer = await this.settleReply(msg, loop, { ...ids, api_request_id: r.api_request_id }, iteration);
        if (answer !== null) break;
        if (signal.aborted) throw new InterruptedError();
      }
    } catch (e) {
      ({ exit, error } = turnFailure(e, signal, this.log));
    }
    await loop.interim.flush();
    const interrupted = exit === "interrupted";
    const failed = exit === "api_error" || exit === "middleware_failed";
    const completed = exit === "completed";
    if (completed && answer) answer = await this.finishAnswer(answer, ids, userText);
    if (completed && answer !== null) await memory?.syncTurn(userText, answer, s.session_id, s.history());
    await this.hooks.observe(
      "on_session_end",
      { ...ids, completed, failed, interrupted, turn_exit_reason: exit, model: this.model, platform: this.platform },
      `completed=${completed} interrupted=${interrupted}`,
    );
    this.emit({ type: "turn_end", exit_reason: exit, completed, failed, interrupted, answer });
    this.running = undefined;
    await this.runtime.settle();
    if (this.pending.length) this.onQueued?.();
    return {
      turn_id,
      answer: completed ? answer : null,
      exit_reason: exit,
      completed,
      failed,
      interrupted,
      api_calls: counters.api_call_count,
      tool_calls: toolCalls,
      ...(error ? { error } : {}),
    };
  }
}

type TurnIds = { session_id: string; task_id: string; turn_id: string };

/** What one turn's loop carries between model replies. */
interface TurnLoop {
  signal: AbortSignal;
  toolCalls: ToolCallOutcome[];
  verify: VerifyGate;
  interim: InterimMessages;
}

/** The system prompt with the skills index after everything else (empty index: unchanged). */
function withSkillsIndex(prompt: string, index: string): string {
  return index ? `${prompt}\n\n${index}` : prompt;
}

/** The error of a turn stopped by max_turns before the model gave a final answer. */
function maxTurnsError(calls: number, maxTurns: number): NonNullable<TurnResult["error"]> {
  return {
    code: "E_AGENT_MAX_TURNS",
    message: `stopped after ${calls} model call(s) (max_turns ${maxTurns}) without a final answer`,
  };
}

/** The model's reply as a history message: its text, and its tool calls only when there are some. */
function assistantMessage(msg: LlmResponse["choices"][number]["message"]): ChatMessage {
  return {
    role: "assistant",
    content: msg.content ?? null,
    ...(msg.tool_calls?.length ? { tool_calls: msg.tool_calls } : {}),
  };
}

/** How a turn that threw ends: interrupted, a failed model call, or an internal error. */
function turnFailure(
  e: unknown,
  signal: AbortSignal,
  log: Logger,
): { exit: TurnExitReason; error: TurnResult["error"] } {
  if (e instanceof InterruptedError || signal.aborted) {
    const why = signal.reason instanceof Error ? signal.reason.message : "interrupted";
    log.warn({ code: "E_AGENT_INTERRUPTED" }, `turn interrupted (${why})`);
    return { exit: "interrupted", error: { code: "E_AGENT_INTERRUPTED", message: why } };
  }
  if (e instanceof LlmCallFailed) {
    return {
      exit: e.code === "E_AGENT_MIDDLEWARE_FAILED" ? "middleware_failed" : "api_error",
      error: { code: e.code, message: e.message },
    };
  }
  log.error({ code: "E_INTERNAL" }, `the turn failed: ${errorMessage(e)}`);
  return { exit: "api_error", error: { code: "E_INTERNAL", message: errorMessage(e) } };
}
