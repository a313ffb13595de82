import { HermesError } from "../../core/errors.js";
import {
  type GenerationResult,
  type ImageGenProvider,
  providerAvailable,
  type VideoGenProvider,
} from "../../runtime/provider-shapes.js";
import { PROVIDER_KINDS, type ProviderRegistry, type ToolEntry } from "../../runtime/registries.js";

const ASPECT_RATIOS = ["landscape", "square", "portrait"] as const;

const REFERENCE_IMAGES = {
  type: "array",
  items: { type: "string" },
  description: "Style or composition reference images (URLs or absolute paths); the provider may ignore them",
};

export const IMAGE_GENERATE_SCHEMA = {
  name: "image_generate",
  description:
    "Generate an image from a text prompt, or edit an existing image when `image_url` is given. The backend and " +
    "model are the user's configuration, not your choice. On success the `image` field is an absolute file path " +
    "or a URL: name it in your answer so the user can open it.",
  parameters: {
    type: "object",
    properties: {
      prompt: { type: "string", description: "What the image should show; be detailed" },
      aspect_ratio: { type: "string", enum: [...ASPECT_RATIOS], description: "Shape of the image (default landscape)" },
      image_url: { type: "string", description: "An image to edit or transform (URL or absolute path)" },
      reference_image_urls: REFERENCE_IMAGES,
    },
    required: ["prompt"],
  },
};

export const VIDEO_GENERATE_SCHEMA = {
  name: "video_generate",
  description:
    "Generate a short video from a text prompt, or animate an image when `image_url` is given. The backend and " +
    "model are the user's configuration, not your choice; the provider clamps what it does not support. On " +
    "success the `video` field is an absolute file path or a URL: name it in your answer.",
  parameters: {
    type: "object",
    properties: {
      prompt: { type: "string", description: "What the video should show; be detailed" },
      image_url: { type: "string", description: "An image to animate (image-to-video); omit for text-to-video" },
      reference_image_urls: REFERENCE_IMAGES,
      duration: { type: "integer", description: "Length in seconds" },
      aspect_ratio: { type: "string", description: "e.g. 16:9, 9:16, 1:1" },
      resolution: { type: "string", description: "e.g. 480p, 720p, 1080p" },
      negative_prompt: { type: "string", description: "What to avoid" },
      audio: { type: "boolean", description: "Ask for native audio where the provider has it" },
      seed: { type: "integer", description: "For reproducible output" },
    },
    required: ["prompt"],
  },
};

type MediaKind = "image_gen" | "video_gen";

/** The options of a call: only what the model sent (wrong types dropped), plus the configured model. */
function generateOptions(kind: MediaKind, args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const str = (k: string) => {
    if (typeof args[k] === "string" && (args[k] as string).trim()) out[k] = (args[k] as string).trim();
  };
  str("image_url");
  if (Array.isArray(args.reference_image_urls))
    out.reference_image_urls = args.reference_image_urls.filter((u): u is string => typeof u === "string" && !!u);
  if (kind === "image_gen") {
    const a = args.aspect_ratio;
    out.aspect_ratio = ASPECT_RATIOS.includes(a as (typeof ASPECT_RATIOS)[number]) ? a : "landscape";
    return out;
  }
  for (const k of ["aspect_ratio", "resolution", "negative_prompt"]) str(k);
  for (const k of ["duration", "seed"]) if (Number.isInteger(args[k])) out[k] = args[k];
  if (typeof args.audio === "boolean") out.audio = args.audio;
  return out;
}

/** `image_gen.model` / `video_gen.model`, when set. */
function configuredModel(config: Record<string, unknown>, kind: MediaKind): string | undefined {
  const section = config[kind];
  const m = section && typeof section === "object" ? (section as Record<string, unknown>).model : undefined;
  return typeof m === "string" && m.trim() ? m.trim() : undefined;
}

