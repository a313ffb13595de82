import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { writeFileAtomic } from "../core/atomic-fs.js";
import { HermesError } from "../core/errors.js";
import { logger } from "../core/log.js";
import { homePaths, type HomePaths } from "../core/paths.js";
import type { ConfigValue } from "../config/config-file.js";
import { ConfigCache } from "../config/config-cache.js";
import { ownershipOf, readManaged, type Ownership } from "../config/managed.js";
import { enableStateOf, pluginEntry, readPluginLists } from "../config/plugin-lists.js";
import { consentHash, knownCapabilities } from "../contracts/capabilities.js";
import { resolveGrants } from "../consent/grants.js";
import { readSelection, SLOT_KEY, selects, slotOf } from "../config/provider-selection.js";
import { manifestSha256, parseManifestText, readManifestFile, type PluginManifest } from "../manifest/parse.js";
import type { Lock, LockPlugin } from "../contracts/lock.js";
import { PluginContext, PluginRegistrationError } from "./context.js";
import { nextRuntimeInstance, pluginEntryUrl } from "./plugin-url.js";
import { EventBus } from "./events.js";
import { HookBus, normalizeHookTimeout } from "./hooks.js";
import type { AgentBridge, GatewayBridge, RuntimeHost } from "./host.js";
import { Ledger, RegistrationHandle, SlotMap } from "./ledger.js";
import { registerShellHooks, SHELL_HOOKS_KEY } from "./shell-hooks.js";
import { NO_MCP_RAW, type McpDispatcher } from "./mcp-call.js";
import { MiddlewareEngine } from "./middleware.js";
import { FailureReporter } from "./reporter.js";
import {
  ProviderRegistry,
  ToolRegistry,
  type ApprovalTransportEntry,
  type CliCommandEntry,
  type CommandEntry,
  type PromptSection,
  type SkillEntry,
  type ToolEntry,
} from "./registries.js";
import { readSkill } from "./context.js";
import type { PythonHost } from "./python/python-plugin.js";
import { isPythonPlugin } from "../contracts/plugin-record.js";
import type { PluginRecord } from "../contracts/plugin-record.js";

export type PluginRunState = "loaded" | "failed" | "timeout" | "skipped" | "deferred";

/** What the last start did with one plugin of the lock. */
export interface PluginStatus extends Pick<PluginRecord, "key" | "name"> {
  state: PluginRunState;
  error?: string;
  required: boolean;
  registered: Record<string, number>;
  load_ms?: number;
  /** First warnings about this plugin's callbacks at call time (hooks, middleware, events), capped. */
  issues?: string[];
}

export interface OrderIssue {
  kind: "hook" | "middleware";
  name: string;
  plugin: string;
  message: string;
}

export const BUILTIN_CLI_COMMANDS = new Set([
  "plugins",
  "config",
  "compile",
  "lock",
  "chat",
  "demo",
  "help",
  "serve",
  "version",
  "hooks",
]);

/** Call-time issues kept per plugin for `hermes plugins why`. */
const MAX_ISSUES = 20;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The runtime: one home, one lock. It imports only what the lock enables, registers plugins in
 * lock order, and owns every registry the plugins write to.
 */
export class Runtime implements RuntimeHost, PythonHost {
  readonly paths: HomePaths;
  readonly log: Logger;
  readonly reporter: FailureReporter;
  readonly ledger: Ledger;
  readonly tools = new ToolRegistry();
  readonly hooks: HookBus;
  readonly middleware: MiddlewareEngine;
  readonly events: EventBus;
  readonly commands = new SlotMap<CommandEntry>();
  readonly cliCommands = new SlotMap<CliCommandEntry>();
  readonly skills = new SlotMap<SkillEntry>();
  readonly approvalTransports = new SlotMap<ApprovalTransportEntry>();
  readonly providers = new ProviderRegistry();
  readonly promptSections = new SlotMap<PromptSection>();
  readonly builtinCliCommands: ReadonlySet<string> = BUILTIN_CLI_COMMANDS;
  /** Set by the agent session while one runs (ctx.llm, ctx.inject_message). */
  agent?: AgentBridge;
  gateway?: GatewayBridge;
  readonly status = new Map<string, PluginStatus>();
  readonly orderIssues: OrderIssue[] = [];
  readonly strict: boolean;
  lock: Lock;
  config: ConfigValue = {};
  private contexts = new Map<string, PluginContext>();
  private managed?: { kind: string; owned: Ownership };
  private byKey = new Map<string, LockPlugin>();
  private reloadGeneration = 0;
  /** This runtime's number in the process (plugin modules are never shared between runtimes). */
  private readonly instance = nextRuntimeInstance();
  private statusDirty = false;

