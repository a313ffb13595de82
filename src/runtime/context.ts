import { existsSync, readFileSync } from "node:fs";
import { basename, isAbsolute, join, resolve } from "node:path";
import type { Logger } from "pino";
import { HermesError } from "../core/errors.js";
import { editConfig } from "../config/config-file.js";
import { assertNotOwned } from "../config/managed.js";
import { CAPABILITIES, CAPABILITY_IDS, isCapabilityId } from "../contracts/capabilities.js";
import type { PluginManifest } from "../manifest/parse.js";
import {
  HOOK_NAMES,
  isHookName,
  isMiddlewareKind,
  MIDDLEWARE_KINDS,
  NOT_FIRED_HOOKS,
  suggestHook,
  suggestMiddlewareKind,
} from "../contracts/hook-catalog.js";
import type { HookCallback } from "./hooks.js";
import { RegistrationHandle, type Registration } from "./ledger.js";
import type { MiddlewareCallback } from "./middleware.js";
import { PluginState } from "./plugin-state.js";
import {
  buildMcpEnvelope,
  MCP_DEFAULT_TIMEOUT,
  mcpAllowed,
  McpPermissionError,
  normalizeMcpTimeout,
  readMcpAllowlist,
  type McpEnvelope,
} from "./mcp-call.js";
import type {
  CliCommandEntry,
  CommandEntry,
  PromptSection,
  ProviderKind,
  ToolEntry,
  ToolHandler,
  ToolSchema,
} from "./registries.js";
import type { RuntimeHost } from "./host.js";
import { platformActions } from "./platform-actions.js";
import { providerShapeProblem } from "./provider-shapes.js";
import { checkModelProfile } from "./model-profile.js";

/** A registration a plugin may not make; thrown out of register() it fails (and rolls back) that plugin. */
export class PluginRegistrationError extends HermesError {
  constructor(message: string, code: "E_PLUGIN_REGISTRATION" | "E_PLUGIN_TOOL_OVERRIDE" = "E_PLUGIN_REGISTRATION") {
    super(code, { message });
    this.name = "PluginRegistrationError";
  }
}

export class PluginToolOverrideError extends PluginRegistrationError {
  constructor(message: string) {
    super(message, "E_PLUGIN_TOOL_OVERRIDE");
    this.name = "PluginToolOverrideError";
  }
}

const CONFIG_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const RESERVED_CONFIG_ROOTS = new Set(["model", "plugins", "security", "settings"]);
const TRANSPORT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SECTION_ID = /^[a-z0-9][a-z0-9._-]{0,127}$/;
const SKILL_NAME = /^[a-zA-Z0-9_-]+$/;
export const BUILTIN_SLASH_COMMANDS = new Set([
  "help",
  "exit",
  "quit",
  "clear",
  "new",
  "reset",
  "plugins",
  "tools",
  "model",
  "history",
  "stop",
  "approve",
  "deny",
]);

export interface ToolSpecInput {
  name: string;
  toolset?: string;
  schema?: ToolSchema;
  handler: ToolHandler;
  check_fn?: () => boolean;
  requires_env?: string[];
  description?: string;
  emoji?: string;
  override?: boolean;
}

function configKeySegments(key: unknown): string[] {
  const fail = () => {
    throw new PluginRegistrationError(
      "Expected a plugin-relative config key such as 'endpoint' or 'retry.policy'; global, cross-plugin, and " +
        "traversal paths are forbidden",
    );
  };
  if (typeof key !== "string" || !key || key.includes("/") || key.includes("\\")) fail();
  const segs = (key as string).split(".");
  if (segs.some((s) => !CONFIG_SEGMENT.test(s)) || RESERVED_CONFIG_ROOTS.has(segs[0]!.toLowerCase())) fail();
  return segs;
}

function walk(root: unknown, segs: readonly string[]): { found: boolean; value: unknown } {
  let cur = root;
  for (const s of segs) {
    if (!cur || typeof cur !== "object" || Array.isArray(cur) || !Object.prototype.hasOwnProperty.call(cur, s))
      return { found: false, value: undefined };
    cur = (cur as Record<string, unknown>)[s];
  }
  return { found: true, value: cur };
}

