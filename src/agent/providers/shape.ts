import type { ChatMessage, LlmResponse, ToolCall } from "../types.js";
import { ProviderError } from "./errors.js";

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Check that a value is a usable `chat.completion` (what a provider or an `llm_execution`
 * middleware returned) and normalise the first choice's message. Anything else is a malformed
 * response: a clear error, never a crash deeper in the loop.
 */
export function checkResponse(value: unknown, where = "the provider"): LlmResponse {
  if (!isObject(value))
    throw new ProviderError(
      "malformed",
      `${where} returned ${value === null ? "null" : typeof value}, not a chat.completion object`,
    );
  const choices = value.choices;
  if (!Array.isArray(choices) || !choices.length || !isObject(choices[0]) || !isObject(choices[0].message)) {
    throw new ProviderError(
      "malformed",
      `${where} returned an object without choices[0].message ` +
        `(keys: ${Object.keys(value).slice(0, 8).join(", ") || "none"})`,
      { body: value },
    );
  }
  const raw = choices[0].message as Record<string, unknown>;
  const content =
    typeof raw.content === "string"
      ? raw.content
      : Array.isArray(raw.content)
        ? raw.content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("")
        : null;
  let toolCalls: ToolCall[] | undefined;
  if (Array.isArray(raw.tool_calls) && raw.tool_calls.length) {
    toolCalls = raw.tool_calls.map((tc, i) => {
      const t = isObject(tc) ? tc : {};
      const fn = isObject(t.function) ? t.function : {};
      const args = fn.arguments;
      return {
        id: typeof t.id === "string" && t.id ? t.id : `call_${i}`,
        type: "function" as const,
        function: {
          name: typeof fn.name === "string" ? fn.name : "",
          // Some servers send an object instead of a JSON string; keep it as JSON text.
          arguments: typeof args === "string" ? args : args === undefined || args === null ? "" : JSON.stringify(args),
        },
      };
    });
  }
  const message: ChatMessage = { role: "assistant", content, ...(toolCalls ? { tool_calls: toolCalls } : {}) };
  const first = choices[0] as Record<string, unknown>;
  return {
    ...(value as object),
    id: typeof value.id === "string" ? value.id : "",
    model: typeof value.model === "string" ? value.model : "",
    choices: [
      {
        index: 0,
        message,
        finish_reason:
          typeof first.finish_reason === "string" ? first.finish_reason : toolCalls ? "tool_calls" : "stop",
      },
      ...choices.slice(1),
    ],
  } as LlmResponse;
}
