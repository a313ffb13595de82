import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { mkdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { HermesError } from "../../core/errors.js";
import { PACKAGE_ROOT } from "../../core/paths.js";
import { RpcChannel, type NotifyHandler, type RequestHandler } from "./channel.js";

/** Where the bridge's Python package lives (shipped with the kit). */
export const BRIDGE_PYTHONPATH = join(PACKAGE_ROOT, "python");

/** The interpreter the bridge runs under: HERMES_PYTHON (the Nix module sets it), else python3 on PATH. */
export function pythonCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.HERMES_PYTHON?.trim() || "python3";
}

export interface PythonPluginSpec {
  key: string;
  name: string;
  /** The plugin folder (holding __init__.py). */
  path: string;
  /** site-packages folders added to sys.path before the import (the plugin's virtual environment). */
  site: string[];
}

export interface BridgeReady {
  pid: number;
  python: string;
  version: string;
}

/** One plugin's process: its channel, its pid once ready, and how it ends. */
export class PythonLink {
  channel!: RpcChannel;
  pid?: number;
  info?: BridgeReady;
  readonly ready: Promise<BridgeReady>;
  /** Called once when the process goes away without being asked to. */
  onDeath?: (message: string) => void;
  private settleReady!: { resolve: (r: BridgeReady) => void; reject: (e: unknown) => void };
  private stopping = false;

  constructor(
    readonly key: string,
    private readonly why: () => string,
  ) {
    this.ready = new Promise<BridgeReady>((resolve, reject) => {
      this.settleReady = { resolve, reject };
    });
    this.ready.catch(() => undefined);
  }

  attach(socket: Socket, onRequest: RequestHandler, onNotify: NotifyHandler): void {
    this.channel = new RpcChannel(socket, this.key, onRequest, (m, p) => {
      if (m === "ready") {
        this.info = p as BridgeReady;
        this.pid = this.info.pid;
        this.settleReady.resolve(this.info);
      } else onNotify(m, p);
    });
    socket.on("close", () => this.closed());
  }

  fail(err: Error): void {
    this.settleReady.reject(err);
    this.channel?.close(err);
  }

  private closed(): void {
    // Give the supervisor a moment to report why (a too-old Python prints and exits).
    setTimeout(() => {
      const message = this.stopping
        ? "the plugin's Python process was stopped"
        : `the plugin's Python process exited${this.pid ? ` (pid ${this.pid})` : ""}${this.why()}`;
      const err = new HermesError("E_PYBRIDGE_DIED", { message });
      this.settleReady.reject(err);
      this.channel.close(err);
      if (!this.stopping) this.onDeath?.(message);
    }, 30);
  }

  /** Ask the process to finish what runs (on_unload callbacks) and exit; killed if it does not. */
  shutdown(graceMs = 2000): void {
    if (this.stopping) return;
    this.stopping = true;
    if (this.channel && !this.channel.closed) this.channel.notify("shutdown", { grace: graceMs / 1000 });
    setTimeout(() => this.kill(), graceMs + 200).unref();
  }

  kill(): void {
    this.stopping = true;
    if (this.pid)
      try {
        process.kill(this.pid, "SIGKILL");
      } catch {
        // already gone
      }
  }
}

/**
 * Start the bridge for these plugins: one interpreter start, then one forked process per plugin,
 * each talking over its own socket (fd 3 + i). Every process, the supervisor included, is unref'd:
 * a link holds the event loop only while one of its calls waits.
 */
export function startPythonBridge(o: {
  plugins: PythonPluginSpec[];
  /** ctx.register_*_provider methods the Python ctx gets (the runtime's list). */
  providerMethods: readonly string[];
  home: string;
  log: Logger;
  handlers: (key: string) => { onRequest: RequestHandler; onNotify: NotifyHandler };
}): Map<string, PythonLink> {
  const python = pythonCommand();
  const stderr: string[] = [];
  let exit = "";
  const why = () => {
    const text = stderr.join("").trim();
    return text ? `: ${text.split("\n").slice(-3).join(" ")}` : exit;
  };
  const links = new Map(o.plugins.map((p) => [p.key, new PythonLink(p.key, why)]));
  const pycache = join(o.home, "cache", "python");
  try {
    mkdirSync(pycache, { recursive: true });
  } catch {
    // bytecode is then not cached; the plugin folders are never written either way
  }
  const spec = { plugins: o.plugins.map((p, i) => ({ ...p, fd: 3 + i })), provider_methods: o.providerMethods };
  const stdio: StdioOptions = ["ignore", "pipe", "pipe", ...o.plugins.map(() => "pipe" as const)];
  let child: ChildProcess;
  try {
    child = spawn(python, ["-m", "hermes_kit_bridge", JSON.stringify(spec)], {
      stdio,
      detached: true,
      env: {
        ...process.env,
        PYTHONPATH: [BRIDGE_PYTHONPATH, process.env.PYTHONPATH].filter(Boolean).join(delimiter),
        // Bytecode goes under the home: a plugin folder is hashed into the lock and must never change.
        PYTHONPYCACHEPREFIX: pycache,
        PYTHONUNBUFFERED: "1",
      },
    });
  } catch (e) {
    for (const l of links.values()) l.fail(noPython(python, e));
    return links;
  }
  child.on("error", (e) => {
    for (const l of links.values()) l.fail(noPython(python, e));
  });
  child.on("exit", (code, signal) => {
    exit = code === 3 ? "" : ` (bridge exit ${signal ?? code})`;
  });
  child.stderr?.setEncoding("utf8").on("data", (s: string) => {
    if (stderr.join("").length < 4096) stderr.push(s);
    o.log.debug({ python: s.trimEnd() }, "python bridge stderr");
  });
  child.stdout?.setEncoding("utf8").on("data", (s: string) => o.log.debug({ python: s.trimEnd() }, "python bridge"));
  child.unref();
  (child.stderr as Socket | null)?.unref();
  (child.stdout as Socket | null)?.unref();
  o.plugins.forEach((p, i) => {
    const h = o.handlers(p.key);
    links.get(p.key)!.attach(child.stdio[3 + i] as Socket, h.onRequest, h.onNotify);
  });
  return links;
}

function noPython(python: string, e: unknown): HermesError {
  const missing = (e as NodeJS.ErrnoException)?.code === "ENOENT";
  return new HermesError("E_PYBRIDGE_NO_PYTHON", {
    message: missing
      ? `no Python interpreter '${python}' on PATH (Python plugins need Python 3.10 or newer)`
      : `cannot start the Python bridge with '${python}': ${(e as Error)?.message ?? e}`,
  });
}