/**
 * What a plugin's `register(ctx)` receives. Every registration goes through the
 * plugin's ledger so a failed load, an unload or a reload disposes it; after a load timeout the
 * context is abandoned and every registration becomes a warned no-op.
 */
export class PluginContext {
  readonly plugin_id: string;
  readonly log: Logger;
  abandoned = false;
  private _state?: PluginState;

  private _manifest: PluginManifest | (() => PluginManifest);

  constructor(
    private readonly host: RuntimeHost,
    manifest: PluginManifest | (() => PluginManifest),
    readonly key: string,
    readonly source: string,
    readonly path: string,
    /** The manifest name (from the lock), so registrations do not force the deferred parse. */
    private readonly pluginName: string,
  ) {
    this.plugin_id = key;
    this.log = host.log.child({ plugin: key });
    this._manifest = manifest;
  }

  /** The parsed plugin.yaml; parsed on first use when startup did not need it (see Runtime). */
  get manifest(): PluginManifest {
    if (typeof this._manifest === "function") this._manifest = this._manifest();
    return this._manifest;
  }

  get pluginId(): string {
    return this.plugin_id;
  }

  get profile_name(): string {
    const home = this.host.home;
    const parent = basename(resolve(home, ".."));
    return parent === "profiles" ? basename(home) : "default";
  }

  get home(): string {
    return this.host.home;
  }

  get state(): PluginState {
    this._state ??= new PluginState(this.host.home, this.key);
    return this._state;
  }

  private track(kind: string, key: string, release: () => void): Registration | null {
    if (this.abandoned) {
      this.log.warn(`${kind} '${key}' ignored: this plugin's load timed out and its context was abandoned`);
      release();
      return null;
    }
    return this.host.ledger.add(new RegistrationHandle(kind, key, this.key, release));
  }

  private refuseIfAbandoned(what: string): boolean {
    if (!this.abandoned) return false;
    this.log.warn(`${what} ignored: this plugin's load timed out and its context was abandoned`);
    return true;
  }

  // ---- identity and probes ----

  has_plugin(id: string): boolean {
    return this.host.loadedPlugins().some((p) => p.key === id || p.name === id);
  }

  has_capability(cap: string): boolean {
    if (this.source === "bundled" && cap === "tools.override") return true;
    if (!isCapabilityId(cap)) return false;
    // A grant, or the capability's legacy key (a path in plugins.entries.<key>) set to true, as the seed reads it.
    const path: readonly string[] = CAPABILITIES[cap].legacy;
    let v: unknown = this.host.pluginEntry(this.key);
    for (const seg of path) v = v && typeof v === "object" ? (v as Record<string, unknown>)[seg] : undefined;
    const byGrant = this.host.grantedCapabilities(this.key).includes(cap);
    const granted = byGrant || v === true;
    this.log.info(
      `capability_check plugin=${this.key} capability=${cap} decision=${granted ? "allow" : "deny"} ` +
        `checked_by=${byGrant || !granted ? "lock" : `legacy:${path.join(".")}`}`,
    );
    return granted;
  }

  // ---- tools ----

