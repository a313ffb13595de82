/**
 * The model provider profile a plugin registers with `ctx.register_provider(profile)`: the original's
 * ProviderProfile fields the kit runs, checked at registration so nothing it cannot run is accepted.
 */
export interface ModelProviderProfile {
  /** The id `--provider` and `model.provider` select (lower-case). */
  name: string;
  /** The label in messages that list providers; the name when unset. */
  display_name: string;
  /** Default endpoint; a `*_BASE_URL` entry of env_vars that is set replaces it. */
  base_url: string;
  api_mode: "chat_completions";
  auth_type: "api_key";
  /** API-key variables in priority order, then optionally one `*_BASE_URL` variable. */
  env_vars: string[];
  default_headers: Record<string, string>;
  /** Models of the provider; the first is the default model when none is configured. */
  fallback_models: string[];
}

/** The ids hermes-kit's agent owns itself; a profile cannot take one. */
export const BUILTIN_MODEL_PROVIDERS = ["openai-compatible", "scripted", "openai", "custom"] as const;

const FIELDS = [
  "name",
  "display_name",
  "base_url",
  "api_mode",
  "auth_type",
  "env_vars",
  "default_headers",
  "fallback_models",
];
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

type Checked = { profile: ModelProviderProfile } | { problem: string };

function stringList(v: unknown, field: string, re?: RegExp): string[] | string {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string" || !x.trim()))
    return `${field} must be a list of non-empty strings`;
  const out = v.map((x: string) => x.trim());
  const bad = re ? out.find((x) => !re.test(x)) : undefined;
  return bad === undefined ? out : `${field}: '${bad}' is not an environment variable name`;
}

function headers(v: unknown): Record<string, string> | string {
  if (v === undefined) return {};
  if (!v || typeof v !== "object" || Array.isArray(v)) return "default_headers must be a mapping of header to value";
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (!HEADER_NAME.test(k)) return `default_headers: '${k}' is not an HTTP header name`;
    if (typeof val !== "string" || /[\r\n\0]/.test(val)) return `default_headers.${k} must be a string on one line`;
    out[k] = val;
  }
  return out;
}

function baseUrl(v: unknown): string {
  if (typeof v !== "string" || !v.trim()) return "";
  try {
    const u = new URL(v.trim());
    return u.protocol === "http:" || u.protocol === "https:" ? v.trim() : "";
  } catch {
    return "";
  }
}

function identity(p: Record<string, unknown>): { name: string; display_name: string } | string {
  const name = typeof p.name === "string" ? p.name.trim().toLowerCase() : "";
  if (!NAME.test(name)) return `name must match ${NAME.source} (got ${JSON.stringify(p.name ?? null)})`;
  if ((BUILTIN_MODEL_PROVIDERS as readonly string[]).includes(name))
    return `name '${name}' is a built-in provider of hermes-kit; pick another name`;
  if (p.display_name !== undefined && typeof p.display_name !== "string") return "display_name must be a string";
  return { name, display_name: (p.display_name as string | undefined)?.trim() || name };
}

/** The modes and auth types the kit has a client for; any other is refused, never ignored. */
function modes(p: Record<string, unknown>): string | undefined {
  const mode = p.api_mode ?? "chat_completions";
  if (mode !== "chat_completions")
    return (
      `api_mode '${String(mode)}' is not implemented by hermes-kit (only chat_completions, an ` +
      "OpenAI-compatible endpoint)"
    );
  const auth = p.auth_type ?? "api_key";
  if (auth !== "api_key") return `auth_type '${String(auth)}' is not implemented by hermes-kit (only api_key)`;
  return undefined;
}

/** Check a registered profile: every field the kit runs, and a refusal for any field it would not use. */
export function checkModelProfile(raw: unknown): Checked {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { problem: "the profile must be an object" };
  const p = raw as Record<string, unknown>;
  const unknown = Object.keys(p).filter((k) => !FIELDS.includes(k));
  if (unknown.length)
    return { problem: `${unknown.join(", ")}: not supported by hermes-kit (profile fields: ${FIELDS.join(", ")})` };
  const id = identity(p);
  if (typeof id === "string") return { problem: id };
  const mode = modes(p);
  if (mode) return { problem: mode };
  const base_url = baseUrl(p.base_url);
  if (!base_url) return { problem: "base_url must be an http:// or https:// URL" };
  const env_vars = stringList(p.env_vars, "env_vars", ENV_NAME);
  if (typeof env_vars === "string") return { problem: env_vars };
  const fallback_models = stringList(p.fallback_models, "fallback_models");
  if (typeof fallback_models === "string") return { problem: fallback_models };
  const default_headers = headers(p.default_headers);
  if (typeof default_headers === "string") return { problem: default_headers };
  return {
    profile: {
      ...id,
      base_url,
      api_mode: "chat_completions",
      auth_type: "api_key",
      env_vars,
      default_headers,
      fallback_models,
    },
  };
}

/** The variables of env_vars that carry the key, and the one that replaces the base URL, if any. */
export function profileEnv(p: ModelProviderProfile): { keyVars: string[]; baseUrlVar?: string } {
  const last = p.env_vars[p.env_vars.length - 1];
  const baseUrlVar = last?.endsWith("_BASE_URL") ? last : undefined;
  return { keyVars: p.env_vars.filter((v) => v !== baseUrlVar), ...(baseUrlVar ? { baseUrlVar } : {}) };
}
