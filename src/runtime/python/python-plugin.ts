import type { Logger } from "pino";
import { HermesError } from "../../core/errors.js";
import type { LockPlugin } from "../../contracts/lock.js";
import type { PluginContext } from "../context.js";
import { RegistrationHandle, type Ledger, type Registration } from "../ledger.js";
import { startPythonBridge, type PythonLink, type PythonPluginSpec } from "./bridge-process.js";
import { PythonError } from "./channel.js";
import { fromWire, toWire, type AnyFn } from "./codec.js";
import { pluginVenvDir, venvSitePackages } from "./environment.js";
import { pluginEnvFailure } from "./env-record.js";

/** What the bridge needs from the runtime. */
export interface PythonHost {
  readonly log: Logger;
  readonly home: string;
  readonly ledger: Ledger;
  /** The hook callback timeout in ms (0: none): a Python hook still running then is killed with its process. */
  hookTimeoutMs(): number;
  /** The plugin's process died or was killed: dispose what it registered and say why. */
  pythonPluginDied(key: string, message: string): void;
}

/** ctx members a Python plugin may call; dotted ones are methods of ctx.llm, ctx.state, ctx.platform_actions. */
/** The provider registrations of ctx; the bridge defines the same methods on the Python ctx from this list. */
const PROVIDER_REGISTRATIONS = [
  "register_provider",
  "register_model_provider",
  "register_memory_provider",
  "register_context_engine",
  "register_image_gen_provider",
  "register_video_gen_provider",
  "register_tts_provider",
  "register_transcription_provider",
  "register_terminal_environment_provider",
  "register_web_search_provider",
  "register_browser_provider",
];

const CTX_CALLS = new Set([
  "has_plugin",
  "has_capability",
  "register_tool",
  "dispatch_tool",
  "register_hook",
  "register_middleware",
  "emit",
  "subscribe",
  "on_unload",
  "register_command",
  "register_cli_command",
  "register_skill",
  "skill_view",
  "get_config",
  "set_config",
  "inject_message",
  "call_mcp",
  "register_approval_transport",
  "register_platform",
  "register_system_prompt_section",
  ...PROVIDER_REGISTRATIONS,
  "llm.complete",
  "llm.complete_structured",
  "state.get",
  "state.set",
  "platform_actions.add_reaction",
  "platform_actions.set_thread_title",
]);

type Fn = (...args: unknown[]) => unknown;

/** `release`: the runtime functions passed in this call die with it; `killAfterMs`: a hook's deadline. */
interface CallOptions {
  release?: boolean;
  killAfterMs?: number;
}

/** One Python plugin as the runtime sees it: a module whose register(ctx) runs in the plugin's process. */
export class PythonPlugin {
  private readonly fns = new Map<number, AnyFn>();
  private nextFn = 1;
  private readonly regs = new Map<number, Registration>();
  private nextReg = 1;
  private ctx?: PluginContext;
  private readonly log: Logger;

  constructor(
    readonly lp: LockPlugin,
    readonly link: PythonLink,
    private readonly host: PythonHost,
  ) {
    this.log = host.log.child({ plugin: lp.key });
    link.onDeath = (message) => host.pythonPluginDied(lp.key, message);
  }

  /** The module the runtime's loader sees: import happened in the process; register(ctx) is proxied. */
  async module(): Promise<{ register: (ctx: PluginContext) => Promise<void> }> {
    await this.link.ready;
    const loaded = (await this.call("load", {})) as { has_register: boolean };
    if (!loaded.has_register) throw new HermesError("E_PLUGIN_NO_REGISTER", { message: "no register() function" });
    return { register: (ctx) => this.register(ctx) };
  }

  private async register(ctx: PluginContext): Promise<void> {
    this.ctx = ctx;
    // First in the ledger, so disposed last: on_unload callbacks run before the process is asked to exit.
    this.host.ledger.add(
      new RegistrationHandle("python_process", this.lp.key, this.lp.key, () => this.link.shutdown()),
    );
    const m = ctx.manifest;
    await this.call("register", {
      key: this.lp.key,
      name: this.lp.name,
      profile_name: ctx.profile_name,
      home: ctx.home,
      manifest: toWire(m, new Map(), () => 0),
    });
  }

