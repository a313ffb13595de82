import type { Logger } from "pino";
import type { TurnResult } from "../agent/agent.js";
import { Session } from "../agent/session.js";
import type { TimelineEvent } from "../agent/timeline.js";
import type { ChatMessage, StreamEvent } from "../agent/types.js";
import { HermesError } from "../core/errors.js";
import { Generation, type GenerationLoader, type LiveSession, platformOf } from "./generation.js";
import { PlatformHub } from "./platforms/hub.js";
import { Run, RunRegistry, runPrompter } from "./runs.js";
import type { SessionStore } from "./session-store.js";
import type { GatewaySettings } from "./settings.js";
import { QueueFullError, TurnScheduler } from "./turn-scheduler.js";
import { GatewayEventHooks } from "./event-hooks.js";

/** A request named a session the service does not have (HTTP 404). */
export class SessionNotFoundError extends Error {
  constructor(readonly sessionId: string) {
    super(`unknown session id '${sessionId}': start a conversation without X-Hermes-Session-Id to get one`);
  }
}

/** The service is stopping and takes no new turns (HTTP 503). */
export class StoppingError extends Error {
  constructor() {
    super("the service is stopping and takes no new turns");
  }
}

export interface TurnRequest {
  /** X-Hermes-Session-Id: continue that session (it must exist). */
  sessionId?: string;
  /** A session to continue or create under this id (a client that sends the whole conversation). */
  derivedId?: string;
  /** The conversation such a client sent before its last message: it replaces the session's history. */
  history?: ChatMessage[];
  /** X-Hermes-Session-Key: the session key plugins see. */
  sessionKey?: string;
  text: string;
  model: string;
  onStream?: (ev: StreamEvent) => void;
}

export interface ReloadReport {
  ok: boolean;
  at: string;
  generation: number;
  error?: string;
}

export interface ServiceDeps {
  store: SessionStore;
  load: GenerationLoader;
  settings: GatewaySettings;
  log: Logger;
  env: NodeJS.ProcessEnv;
  /** A folder's tree integrity as the lock records it (compile/tree-hash.ts), to check event hooks before loading. */
  treeIntegrity: (dir: string) => Promise<string>;
}

/**
 * hermes serve's core, independent of HTTP: sessions (live in memory, kept in the store), turns
 * scheduled per session and across sessions, runs with their events and approvals, the generation
 * serving new turns, reload beside the old generation, and a graceful stop.
 */
export class GatewayService {
  private current: Generation;
  private readonly live = new Map<string, LiveSession>();
  readonly runs = new RunRegistry();
  readonly scheduler: TurnScheduler;
  private stopping = false;
  private reloading: Promise<ReloadReport> | undefined;
  /** A reload asked for while one was under way: it runs after that one (which may have read the disk too early). */
  private reloadAgain: Promise<ReloadReport> | undefined;
  lastReload: ReloadReport | undefined;
  private readonly startedAt = Date.now();
  /** Old generations unloading once their last turn has finished. */
  private readonly retiring = new Set<Promise<void>>();
  private readonly sweeper: NodeJS.Timeout;
  /** The chat platforms (gateway.platforms.<name>.enabled) and their adapters. */
  readonly platforms: PlatformHub;
  /** The event hooks of the lock of one generation, loaded the first time that generation emits. */
  private eventHooks?: { generation: number; hooks: Promise<GatewayEventHooks> };
  /** Sessions created since their last turn started: their first turn announces session:start. */
  private readonly fresh = new Set<string>();

  private constructor(
    private readonly deps: ServiceDeps,
    first: Generation,
  ) {
    this.current = first;
    this.platforms = new PlatformHub(this, deps.log, deps.env);
    this.scheduler = new TurnScheduler({
      maxConcurrent: deps.settings.maxConcurrent,
      maxQueued: deps.settings.maxQueued,
    });
    const every = Math.min(60, Math.max(1, deps.settings.sessionIdleSeconds / 2)) * 1000;
    this.sweeper = setInterval(() => void this.finalizeIdle(), every);
    this.sweeper.unref();
  }

  /** Load the current generation (every plugin loaded) before anything is served. */
  static async start(deps: ServiceDeps): Promise<GatewayService> {
    const service = new GatewayService(deps, new Generation(await deps.load(), deps.env));
    service.runtime.gateway = service.platforms.bridge();
    await service.platforms.start();
    await service.emitEvent("gateway:startup", {
      platforms: service.platforms.health().map((p) => p.name),
    });
    return service;
  }

