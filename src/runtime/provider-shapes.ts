import type { ProviderKind } from "./registries.js";

/** What `image_generate` passes to an image provider's `generate(prompt, options)`. */
export interface ImageGenOptions {
  aspect_ratio: "landscape" | "square" | "portrait";
  image_url?: string;
  reference_image_urls?: string[];
  /** `image_gen.model` when the config sets it. */
  model?: string;
  signal: AbortSignal;
}

/** What `video_generate` passes to a video provider's `generate(prompt, options)`. */
export interface VideoGenOptions {
  image_url?: string;
  reference_image_urls?: string[];
  duration?: number;
  aspect_ratio?: string;
  resolution?: string;
  negative_prompt?: string;
  audio?: boolean;
  seed?: number;
  /** `video_gen.model` when the config sets it. */
  model?: string;
  signal: AbortSignal;
}

/**
 * A generation result: a path or URL, or the original's response dict (`success`, `image` / `video`,
 * `model`, `prompt`, `aspect_ratio`, `provider`, … or `success: false` with `error`, `error_type`).
 */
export type GenerationResult = string | Record<string, unknown>;

/** `ctx.register_image_gen_provider(p)`: selected by `image_gen.provider`. */
export interface ImageGenProvider {
  name: string;
  /** Sync and cheap; false hides `image_generate` from the model. */
  is_available?: () => boolean;
  generate: (prompt: string, options: ImageGenOptions) => GenerationResult | Promise<GenerationResult>;
}

/** `ctx.register_video_gen_provider(p)`: selected by `video_gen.provider`. */
export interface VideoGenProvider {
  name: string;
  is_available?: () => boolean;
  generate: (prompt: string, options: VideoGenOptions) => GenerationResult | Promise<GenerationResult>;
}

/** What one command run through a terminal environment returns. */
export interface TerminalExecuteResult {
  output: string;
  exit_code: number | null;
}

/** An environment a terminal provider created for one command. */
export interface TerminalEnvironment {
  execute: (
    command: string,
    options: { cwd: string | null; timeout: number; signal: AbortSignal },
  ) => TerminalExecuteResult | Promise<TerminalExecuteResult>;
  cleanup?: () => unknown;
}

/** `ctx.register_terminal_environment_provider(p)`: selected by `terminal.backend`. */
export interface TerminalEnvironmentProvider {
  name: string;
  is_available?: () => boolean;
  create_environment: (opts: {
    cwd: string;
    timeout: number;
    task_id: string | null;
  }) => TerminalEnvironment | Promise<TerminalEnvironment>;
}

/** What `ctx.register_tts_provider(p)` takes; `tts.provider` selects it by its (lowercased) name. */
export interface TtsProvider {
  name: string;
  display_name?: string;
  /** Sync and cheap; false hides text_to_speech from the model. */
  is_available?: () => boolean;
  /** Write audio to `output_path`; return the path written (another one if it chose another name). */
  synthesize: (
    text: string,
    output_path: string,
    options: { format: string; signal: AbortSignal },
  ) => string | undefined | Promise<string | undefined>;
}

/** What `transcribe(file_path, options)` of a transcription provider may return. */
export type TranscribeResult = string | { success?: boolean; transcript?: string; error?: string };

/** What `ctx.register_transcription_provider(p)` takes; `stt.provider` selects it. */
export interface TranscriptionProvider {
  name: string;
  display_name?: string;
  is_available?: () => boolean;
  transcribe: (
    file_path: string,
    options: { model?: string; language?: string; prompt?: string; signal: AbortSignal },
  ) => TranscribeResult | Promise<TranscribeResult>;
}

/** The method each kind the agent calls cannot run without; a registration lacking it is refused. */
const REQUIRED_METHOD: Partial<Record<ProviderKind, string>> = {
  image_gen: "generate",
  video_gen: "generate",
  terminal_environment: "create_environment",
  tts: "synthesize",
  transcription: "transcribe",
};

/** Names the kit runs itself: a plugin may not take them (`terminal.backend: local` is the built-in terminal). */
const RESERVED_NAMES: Partial<Record<ProviderKind, readonly string[]>> = {
  terminal_environment: ["local"],
  transcription: ["local_command"],
};

/** Why a registration of `kind` named `name` is refused, or undefined when it is fine. */
export function providerShapeProblem(kind: ProviderKind, name: string, provider: unknown): string | undefined {
  if (RESERVED_NAMES[kind]?.includes(name)) return `'${name}' is the built-in ${kind} name`;
  const method = REQUIRED_METHOD[kind];
  if (method && typeof (provider as Record<string, unknown>)[method] !== "function")
    return `the provider needs a ${method}() method`;
  return undefined;
}

/**
 * `is_available()` of a provider: absent means available, a plain value counts as it is; a throw, a
 * promise or a falsy answer means not (it runs when the tool list is built, so it must be sync).
 */
export function providerAvailable(provider: unknown): boolean {
  const fn = (provider as { is_available?: unknown }).is_available;
  if (fn === undefined) return true;
  if (typeof fn !== "function") return Boolean(fn);
  try {
    const r = (fn as () => unknown).call(provider);
    if (r && typeof (r as { then?: unknown }).then === "function") return false;
    return Boolean(r);
  } catch {
    return false;
  }
}
