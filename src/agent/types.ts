/**
 * The shapes the agent loop passes around. The wire format is OpenAI chat-completions: the
 * provider kwargs are a chat-completions request body (plus `extra_body` and `timeout`, as the
 * Python SDK's kwargs), and every provider returns a `chat.completion` object, streamed or not, so
 * `llm_execution` middleware sees one shape whatever the backend.
 */

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface ToolDefinition {
  type: "function";
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

/** Provider kwargs as `llm_request` middleware sees them. */
export interface LlmRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  tool_choice?: unknown;
  stream?: boolean;
  max_tokens?: number;
  temperature?: number;
  /** Seconds; the provider's own deadline for this attempt. */
  timeout?: number;
  /** Merged into the JSON body the server receives (the OpenAI SDK's `extra_body`). */
  extra_body?: Record<string, unknown>;
  response_format?: unknown;
  [k: string]: unknown;
}

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  [k: string]: unknown;
}

export interface LlmChoice {
  index: number;
  message: ChatMessage;
  finish_reason: string | null;
}

/** A `chat.completion` object. */
export interface LlmResponse {
  id: string;
  object?: string;
  model: string;
  choices: LlmChoice[];
  usage?: Usage;
  [k: string]: unknown;
}

export type StreamEvent =
  | { type: "start" }
  | { type: "delta"; text: string; kind: "text" | "reasoning" }
  | { type: "end"; final_text: string; finished: boolean; error?: string };

export interface ProviderCallOptions {
  signal: AbortSignal;
  /** Streamed providers report here; the agent queues the events for observers off the token path. */
  onStream?: (ev: StreamEvent) => void;
}

/** A model backend. `complete` throws a ProviderError for every failure it can name. */
export interface Provider {
  readonly name: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly apiMode: string;
  /** Whether requests are streamed unless the kwargs say otherwise. */
  readonly stream: boolean;
  complete(request: LlmRequest, opts: ProviderCallOptions): Promise<LlmResponse>;
  /** The same backend with another model (ctx.llm model overrides). */
  withModel(model: string): Provider;
}
