import { HermesError } from "../../core/errors.js";
import { didYouMean } from "../../core/suggest.js";
import {
  providerAvailable,
  type TerminalEnvironment,
  type TerminalEnvironmentProvider,
} from "../../runtime/provider-shapes.js";
import type { ProviderRegistry } from "../../runtime/registries.js";

export const LOCAL_BACKEND = "local";

/** `terminal.backend`, trimmed and lowercased as provider names are; `local` when unset. */
export function terminalBackendName(config: Record<string, unknown>): string {
  const t = config.terminal;
  const v = t && typeof t === "object" ? (t as Record<string, unknown>).backend : undefined;
  return typeof v === "string" && v.trim() ? v.trim().toLowerCase() : LOCAL_BACKEND;
}

/** What one command on a terminal backend came to (the local run reports the same). */
export interface BackendRun {
  output: string;
  returncode: number | null;
  timedOut: boolean;
  canceled: boolean;
  error: string | null;
}

export interface BackendCommand {
  command: string;
  workdir: string | null;
  timeoutS: number;
  signal: AbortSignal | undefined;
  task_id: string | null;
}

const failed = (message: string) => new HermesError("E_AGENT_TOOL_FAILED", { message });

/** The registered provider `name` names, available here; otherwise the tool says why and nothing runs. */
function backendProvider(providers: ProviderRegistry, name: string): TerminalEnvironmentProvider {
  const entry = providers.map("terminal_environment").get(name);
  if (!entry) {
    const known = [LOCAL_BACKEND, ...providers.list("terminal_environment").map((p) => p.name)];
    throw failed(
      `terminal.backend '${name}' is not a registered terminal environment${didYouMean(name, known)} ` +
        `(registered: ${known.join(", ")}); nothing was run`,
    );
  }
  if (!providerAvailable(entry.provider))
    throw failed(`terminal backend '${name}' is not available here (is_available() is false); nothing was run`);
  return entry.provider as TerminalEnvironmentProvider;
}

/** The environment's answer, checked: `output` a string, `exit_code` a number or null. */
function executeResult(name: string, r: unknown): { output: string; returncode: number | null } {
  if (!r || typeof r !== "object")
    throw failed(
      `terminal backend '${name}': execute() returned ${r === null ? "null" : typeof r}, not {output, exit_code}`,
    );
  const o = r as Record<string, unknown>;
  const output = typeof o.output === "string" ? o.output : o.output == null ? "" : String(o.output);
  const returncode = typeof o.exit_code === "number" && Number.isFinite(o.exit_code) ? o.exit_code : null;
  return { output, returncode };
}

/** create_environment(), checked; a failure says so and nothing runs. */
async function createEnvironment(
  provider: TerminalEnvironmentProvider,
  name: string,
  cmd: BackendCommand,
): Promise<TerminalEnvironment> {
  let env: TerminalEnvironment;
  try {
    env = await provider.create_environment({ cwd: process.cwd(), timeout: cmd.timeoutS, task_id: cmd.task_id });
  } catch (e) {
    throw failed(`terminal backend '${name}' could not create an environment: ${(e as Error)?.message ?? String(e)}`);
  }
  if (!env || typeof env.execute !== "function")
    throw failed(`terminal backend '${name}': create_environment() returned no object with an execute() method`);
  return env;
}

/** cleanup() of an environment; its failure does not change what the command came to. */
function release(env: TerminalEnvironment): Promise<void> {
  return Promise.resolve()
    .then(() => env.cleanup?.())
    .then(
      () => undefined,
      () => undefined,
    );
}

type Outcome = { output: string; returncode: number | null } | "timeout" | "cancel";

/**
 * Run one command through the terminal environment provider `name`: create_environment, then
 * execute, both under the timeout (the timeout or an interrupt aborts the signal execute() got and
 * stops waiting), then cleanup (awaited when the command finished, not after a timeout or interrupt).
 */
export async function runOnBackend(
  providers: ProviderRegistry,
  name: string,
  cmd: BackendCommand,
): Promise<BackendRun> {
  const provider = backendProvider(providers, name);
  const ctrl = new AbortController();
  let env: TerminalEnvironment | undefined;
  const work = async () => {
    const created = await createEnvironment(provider, name, cmd);
    // Created after the call was given up: nobody will use it.
    if (ctrl.signal.aborted) {
      void release(created);
      throw failed("abandoned");
    }
    env = created;
    const r = await env.execute(cmd.command, { cwd: cmd.workdir, timeout: cmd.timeoutS, signal: ctrl.signal });
    return executeResult(name, r);
  };
  let outcome: Outcome;
  try {
    outcome = await bounded(name, work, ctrl, cmd);
  } catch (e) {
    if (env) await release(env);
    throw e;
  }
  if (typeof outcome === "string") {
    if (env) void release(env);
    return {
      output: "",
      returncode: null,
      timedOut: outcome === "timeout",
      canceled: outcome === "cancel",
      error: null,
    };
  }
  if (env) await release(env);
  return { ...outcome, timedOut: false, canceled: false, error: null };
}

/** `work` raced against the timeout and the interrupt; either aborts `ctrl`. A failure of `work` is the tool's. */
async function bounded(
  name: string,
  work: () => Promise<{ output: string; returncode: number | null }>,
  ctrl: AbortController,
  cmd: BackendCommand,
): Promise<Outcome> {
  let stop: (why: "timeout" | "cancel") => void = () => undefined;
  const stopped = new Promise<"timeout" | "cancel">((r) => (stop = r));
  const timer = setTimeout(() => stop("timeout"), cmd.timeoutS * 1000);
  const onAbort = () => stop("cancel");
  if (cmd.signal?.aborted) onAbort();
  else cmd.signal?.addEventListener("abort", onAbort, { once: true });
  const running = work();
  // A late failure of an abandoned command has nobody to report to.
  running.catch(() => undefined);
  try {
    const outcome = await Promise.race([running, stopped]);
    if (typeof outcome === "string") ctrl.abort(new Error(outcome === "timeout" ? "timed out" : "interrupted"));
    return outcome;
  } catch (e) {
    if (e instanceof HermesError) throw e;
    throw failed(`terminal backend '${name}': execute() failed: ${(e as Error)?.message ?? String(e)}`);
  } finally {
    clearTimeout(timer);
    cmd.signal?.removeEventListener("abort", onAbort);
  }
}
