import type { LlmRequest, LlmResponse, Provider, ProviderCallOptions } from "../types.js";
import { parseRetryAfter, ProviderError } from "./errors.js";
import { checkResponse } from "./shape.js";
import { ChunkAssembler, SseParser } from "./sse.js";

export interface OpenAiCompatibleOptions {
  baseUrl: string;
  model: string;
  /** The key, or a function read at every call (a plugin profile's variable; it throws when unset). */
  apiKey?: string | (() => string | undefined);
  /** The provider's id in hooks and messages (default openai-compatible). */
  name?: string;
  /** Sent on every request (a plugin profile's default_headers); the key's Authorization header wins. */
  headers?: Readonly<Record<string, string>>;
  /** Seconds without a byte from the server before the attempt fails (default 120). */
  timeoutSeconds?: number;
  stream?: boolean;
  /** For tests: the fetch to use. */
  fetch?: typeof fetch;
}

const MAX_ERROR_BODY = 64 * 1024;

/**
 * Chat completions over HTTP with Node's fetch, against any OpenAI-compatible server (llama.cpp,
 * Ollama, vLLM, hosted APIs). The kwargs become the JSON body, `extra_body` merged in at the top
 * level (as the OpenAI SDK does) and `timeout` kept for the client. Every failure is a
 * ProviderError naming what happened: an HTTP status, a timeout, an unreachable server, a body
 * that is not chat-completions JSON, or a stream that stopped before it was complete.
 */
export class OpenAiCompatibleProvider implements Provider {
  readonly name: string;
  readonly apiMode = "chat_completions";
  readonly baseUrl: string;
  readonly model: string;
  readonly stream: boolean;
  private readonly opts: OpenAiCompatibleOptions;

  constructor(opts: OpenAiCompatibleOptions) {
    this.opts = opts;
    this.name = opts.name ?? "openai-compatible";
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.model = opts.model;
    this.stream = opts.stream ?? true;
  }

  withModel(model: string): Provider {
    return new OpenAiCompatibleProvider({ ...this.opts, model });
  }

  get endpoint(): string {
    return `${this.baseUrl}/chat/completions`;
  }

  /** The body the server receives for these kwargs. */
  static body(request: LlmRequest): Record<string, unknown> {
    const { extra_body, timeout: _timeout, ...rest } = request;
    return { ...rest, ...(extra_body && typeof extra_body === "object" ? extra_body : {}) };
  }

