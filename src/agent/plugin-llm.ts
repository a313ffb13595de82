import type { Ajv2020 } from "ajv/dist/2020.js";
import type { Logger } from "pino";
import { HermesError } from "../core/errors.js";
import type { HookSite } from "./hook-site.js";
import { newId } from "./ids.js";
import { errorMessage, errorTypeName } from "./providers/errors.js";
import { checkResponse } from "./providers/shape.js";
import { sanitize } from "./sanitize.js";
import type { ChatMessage, LlmRequest, LlmResponse, Provider } from "./types.js";
import type { MiddlewareEngine } from "../runtime/middleware.js";

export interface LlmOverrides {
  provider?: string;
  model?: string;
  temperature?: number;
  max_tokens?: number;
  /** Seconds. */
  timeout?: number;
  agent_id?: string;
  profile?: string;
  purpose?: string;
}

export interface StructuredArgs extends LlmOverrides {
  instructions: string;
  input: unknown[] | string;
  json_schema?: Record<string, unknown>;
  json_mode?: boolean;
  schema_name?: string;
  system_prompt?: string;
}

export interface LlmResult {
  text: string;
  provider: string;
  model: string;
  agent_id: string;
  usage: {
    input_tokens: number;
    output_tokens: number;
    total_tokens: number;
    cache_read_tokens: number;
    cache_write_tokens: number;
    cost_usd?: number;
  };
  audit: { plugin_id: string; purpose: string | null; profile: string | null; schema_name?: string | null };
}

export interface StructuredResult extends LlmResult {
  parsed: unknown;
  content_type: "json" | "text";
}

export interface PluginLlmDeps {
  pluginKey: string;
  provider: () => Provider;
  hooks: HookSite;
  middleware: MiddlewareEngine;
  log: Logger;
  /** Capability granted in the lock. */
  granted: (cap: string) => boolean;
  /** `plugins.entries.<key>` (legacy `llm.allow_*` keys and the allowed_* lists). */
  entry: () => Record<string, unknown>;
  ids: () => { session_id: string | null; task_id: string | null; turn_id: string | null };
  platform: string;
  /** The `aux_task` hooks see; `plugin_llm:<key>` unless the host makes the call (`compression`). */
  auxTask?: string;
}

const GATES = {
  provider: { cap: "llm.provider_override", legacy: "allow_provider_override", list: "allowed_providers" },
  model: { cap: "llm.model_override", legacy: "allow_model_override", list: "allowed_models" },
  agent_id: { cap: "llm.agent_id_override", legacy: "allow_agent_id_override", list: undefined },
  profile: { cap: "llm.profile_override", legacy: "allow_profile_override", list: undefined },
} as const;

function trustError(message: string): HermesError {
  const e = new HermesError("E_AGENT_LLM_TRUST", { message });
  e.name = "PermissionError";
  return e;
}

function invalid(message: string): HermesError {
  const e = new HermesError("E_AGENT_LLM_INVALID", { message });
  e.name = "ValueError";
  return e;
}

let ajv: Ajv2020 | undefined;

/**
 * `ctx.llm`: one host-owned completion with the user's provider and model.
 * Overrides of provider, model, agent id and profile pass only with the matching `llm.*_override`
 * capability (or its legacy `llm.allow_*` key) and, where given, the `allowed_*` list; a refusal
 * throws PermissionError (E_AGENT_LLM_TRUST). Calls are auxiliary: they fire pre/post_auxiliary_call,
 * never the api_request hooks, and run through the same llm_request/llm_execution chains.
 */
export class PluginLlm {
  constructor(private readonly d: PluginLlmDeps) {}

  private gate(o: LlmOverrides, host: Provider): void {
    const entry = this.d.entry();
    const llm = (entry.llm && typeof entry.llm === "object" ? entry.llm : {}) as Record<string, unknown>;
    const check = (what: keyof typeof GATES, value: string | undefined, same: boolean) => {
      if (value === undefined || value === null || same) return;
      const g = GATES[what];
      if (!this.d.granted(g.cap) && llm[g.legacy] !== true) {
        throw trustError(
          `Plugin '${this.d.pluginKey}' may not override the ${what} of host LLM calls ('${value}'): ` +
            `grant ${g.cap} (hermes plugins enable ${this.d.pluginKey} --grant ${g.cap})`,
        );
      }
      if (g.list && Array.isArray(llm[g.list])) {
        const allowed = (llm[g.list] as unknown[]).map((x) => String(x).trim().toLowerCase());
        if (!allowed.includes("*") && !allowed.includes(String(value).trim().toLowerCase())) {
          throw trustError(
            `Plugin '${this.d.pluginKey}' may not use ${what} '${value}': not in ` +
              `plugins.entries.${this.d.pluginKey}.llm.${g.list}`,
          );
        }
      }
    };
    check("provider", o.provider, o.provider !== undefined && o.provider.trim().toLowerCase() === host.name);
    check("model", o.model, o.model === host.model);
    check("agent_id", o.agent_id, o.agent_id === "default");
    check("profile", o.profile, false);
  }