  /** One spec object, or the original's positional form (name, toolset, schema, handler, check_fn, requires_env, _,
   * description, emoji, override). */
  register_tool(spec: ToolSpecInput): Registration | null;
  register_tool(
    name: string,
    toolset: string,
    schema: ToolSchema,
    handler: ToolHandler,
    ...rest: unknown[]
  ): Registration | null;
  register_tool(...args: unknown[]): Registration | null {
    const spec: ToolSpecInput =
      args.length === 1 && args[0] && typeof args[0] === "object"
        ? (args[0] as ToolSpecInput)
        : {
            name: args[0] as string,
            toolset: args[1] as string,
            schema: args[2] as ToolSchema,
            handler: args[3] as ToolHandler,
            check_fn: args[4] as (() => boolean) | undefined,
            requires_env: args[5] as string[] | undefined,
            description: args[7] as string | undefined,
            emoji: args[8] as string | undefined,
            override: args[9] as boolean | undefined,
          };
    if (this.refuseIfAbandoned(`tool '${String(spec?.name)}'`)) return null;
    if (!spec || typeof spec.name !== "string" || !spec.name.trim())
      throw new PluginRegistrationError("register_tool needs a non-empty name");
    if (typeof spec.handler !== "function")
      throw new PluginRegistrationError(`register_tool '${spec.name}': handler must be a function`);
    const name = spec.name.trim();
    const existing = this.host.tools.get(name);
    if (spec.override) {
      if (!this.has_capability("tools.override")) {
        throw new PluginToolOverrideError(
          `Plugin '${this.key}' cannot override built-in tool '${name}'. Grant the tools.override capability ` +
            `(hermes plugins enable ${this.key} --grant tools.override) to allow this plugin to replace tools.`,
        );
      }
    } else if (existing) {
      this.log.warn(`tried to shadow tool ${name} (owned by ${existing.owner}) without override=true; not registered`);
      return null;
    }
    const entry: ToolEntry = {
      name,
      toolset: spec.toolset ?? this.key,
      schema: spec.schema ?? { name, description: spec.description ?? "" },
      handler: spec.handler,
      check_fn: spec.check_fn,
      requires_env: Array.isArray(spec.requires_env) ? spec.requires_env.map(String) : [],
      description: spec.description ?? spec.schema?.description ?? "",
      emoji: spec.emoji ?? "",
      owner: this.key,
    };
    return this.track("tool", name, this.host.tools.lease(name, entry));
  }

  dispatch_tool(
    name: string,
    args: Record<string, unknown> = {},
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    return this.host.dispatchTool(name, args, { ...extra, caller_plugin: this.key });
  }

  // ---- MCP ----

  /**
   * Call a tool of a configured MCP server. The allowlist
   * (`plugins.entries.<key>.mcp_allowlist`, exact names, no wildcard) is checked first and a
   * server outside it rejects with `McpPermissionError` (name `PermissionError`). The timeout is
   * parsed with Number(), unparseable → 30, clamped to 1–600 s. Every other outcome resolves to
   * the envelope `{ok: true, result, structuredContent?}` / `{ok: false, error}`, with
   * `truncated: true` when the result was cut at 64 KiB.
   */
  async call_mcp(
    server: string,
    tool: string,
    args: Record<string, unknown> | null = {},
    timeout: unknown = MCP_DEFAULT_TIMEOUT,
  ): Promise<McpEnvelope> {
    const name = String(server);
    if (!mcpAllowed(readMcpAllowlist(this.host.pluginEntry(this.key)), name)) {
      const err = new McpPermissionError(this.pluginName, this.key, name);
      this.log.warn({ code: err.code, server: name, tool: String(tool) }, err.message);
      throw err;
    }
    const seconds = normalizeMcpTimeout(timeout);
    if (args !== null && args !== undefined && (typeof args !== "object" || Array.isArray(args))) {
      return {
        ok: false,
        error: `call_mcp: arguments must be an object (got ${Array.isArray(args) ? "array" : typeof args})`,
      };
    }
    const raw = await this.host.callMcp(name, String(tool), args ?? {}, seconds, this.key);
    return buildMcpEnvelope(raw);
  }

  // ---- hooks, middleware, events ----

  register_hook(name: string, cb: HookCallback): Registration | null {
    if (this.refuseIfAbandoned(`hook '${name}'`)) return null;
    if (typeof cb !== "function")
      throw new PluginRegistrationError(`register_hook '${name}': callback must be a function`);
    if (!isHookName(name)) {
      const near = suggestHook(name);
      const msg =
        `Plugin '${this.key}' registered unknown hook ` +
        `'${name}'${near ? `; did you mean '${near}'?` : ` (valid: ${HOOK_NAMES.join(", ")})`}`;
      if (this.host.strict) throw new PluginRegistrationError(msg);
      this.log.warn(msg);
    } else if (NOT_FIRED_HOOKS[name])
      this.log.warn(
        { code: "W_HOOK_NOT_FIRED" },
        `Plugin '${this.key}' registered hook '${name}', which hermes-kit never fires: ${NOT_FIRED_HOOKS[name]}`,
      );
    this.host.noteRegistration("hook", name, this.key);
    return this.track("hook", name, this.host.hooks.add(name, cb, this.key));
  }

