import type { LlmResponse, ToolCall, Usage } from "../types.js";
import { ProviderError } from "./errors.js";

/**
 * Server-sent events: `data:` lines accumulate until a blank line ends the event; comments (`:`)
 * and other fields are ignored. Feed text as it arrives; complete events come back.
 */
export class SseParser {
  private buffer = "";
  private data: string[] = [];

  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r?\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(this.buffer[nl] === "\r" ? nl + 2 : nl + 1);
      this.line(line, out);
    }
    return out;
  }

  /** The stream ended: a last event without its blank line still counts. */
  end(): string[] {
    const out: string[] = [];
    if (this.buffer) this.line(this.buffer, out);
    this.buffer = "";
    if (this.data.length) out.push(this.data.join("\n"));
    this.data = [];
    return out;
  }

  private line(line: string, out: string[]): void {
    if (line === "") {
      if (this.data.length) out.push(this.data.join("\n"));
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== "data") return;
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    this.data.push(value);
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
  choices?: Array<{ index?: number; delta?: { role?: string; content?: string | null; reasoning_content?: string | null; tool_calls?: ChunkToolCall[] }; finish_reason?: string | null }>;
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
    if (!chunk || typeof chunk !== "object") throw new ProviderError("malformed", `the provider streamed a chunk that is not an object: ${data.slice(0, 120)}`);
    if (chunk.error) {
      const status = typeof chunk.error.code === "number" ? chunk.error.code : null;
      throw new ProviderError("stream", `the provider reported an error mid-stream: ${chunk.error.message ?? JSON.stringify(chunk.error).slice(0, 200)}`, { status_code: status, body: chunk });
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
      .map(([i, c]) => ({ id: c.id || `call_${i}`, type: "function", function: { name: c.name, arguments: c.arguments } }));
    return {
      id: this.id || "stream",
      object: "chat.completion",
      model: this.model || fallbackModel,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: this.text || (toolCalls.length ? null : ""), ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
          finish_reason: this.finishReason ?? (toolCalls.length ? "tool_calls" : "stop"),
        },
      ],
      ...(this.usage ? { usage: this.usage } : {}),
    };
  }
}
