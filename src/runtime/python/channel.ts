import type { Socket } from "node:net";
import { HermesError } from "../../core/errors.js";

/** An error frame: what a Python exception (or a runtime error sent to Python) looks like on the wire. */
export interface WireError {
  type: string;
  message: string;
  traceback?: string;
  code?: string;
  /** The runtime's own error object, when a runtime error crossed to Python and came back unchanged. */
  js?: number;
}

interface Frame {
  id?: number;
  m?: string;
  p?: unknown;
  r?: unknown;
  e?: WireError;
}

/** A Python exception raised by a plugin callback; `traceback` is for the log, not the user's terminal. */
export class PythonError extends HermesError {
  readonly pythonType: string;
  readonly traceback: string;
  constructor(e: WireError, plugin: string) {
    super("E_PYTHON_PLUGIN_ERROR", { message: `${e.type}: ${e.message}`, hint: `plugin ${plugin}` });
    this.pythonType = e.type;
    this.traceback = e.traceback ?? "";
  }
}

export type RequestHandler = (method: string, params: unknown) => unknown;
export type NotifyHandler = (method: string, params: unknown) => void;

/**
 * Newline-framed JSON-RPC over one socket, both directions: calls from Python are served while a
 * call to Python is pending (middleware's next_call, ctx calls inside a callback). The socket is
 * referenced only while a call waits, so an idle bridge never keeps the process alive.
 */
export class RpcChannel {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  private buffered = "";
  private closedWith?: Error;
  private readonly errors = new Map<number, unknown>();
  private nextErrorId = 1;

  constructor(
    private readonly socket: Socket,
    private readonly plugin: string,
    private readonly onRequest: RequestHandler,
    private readonly onNotify: NotifyHandler,
  ) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => this.receive(chunk));
    socket.on("error", () => undefined);
    socket.unref();
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  call(method: string, params: unknown): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    const p = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (this.pending.size === 1) this.socket.ref();
    this.write({ id, m: method, p: params });
    return p;
  }

  notify(method: string, params: unknown): void {
    if (!this.closedWith) this.write({ m: method, p: params });
  }

  /** Every pending call fails with `err`; later calls too. */
  close(err: Error): void {
    if (this.closedWith) return;
    this.closedWith = err;
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
    this.socket.destroy();
  }

  private write(frame: Frame): void {
    this.socket.write(`${JSON.stringify(frame)}\n`);
  }

  private receive(chunk: string): void {
    this.buffered += chunk;
    let nl = this.buffered.indexOf("\n");
    while (nl >= 0) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      if (line) this.dispatch(JSON.parse(line) as Frame);
      nl = this.buffered.indexOf("\n");
    }
  }

  private dispatch(f: Frame): void {
    if (f.m !== undefined) {
      if (f.id === undefined) this.onNotify(f.m, f.p);
      else void this.serve(f.id, f.m, f.p);
      return;
    }
    const waiter = f.id === undefined ? undefined : this.pending.get(f.id);
    if (!waiter) return;
    this.pending.delete(f.id!);
    if (this.pending.size === 0) this.socket.unref();
    if (f.e) waiter.reject(this.fromWire(f.e));
    else waiter.resolve(f.r);
  }

  private async serve(id: number, method: string, params: unknown): Promise<void> {
    try {
      const r = await this.onRequest(method, params);
      if (!this.closedWith) this.write({ id, r: r === undefined ? null : r });
    } catch (e) {
      if (!this.closedWith) this.write({ id, e: this.toWire(e) });
    }
  }

  /** A runtime error sent to Python keeps an id, so the same object is re-thrown if Python lets it through. */
  private toWire(e: unknown): WireError {
    const id = this.nextErrorId++;
    this.errors.set(id, e);
    if (this.errors.size > 256) this.errors.delete(this.errors.keys().next().value as number);
    const err = e as { name?: string; message?: string; code?: string };
    return {
      type: e instanceof PythonError ? e.pythonType : (err?.name ?? "Error"),
      message: String(err?.message ?? e),
      code: typeof err?.code === "string" ? err.code : undefined,
      js: id,
    };
  }

  private fromWire(e: WireError): unknown {
    if (e.js !== undefined && this.errors.has(e.js)) return this.errors.get(e.js);
    return new PythonError(e, this.plugin);
  }
}