  register_middleware(kind: string, cb: MiddlewareCallback): Registration | null {
    if (this.refuseIfAbandoned(`middleware '${kind}'`)) return null;
    if (typeof cb !== "function")
      throw new PluginRegistrationError(`register_middleware '${kind}': callback must be a function`);
    if (!isMiddlewareKind(kind)) {
      const near = suggestMiddlewareKind(kind);
      const msg =
        `Plugin '${this.key}' registered unknown middleware ` +
        `'${kind}'${near ? `; did you mean '${near}'?` : ` (valid: ${MIDDLEWARE_KINDS.join(", ")})`}`;
      if (this.host.strict) throw new PluginRegistrationError(msg);
      this.log.warn(msg);
    }
    this.host.noteRegistration("middleware", kind, this.key);
    return this.track(
      "middleware",
      kind,
      this.host.middleware.add({ kind, cb, owner: this.key, required: this.host.isRequired(this.key) }),
    );
  }

  emit(event: string, payload: Record<string, unknown> | null = null): number {
    if (typeof event !== "string" || !event.trim())
      throw new PluginRegistrationError("emit: the event name must be a non-empty string");
    if (event.includes(":"))
      throw new PluginRegistrationError(
        `emit '${event}': plugins emit bare names; the '${this.key}:' namespace is added for you`,
      );
    if (payload !== null && (typeof payload !== "object" || Array.isArray(payload)))
      throw new TypeError("emit: the payload must be an object or null");
    return this.host.events.emit(`${this.key}:${event}`, payload ?? {}, this.key);
  }

  subscribe(event: string, cb: (payload: Record<string, unknown>) => unknown): void {
    if (this.refuseIfAbandoned(`subscription '${event}'`)) return;
    if (typeof cb !== "function") throw new TypeError("subscribe: the callback must be a function");
    this.track("subscription", event, this.host.events.subscribe(event, cb, this.key));
  }

  on_unload(cb: () => unknown): Registration | null {
    // Checked first: track() on an abandoned context runs the release, which here is the callback.
    if (this.refuseIfAbandoned("on_unload callback")) return null;
    if (typeof cb !== "function") throw new TypeError("on_unload: the callback must be a function");
    return this.track("on_unload", cb.name || "callback", () => {
      try {
        const r = cb();
        if (r && typeof (r as Promise<unknown>).then === "function")
          (r as Promise<unknown>).catch((e) => this.log.warn(`on_unload callback failed: ${(e as Error).message}`));
      } catch (e) {
        this.log.warn(`on_unload callback failed: ${(e as Error).message}`);
      }
    });
  }

  // ---- commands and skills ----

  register_command(...args: unknown[]): Registration | null {
    const o =
      args.length === 1 && args[0] && typeof args[0] === "object"
        ? (args[0] as {
            name: string;
            handler: CommandEntry["handler"];
            description?: string;
            args_hint?: string;
            argument_mode?: string;
          })
        : {
            name: args[0] as string,
            handler: args[1] as CommandEntry["handler"],
            description: args[2] as string,
            args_hint: args[3] as string,
            argument_mode: args[4] as string,
          };
    const clean = String(o.name ?? "")
      .toLowerCase()
      .trim()
      .replace(/^\/+/, "")
      .replace(/ /g, "-");
    if (this.refuseIfAbandoned(`command '${clean}'`)) return null;
    if (!clean) {
      this.log.warn("register_command: empty command name; skipped");
      return null;
    }
    if (BUILTIN_SLASH_COMMANDS.has(clean)) {
      this.log.warn(`command /${clean} conflicts with a built-in command. Skipping.`);
      return null;
    }
    if (typeof o.handler !== "function")
      throw new PluginRegistrationError(`register_command '${clean}': handler must be a function`);
    const hint = (o.args_hint ?? "").trim();
    const mode =
      o.argument_mode === "options" || o.argument_mode === "text" || o.argument_mode === "mixed"
        ? o.argument_mode
        : hint
          ? "text"
          : null;
    const entry: CommandEntry = {
      name: clean,
      handler: o.handler,
      description: o.description || "Plugin command",
      args_hint: hint,
      argument_mode: mode,
      plugin: this.pluginName,
      plugin_key: this.key,
    };
    return this.track("command", clean, this.host.commands.lease(clean, entry));
  }

