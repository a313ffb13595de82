import { isAbsolute, resolve } from "node:path";
import { HermesError } from "../../core/errors.js";
import { didYouMean } from "../../core/suggest.js";
import { ACCEPTED_PROVIDERS, PROVIDER_NAMES } from "../../config/model-providers.js";
import { profileEnv, type ModelProviderProfile } from "../../runtime/model-profile.js";
import type { Provider } from "../types.js";
import { ProviderError } from "./errors.js";
import { OpenAiCompatibleProvider } from "./openai-compatible.js";
import { loadScript, ScriptedProvider } from "./scripted.js";

export { PROVIDER_NAMES } from "../../config/model-providers.js";

export interface ProviderFlags {
  provider?: string;
  baseUrl?: string;
  model?: string;
  script?: string;
  /** false: never stream (--no-stream). */
  stream?: boolean;
  /** Seconds. */
  timeout?: number;
}

export interface ModelSettings {
  provider?: string;
  base_url?: string;
  default?: string;
  api_key_env?: string;
  script?: string;
  timeout?: number;
  stream?: boolean;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() ? v.trim() : undefined;
}

/** config.yaml `model:` is either a model name or a mapping {provider, base_url, default, api_key_env, …}. */
export function modelSettings(config: Record<string, unknown>): ModelSettings {
  const m = config.model;
  if (typeof m === "string") return { default: str(m) };
  if (!m || typeof m !== "object" || Array.isArray(m)) return {};
  const o = m as Record<string, unknown>;
  return {
    provider: str(o.provider),
    base_url: str(o.base_url),
    default: str(o.default) ?? str(o.model) ?? str(o.name),
    api_key_env: str(o.api_key_env),
    script: str(o.script),
    timeout: typeof o.timeout === "number" && o.timeout > 0 ? o.timeout : undefined,
    stream: typeof o.stream === "boolean" ? o.stream : undefined,
  };
}

export interface ResolveOptions {
  home: string;
  env?: NodeJS.ProcessEnv;
  /** Profiles model-provider plugins registered (the runtime's `model` providers). */
  profiles?: readonly ModelProviderProfile[];
}

/**
 * The provider name the flags and config.yaml select, lower-case: `--provider`, else `--script` (scripted)
 * or `--base-url` (openai-compatible), else `model.provider`, `model.script`, `model.base_url`.
 */
export function selectedProvider(flags: ProviderFlags, config: Record<string, unknown>): string | undefined {
  const m = modelSettings(config);
  return (
    str(flags.provider) ??
    (flags.script ? "scripted" : flags.baseUrl ? "openai-compatible" : m.provider) ??
    (m.script ? "scripted" : m.base_url ? "openai-compatible" : undefined)
  )?.toLowerCase();
}

/** A name the agent resolves without plugins (the rest can only be a model-provider plugin's profile). */
export function isBuiltinProvider(name: string): boolean {
  return ACCEPTED_PROVIDERS.includes(name);
}

/** An http(s) base URL, or a refusal naming where it came from. */
function checkedBaseUrl(baseUrl: string, path: string, what = "the base URL"): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new HermesError("E_PROVIDER_CONFIG", { message: `${what} ${JSON.stringify(baseUrl)} is not a URL`, path });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new HermesError("E_PROVIDER_CONFIG", {
      message: `${what} must be http:// or https:// (got ${url.protocol})`,
      path,
    });
  return baseUrl;
}

/**
 * The host's provider: command-line flags first, then config.yaml's `model:` section, then the profiles
 * model-provider plugins registered. `--script` alone means scripted, `--base-url` alone means
 * openai-compatible. Every missing or wrong setting is a refusal naming the flag and the config key.
 */