  constructor(home: string, lock: Lock, opts: { log?: Logger; strict?: boolean } = {}) {
    this.paths = homePaths(home);
    this.log = opts.log ?? logger();
    this.strict = opts.strict ?? true;
    this.reporter = new FailureReporter(this.log);
    this.ledger = new Ledger(this.log);
    this.hooks = new HookBus(this.reporter);
    this.middleware = new MiddlewareEngine(this.reporter);
    this.events = new EventBus(this.log, this.reporter);
    this.reporter.onWarn = (owner, message) => this.noteIssue(owner, message);
    this.lock = lock;
    this.setLock(lock);
  }

  private setLock(lock: Lock): void {
    this.lock = lock;
    this.byKey = new Map(lock.plugins.map((p) => [p.key, p]));
    this.hooks.timeoutSeconds = normalizeHookTimeout(lock.settings.hook_callback_timeout);
  }

  get home(): string {
    return this.paths.home;
  }

  get configFile(): string {
    return this.paths.config;
  }

  async refreshConfig(): Promise<void> {
    this.config = await ConfigCache.open(this.paths.cache).readValue(this.paths.config);
    const marker = await readManaged(this.paths);
    this.managed = marker ? { kind: marker.kind, owned: ownershipOf(this.lock.deployment) } : undefined;
  }

  // ---- RuntimeHost ----

  loadedPlugins(): Array<{ key: string; name: string }> {
    return [...this.status.values()].filter((s) => s.state === "loaded").map((s) => ({ key: s.key, name: s.name }));
  }

  grantedCapabilities(key: string): readonly string[] {
    return this.byKey.get(key)?.capabilities.granted ?? [];
  }

  isRequired(key: string): boolean {
    return this.byKey.get(key)?.required ?? false;
  }

  pluginEntry(key: string): Record<string, unknown> {
    return pluginEntry(this.config, key);
  }

  managedOwnership(): { kind: string; owned: Ownership } | undefined {
    return this.managed;
  }

  /** Through the attached session's pipeline; with no session there is none, and the call is refused. */
  async dispatchTool(name: string, args: Record<string, unknown>, extra: Record<string, unknown>): Promise<string> {
    const caller = typeof extra.caller_plugin === "string" ? extra.caller_plugin : "";
    if (!this.agent)
      throw new HermesError("E_PLUGIN_DISPATCH_NO_SESSION", {
        message:
          `ctx.dispatch_tool('${String(name)}') of plugin '${caller}': no agent session is running (hermes chat, ` +
          "hermes serve), so there is no tool pipeline (hooks, middleware, approvals) to run the tool through",
      });
    return this.agent.dispatchTool(caller, String(name), args, extra);
  }

  skillView(qualified: string): string | null {
    const s = this.skills.get(qualified);
    if (!s) return null;
    return readSkill(s.path.endsWith(".md") ? s.path : join(s.path, "SKILL.md"));
  }

  noteRegistration(kind: "hook" | "middleware", name: string, owner: string): void {
    const chain = kind === "hook" ? this.lock.chains.hooks[name] : this.lock.chains.middleware[name];
    if (chain?.includes(owner)) return;
    const message =
      `plugin ${owner} registered ${kind} '${name}' without an order slot in the lock (declare it in ` +
      `plugin.yaml: ${kind === "hook" ? "hooks" : "provides_middleware"})`;
    // A managed home runs exactly the order its deployment locked: an unrecorded registration fails the plugin.
    if (this.managed && this.byKey.has(owner)) {
      throw new PluginRegistrationError(
        `${message}; in this ${this.managed.kind}-managed home the lock is the order, so the plugin does not ` +
          "load until its manifest declares it and the deployment compiles again",
      );
    }
    this.orderIssues.push({ kind, name, plugin: owner, message });
    this.log.warn({ plugin: owner }, message);
  }

  async configChanged(): Promise<void> {
    await this.refreshConfig();
  }

  private noteIssue(owner: string, message: string): void {
    const s = this.status.get(owner);
    if (!s) return;
    const issues = (s.issues ??= []);
    if (issues.length >= MAX_ISSUES) return;
    issues.push(message);
    this.statusDirty = true;
  }

  /** The MCP client, when one is attached (src/agent/mcp `attachMcp`); `ctx.call_mcp` goes through it. */
  mcp?: McpDispatcher;