  register_cli_command(...args: unknown[]): Registration | null {
    const o =
      args.length === 1 && args[0] && typeof args[0] === "object"
        ? (args[0] as {
            name: string;
            help?: string;
            setup_fn?: CliCommandEntry["setup_fn"];
            handler_fn?: CliCommandEntry["handler_fn"];
            description?: string;
          })
        : {
            name: args[0] as string,
            help: args[1] as string,
            setup_fn: args[2] as CliCommandEntry["setup_fn"],
            handler_fn: args[3] as CliCommandEntry["handler_fn"],
            description: args[4] as string,
          };
    const name = String(o.name ?? "").trim();
    if (this.refuseIfAbandoned(`CLI command '${name}'`)) return null;
    if (!/^[a-z0-9][a-z0-9-]*$/.test(name))
      throw new PluginRegistrationError(
        `register_cli_command: '${name}' is not a valid command name (lowercase letters, digits, '-')`,
      );
    if (this.host.builtinCliCommands.has(name)) {
      this.log.warn(`CLI command '${name}' conflicts with a built-in hermes command. Skipping.`);
      return null;
    }
    const entry: CliCommandEntry = {
      name,
      help: o.help ?? "",
      description: o.description ?? o.help ?? "",
      setup_fn: o.setup_fn,
      handler_fn: o.handler_fn,
      plugin: this.pluginName,
      plugin_key: this.key,
    };
    return this.track("cli_command", name, this.host.cliCommands.lease(name, entry));
  }

  register_skill(
    name: string,
    path: string,
    description = "",
    frontmatter: Record<string, unknown> = {},
  ): Registration | null {
    if (this.refuseIfAbandoned(`skill '${String(name)}'`)) return null;
    if (typeof name !== "string" || name.includes(":") || !SKILL_NAME.test(name))
      throw new PluginRegistrationError(`register_skill: '${name}' is not a valid skill name`);
    const abs = isAbsolute(path) ? path : join(this.path, path);
    if (!existsSync(abs)) throw new PluginRegistrationError(`register_skill '${name}': ${abs} does not exist`);
    const qualified = `${this.pluginName}:${name}`;
    return this.track(
      "skill",
      qualified,
      this.host.skills.lease(qualified, {
        qualified,
        bare_name: name,
        path: abs,
        description,
        plugin: this.pluginName,
        plugin_key: this.key,
        frontmatter,
      }),
    );
  }

  /** Read a plugin skill by its qualified `plugin:skill` name (plugin skills are loaded only explicitly). */
  skill_view(qualified: string): string | null {
    return this.host.skillView(qualified);
  }

  // ---- config ----

  get_config(key: string, fallback: unknown = null): unknown {
    const segs = configKeySegments(key);
    const entry = this.host.pluginEntry(this.key);
    const s = walk(entry.settings, segs);
    if (s.found) return s.value;
    const legacy = walk(entry.config, segs);
    return legacy.found ? legacy.value : fallback;
  }

  /** Write `plugins.entries.<key>.settings.<key…>`; refused for keys the deployment owns. */
  async set_config(key: string, value: unknown): Promise<void> {
    const segs = configKeySegments(key);
    const path = ["plugins", "entries", this.key, "settings", ...segs];
    const managed = this.host.managedOwnership();
    if (managed) assertNotOwned(managed.kind, managed.owned, path);
    await editConfig(this.host.configFile, () => [{ op: "set", path, value }]);
    await this.host.configChanged();
  }

  // ---- host LLM and messages (the agent session provides them) ----

  /** `ctx.platform_actions`: add_reaction and set_thread_title on hermes serve's chat platforms. */
  get platform_actions() {
    return platformActions(this.host, this.key, this.log);
  }

  /**
   * `ctx.llm`: complete / complete_structured with the host's provider and
   * model, overrides gated by the llm.*_override capabilities. Outside an agent session (hermes
   * chat, hermes demo) every call rejects with E_AGENT_NO_PROVIDER.
   */
  get llm(): unknown {
    const bridged = this.host.agent?.pluginLlm(this.key);
    if (bridged) return bridged;
    const refuse = () =>
      Promise.reject(
        new HermesError("E_AGENT_NO_PROVIDER", {
          message:
            `ctx.llm of plugin '${this.key}': no agent session is running, so there is no host provider (run ` +
            "under hermes chat)",
        }),
      );
    return {
      complete: refuse,
      complete_structured: refuse,
      acomplete: refuse,
      acomplete_structured: refuse,
      completeStructured: refuse,
      acompleteStructured: refuse,
    };
  }