  private async call(method: string, params: unknown): Promise<unknown> {
    try {
      return await this.link.channel.call(method, params);
    } catch (e) {
      throw this.logged(e);
    }
  }

  /** A Python exception keeps its traceback in the log (debug: the terminal shows it with --verbose). */
  private logged(e: unknown): unknown {
    if (e instanceof PythonError && e.traceback) this.log.debug({ traceback: e.traceback }, e.message);
    return e;
  }

  // ---- runtime → Python ----

  private callPython(fn: number, args: unknown[], kwargs: unknown, o: CallOptions = {}) {
    const before = this.nextFn;
    const wire = { fn, args: this.wire(args), kwargs: this.wire(kwargs ?? {}) };
    const after = this.nextFn;
    let timer: NodeJS.Timeout | undefined;
    if (o.killAfterMs)
      timer = setTimeout(() => {
        // Disabled before the kill lands, so the next hook call never reaches a process that is going away.
        const why = `a hook callback did not return within ${o.killAfterMs! / 1000}s; its Python process is killed`;
        this.host.pythonPluginDied(this.lp.key, why);
        this.link.kill();
      }, o.killAfterMs);
    return this.link.channel.call("invoke", wire).then(
      (r) => {
        this.done(timer, o.release ? [before, after] : undefined);
        return this.fromPython(r);
      },
      (e) => {
        this.done(timer, o.release ? [before, after] : undefined);
        throw this.logged(e);
      },
    );
  }

  private done(timer: NodeJS.Timeout | undefined, range?: [number, number]): void {
    clearTimeout(timer);
    if (range) for (let i = range[0]; i < range[1]; i++) this.fns.delete(i);
  }

  private wire(v: unknown): unknown {
    return toWire(v, this.fns, () => this.nextFn++);
  }

  private fromPython(v: unknown, hook = false): unknown {
    return fromWire(v, (tag) => this.reference(tag, hook));
  }

  /** A Python callable as a runtime function, called the way its registration says. */
  private callable(id: number, conv: string, name: string, hook: boolean): Fn {
    const killAfterMs = hook ? this.host.hookTimeoutMs() : 0;
    let f: Fn;
    switch (conv) {
      case "kwargs":
        f = (payload) => this.callPython(id, [], payload, { release: true, killAfterMs });
        break;
      case "tool":
        f = (args, extra) => this.callPython(id, [args], extra, { release: true });
        break;
      case "cli":
        f = (opts) => this.callPython(id, [((opts as { args?: unknown[] })?.args ?? []).map(String)], {});
        break;
      default:
        f = (...a) => this.callPython(id, a, {});
    }
    Object.defineProperty(f, "name", { value: name });
    return f;
  }

  private reference(tag: Record<string, unknown>, hook: boolean): unknown {
    if ("$js" in tag) return this.fns.get(Number(tag.$js));
    if ("$check" in tag) return this.check(tag.$check as Record<string, unknown>, tag.value === true);
    if ("$pyobj" in tag) return this.object(tag);
    return this.callable(Number(tag.$py), String(tag.conv ?? "args"), String(tag.name ?? "callback"), hook);
  }

  /** A tool's check_fn is synchronous in the runtime: the last answer, asked again in the background. */
  private check(fnTag: Record<string, unknown>, initial: boolean): () => boolean {
    let value = initial;
    let asked = 0;
    return () => {
      const now = Date.now();
      if (now - asked > 1000 && !this.link.channel.closed) {
        asked = now;
        this.link.channel.call("check", { fn: fnTag.$py }).then(
          (v) => {
            value = v === true;
          },
          () => {
            value = false;
          },
        );
      }
      return value;
    };
  }

  /** A Python object (a provider, a platform adapter): its attributes, and its methods as async functions. */
  private object(tag: Record<string, unknown>): Record<string, unknown> {
    const id = Number(tag.$pyobj);
    const o: Record<string, unknown> = { ...(this.fromPython(tag.attrs ?? {}) as Record<string, unknown>) };
    for (const m of (tag.methods as string[]) ?? [])
      o[m] = async (...args: unknown[]) => {
        const r = (await this.link.channel
          .call("invoke_method", { obj: id, method: m, args: this.wire(args) })
          .catch((e) => {
            throw this.logged(e);
          })) as { r: unknown; attrs: Record<string, unknown> };
        Object.assign(o, this.fromPython(r.attrs ?? {}));
        return this.fromPython(r.r);
      };
    return o;
  }