  callMcp(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    timeoutSeconds: number,
    caller: string,
  ): Promise<string> {
    if (!this.mcp) return Promise.resolve(NO_MCP_RAW);
    return this.mcp.callRaw(server, tool, args, timeoutSeconds, { caller });
  }

  /** Register a tool of the agent itself (owner `builtin`); plugins may override it only with consent. */
  registerBuiltinTool(entry: Omit<ToolEntry, "owner">): () => void {
    return this.tools.lease(entry.name, { ...entry, owner: "builtin" });
  }

  // ---- loading ----

  /** Plugins the lock says load now, in lock order. */
  loadable(): LockPlugin[] {
    return this.lock.load_order
      .map((k) => this.byKey.get(k)!)
      .filter((p) => p && (p.action === "load" || p.action === "load_now"));
  }

  /**
   * Import every enabled plugin concurrently, then call register(ctx) strictly in lock order,
   * each under the load deadline. A failure disposes what that plugin registered; a required
   * plugin's failure stops startup.
   */
  async loadAll(): Promise<void> {
    await this.refreshConfig();
    this.rederiveFromConfig();
    const gen = this.reloadGeneration;
    const deadlineMs = this.lock.settings.load_timeout_seconds * 1000;
    for (const lp of this.lock.plugins) {
      const p = this.byKey.get(lp.key) ?? lp;
      if (p.action === "defer")
        this.status.set(p.key, { key: p.key, name: p.name, state: "deferred", required: p.required, registered: {} });
      else if (p.action === "skip")
        this.status.set(p.key, {
          key: p.key,
          name: p.name,
          state: "skipped",
          error: p.reason,
          required: p.required,
          registered: {},
        });
    }
    const list = this.loadable();
    const python = list.filter(isPythonPlugin);
    const imports = new Map<string, Promise<{ register?: unknown }>>(
      python.length ? (await import("./python/python-plugin.js")).loadPythonPlugins(this, python) : [],
    );
    for (const p of list) {
      if (isPythonPlugin(p)) continue;
      const url = pluginEntryUrl(p.target, p.entry, p.integrity, this.instance, gen);
      const promise = import(url) as Promise<{ register?: unknown; default?: { register?: unknown } }>;
      // The import may settle late or never; a rejection here must not be unhandled.
      promise.catch(() => undefined);
      imports.set(p.key, promise);
    }
    for (const p of list) {
      const started = Date.now();
      const ok = await this.loadOne(p, imports.get(p.key)!, deadlineMs);
      const s = this.status.get(p.key)!;
      s.load_ms = Date.now() - started;
      if (!ok && p.required) {
        await this.unloadAll();
        throw new HermesError("E_RUNTIME_REQUIRED_FAILED", {
          message: `required plugin ${p.key} did not load: ${s.error}`,
          hint:
            `fix the plugin (hermes plugins why ${p.key}) or remove required: true; the runtime does not start ` +
            "without it",
        });
      }
    }
    // After every plugin: shell hooks run last in each chain, as in the original.
    for (const dispose of registerShellHooks(this.hooks, this.config, this.home, this.log))
      this.ledger.add(new RegistrationHandle("hook", "shell", SHELL_HOOKS_KEY, dispose));
  }

  /**
   * What the lock says a plugin may do is checked against what config.yaml and the deployment
   * grant now: a capability counts only when both agree, and a plugin config.yaml disables does
   * not load, so an edited lock alone never widens what runs.
   */
  private rederiveFromConfig(): void {
    const lists = readPluginLists(this.config);
    for (const p of this.lock.plugins) {
      const cur = this.byKey.get(p.key) ?? p;
      const { grants } = resolveGrants({
        key: p.key,
        declared: knownCapabilities(p.capabilities.declared),
        entry: pluginEntry(this.config, p.key),
        specGrants: this.lock.deployment.plugins[p.key]?.grants,
      });
      const granted = cur.capabilities.granted.filter((c) => (grants.granted as string[]).includes(c));
      let next = cur;
      if (granted.length !== cur.capabilities.granted.length) {
        const dropped = cur.capabilities.granted.filter((c) => !granted.includes(c));
        this.log.warn(
          { plugin: p.key },
          `the lock grants ${dropped.join(", ")} but config.yaml and the deployment do not; not granted (run ` +
            "hermes compile)",
        );
        next = {
          ...next,
          capabilities: { ...next.capabilities, granted, not_carried: [...next.capabilities.not_carried, ...dropped] },
        };
      }
      if (next.action !== "skip" && enableStateOf([p.key, p.name], lists) === "disabled") {
        this.log.warn(
          { plugin: p.key },
          `the lock loads ${p.key} but config.yaml disables it; not loaded (run hermes compile)`,
        );
        next = { ...next, action: "skip", reason: "disabled in config.yaml", load_position: null };
      }
      // An exclusive plugin loads only while config.yaml still selects it.
      const slot = slotOf(p.key.includes("/") ? p.key.split("/")[0] : undefined);
      const selected = selects(readSelection(this.config)[slot], p.key, p.name);
      if (next.action !== "skip" && p.kind === "exclusive" && !selected) {
        const why = `the lock loads ${p.key} but ${SLOT_KEY[slot]} no longer selects it; not loaded`;
        this.log.warn({ plugin: p.key }, why);
        next = { ...next, action: "skip", reason: `not selected by ${SLOT_KEY[slot]}`, load_position: null };
      }
      if (next !== cur) this.byKey.set(p.key, next);
    }
  }