  /** Fire a gateway event (gateway:startup, session:*, agent:*, command:*) at the event hooks; never throws. */
  async emitEvent(event: string, context: Record<string, unknown>): Promise<void> {
    const gen = this.current.number;
    if (this.eventHooks?.generation !== gen)
      this.eventHooks = {
        generation: gen,
        hooks: GatewayEventHooks.load(this.runtime.lock.event_hooks ?? [], this.deps.log, this.deps.treeIntegrity),
      };
    await (await this.eventHooks.hooks).emit(event, context);
  }

  get generation(): number {
    return this.current.number;
  }

  get runtime() {
    return this.current.runtime;
  }

  get settings(): GatewaySettings {
    return this.deps.settings;
  }

  get log(): Logger {
    return this.deps.log;
  }

  /** A session as the store keeps it (GET /v1/sessions/{id}). */
  session(id: string) {
    return this.deps.store.get(id);
  }

  hasSession(id: string): boolean {
    return this.live.has(id) || this.deps.store.get(id) !== undefined;
  }

  /** The live session of `id`, read from the store when it is not in memory. */
  private liveSession(id: string): LiveSession | undefined {
    let l = this.live.get(id);
    if (l) return l;
    const saved = this.deps.store.get(id);
    if (!saved) return undefined;
    const session = Session.restore(saved);
    if (saved.session_key) session.sessionKey = saved.session_key;
    l = { session, lastUsed: Date.now(), injected: [] };
    this.live.set(id, l);
    return l;
  }

  private createSession(id: string, key: string | undefined): LiveSession {
    this.deps.store.create(id, key ?? null);
    const session = new Session({ session_id: id });
    if (key) session.sessionKey = key;
    const l: LiveSession = { session, lastUsed: Date.now(), injected: [] };
    this.live.set(id, l);
    this.fresh.add(id);
    return l;
  }

  private resolveSession(req: TurnRequest): LiveSession {
    if (req.sessionId) {
      const l = this.liveSession(req.sessionId);
      if (!l) throw new SessionNotFoundError(req.sessionId);
      if (req.sessionKey) l.session.sessionKey = req.sessionKey;
      return l;
    }
    const id = req.derivedId ?? newSessionId();
    const l = this.liveSession(id) ?? this.createSession(id, req.sessionKey);
    if (req.sessionKey) l.session.sessionKey = req.sessionKey;
    return l;
  }

  /**
   * Queue a turn; throws at once (nothing queued) when the session is unknown, the queue is full
   * (QueueFullError) or the service is stopping. The run is registered before the turn starts.
   */
  startTurn(req: TurnRequest): { run: Run; session_id: string; result: Promise<TurnResult | undefined> } {
    if (this.stopping) throw new StoppingError();
    const target = req.sessionId ?? req.derivedId ?? newSessionId();
    if (this.scheduler.refuses(target)) throw new QueueFullError(this.scheduler.waiting, 1);
    const live = this.resolveSession(req.sessionId ? req : { ...req, derivedId: target });
    const id = live.session.session_id;
    const run = new Run(id, req.model);
    const result = this.scheduler.run(id, () => this.execute(live, req, run));
    this.runs.add(run);
    return { run, session_id: id, result };
  }

