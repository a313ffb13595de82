/** What one argv run in its own process group ended with. */
export interface GroupRunResult {
  stdout: string;
  stderr: string;
  /** null when the process did not exit on its own (killed, or never started). */
  exitCode: number | null;
  timedOut: boolean;
  canceled: boolean;
  /** Why the process could not start (ENOENT, EACCES …), when it did not. */
  startError?: string;
}

export interface GroupRunOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutSeconds: number;
  signal?: AbortSignal;
  /** Written to the process's stdin, which is closed after it; without it stdin is ignored. */
  input?: string;
}

/**
 * Run `argv` without a shell in its own process group: a timeout or an abort kills the whole group
 * (children a wrapper forked included), SIGTERM first and SIGKILL two seconds later.
 */
export async function runArgvInGroup(argv: readonly string[], opts: GroupRunOptions): Promise<GroupRunResult> {
  // Loaded on first use: only the voice tools and shell hooks need it, and execa is slow to import.
  const { execa } = await import("execa");
  const [file, ...args] = argv;
  if (!file) throw new Error("runArgvInGroup needs a program");
  const sub = execa(file, args, {
    shell: false,
    env: opts.env,
    extendEnv: false,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    detached: process.platform !== "win32",
    reject: false,
    ...(opts.input !== undefined ? { input: opts.input } : { stdin: "ignore" as const }),
    maxBuffer: 16 * 1024 * 1024,
  });
  const watch = superviseGroup(sub, opts.timeoutSeconds, opts.signal);
  try {
    const r = await sub;
    const { timedOut, canceled } = watch;
    const code = (r as { code?: unknown }).code;
    const startError = typeof r.exitCode !== "number" && typeof code === "string" ? code : undefined;
    return {
      stdout: typeof r.stdout === "string" ? r.stdout : "",
      stderr: typeof r.stderr === "string" ? r.stderr : "",
      exitCode: typeof r.exitCode === "number" ? r.exitCode : null,
      timedOut,
      canceled,
      ...(startError && !timedOut && !canceled ? { startError } : {}),
    };
  } finally {
    watch.release();
  }
}

/** What superviseGroup reports; `release()` once the process has ended. */
export interface GroupWatch {
  readonly timedOut: boolean;
  readonly canceled: boolean;
  release(): void;
}

/**
 * Kill the process group of `sub` (spawned detached, so it leads its group) after `timeoutSeconds` or when
 * `signal` aborts: SIGTERM first, SIGKILL two seconds later.
 */
export function superviseGroup(
  sub: { pid?: number | undefined; kill(sig: NodeJS.Signals): unknown },
  timeoutSeconds: number,
  signal: AbortSignal | undefined,
): GroupWatch {
  const state = { timedOut: false, canceled: false };
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      if (sub.pid !== undefined && process.platform !== "win32") process.kill(-sub.pid, sig);
      else sub.kill(sig);
    } catch {
      /* already gone */
    }
  };
  const stop = () => {
    killGroup("SIGTERM");
    setTimeout(() => killGroup("SIGKILL"), 2000).unref();
  };
  const timer = setTimeout(() => {
    state.timedOut = true;
    stop();
  }, timeoutSeconds * 1000);
  const onAbort = () => {
    state.canceled = true;
    stop();
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return {
    get timedOut() {
      return state.timedOut;
    },
    get canceled() {
      return state.canceled;
    },
    release() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}