  /**
   * The manifest as it is on disk now. When its bytes are the ones the lock was compiled from,
   * the lock already holds what startup needs (name, kind, declared capabilities) and the full
   * parse is deferred until a plugin reads `ctx.manifest`: a hundred re-validations were most of
   * startup (bench/runtime.bench.mjs). A changed manifest is parsed now and its consent checked.
   */
  private async currentManifest(p: LockPlugin): Promise<PluginManifest | (() => PluginManifest)> {
    // Synchronous: startup reads one small file per plugin in order, and a thread-pool round trip
    // per file costs more than the read (bench/runtime.bench.mjs).
    const found = readManifestFile(p.target);
    if (!found) throw new HermesError("E_RUNTIME_MANIFEST_CHANGED", { message: "manifest is missing or unreadable" });
    if (manifestSha256(found.text) === p.manifest_sha256) {
      const { file, text } = found;
      return () => {
        const m = parseManifestText(text, file, p.name).manifest;
        if (!m)
          throw new HermesError("E_RUNTIME_MANIFEST_CHANGED", { message: `${file}: manifest no longer parses`, file });
        if (!m.kindDeclared) m.kind = p.kind;
        return m;
      };
    }
    // Only a manifest changed since the compile needs discovery's reading of the folder.
    const { candidateFromFolder } = await import("../discovery/scan.js");
    const cand = await candidateFromFolder(p.target, p.source);
    const manifest = cand?.manifest;
    if (!manifest)
      throw new HermesError("E_RUNTIME_MANIFEST_CHANGED", { message: "manifest is missing or unreadable" });
    if (consentHash(manifest.capabilities) !== p.capabilities.consent_hash && p.capabilities.granted.length) {
      // The manifest declares a different set than was consented to: no grant counts.
      this.byKey.set(p.key, {
        ...p,
        capabilities: { ...p.capabilities, granted: [], not_carried: p.capabilities.granted },
      });
      this.log.warn(
        { plugin: p.key },
        "declared capabilities changed since the lock was compiled; grants are not carried",
      );
    }
    return manifest;
  }

