import type { Logger } from "pino";
import type { GatewayBridge, PlatformActionResult, PlatformVerb } from "../../runtime/host.js";
import type { CommandEntry } from "../../runtime/registries.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { Run, RunEvent } from "../runs.js";
import type { GatewayService } from "../service.js";
import type { AdapterFactory, AdapterHost, InboundMessage, PlatformAdapter } from "./contract.js";
import { approvalReply, chunkText, dispatchDecision, senderAllowed, sessionKeyOf } from "./dispatch.js";

export type PlatformStateName = "connecting" | "connected" | "disconnected" | "retrying" | "failed" | "stopped";

/** One configured platform as /health/detailed shows it. */
export interface PlatformState {
  name: string;
  state: PlatformStateName;
  plugin: string | null;
  attempts: number;
  error?: string;
  next_retry_at?: string;
}

interface Live {
  state: PlatformState;
  adapter?: PlatformAdapter;
  config: Record<string, unknown>;
  timer?: NodeJS.Timeout;
}

/** Where a gateway session answers: its platform chat. */
interface Route {
  platform: string;
  chat_id: string;
  thread_id?: string;
  sender_id?: string;
}

const MAX_BACKOFF_MS = 60_000;
/** How long start (and a reload) waits for the adapters' first connects before going on without them. */
const START_WAIT_MS = 5_000;

/** `gateway.platforms.<name>` blocks with `enabled: true`. */
export function enabledPlatforms(config: Record<string, unknown>): Map<string, Record<string, unknown>> {
  const g = (config.gateway ?? {}) as Record<string, unknown>;
  const p = (g.platforms ?? {}) as Record<string, unknown>;
  const out = new Map<string, Record<string, unknown>>();
  for (const [name, v] of Object.entries(p))
    if (v && typeof v === "object" && !Array.isArray(v) && (v as { enabled?: unknown }).enabled === true)
      out.set(name, v as Record<string, unknown>);
  return out;
}

/**
 * The chat platforms of hermes serve: starts the adapters of the enabled platforms (bundled platform
 * plugins load on first use), reconnects them with backoff, and runs every inbound message through
 * pre_gateway_dispatch, the sender check, chat commands and approvals to a turn of its session.
 */
export class PlatformHub {
  private readonly live = new Map<string, Live>();
  private readonly routes = new Map<string, Route>();
  /** The runs of each session's chat turns not finished yet: an approval answer goes to the one asking. */
  private readonly waiting = new Map<string, Set<Run>>();
  private stopped = false;

