import { providerAvailable, type TranscriptionProvider, type TtsProvider } from "../../runtime/provider-shapes.js";
import { type ProviderRegistry, selectedName } from "../../runtime/registries.js";

/** `stt.provider: local_command` runs `HERMES_LOCAL_STT_COMMAND`, as the original's built-in of that name. */
export const LOCAL_COMMAND = "local_command";
export const LOCAL_STT_ENV = "HERMES_LOCAL_STT_COMMAND";

export const TTS_FORMATS = ["mp3", "wav", "ogg", "flac", "m4a", "aac", "amr", "opus"] as const;
export const STT_FORMATS = ["txt", "json", "srt", "vtt"] as const;

/** One `tts.providers.<name>` or `stt.providers.<name>` entry with a command. */
export interface CommandProviderConfig {
  name: string;
  command: string;
  /** TTS: the audio format; STT: the transcript format. */
  format: string;
  timeoutSeconds: number;
  voice: string;
  model: string;
  language: string;
  envPassthrough: string[];
}

export type TtsChoice =
  | { kind: "command"; name: string; cfg: CommandProviderConfig }
  | { kind: "plugin"; name: string; provider: TtsProvider };

export type SttChoice =
  | { kind: "local_command"; name: typeof LOCAL_COMMAND; template: string; language: string }
  | { kind: "command"; name: string; cfg: CommandProviderConfig }
  | { kind: "plugin"; name: string; provider: TranscriptionProvider; language: string };

/** A choice, or why there is none (the tool is then not offered, and a call says this). */
export type Resolved<T> = { choice: T } | { problem: string };

function section(config: Record<string, unknown>, key: "tts" | "stt"): Record<string, unknown> {
  const v = config[key];
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

const str = (v: unknown): string => (typeof v === "string" ? v.trim() : "");

/** The `providers.<name>` entry (name compared lowercased) with a non-empty command, if any. */
function commandEntry(
  config: Record<string, unknown>,
  key: "tts" | "stt",
  name: string,
): Record<string, unknown> | undefined {
  const providers = section(config, key).providers;
  if (!providers || typeof providers !== "object" || Array.isArray(providers)) return undefined;
  for (const [k, v] of Object.entries(providers as Record<string, unknown>)) {
    if (k.trim().toLowerCase() !== name || !v || typeof v !== "object" || Array.isArray(v)) continue;
    const entry = v as Record<string, unknown>;
    return str(entry.command) ? entry : undefined;
  }
  return undefined;
}

function commandConfig(
  name: string,
  entry: Record<string, unknown>,
  kind: "tts" | "stt",
  sttLanguage: string,
): CommandProviderConfig {
  const formats: readonly string[] = kind === "tts" ? TTS_FORMATS : STT_FORMATS;
  const fmt = str(kind === "tts" ? entry.output_format : entry.format).toLowerCase();
  const t = entry.timeout;
  return {
    name,
    command: str(entry.command),
    format: formats.includes(fmt) ? fmt : formats[0]!,
    timeoutSeconds: typeof t === "number" && Number.isFinite(t) && t > 0 ? t : kind === "tts" ? 120 : 300,
    voice: str(entry.voice),
    model: str(entry.model),
    language: str(entry.language) || sttLanguage || "en",
    envPassthrough: Array.isArray(entry.env_passthrough)
      ? entry.env_passthrough.filter((x): x is string => typeof x === "string" && x.length > 0)
      : [],
  };
}

/** Registered names of a kind, for "did you mean" style messages. */
function registered(providers: ProviderRegistry, kind: "tts" | "transcription"): string {
  const names = providers.list(kind).map((p) => p.name);
  return names.length ? names.join(", ") : "none";
}

/**
 * The TTS backend `tts.provider` names: a `tts.providers.<name>` command first (config is more local
 * than a plugin install), then a plugin-registered provider.
 */
export function resolveTts(config: Record<string, unknown>, providers: ProviderRegistry): Resolved<TtsChoice> {
  const name = selectedName("tts", config);
  if (!name) return { problem: "tts.provider is not set in config.yaml" };
  const entry = commandEntry(config, "tts", name);
  if (entry) return { choice: { kind: "command", name, cfg: commandConfig(name, entry, "tts", "") } };
  const plugin = providers.list("tts").find((p) => p.name === name);
  if (plugin) {
    if (!providerAvailable(plugin.provider))
      return { problem: `the TTS provider '${name}' (plugin ${plugin.plugin_key}) reports it is not available` };
    return { choice: { kind: "plugin", name, provider: plugin.provider as TtsProvider } };
  }
  return {
    problem:
      `tts.provider '${name}' names no tts.providers.${name}.command and no plugin registered a TTS provider ` +
      `of that name (registered: ${registered(providers, "tts")})`,
  };
}

/**
 * The STT backend `stt.provider` names: the built-in `local_command` (HERMES_LOCAL_STT_COMMAND), then a
 * `stt.providers.<name>` command, then a plugin. With no `stt.provider` at all and
 * HERMES_LOCAL_STT_COMMAND set, local_command is used, as the original's auto-detection does.
 */
export function resolveStt(
  config: Record<string, unknown>,
  providers: ProviderRegistry,
  env: NodeJS.ProcessEnv,
): Resolved<SttChoice> {
  const language = str(section(config, "stt").language);
  const localTemplate = str(env[LOCAL_STT_ENV]);
  const name = selectedName("transcription", config) || (localTemplate ? LOCAL_COMMAND : "");
  if (!name) return { problem: `stt.provider is not set in config.yaml (nor ${LOCAL_STT_ENV} in the environment)` };
  if (name === LOCAL_COMMAND) {
    if (!localTemplate) return { problem: `stt.provider is local_command but ${LOCAL_STT_ENV} is not set` };
    return { choice: { kind: "local_command", name: LOCAL_COMMAND, template: localTemplate, language } };
  }
  const entry = commandEntry(config, "stt", name);
  if (entry) return { choice: { kind: "command", name, cfg: commandConfig(name, entry, "stt", language) } };
  const plugin = providers.list("transcription").find((p) => p.name === name);
  if (plugin) {
    if (!providerAvailable(plugin.provider))
      return { problem: `the STT provider '${name}' (plugin ${plugin.plugin_key}) reports it is not available` };
    return { choice: { kind: "plugin", name, provider: plugin.provider as TranscriptionProvider, language } };
  }
  return {
    problem:
      `stt.provider '${name}' names no stt.providers.${name}.command and no plugin registered a transcription ` +
      `provider of that name (registered: ${registered(providers, "transcription")})`,
  };
}

/** `stt.prompt`: the static vocabulary hint pre_transcription sees and plugin providers receive. */
export function sttPrompt(config: Record<string, unknown>): string | null {
  const p = section(config, "stt").prompt;
  return typeof p === "string" && p ? p : null;
}

/** `tts.pre_synthesis.required_plugins`: plugin keys whose pre_tts_synthesis hook must be registered. */
export function requiredPolicyPlugins(config: Record<string, unknown>): string[] {
  const pre = section(config, "tts").pre_synthesis;
  const list = pre && typeof pre === "object" ? (pre as Record<string, unknown>).required_plugins : undefined;
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === "string" && x.length > 0) : [];
}