  // ---- Python → runtime ----

  onRequest = async (method: string, params: unknown): Promise<unknown> => {
    const p = params as { method?: string; args?: unknown[]; fn?: number };
    if (method === "invoke_js") {
      const f = this.fns.get(Number(p.fn));
      if (!f) throw new HermesError("E_PYBRIDGE_CALL", { message: "that runtime function is no longer available" });
      return this.wire(await (f as Fn)(...((this.fromPython(p.args ?? []) as unknown[]) ?? [])));
    }
    if (method === "ctx") return this.ctxCall(String(p.method), p.args ?? []);
    throw new HermesError("E_PYBRIDGE_CALL", { message: `unknown bridge call '${method}'` });
  };

  onNotify = (method: string, params: unknown): void => {
    if (method !== "log") return;
    const p = params as { level?: string; msg?: string; logger?: string };
    const level = p.level === "warning" ? "warn" : p.level === "critical" ? "error" : p.level;
    const fn = level === "debug" || level === "warn" || level === "error" ? level : "info";
    this.log[fn]({ python: p.logger ?? undefined }, String(p.msg ?? ""));
  };

  private async ctxCall(method: string, rawArgs: unknown[]): Promise<unknown> {
    const ctx = this.ctx;
    if (!ctx) throw new HermesError("E_PYBRIDGE_CALL", { message: `ctx.${method} called before register(ctx)` });
    if (method === "dispose") {
      this.regs.get(Number(rawArgs[0]))?.dispose();
      return null;
    }
    if (!CTX_CALLS.has(method))
      throw new HermesError("E_PYBRIDGE_CALL", { message: `ctx.${method} is not part of the plugin API` });
    const args = this.fromPython(rawArgs, method === "register_hook") as unknown[];
    const path = method.split(".");
    let target: Record<string, unknown> = ctx as unknown as Record<string, unknown>;
    for (const seg of path.slice(0, -1)) target = target[seg] as Record<string, unknown>;
    const fn = target[path[path.length - 1]!];
    if (typeof fn !== "function")
      throw new HermesError("E_PYBRIDGE_CALL", { message: `ctx.${method} is not available here` });
    const r = await (fn as Fn).apply(target, args);
    if (r instanceof RegistrationHandle) {
      const id = this.nextReg++;
      this.regs.set(id, r);
      return { $reg: id, kind: r.kind, key: r.key, plugin_key: r.plugin_key };
    }
    return this.wire(r);
  }
}

/**
 * Start one bridge for the Python plugins of a load and give each the module promise the
 * runtime's loader awaits (as `import()` for a JavaScript plugin).
 */
export function loadPythonPlugins(
  host: PythonHost,
  all: LockPlugin[],
): Map<string, Promise<{ register: (ctx: PluginContext) => Promise<void> }>> {
  const out = new Map<string, Promise<{ register: (ctx: PluginContext) => Promise<void> }>>();
  // A plugin whose environment the compile could not build fails with that error, without a process.
  for (const p of all) {
    const failure = pluginEnvFailure(host.home, p);
    if (!failure) continue;
    const m = Promise.reject(failure);
    m.catch(() => undefined);
    out.set(p.key, m);
  }
  const plugins = all.filter((p) => !out.has(p.key));
  if (!plugins.length) return out;
  const site = (p: LockPlugin) => venvSitePackages(pluginVenvDir(host.home, p.key));
  const specs: PythonPluginSpec[] = plugins.map((p) => ({ key: p.key, name: p.name, path: p.target, site: site(p) }));
  const objects = new Map<string, PythonPlugin>();
  const links = startPythonBridge({
    plugins: specs,
    providerMethods: PROVIDER_REGISTRATIONS,
    home: host.home,
    log: host.log,
    handlers: (key) => ({
      onRequest: (m, p) => objects.get(key)!.onRequest(m, p),
      onNotify: (m, p) => objects.get(key)!.onNotify(m, p),
    }),
  });
  for (const p of plugins) {
    const obj = new PythonPlugin(p, links.get(p.key)!, host);
    objects.set(p.key, obj);
    const m = obj.module();
    m.catch(() => undefined);
    out.set(p.key, m);
  }
  return out;
}