  constructor(
    private readonly service: GatewayService,
    private readonly log: Logger,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  private get runtime(): Runtime {
    return this.service.runtime;
  }

  /** Start every enabled platform; failures are retried in the background, never thrown. */
  async start(): Promise<void> {
    this.stopped = false;
    const starting: Promise<void>[] = [];
    for (const [name, config] of enabledPlatforms(this.runtime.config)) {
      const l: Live = { state: { name, state: "connecting", plugin: null, attempts: 0 }, config };
      this.live.set(name, l);
      starting.push(this.create(l));
    }
    // Side by side, and a slow first connect goes on in the background: the service never waits long.
    await Promise.race([Promise.all(starting), new Promise<void>((r) => setTimeout(r, START_WAIT_MS).unref())]);
  }

  /** Disconnect every adapter (a stop, or before the adapters of a new generation start). */
  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.live.values()].map(async (l) => {
      clearTimeout(l.timer);
      l.state.state = "stopped";
      await l.adapter?.disconnect().catch((e) => this.log.warn(`${l.state.name}: disconnect: ${String(e)}`));
    });
    // An adapter whose disconnect hangs must not hold a stop or a reload.
    await Promise.race([Promise.all(all), new Promise<void>((r) => setTimeout(r, START_WAIT_MS).unref())]);
    this.live.clear();
  }

  /** Each platform's state; a connected adapter that has since dropped shows as disconnected. */
  health(): PlatformState[] {
    return [...this.live.values()].map((l) => ({
      ...l.state,
      ...(l.state.state === "connected" && l.adapter && !l.adapter.connected ? { state: "disconnected" as const } : {}),
    }));
  }

  /** The adapter factory of `name`: a registered platform, or a bundled platform plugin loaded now. */
  private async factory(name: string): Promise<{ factory: AdapterFactory; check?: () => unknown; plugin: string }> {
    const find = () => this.runtime.providers.list("platform").find((p) => p.name === name);
    let entry = find();
    if (!entry) {
      const deferred = this.runtime.lock.plugins.find(
        (p) => p.action === "defer" && p.kind === "platform" && (p.name === name || p.key.endsWith(`/${name}`)),
      );
      if (deferred) await this.runtime.loadDeferred(deferred.key);
      entry = find();
    }
    if (!entry) throw new Error(`no plugin registers platform '${name}' (enable one that calls ctx.register_platform)`);
    const p = entry.provider as { adapter_factory?: unknown; check_fn?: unknown };
    if (typeof p.adapter_factory !== "function")
      throw new Error(`platform '${name}' of ${entry.plugin_key} has no adapter_factory function`);
    return {
      factory: p.adapter_factory as AdapterFactory,
      ...(typeof p.check_fn === "function" ? { check: p.check_fn as () => unknown } : {}),
      plugin: entry.plugin_key,
    };
  }

  private host(name: string, config: Record<string, unknown>): AdapterHost {
    const log = this.log.child({ platform: name });
    return {
      name,
      config,
      env: this.env,
      deliver: (m) => this.deliver({ ...m, platform: name }),
      log: { info: (s) => log.info(s), warn: (s) => log.warn(s), error: (s) => log.error(s) },
    };
  }

  private async create(l: Live): Promise<void> {
    const name = l.state.name;
    try {
      const f = await this.factory(name);
      l.state.plugin = f.plugin;
      if (f.check && (await f.check()) === false)
        throw new Error(`check_fn of ${f.plugin} says the platform cannot run here`);
      l.adapter = await f.factory(this.host(name, l.config));
    } catch (e) {
      l.state.state = "failed";
      l.state.error = (e as Error)?.message ?? String(e);
      this.log.error({ code: "E_SERVE_PLATFORM" }, `platform ${name}: ${l.state.error}`);
      return;
    }
    await this.connect(l);
  }

  /** Whether `l` is still served: stop() (and so a reload) drops it, and an attempt in flight must not revive it. */
  private current(l: Live): boolean {
    return !this.stopped && this.live.get(l.state.name) === l;
  }

  /** Connect, and on failure retry with exponential backoff (1 s doubling to a minute). */
  private async connect(l: Live): Promise<void> {
    const adapter = l.adapter;
    if (!adapter || !this.current(l)) return;
    l.state.attempts++;
    try {
      const ok = await adapter.connect();
      if (!this.current(l)) {
        // Stopped while it connected: stop() already disconnected it, so undo this late connect.
        await adapter.disconnect().catch((e) => this.log.warn(`${l.state.name}: disconnect: ${String(e)}`));
        return;
      }
      if (ok === false || !adapter.connected) throw new Error("the adapter did not connect");
      l.state.state = "connected";
      delete l.state.error;
      delete l.state.next_retry_at;
      this.log.info(`platform ${l.state.name} connected`);
    } catch (e) {
      if (!this.current(l)) return;
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(l.state.attempts - 1, 6));
      l.state.state = "retrying";
      l.state.error = (e as Error)?.message ?? String(e);
      l.state.next_retry_at = new Date(Date.now() + delay).toISOString();
      this.log.warn({ code: "E_SERVE_PLATFORM" }, `platform ${l.state.name}: ${l.state.error}; retry in ${delay} ms`);
      l.timer = setTimeout(() => void this.connect(l), delay);
      l.timer.unref();
    }
  }

  /** Send text to a chat in as many messages as the platform needs. */
  private async say(route: Route, text: string, replyTo?: string): Promise<void> {
    const a = this.live.get(route.platform)?.adapter;
    if (!a?.connected) {
      this.log.warn(`platform ${route.platform} is not connected: an answer to ${route.chat_id} was not sent`);
      return;
    }
    for (const part of chunkText(text, a.max_message_length)) {
      const r = await a
        .send(route.chat_id, part, {
          ...(route.thread_id ? { thread_id: route.thread_id } : {}),
          ...(replyTo ? { reply_to: replyTo } : {}),
        })
        .catch((e) => ({ ok: false, error: String(e) }));
      if (!r?.ok) this.log.warn(`platform ${route.platform}: sending to ${route.chat_id} failed: ${r?.error ?? "?"}`);
    }
  }

  /** An inbound message: pre_gateway_dispatch → sender check → approval answer → command → turn. */
  async deliver(m: InboundMessage): Promise<void> {
    const l = this.live.get(m.platform);
    if (!l) return;
    const d = await this.runtime.hooks.firstValid(
      "pre_gateway_dispatch",
      { event: { ...m }, gateway: { platforms: [...this.live.keys()] }, session_store: null },
      dispatchDecision,
    );
    if (d.value?.action === "skip") {
      this.log.info(`pre_gateway_dispatch dropped a message in ${m.platform}:${m.chat_id}: ${d.value.reason ?? ""}`);
      return;
    }
    const text = d.value?.action === "rewrite" ? d.value.text : m.text;
    if (!senderAllowed(l.config, m.sender_id)) {
      this.log.info(
        `platform ${m.platform}: ignored a message from ${m.sender_id ?? "no sender"} (not in allowed_users)`,
      );
      return;
    }
    const key = sessionKeyOf(m);
    const route: Route = {
      platform: m.platform,
      chat_id: m.chat_id,
      ...(m.thread_id ? { thread_id: m.thread_id } : {}),
      ...(m.sender_id ? { sender_id: m.sender_id } : {}),
    };
    this.routes.set(key, route);
    const choice = approvalReply(text);
    const run = choice ? [...(this.waiting.get(key) ?? [])].find((r) => r.pendingApproval) : undefined;
    if (choice && run?.pendingApproval) {
      const p = run.pendingApproval;
      try {
        run.answer({ request_id: p.request_id, digest: p.digest, choice });
      } catch (e) {
        await this.say(route, (e as Error).message);
      }
      return;
    }
    if (choice) {
      await this.say(route, "Nothing is waiting for your approval.");
      return;
    }
    // Resolves once queued: a command runs in the background (a /reset waits behind the session's turn).
    const command = text.startsWith("/") ? this.commandFor(key, route, text) : undefined;
    if (command) {
      const { name, args } = parseCommand(text);
      void this.service
        .emitEvent(`command:${name}`, { platform: route.platform, user_id: route.sender_id ?? "", command: name, args })
        .then(command)
        .catch((e) => this.log.error(`command in ${key} failed: ${(e as Error).message}`));
    } else this.turn(key, route, text, m.message_id);
  }

  /** The chat command `text` names, or undefined (it is then a message for the agent). */
  private commandFor(key: string, route: Route, text: string): (() => Promise<void>) | undefined {
    const { name, args } = parseCommand(text);
    if (name === "reset")
      return async () => {
        if (this.service.hasSession(key)) await this.service.reset(key, "reset", route.platform);
        await this.say(route, "Session reset.");
      };
    if (name === "help")
      return async () => {
        const lines = ["/reset  forget this conversation", "/help  this list", "/plugins  the plugins loaded"];
        for (const c of this.runtime.commands.values()) lines.push(`/${c.name}  ${c.description}`);
        await this.say(route, lines.join("\n"));
      };
    if (name === "plugins")
      return async () => {
        const loaded = this.runtime.loadedPlugins().map((p) => p.key);
        await this.say(route, loaded.length ? `Plugins: ${loaded.join(", ")}` : "No plugins are loaded.");
      };
    const cmd = this.runtime.commands.get(name);
    return cmd ? () => this.pluginCommand(cmd, name, args, key, route) : undefined;
  }

  private async pluginCommand(cmd: CommandEntry, name: string, args: string, key: string, route: Route) {
    await this.runtime.hooks.observe("pre_command", {
      surface: "gateway",
      command: name,
      alias_used: null,
      args_raw: args,
      session_key: key,
      platform: route.platform,
    });
    try {
      const out = await cmd.handler(args);
      if (out !== undefined && out !== null) await this.say(route, typeof out === "string" ? out : JSON.stringify(out));
    } catch (e) {
      await this.say(route, `/${name} failed: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  /** A turn of the chat's session; the answer (and any approval question) goes back to the chat. */
  private turn(key: string, route: Route, text: string, replyTo?: string): void {
    let started: ReturnType<GatewayService["startTurn"]>;
    try {
      started = this.service.startTurn({ derivedId: key, sessionKey: key, text, model: "gateway" });
    } catch (e) {
      void this.say(route, `Busy, try again shortly (${(e as Error).message}).`);
      return;
    }
    const { run } = started;
    const runs = this.waiting.get(key) ?? new Set<Run>();
    this.waiting.set(key, runs.add(run));
    const sub = run.subscribe((ev: RunEvent) => {
      if (ev.event === "approval.request") {
        const offered = Array.isArray(ev.choices) ? ev.choices.map(String) : ["once", "session", "always", "deny"];
        const replies = offered.map((c) => (c === "deny" ? "/deny" : c === "once" ? "/approve" : `/approve ${c}`));
        void this.say(
          route,
          `Approval needed: ${String(ev.description)}\n${String(ev.command)}\n` +
            `Reply ${replies.slice(0, -1).join(", ")} or ${replies.at(-1)}.`,
        );
      }
    });
    void started.result
      .then(async (r) => {
        if (r?.answer) await this.say(route, r.answer, replyTo);
        else if (r?.error && !r.interrupted) await this.say(route, `The turn failed: ${r.error.message}`);
      })
      .catch((e) => this.log.error(`gateway turn of ${key} failed: ${(e as Error).message}`))
      .finally(() => {
        sub.off();
        runs.delete(run);
        if (!runs.size && this.waiting.get(key) === runs) this.waiting.delete(key);
      });
  }

  /**
   * ctx.inject_message with a session_key: an existing gateway session whose sender is still allowed
   * gets `text` as conversation input (never a command, never an approval answer).
   */
  inject(key: string, text: string): boolean {
    const route = this.routes.get(key);
    const l = route && this.live.get(route.platform);
    if (!route || !l || !this.service.hasSession(key)) {
      this.log.warn(`inject_message: no live gateway session '${key}'; nothing was queued`);
      return false;
    }
    if (!senderAllowed(l.config, route.sender_id)) {
      this.log.warn(`inject_message: the sender of session '${key}' is no longer allowed; nothing was queued`);
      return false;
    }
    this.turn(key, route, text);
    return true;
  }

  /** What the runtime's ctx.platform_actions and ctx.inject_message reach. */
  bridge(): GatewayBridge {
    return {
      platformAction: (verb, args) => this.action(verb, args),
      injectMessage: (key, text) => this.inject(key, text),
    };
  }

  /** A platform action on a running, connected adapter that has it. */
  private async action(verb: PlatformVerb, a: Readonly<Record<string, string>>): Promise<PlatformActionResult> {
    const found = this.adapterFor(a.platform!);
    if ("error" in found) return { ok: false, error: found.error, detail: found.detail };
    const adapter = found.adapter;
    if (typeof adapter[verb] !== "function")
      return { ok: false, error: "unsupported_platform_action", detail: `platform '${a.platform}' has no ${verb}` };
    try {
      // Awaited whatever the method returns: a plain (not async) method's false is a failure too.
      const done =
        verb === "add_reaction"
          ? await adapter.add_reaction!(a.chat_id!, a.message_id!, a.emoji!)
          : await adapter.set_thread_title!(a.chat_id!, a.thread_id!, a.title!);
      return done === false
        ? { ok: false, error: "action_failed", detail: `${a.platform} ${verb} failed` }
        : { ok: true, action: verb };
    } catch (e) {
      return { ok: false, error: "action_failed", detail: String((e as Error)?.message ?? e).slice(0, 512) };
    }
  }

  /** The adapter for a platform action, or the refusal code of the v1 contract. */
  adapterFor(platform: string): { adapter: PlatformAdapter } | { error: string; detail: string } {
    const l = this.live.get(platform);
    const registered = this.runtime.providers.list("platform").some((p) => p.name === platform);
    if (!l && !registered)
      return { error: "unknown_platform", detail: `no platform named '${platform}' is configured` };
    if (!l?.adapter)
      return { error: "adapter_not_registered", detail: `platform '${platform}' has no running adapter` };
    if (!l.adapter.connected)
      return { error: "adapter_disconnected", detail: `platform '${platform}' is not connected` };
    return { adapter: l.adapter };
  }
}

/** A chat command's name (lower case, without a `@bot` suffix) and the rest of the line. */
function parseCommand(text: string): { name: string; args: string } {
  const word = text.slice(1).split(/\s+/)[0] ?? "";
  return { name: word.toLowerCase().replace(/@.*$/, ""), args: text.slice(1 + word.length).trim() };
}