export async function resolveProvider(
  flags: ProviderFlags,
  config: Record<string, unknown>,
  opts: ResolveOptions,
): Promise<Provider> {
  const env = opts.env ?? process.env;
  const m = modelSettings(config);
  const name = selectedProvider(flags, config);
  if (!name) throw new HermesError("E_AGENT_NO_PROVIDER");
  const stream = flags.stream === false ? false : (m.stream ?? true);
  if (name === "scripted") {
    const file =
      flags.script ?? (m.script ? (isAbsolute(m.script) ? m.script : resolve(opts.home, m.script)) : undefined);
    if (!file)
      throw new HermesError("E_PROVIDER_CONFIG", {
        message: "the scripted provider needs a script: pass --script FILE (or set model.script in config.yaml)",
        path: "model.script",
      });
    const script = await loadScript(file);
    return new ScriptedProvider(script, str(flags.model) ?? script.model, { stream });
  }
  if (name === "openai-compatible" || name === "openai" || name === "custom")
    return openAiCompatible(flags, m, env, stream);
  const profile = opts.profiles?.find((p) => p.name === name);
  if (profile) return profileProvider(profile, flags, m, env, stream);
  const names = [...PROVIDER_NAMES, ...(opts.profiles ?? []).map((p) => p.name)];
  const listed = [
    ...PROVIDER_NAMES,
    ...(opts.profiles ?? []).map((p) => (p.display_name !== p.name ? `${p.name} (${p.display_name})` : p.name)),
  ];
  throw new HermesError("E_PROVIDER_CONFIG", {
    message: `unknown provider '${name}'${didYouMean(name, names)} (available: ${listed.join(", ")})`,
    path: "model.provider",
  });
}

function openAiCompatible(flags: ProviderFlags, m: ModelSettings, env: NodeJS.ProcessEnv, stream: boolean): Provider {
  const baseUrl = str(flags.baseUrl) ?? m.base_url;
  if (!baseUrl)
    throw new HermesError("E_PROVIDER_CONFIG", {
      message:
        "openai-compatible needs a base URL: pass --base-url URL (e.g. http://127.0.0.1:8080/v1) or set " +
        "model.base_url",
      path: "model.base_url",
    });
  checkedBaseUrl(baseUrl, "model.base_url");
  const model = str(flags.model) ?? m.default;
  if (!model)
    throw new HermesError("E_PROVIDER_CONFIG", {
      message: "openai-compatible needs a model name: pass --model NAME or set model.default",
      path: "model.default",
    });
  let apiKey: string | undefined;
  if (m.api_key_env) {
    apiKey = env[m.api_key_env];
    if (!apiKey)
      throw new HermesError("E_PROVIDER_NO_KEY", {
        message: `model.api_key_env names ${m.api_key_env}, which is not set`,
        path: "model.api_key_env",
      });
  } else apiKey = env.OPENAI_API_KEY || undefined;
  return new OpenAiCompatibleProvider({ baseUrl, model, apiKey, timeoutSeconds: flags.timeout ?? m.timeout, stream });
}

/**
 * A plugin's profile as a chat-completions client. `--base-url` / `model.base_url`, then the profile's
 * `*_BASE_URL` variable, then its base_url; `--model` / `model.default`, then its first fallback model;
 * the key from `model.api_key_env` or the profile's env_vars, read at every call.
 */
function profileProvider(
  profile: ModelProviderProfile,
  flags: ProviderFlags,
  m: ModelSettings,
  env: NodeJS.ProcessEnv,
  stream: boolean,
): Provider {
  const { keyVars, baseUrlVar } = profileEnv(profile);
  const fromEnv = baseUrlVar ? str(env[baseUrlVar]) : undefined;
  const override = str(flags.baseUrl) ?? m.base_url;
  const baseUrl = checkedBaseUrl(
    override ?? fromEnv ?? profile.base_url,
    "model.base_url",
    !override && fromEnv ? `the base URL in ${baseUrlVar}` : undefined,
  );
  const model = str(flags.model) ?? m.default ?? profile.fallback_models[0];
  if (!model)
    throw new HermesError("E_PROVIDER_CONFIG", {
      message: `provider '${profile.name}' lists no models: pass --model NAME or set model.default`,
      path: "model.default",
    });
  const vars = m.api_key_env ? [m.api_key_env] : keyVars;
  const apiKey = vars.length
    ? () => {
        for (const v of vars) if (env[v]) return env[v];
        throw new ProviderError(
          "no_key",
          `provider '${profile.name}' needs an API key: set ${vars.join(" or ")} in the environment`,
        );
      }
    : undefined;
  return new OpenAiCompatibleProvider({
    name: profile.name,
    baseUrl,
    model,
    ...(apiKey ? { apiKey } : {}),
    headers: profile.default_headers,
    timeoutSeconds: flags.timeout ?? m.timeout,
    stream,
  });
}
