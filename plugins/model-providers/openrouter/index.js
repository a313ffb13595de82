// The bundled example model provider (docs/plugins.md, "Model providers"): one profile, an OpenAI-compatible
// endpoint. `--provider openrouter` or `model.provider: openrouter` selects it; OPENROUTER_BASE_URL, when set,
// replaces the base URL (the last env_vars entry ending in _BASE_URL).
export function register(ctx) {
  ctx.register_provider({
    name: "openrouter",
    display_name: "OpenRouter",
    api_mode: "chat_completions",
    base_url: "https://openrouter.ai/api/v1",
    env_vars: ["OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"],
    default_headers: { "X-Title": "hermes-kit" },
    fallback_models: ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4", "google/gemini-2.5-flash"],
  });
}