  /**
   * `ctx.inject_message(content, role = "user", {session_key})`. CLI session: queued as the next
   * input (idle) or interrupting the running turn; hermes serve: the next turn of the session whose
   * turn made the call. Non-user roles are prefixed `[role] `; true when queued. With a session_key
   * (needs plugins.entries.<key>.allow_gateway_injection: true) it goes to that gateway session of
   * hermes serve; false without the permission, without a gateway, or when the gateway refuses.
   */
  inject_message(content: unknown, role: unknown = "user", opts: { session_key?: string | null } = {}): boolean {
    if (typeof content !== "string" || !content.trim()) {
      this.log.warn("inject_message: content must be a non-empty string; nothing was queued");
      return false;
    }
    const r = typeof role === "string" && role.trim() ? role.trim() : "user";
    const text = r === "user" ? content : `[${r}] ${content}`;
    const sessionKey = opts && typeof opts === "object" ? opts.session_key : undefined;
    if (sessionKey) {
      if (this.host.pluginEntry(this.key).allow_gateway_injection !== true) {
        this.log.warn(
          `inject_message(session_key=${sessionKey}): gateway injection is not allowed for this plugin ` +
            `(plugins.entries.${this.key}.allow_gateway_injection must be true); nothing was queued`,
        );
        return false;
      }
      if (!this.host.gateway) {
        this.log.warn(`inject_message(session_key=${sessionKey}): no gateway runs (hermes serve); nothing was queued`);
        return false;
      }
      return this.host.gateway.injectMessage(sessionKey, text);
    }
    const agent = this.host.agent;
    if (!agent) {
      this.log.warn("inject_message: no session is running (chat or serve); nothing was queued");
      return false;
    }
    return agent.injectMessage(this.key, text);
  }

  // ---- approval transports, providers, prompt sections ----

  register_approval_transport(name: string, present: (request: unknown) => unknown): void {
    if (this.refuseIfAbandoned(`approval transport '${name}'`)) return;
    const clean = String(name).trim().toLowerCase();
    if (clean === "builtin") throw new PluginRegistrationError("approval transport name 'builtin' is reserved");
    if (!TRANSPORT_NAME.test(clean))
      throw new PluginRegistrationError(`approval transport name '${clean}' must match ${TRANSPORT_NAME.source}`);
    if (typeof present !== "function") throw new TypeError("register_approval_transport: present must be a function");
    const owner = this.host.approvalTransports.get(clean);
    if (owner)
      throw new PluginRegistrationError(`approval transport '${clean}' is already registered by '${owner.plugin_id}'`);
    this.track(
      "approval_transport",
      clean,
      this.host.approvalTransports.lease(clean, {
        name: clean,
        present,
        plugin_id: this.key,
        profile_home: this.host.home,
      }),
    );
  }

  private registerOfKind(kind: ProviderKind, provider: unknown, nameOverride?: string): Registration | null {
    if (this.refuseIfAbandoned(`${kind} provider`)) return null;
    if (!provider || (typeof provider !== "object" && typeof provider !== "function")) {
      this.log.warn(`register ${kind} provider: expected an object; ignored`);
      return null;
    }
    const raw = nameOverride ?? (provider as { name?: unknown }).name;
    if (typeof raw !== "string" || !raw.trim()) {
      this.log.warn(`register ${kind} provider: the provider needs a non-empty name; ignored`);
      return null;
    }
    const name = ["terminal_environment", "tts", "transcription"].includes(kind)
      ? raw.trim().toLowerCase()
      : raw.trim();
    const problem = providerShapeProblem(kind, name, provider);
    if (problem) {
      this.log.warn(`register ${kind} provider '${name}': ${problem}; ignored`);
      return null;
    }
    const map = this.host.providers.map(kind);
    if (kind === "context_engine" && map.values().length > 0) {
      this.log.warn(`only one context engine may be registered (${map.values()[0]!.name} is); ignored`);
      return null;
    }
    return this.track(`${kind}_provider`, name, map.lease(name, { kind, name, provider, plugin_key: this.key }));
  }

