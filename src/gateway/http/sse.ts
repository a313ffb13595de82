import type { ServerResponse } from "node:http";

/**
 * A server-sent-events response on the raw socket: frames, a keep-alive comment when nothing was
 * written for `keepAliveMs`, and `closed` once the client went away (writes then do nothing).
 */
export class SseStream {
  private last = Date.now();
  private readonly timer: NodeJS.Timeout;
  closed = false;

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string>,
    keepAliveMs: number,
    onClientGone: () => void,
  ) {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      ...headers,
    });
    res.flushHeaders();
    res.on("close", () => {
      if (this.closed) return;
      this.closed = true;
      clearInterval(this.timer);
      onClientGone();
    });
    const tick = Math.max(50, Math.min(keepAliveMs, 1000));
    this.timer = setInterval(() => {
      if (Date.now() - this.last >= keepAliveMs) this.write(": keepalive\n\n");
    }, tick);
    this.timer.unref();
  }

  private write(text: string): void {
    if (this.closed || this.res.writableEnded) return;
    this.last = Date.now();
    this.res.write(text);
  }

  /** `data: <json>`, with an `event:` line when named. */
  send(data: unknown, event?: string): void {
    this.write(
      `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    );
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  end(): void {
    clearInterval(this.timer);
    if (!this.res.writableEnded) this.res.end();
    this.closed = true;
  }
}
