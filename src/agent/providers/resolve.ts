import { isAbsolute, resolve } from "node:path";
import { HermesError } from "../../core/errors.js";
import { didYouMean } from "../../core/suggest.js";
import { PROVIDER_NAMES } from "../../config/model-providers.js";
import type { Provider } from "../types.js";
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

/**
 * The host's provider: command-line flags first, then config.yaml's `model:` section. `--script`
 * alone means scripted, `--base-url` alone means openai-compatible. Every missing or wrong
 * setting is a refusal naming the flag and the config key.
 */
export async function resolveProvider(
  flags: ProviderFlags,
  config: Record<string, unknown>,
  opts: { home: string; env?: NodeJS.ProcessEnv },
): Promise<Provider> {
  const env = opts.env ?? process.env;
  const m = modelSettings(config);
  const name = (
    str(flags.provider) ??
    (flags.script ? "scripted" : flags.baseUrl ? "openai-compatible" : m.provider) ??
    (m.script ? "scripted" : m.base_url ? "openai-compatible" : undefined)
  )?.toLowerCase();
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
  if (name === "openai-compatible" || name === "openai" || name === "custom") {
    const baseUrl = str(flags.baseUrl) ?? m.base_url;
    if (!baseUrl)
      throw new HermesError("E_PROVIDER_CONFIG", {
        message:
          "openai-compatible needs a base URL: pass --base-url URL (e.g. http://127.0.0.1:8080/v1) or set " +
          "model.base_url",
        path: "model.base_url",
      });
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new HermesError("E_PROVIDER_CONFIG", {
        message: `the base URL ${JSON.stringify(baseUrl)} is not a URL`,
        path: "model.base_url",
      });
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new HermesError("E_PROVIDER_CONFIG", {
        message: `the base URL must be http:// or https:// (got ${url.protocol})`,
        path: "model.base_url",
      });
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
  throw new HermesError("E_PROVIDER_CONFIG", {
    message: `unknown provider '${name}'${didYouMean(name, PROVIDER_NAMES)} (available: ${PROVIDER_NAMES.join(", ")})`,
    path: "model.provider",
  });
}
