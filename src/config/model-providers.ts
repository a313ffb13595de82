/** `model.provider` values hermes-kit's agent accepts (`openai` and `custom` are the original's names for an
 * OpenAI-compatible endpoint). */
export const PROVIDER_NAMES = ["openai-compatible", "scripted"] as const;
export const PROVIDER_ALIASES = ["openai", "custom"] as const;
export const ACCEPTED_PROVIDERS: readonly string[] = [...PROVIDER_NAMES, ...PROVIDER_ALIASES];