  async complete(request: LlmRequest, opts: ProviderCallOptions): Promise<LlmResponse> {
    // Before any listener is attached: a missing key variable fails the attempt with nothing to undo.
    const apiKey = typeof this.opts.apiKey === "function" ? this.opts.apiKey() : this.opts.apiKey;
    const timeoutS =
      typeof request.timeout === "number" && request.timeout > 0 ? request.timeout : (this.opts.timeoutSeconds ?? 120);
    const ctl = new AbortController();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        ctl.abort(new Error("timeout"));
      }, timeoutS * 1000);
    };
    const onAbort = () => ctl.abort(new Error("interrupted"));
    if (opts.signal.aborted) throw new ProviderError("interrupted", "the request was interrupted before it was sent");
    opts.signal.addEventListener("abort", onAbort, { once: true });
    const failure = (e: unknown, during: string): ProviderError => {
      if (e instanceof ProviderError) return e;
      if (opts.signal.aborted) return new ProviderError("interrupted", `interrupted ${during}`);
      if (timedOut)
        return new ProviderError("timeout", `no answer from ${this.endpoint} within ${timeoutS}s ${during}`);
      const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
      const detail = cause?.code ?? cause?.message ?? (e as Error)?.message ?? String(e);
      return during === "while connecting"
        ? new ProviderError("network", `cannot reach ${this.endpoint}: ${detail}`, { cause: e })
        : new ProviderError("stream", `the connection dropped ${during}: ${detail}`, { cause: e });
    };
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: request.stream ? "text/event-stream" : "application/json",
      ...this.opts.headers,
    };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const doFetch = this.opts.fetch ?? fetch;
    arm();
    try {
      let res: Response;
      try {
        res = await doFetch(this.endpoint, {
          method: "POST",
          headers,
          body: JSON.stringify(OpenAiCompatibleProvider.body(request)),
          signal: ctl.signal,
        });
      } catch (e) {
        throw failure(e, "while connecting");
      }
      if (!res.ok) throw await this.httpError(res);
      const type = res.headers.get("content-type") ?? "";
      if (request.stream && !/application\/json/i.test(type)) return await this.readStream(res, opts, arm, failure);
      let text: string;
      try {
        text = await res.text();
      } catch (e) {
        throw failure(e, "while reading the response");
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ProviderError(
          "malformed",
          `the response from ${this.endpoint} is not JSON: ${JSON.stringify(text.slice(0, 120))}`,
          { status_code: res.status, body: text.slice(0, 2000) },
        );
      }
      return checkResponse(parsed, this.endpoint);
    } finally {
      clearTimeout(timer);
      opts.signal.removeEventListener("abort", onAbort);
    }
  }

  /** The error for a non-2xx answer, with the server's own message and code when its body is JSON. */
  private async httpError(res: Response): Promise<ProviderError> {
    let text = "";
    try {
      text = (await res.text()).slice(0, MAX_ERROR_BODY);
    } catch {
      /* the status is enough */
    }
    let body: unknown = text;
    let message = text.trim().slice(0, 300) || res.statusText;
    let code: string | null = null;
    try {
      body = JSON.parse(text);
      const err = (body as { error?: { message?: unknown; code?: unknown; type?: unknown } | string }).error;
      if (typeof err === "string") message = err;
      else if (err && typeof err === "object") {
        if (typeof err.message === "string") message = err.message;
        code = typeof err.code === "string" ? err.code : typeof err.type === "string" ? err.type : null;
      }
    } catch {
      /* not JSON: keep the text */
    }
    return new ProviderError("http", `HTTP ${res.status} from ${this.endpoint}: ${message}`, {
      status_code: res.status,
      error_code: code,
      body,
      retry_after_ms: parseRetryAfter(res.headers.get("retry-after")),
    });
  }

  private async readStream(
    res: Response,
    opts: ProviderCallOptions,
    arm: () => void,
    failure: (e: unknown, during: string) => ProviderError,
  ): Promise<LlmResponse> {
    const parser = new SseParser();
    const acc = new ChunkAssembler();
    let done = false;
    let started = false;
    const emit = opts.onStream ?? (() => undefined);
    const handle = (events: string[]) => {
      for (const data of events) {
        if (done) return;
        if (data.trim() === "[DONE]") {
          done = true;
          return;
        }
        const d = acc.add(data);
        if (!started) {
          started = true;
          emit({ type: "start" });
        }
        if (d.text) emit({ type: "delta", text: d.text, kind: "text" });
        if (d.reasoning) emit({ type: "delta", text: d.reasoning, kind: "reasoning" });
      }
    };
    const body = res.body;
    if (!body) throw new ProviderError("stream", `the response from ${this.endpoint} has no body`);
    const reader = body.getReader();
    const decoder = new TextDecoder();
    try {
      while (!done) {
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch (e) {
          throw failure(e, `mid-stream after ${acc.chunks} chunk(s)`);
        }
        if (r.done) break;
        arm();
        handle(parser.push(decoder.decode(r.value, { stream: true })));
      }
      if (!done) handle(parser.end());
      if (!done && !acc.finishReason) {
        throw new ProviderError(
          "stream",
          `the stream from ${this.endpoint} ended after ${acc.chunks} chunk(s) without a finish_reason or [DONE]`,
        );
      }
    } catch (e) {
      if (started) emit({ type: "end", final_text: acc.text, finished: false, error: (e as Error).message });
      throw e;
    } finally {
      reader.cancel().catch(() => undefined);
    }
    if (!started) emit({ type: "start" });
    emit({ type: "end", final_text: acc.text, finished: true });
    return checkResponse(acc.response(this.model), this.endpoint);
  }
}