  private async loadOne(
    p: LockPlugin,
    imported: Promise<{ register?: unknown; default?: { register?: unknown } }>,
    deadlineMs: number,
  ): Promise<boolean> {
    const status: PluginStatus = { key: p.key, name: p.name, state: "failed", required: p.required, registered: {} };
    this.status.set(p.key, status);
    let ctx: PluginContext | undefined;
    const work = (async () => {
      const manifest = await this.currentManifest(p);
      const mod = await imported;
      const register =
        typeof mod.register === "function"
          ? mod.register
          : typeof mod.default?.register === "function"
            ? mod.default.register
            : undefined;
      if (!register) throw new HermesError("E_PLUGIN_NO_REGISTER", { message: "no register() export" });
      ctx = new PluginContext(this, manifest, p.key, p.source, p.target, p.name);
      this.contexts.set(p.key, ctx);
      await (register as (c: PluginContext) => unknown)(ctx);
    })();
    let timer: NodeJS.Timeout | undefined;
    const deadline =
      deadlineMs > 0
        ? new Promise<"timeout">((r) => {
            timer = setTimeout(() => r("timeout"), deadlineMs);
          })
        : new Promise<never>(() => undefined);
    try {
      const r = await Promise.race([work.then(() => "ok" as const), deadline]);
      if (r === "timeout") {
        if (ctx) ctx.abandoned = true;
        work.catch(() => undefined);
        status.state = "timeout";
        status.error = `load timed out after ${deadlineMs / 1000}s (import + register() never returned)`;
        this.rollback(p.key, status.error);
        return false;
      }
      status.state = "loaded";
      for (const r of this.ledger.of(p.key)) status.registered[r.kind] = (status.registered[r.kind] ?? 0) + 1;
      this.log.debug({ plugin: p.key }, "loaded");
      return true;
    } catch (e) {
      status.state = "failed";
      status.error = (e as Error)?.message ?? String(e);
      this.rollback(p.key, status.error);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  hookTimeoutMs(): number {
    return this.hooks.timeoutSeconds * 1000;
  }

  /** A loaded Python plugin's process went away: what it registered is disposed, and the agent goes on. */
  pythonPluginDied(key: string, message: string): void {
    const s = this.status.get(key);
    if (!s || s.state !== "loaded") return;
    this.ledger.disposePlugin(key);
    this.contexts.delete(key);
    s.state = "failed";
    s.error = message;
    this.statusDirty = true;
    this.log.warn({ plugin: key, code: "E_PYBRIDGE_DIED" }, `plugin ${key} is disabled: ${message}`);
  }

  private rollback(key: string, error: string): void {
    this.ledger.disposePlugin(key);
    for (let i = this.orderIssues.length - 1; i >= 0; i--)
      if (this.orderIssues[i]!.plugin === key) this.orderIssues.splice(i, 1);
    this.contexts.delete(key);
    this.log.warn({ plugin: key }, `Failed to load plugin '${key}': ${error}`);
  }

  /** Load a deferred plugin (bundled platforms) on first use. */
  async loadDeferred(key: string): Promise<boolean> {
    const p = this.byKey.get(key);
    if (!p || p.action !== "defer") return false;
    const url = pluginEntryUrl(p.target, p.entry, p.integrity, this.instance, this.reloadGeneration);
    const mod = isPythonPlugin(p)
      ? (await import("./python/python-plugin.js")).loadPythonPlugins(this, [p]).get(p.key)!
      : import(url);
    return this.loadOne(p, mod, this.lock.settings.load_timeout_seconds * 1000);
  }

  /** Dispose one plugin's registrations (reverse order) and forget it. */
  unload(key: string): number {
    const n = this.ledger.disposePlugin(key);
    this.contexts.delete(key);
    const s = this.status.get(key);
    if (s) s.state = "skipped";
    return n;
  }

  /** Dispose everything (reverse order per plugin, plugins in reverse load order) and reset shared state. */
  async unloadAll(): Promise<void> {
    for (const key of [...this.lock.load_order].reverse()) this.ledger.disposePlugin(key);
    for (const key of this.ledger.plugins()) this.ledger.disposePlugin(key);
    this.events.bumpGeneration();
    this.reporter.reset();
    this.hooks.clearTimeoutState();
    this.contexts.clear();
    this.orderIssues.length = 0;
    this.status.clear();
  }

  /** Re-read the lock and swap: unload everything, then load under the new lock. */
  async reload(lock: Lock): Promise<void> {
    await this.unloadAll();
    this.reloadGeneration++;
    this.setLock(lock);
    await this.loadAll();
  }

  /** Persist what happened at load time so `hermes plugins why` (another process) can show it. */
  async writeStatus(): Promise<void> {
    this.statusDirty = false;
    const body = {
      inputs_hash: this.lock.inputs_hash,
      plugins: Object.fromEntries([...this.status.entries()].sort(([a], [b]) => (a < b ? -1 : 1))),
      order_issues: this.orderIssues,
    };
    await writeFileAtomic(join(this.paths.home, "runtime-status.json"), `${JSON.stringify(body, null, 2)}\n`).catch(
      (e) => this.log.debug({ err: (e as Error).message }, "runtime status not written"),
    );
  }

  /** Wait for queued events (tests, shutdown). */
  async settle(): Promise<void> {
    await this.events.idle();
    await sleep(0);
    if (this.statusDirty) await this.writeStatus();
  }
}

export interface RuntimeStatusFile {
  inputs_hash: string;
  plugins: Record<string, PluginStatus>;
  order_issues: OrderIssue[];
}

export function readRuntimeStatus(home: string): RuntimeStatusFile | undefined {
  try {
    return JSON.parse(readFileSync(join(home, "runtime-status.json"), "utf8")) as RuntimeStatusFile;
  } catch {
    return undefined;
  }
}