  register_context_engine(engine: unknown): Registration | null {
    return this.registerOfKind("context_engine", engine);
  }
  register_memory_provider(p: unknown): Registration | null {
    return this.registerOfKind("memory", p);
  }
  register_provider(p: unknown): Registration | null {
    return this.register_model_provider(p);
  }
  /** A profile the kit cannot run (another api_mode, an unknown field) fails the plugin instead of lying idle. */
  register_model_provider(p: unknown): Registration | null {
    const checked = checkModelProfile(p);
    if ("problem" in checked) throw new PluginRegistrationError(`register_provider: ${checked.problem}`);
    return this.registerOfKind("model", checked.profile);
  }
  register_image_gen_provider(p: unknown): Registration | null {
    return this.registerOfKind("image_gen", p);
  }
  register_video_gen_provider(p: unknown): Registration | null {
    return this.registerOfKind("video_gen", p);
  }
  register_tts_provider(p: unknown): Registration | null {
    return this.registerOfKind("tts", p);
  }
  register_transcription_provider(p: unknown): Registration | null {
    return this.registerOfKind("transcription", p);
  }
  register_terminal_environment_provider(p: unknown): Registration | null {
    return this.registerOfKind("terminal_environment", p);
  }
  register_web_search_provider(_p: unknown): Registration | null {
    return this.notBuilt("web search provider", "web search");
  }
  register_browser_provider(_p: unknown): Registration | null {
    return this.notBuilt("browser provider", "browser");
  }

  /** A provider kind of the original whose tool hermes-kit does not have: said plainly, never stored. */
  private notBuilt(what: string, tool: string): null {
    this.log.warn(
      { code: "W_PROVIDER_NOT_BUILT" },
      `Plugin '${this.key}' registered a ${what}; hermes-kit has no ${tool} tool, so the registration is ignored`,
    );
    return null;
  }
  register_platform(
    name: string,
    label: string,
    adapter_factory: unknown,
    check_fn?: unknown,
    extra: Record<string, unknown> = {},
  ): Registration | null {
    return this.registerOfKind("platform", { name, label, adapter_factory, check_fn, ...extra }, name);
  }

  register_system_prompt_section(
    id: string,
    content: PromptSection["content"],
    opts: { position?: string; max_chars?: number } = {},
  ): Registration | null {
    if (this.refuseIfAbandoned(`prompt section '${id}'`)) return null;
    if (typeof id !== "string" || !SECTION_ID.test(id))
      throw new PluginRegistrationError(`prompt section id '${String(id)}' must match ${SECTION_ID.source}`);
    if (typeof content !== "string" && typeof content !== "function")
      throw new TypeError("prompt section content must be a string or a function");
    const position = opts.position ?? "after_memory";
    if (position !== "after_memory")
      throw new PluginRegistrationError(`prompt section position '${position}' is not supported (after_memory)`);
    const max = opts.max_chars ?? 4000;
    if (typeof max !== "number" || !Number.isInteger(max) || max < 1 || max > 4000)
      throw new PluginRegistrationError("prompt section max_chars must be an integer in 1..4000");
    const owner = this.host.promptSections.get(id);
    if (owner)
      throw new PluginRegistrationError(`prompt section '${id}' is already registered by '${owner.plugin_key}'`);
    return this.track(
      "prompt_section",
      id,
      this.host.promptSections.lease(id, {
        id,
        content,
        position: "after_memory",
        max_chars: max,
        plugin_key: this.key,
      }),
    );
  }

  /** The capability ids a plugin may declare, for messages. */
  static readonly capabilityIds = CAPABILITY_IDS;
}

/** camelCase aliases for every snake_case member (registerTool, hasCapability, …). */
for (const name of Object.getOwnPropertyNames(PluginContext.prototype)) {
  if (!name.includes("_") || name.startsWith("_")) continue;
  const camel = name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
  const desc = Object.getOwnPropertyDescriptor(PluginContext.prototype, name)!;
  if (!Object.prototype.hasOwnProperty.call(PluginContext.prototype, camel))
    Object.defineProperty(PluginContext.prototype, camel, desc);
}

export function readSkill(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}