/** The provider's answer as the result the model reads: a path or URL in `field`, or `success: false` and why. */
export function generationResponse(
  r: GenerationResult | unknown,
  field: "image" | "video",
  provider: string,
  prompt: string,
): Record<string, unknown> {
  const failure = (error: string, error_type = "provider_error", extra: Record<string, unknown> = {}) => ({
    ...extra,
    success: false,
    [field]: null,
    error,
    error_type,
    provider: typeof extra.provider === "string" ? extra.provider : provider,
  });
  if (typeof r === "string" && r.trim()) return { success: true, [field]: r.trim(), provider, prompt };
  if (!r || typeof r !== "object" || Array.isArray(r))
    return failure(`provider '${provider}' returned neither a path or URL nor a response object`);
  const o = r as Record<string, unknown>;
  if (o.success === false)
    return failure(
      typeof o.error === "string" && o.error ? o.error : `provider '${provider}' reported a failure`,
      typeof o.error_type === "string" && o.error_type ? o.error_type : "provider_error",
      o,
    );
  const value = o[field];
  if (typeof value !== "string" || !value.trim())
    return failure(`provider '${provider}' returned no '${field}' (a file path or URL)`, "provider_error", o);
  return { prompt, ...o, success: true, [field]: value.trim(), provider: o.provider ?? provider };
}

/** Settle with `p`, or reject as interrupted when `signal` aborts first. */
function unlessInterrupted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new HermesError("E_AGENT_INTERRUPTED", { message: "interrupted" }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(new HermesError("E_AGENT_INTERRUPTED", { message: "interrupted; the generation was abandoned" }));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export interface MediaToolDeps {
  providers: ProviderRegistry;
  config: () => Record<string, unknown>;
}

/** One generation tool: offered only while the provider its config key selects is registered and available. */
function mediaTool(kind: MediaKind, deps: MediaToolDeps): Omit<ToolEntry, "owner"> {
  const schema = kind === "image_gen" ? IMAGE_GENERATE_SCHEMA : VIDEO_GENERATE_SCHEMA;
  const field = kind === "image_gen" ? "image" : "video";
  const active = () => deps.providers.active(kind, deps.config());
  return {
    name: schema.name,
    toolset: kind,
    schema,
    requires_env: [],
    description: schema.description,
    emoji: kind === "image_gen" ? "🎨" : "🎬",
    check_fn: () => {
      const entry = active();
      return entry !== undefined && providerAvailable(entry.provider);
    },
    handler: async (args, extra) => {
      const prompt = typeof args.prompt === "string" ? args.prompt.trim() : "";
      if (!prompt) throw new HermesError("E_AGENT_TOOL_ARGS", { message: `${schema.name} needs a non-empty 'prompt'` });
      const entry = active();
      if (!entry)
        throw new HermesError("E_AGENT_TOOL_FAILED", {
          message: `no ${kind} provider is selected (${PROVIDER_KINDS[kind].select} names none that is registered)`,
        });
      const provider = entry.provider as ImageGenProvider | VideoGenProvider;
      const signal = extra.signal instanceof AbortSignal ? extra.signal : new AbortController().signal;
      const model = configuredModel(deps.config(), kind);
      const options = { ...generateOptions(kind, args), ...(model ? { model } : {}), signal };
      let r: unknown;
      try {
        const call = Promise.resolve().then(() => provider.generate(prompt, options as never));
        r = await unlessInterrupted(call, signal);
      } catch (e) {
        if (e instanceof HermesError && e.code === "E_AGENT_INTERRUPTED") throw e;
        const err = e as Error;
        return JSON.stringify(
          generationResponse(
            { success: false, error: err?.message ?? String(e), error_type: err?.name ?? "Error" },
            field,
            entry.name,
            prompt,
          ),
        );
      }
      return JSON.stringify(generationResponse(r, field, entry.name, prompt));
    },
  };
}

/** `image_generate` and `video_generate`, routed to the providers `image_gen.provider` / `video_gen.provider` pick. */
export function mediaTools(deps: MediaToolDeps): Array<Omit<ToolEntry, "owner">> {
  return [mediaTool("image_gen", deps), mediaTool("video_gen", deps)];
}