  private async execute(live: LiveSession, req: TurnRequest, run: Run): Promise<TurnResult | undefined> {
    if (this.stopping || run.status === "stopping") {
      run.finish(undefined, "the turn was cancelled before it started");
      return undefined;
    }
    run.setStatus("running");
    live.lastUsed = Date.now();
    if (req.history) this.replaceHistory(live, req.history);
    const s = live.session;
    const systemCount = () => (s.systemPrompt !== undefined ? 1 : 0);
    const before = req.history ? 0 : s.messages.length - systemCount();
    let result: TurnResult | undefined;
    const gen = this.current;
    const who = { platform: platformOf(live), user_id: "", session_id: s.session_id, session_key: s.sessionKey ?? "" };
    if (this.fresh.delete(s.session_id)) await this.emitEvent("session:start", who);
    const turnContext = { ...who, message: req.text.slice(0, 500) };
    await this.emitEvent("agent:start", turnContext);
    // agent:step per model answer of the loop; chained so every step is seen before agent:end.
    let steps = Promise.resolve();
    let iteration = 0;
    const emit = (ev: TimelineEvent) => {
      run.timeline(ev);
      if (ev.type !== "llm_result") return;
      const step = { ...who, iteration: ++iteration, tool_names: [...ev.tool_calls] };
      steps = steps.then(() => this.emitEvent("agent:step", step));
    };
    try {
      result = await gen.runTurn(
        live,
        req.text,
        {
          emit,
          prompter: runPrompter(run),
          ...(req.onStream ? { onStream: req.onStream } : {}),
          env: this.deps.env,
        },
        (agent) => run.bindInterrupt((reason) => agent.interrupt(reason)),
      );
    } catch (e) {
      this.deps.log.error({ code: "E_INTERNAL" }, `a turn of session ${s.session_id} failed: ${(e as Error).message}`);
      run.finish(undefined, (e as Error).message);
      return undefined;
    }
    this.persist(live, s.messages.slice(systemCount() + before), req.history !== undefined);
    live.lastUsed = Date.now();
    if (result.interrupted && run.stopReason !== undefined)
      await gen.runtime.hooks.observe("agent_loop_stopped", {
        session_key: s.sessionKey ?? s.session_id,
        platform: platformOf(live),
        reason: run.stopReason,
        invalidation_reason: null,
      });
    await steps;
    await this.emitEvent("agent:end", { ...turnContext, response: (result.answer ?? "").slice(0, 500) });
    run.finish(result);
    this.followUps(live);
    return result;
  }

  /**
   * A client that sends the whole conversation owns it: its messages become the session's history. The
   * store keeps the previous history until the turn is saved, replacing it in the same transaction.
   */
  private replaceHistory(live: LiveSession, history: ChatMessage[]): void {
    const s = live.session;
    s.messages.splice(0, s.messages.length, ...(s.systemPrompt !== undefined ? [s.messages[0]!] : []), ...history);
    s.turns = Math.max(s.turns, history.filter((m) => m.role === "user").length);
  }

  private persist(live: LiveSession, messages: ChatMessage[], replace: boolean): void {
    const s = live.session;
    try {
      this.deps.store.appendTurn(s.session_id, {
        messages,
        turns: s.turns,
        system_prompt: s.systemPrompt ?? null,
        ...(s.sessionKey !== undefined ? { session_key: s.sessionKey } : {}),
        ...(replace ? { replace } : {}),
      });
    } catch (e) {
      const err = e instanceof HermesError ? e : new HermesError("E_SERVE_STORE", { message: String(e) });
      this.deps.log.error({ code: err.code }, `session ${s.session_id}: the turn was not saved: ${err.message}`);
    }
  }

  /** Messages plugins injected during a turn run as the session's next turns. */
  private followUps(live: LiveSession): void {
    for (let text = live.injected.shift(); text !== undefined; text = live.injected.shift()) {
      try {
        const { result } = this.startTurn({ sessionId: live.session.session_id, text, model: "injected" });
        result.catch(() => undefined);
      } catch (e) {
        this.deps.log.warn(`an injected message was not run: ${(e as Error).message}`);
      }
    }
  }

  /** POST /v1/sessions/{id}/reset and a `/reset` message: between turns, the history is forgotten. */
  async reset(sessionId: string, reason = "reset", platform = "api_server"): Promise<void> {
    if (!this.liveSession(sessionId)) throw new SessionNotFoundError(sessionId);
    await this.scheduler.run(sessionId, async () => {
      const live = this.liveSession(sessionId)!;
      await this.finalize(live, reason, platform);
      this.deps.store.reset(sessionId);
      const fresh = new Session({ session_id: sessionId });
      if (live.session.sessionKey) fresh.sessionKey = live.session.sessionKey;
      live.session = fresh;
      live.injected.length = 0;
      this.live.set(sessionId, live);
      await this.runtime.hooks.observe("on_session_reset", {
        session_id: sessionId,
        platform,
        reason,
        old_session_id: sessionId,
        new_session_id: sessionId,
      });
      await this.emitEvent("session:reset", {
        platform,
        user_id: "",
        session_key: live.session.sessionKey ?? sessionId,
      });
    });
  }

  private async finalize(live: LiveSession, reason: string, platform = platformOf(live)): Promise<void> {
    const id = live.session.session_id;
    await this.runtime.hooks.observe("on_session_finalize", {
      session_id: id,
      platform,
      reason,
      old_session_id: id,
      new_session_id: null,
    });
  }