  async complete(messages: ChatMessage[], o: LlmOverrides = {}): Promise<LlmResult> {
    if (!Array.isArray(messages) || !messages.length)
      throw invalid("ctx.llm.complete needs a non-empty list of messages");
    for (const [i, m] of messages.entries()) {
      if (
        !m ||
        typeof m !== "object" ||
        typeof m.role !== "string" ||
        (typeof m.content !== "string" && m.content !== null)
      )
        throw invalid(`ctx.llm.complete: messages[${i}] must be {role, content}`);
    }
    return this.run(messages, o, {}, null);
  }

  async complete_structured(a: StructuredArgs): Promise<StructuredResult> {
    if (!a || typeof a.instructions !== "string" || !a.instructions.trim())
      throw invalid("ctx.llm.complete_structured needs non-empty instructions");
    const input = Array.isArray(a.input) ? a.input : typeof a.input === "string" ? [a.input] : [];
    if (!input.length || input.every((x) => typeof x === "string" && !x.trim()))
      throw invalid("ctx.llm.complete_structured needs non-empty input");
    const items = input.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join("\n");
    const schemaText = a.json_schema
      ? "\n\nReply with one JSON value that matches this JSON schema, and nothing " +
        `else:\n${JSON.stringify(a.json_schema)}`
      : a.json_mode
        ? "\n\nReply with JSON only."
        : "";
    const messages: ChatMessage[] = [
      { role: "system", content: a.system_prompt ?? "Follow the instructions exactly." },
      { role: "user", content: `${a.instructions.trim()}\n\nInput:\n${items}${schemaText}` },
    ];
    const extra: Partial<LlmRequest> = a.json_schema
      ? {
          response_format: {
            type: "json_schema",
            json_schema: { name: a.schema_name ?? "result", schema: a.json_schema },
          },
        }
      : a.json_mode
        ? { response_format: { type: "json_object" } }
        : {};
    const r = await this.run(messages, a, extra, a.schema_name ?? null);
    const text = r.text
      .trim()
      .replace(/^```(?:json)?\s*\n?/i, "")
      .replace(/\n?```\s*$/, "");
    let parsed: unknown;
    let isJson = false;
    try {
      parsed = JSON.parse(text);
      isJson = true;
    } catch {
      parsed = null;
    }
    if ((a.json_schema || a.json_mode) && !isJson)
      throw invalid(
        `ctx.llm.complete_structured: the model's reply is not JSON: ${JSON.stringify(r.text.slice(0, 200))}`,
      );
    if (a.json_schema) {
      // A plugin's own schema is compiled here; Ajv's compiler is loaded only when one is given.
      ajv ??= new (await import("ajv/dist/2020.js")).Ajv2020({ strict: false, allErrors: true });
      let validate;
      try {
        validate = ajv.compile(a.json_schema);
      } catch (e) {
        throw invalid(`ctx.llm.complete_structured: json_schema is not a valid JSON schema: ${(e as Error).message}`);
      }
      if (!validate(parsed)) {
        const errs = (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
        throw invalid(`ctx.llm.complete_structured: the reply does not match the schema: ${errs}`);
      }
    }
    return {
      ...r,
      parsed,
      content_type: isJson ? "json" : "text",
      audit: { ...r.audit, schema_name: a.schema_name ?? null },
    };
  }

  acomplete(messages: ChatMessage[], o: LlmOverrides = {}): Promise<LlmResult> {
    return this.complete(messages, o);
  }

  acomplete_structured(a: StructuredArgs): Promise<StructuredResult> {
    return this.complete_structured(a);
  }

  /** The host provider, refusing another provider's name, switched to the requested model. */
  private chooseProvider(o: LlmOverrides): Provider {
    const host = this.d.provider();
    this.gate(o, host);
    if (o.provider !== undefined && o.provider.trim().toLowerCase() !== host.name) {
      throw new HermesError("E_PROVIDER_CONFIG", {
        message:
          `ctx.llm: provider '${o.provider}' is not configured in this session (the host provider ` +
          `is ${host.name})`,
      });
    }
    return o.model && o.model !== host.model ? host.withModel(o.model) : host;
  }

  private async run(
    messages: ChatMessage[],
    o: LlmOverrides,
    extra: Partial<LlmRequest>,
    schemaName: string | null,
  ): Promise<LlmResult> {
    const provider = this.chooseProvider(o);
    const aux = auxContext(this.d, provider);
    const request = auxRequest(provider, messages, o, extra);
    const mw = await this.d.middleware.applyRequest("llm_request", request, { ...aux }).catch((e) => {
      this.d.log.warn(
        `llm_request middleware failed for a ctx.llm call (${errorMessage(e)}); the unmodified request is sent`,
      );
      return { payload: request, trace: [] };
    });
    const eff = mw.payload;
    const chars = JSON.stringify(eff.messages ?? []).length;
    const started_at = Date.now() / 1000;
    const timing = () => {
      const ended_at = Date.now() / 1000;
      return { api_duration: ended_at - started_at, started_at, ended_at };
    };
    await this.d.hooks.observe("pre_auxiliary_call", preCallPayload(aux, eff, chars, started_at));
    const ctl = new AbortController();
    const timer = setTimeout(
      () => ctl.abort(),
      (typeof o.timeout === "number" && o.timeout > 0 ? o.timeout : 120) * 1000,
    );
    try {
      const raw = await this.d.middleware.runExecution(
        "llm_execution",
        eff,
        (r: LlmRequest) => provider.complete(r, { signal: ctl.signal }),
        { ...aux, original_request: request },
      );
      const res = checkResponse(raw, provider.name);
      const msg = res.choices[0]!.message;
      await this.d.hooks.observe("post_auxiliary_call", {
        ...aux,
        ...timing(),
        finish_reason: res.choices[0]!.finish_reason,
        response_model: res.model,
        usage: res.usage ?? null,
        response: sanitize(res),
        assistant_content_chars: msg.content?.length ?? 0,
        assistant_tool_call_count: msg.tool_calls?.length ?? 0,
        error: null,
        error_type: null,
      });
      return llmResult(res, provider, {
        plugin_id: this.d.pluginKey,
        purpose: o.purpose ?? null,
        profile: o.profile ?? null,
        ...(schemaName !== null ? { schema_name: schemaName } : {}),
      });
    } catch (e) {
      await this.d.hooks.observe("post_auxiliary_call", {
        ...aux,
        ...timing(),
        error: errorMessage(e),
        error_type: errorTypeName(e),
      });
      this.d.log.warn({ plugin: this.d.pluginKey }, `ctx.llm call failed: ${errorMessage(e)}`);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The fields every hook and middleware call of one ctx.llm request carries. */
function auxContext(d: PluginLlmDeps, provider: Provider) {
  const ids = d.ids();
  const api_request_id = newId("aux");
  return {
    aux_task: d.auxTask ?? `plugin_llm:${d.pluginKey}`,
    ...ids,
    platform: d.platform,
    api_request_id,
    api_call_count: 1,
    retry_count: 0,
    streaming: false,
    model: provider.model,
    provider: provider.name,
    base_url: provider.baseUrl,
    api_mode: provider.apiMode,
  };
}

/** The pre_auxiliary_call payload: the request as middleware left it, sanitized, and its size. */
function preCallPayload(aux: ReturnType<typeof auxContext>, eff: LlmRequest, chars: number, started_at: number) {
  return {
    ...aux,
    request_messages: sanitize(eff.messages),
    system_prompt: eff.messages?.find((m) => m.role === "system")?.content ?? null,
    message_count: eff.messages?.length ?? 0,
    tool_count: 0,
    approx_input_tokens: Math.ceil(chars / 4),
    request_char_count: chars,
    max_tokens: eff.max_tokens ?? null,
    started_at,
    request: sanitize(eff),
  };
}

/** The request a plugin's call sends: never streamed, with only the overrides it set. */
function auxRequest(
  provider: Provider,
  messages: ChatMessage[],
  o: LlmOverrides,
  extra: Partial<LlmRequest>,
): LlmRequest {
  return {
    model: provider.model,
    messages: structuredClone(messages),
    stream: false,
    ...(typeof o.temperature === "number" ? { temperature: o.temperature } : {}),
    ...(typeof o.max_tokens === "number" ? { max_tokens: o.max_tokens } : {}),
    ...(typeof o.timeout === "number" && o.timeout > 0 ? { timeout: o.timeout } : {}),
    ...extra,
  };
}

function llmResult(res: LlmResponse, provider: Provider, audit: LlmResult["audit"]): LlmResult {
  const msg = res.choices[0]!.message;
  const u = res.usage ?? {};
  const input_tokens = Number(u.prompt_tokens ?? 0);
  const output_tokens = Number(u.completion_tokens ?? 0);
  return {
    text: msg.content ?? "",
    provider: provider.name,
    model: res.model || provider.model,
    agent_id: "default",
    usage: {
      input_tokens,
      output_tokens,
      total_tokens: Number(u.total_tokens ?? input_tokens + output_tokens),
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    },
    audit,
  };
}

/** camelCase aliases, as on ctx. */
for (const [snake, camel] of [
  ["complete_structured", "completeStructured"],
  ["acomplete_structured", "acompleteStructured"],
] as const) {
  Object.defineProperty(PluginLlm.prototype, camel, Object.getOwnPropertyDescriptor(PluginLlm.prototype, snake)!);
}
