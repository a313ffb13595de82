import { createParser, type EventSourceParser } from "eventsource-parser";
import type { LlmResponse, ToolCall, Usage } from "../types.js";
import { ProviderError } from "./errors.js";

/**
 * Server-sent events through `eventsource-parser` (spec line endings: CRLF, LF and bare CR;
 * comments and non-data fields dropped). Feed text as it arrives; complete events' data come back.
 */
export class SseParser {
  private pending: string[] = [];
  private readonly parser: EventSourceParser = createParser({ onEvent: (e) => this.pending.push(e.data) });

  push(text: string): string[] {
    this.parser.feed(text);
    return this.take();
  }

  /** The stream ended: a last event without its blank line still counts (servers often omit it). */
  end(): string[] {
    this.parser.feed("\n\n");
    this.parser.reset();
    return this.take();
  }

  private take(): string[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }
}

interface ChunkToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface Chunk {
  id?: string;
  model?: string;
  choices?: Array<{
    index?: number;
    delta?: { role?: string; content?: string | null; reasoning_content?: string | null; tool_calls?: ChunkToolCall[] };
    finish_reason?: string | null;
  }>;
  usage?: Usage | null;
  error?: { message?: string; code?: unknown; type?: string };
}

/** Assembles `chat.completion.chunk` objects (text and tool-call deltas) into one `chat.completion`. */
export class ChunkAssembler {
  id = "";
  model = "";
  text = "";
  reasoning = "";
  finishReason: string | null = null;
  usage: Usage | undefined;
  chunks = 0;
  private calls = new Map<number, { id: string; name: string; arguments: string }>();

  /** Parse one event's data and fold it in; returns the text and reasoning deltas it carried. */
  add(data: string): { text: string; reasoning: string } {
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      throw new ProviderError("malformed", `the provider streamed a chunk that is not JSON: ${data.slice(0, 120)}`);
    }
    if (!chunk || typeof chunk !== "object")
      throw new ProviderError(
        "malformed",
        `the provider streamed a chunk that is not an object: ${data.slice(0, 120)}`,
      );
    if (chunk.error) {
      const status = typeof chunk.error.code === "number" ? chunk.error.code : null;
      throw new ProviderError(
        "stream",
        "the provider reported an error " +
          `mid-stream: ${chunk.error.message ?? JSON.stringify(chunk.error).slice(0, 200)}`,
        { status_code: status, body: chunk },
      );
    }
    this.chunks++;
    if (chunk.id) this.id = chunk.id;
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    let text = "";
    let reasoning = "";
    for (const c of chunk.choices ?? []) {
      const d = c.delta ?? {};
      if (typeof d.content === "string") text += d.content;
      if (typeof d.reasoning_content === "string") reasoning += d.reasoning_content;
      for (const tc of d.tool_calls ?? []) {
        const i = typeof tc.index === "number" ? tc.index : this.calls.size;
        const cur = this.calls.get(i) ?? { id: "", name: "", arguments: "" };
        if (tc.id) cur.id = tc.id;
        if (tc.function?.name) cur.name += tc.function.name;
        if (typeof tc.function?.arguments === "string") cur.arguments += tc.function.arguments;
        this.calls.set(i, cur);
      }
      if (c.finish_reason) this.finishReason = c.finish_reason;
    }
    this.text += text;
    this.reasoning += reasoning;
    return { text, reasoning };
  }

  response(fallbackModel: string): LlmResponse {
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([i, c]) => ({
        id: c.id || `call_${i}`,
        type: "function",
        function: { name: c.name, arguments: c.arguments },
      }));
    return {
      id: this.id || "stream",
      object: "chat.completion",
      model: this.model || fallbackModel,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: this.text || (toolCalls.length ? null : ""),
            ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: this.finishReason ?? (toolCalls.length ? "tool_calls" : "stop"),
        },
      ],
      ...(this.usage ? { usage: this.usage } : {}),
    };
  }
}