  /** Sessions idle past gateway.session_idle_seconds are finalized and leave memory (the store keeps them). */
  private async finalizeIdle(): Promise<void> {
    const limit = Date.now() - this.deps.settings.sessionIdleSeconds * 1000;
    for (const [id, live] of this.live) {
      if (live.lastUsed > limit || this.runs.busy(id)) continue;
      this.live.delete(id);
      await this.finalize(live, "idle").catch(() => undefined);
    }
  }

  /**
   * Load the current generation beside the serving one and switch new turns to it; turns in flight
   * finish on the old one, which is then unloaded. A generation that fails leaves the old one serving.
   * Asked for while a reload is under way, it runs once more after that one (requests meanwhile share
   * that second run): a generation compiled during a load is never missed. A stopping service loads nothing.
   */
  reload(): Promise<ReloadReport> {
    if (this.stopping) {
      this.lastReload = {
        ok: false,
        at: new Date().toISOString(),
        generation: this.current.number,
        error: "the service is stopping",
      };
      return Promise.resolve(this.lastReload);
    }
    if (this.reloading) {
      const again = () => {
        this.reloadAgain = undefined;
        return this.reload();
      };
      this.reloadAgain ??= this.reloading.then(again, again);
      return this.reloadAgain;
    }
    this.reloading = this.doReload().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  private async doReload(): Promise<ReloadReport> {
    const at = new Date().toISOString();
    let next: Generation;
    try {
      next = new Generation(await this.deps.load(), this.deps.env);
    } catch (e) {
      const msg = e instanceof HermesError ? `${e.code}: ${e.message}` : (e as Error).message;
      this.lastReload = { ok: false, at, generation: this.current.number, error: msg };
      this.deps.log.error(
        { code: "E_SERVE_RELOAD" },
        `reload failed; generation ${this.current.number} keeps serving: ${msg}`,
      );
      return this.lastReload;
    }
    const old = this.current;
    this.current = next;
    next.runtime.gateway = this.platforms.bridge();
    // Adapters are the generation's plugins: the old ones disconnect before the new ones connect.
    await this.platforms.stop();
    await this.platforms.start();
    this.lastReload = { ok: true, at, generation: next.number };
    this.deps.log.info(
      `reloaded: generation ${next.number} serves new turns; ${old.turnsInFlight} finish on ${old.number}`,
    );
    const retiring = old
      .retire()
      .catch((e) => this.deps.log.warn(`unloading generation ${old.number}: ${(e as Error).message}`))
      .finally(() => this.retiring.delete(retiring));
    this.retiring.add(retiring);
    return this.lastReload;
  }

  /**
   * Stop taking turns, let those in flight finish within the grace period, interrupt the rest
   * (on_session_end sees interrupted: true), finalize the sessions, unload, close the store.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.platforms.stop();
    clearInterval(this.sweeper);
    const grace = this.deps.settings.shutdownGraceSeconds * 1000;
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      this.scheduler.idle().then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), grace))),
    ]);
    clearTimeout(timer);
    if (!waited) {
      for (const run of this.runs.active()) run.stop("the service is stopping");
      await this.scheduler.idle();
    }
    await this.reloading?.catch(() => undefined);
    for (const live of this.live.values()) await this.finalize(live, "shutdown").catch(() => undefined);
    await Promise.all([...this.retiring, this.current.retire().catch(() => undefined)]);
    this.deps.store.close();
  }

  /** GET /health/detailed. */
  health(): Record<string, unknown> {
    const rt = this.runtime;
    return {
      status: "ok",
      platform: "hermes-agent",
      generation: this.current.number,
      plugins_loaded: rt.loadedPlugins().map((p) => p.key),
      plugins_failed: [...rt.status.values()].filter((s) => s.state === "failed").map((s) => s.key),
      sessions: { live: this.live.size, stored: this.deps.store.count() },
      turns: { running: this.scheduler.active, waiting: this.scheduler.waiting },
      uptime_seconds: Math.round((Date.now() - this.startedAt) / 1000),
      last_reload: this.lastReload ?? null,
      stopping: this.stopping,
      platforms: this.platforms.health(),
      pid: process.pid,
    };
  }
}

function newSessionId(): string {
  return `api-${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
}
