import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { HermesError } from "../../core/errors.js";
import { holdsSecret, redactText } from "../../core/redact.js";
import { readTextCappedSync } from "../../core/size-limit.js";
import { renderCommand } from "./command-template.js";
import { runArgvInGroup, type GroupRunResult } from "../../core/process-group.js";
import { LOCAL_STT_ENV, type CommandProviderConfig } from "./voice-providers.js";

/** A transcript longer than this is refused rather than handed to the model. */
const MAX_TRANSCRIPT_BYTES = 4 * 1024 * 1024;
const LOCAL_COMMAND_TIMEOUT_S = 300;

export interface CommandRun {
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** A scratch folder for one command run; removed by `cleanup` whatever happened. */
export interface Scratch {
  dir: string;
  cleanup: () => Promise<void>;
}

export async function makeScratch(prefix: string): Promise<Scratch> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }).catch(() => undefined) };
}

/** The command's environment: the agent's, minus secret-named variables unless the provider passes them through. */
export function childEnv(env: NodeJS.ProcessEnv, passthrough: readonly string[]): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env))
    if (v !== undefined && (!holdsSecret(k) || passthrough.includes(k))) out[k] = v;
  return out;
}

function tail(text: string): string {
  const t = text.trim();
  return redactText(t.length > 2000 ? `…${t.slice(-2000)}` : t);
}

/** Turn a failed, timed-out or interrupted run into the error the model sees. */
function checkRun(r: GroupRunResult, what: string, argv0: string, timeoutS: number): void {
  if (r.canceled) throw new HermesError("E_AGENT_INTERRUPTED", { message: `interrupted; ${what} was killed` });
  if (r.timedOut)
    throw new HermesError("E_VOICE_COMMAND_FAILED", {
      message: `${what} timed out after ${timeoutS}s; its process group was killed`,
    });
  if (r.startError)
    throw new HermesError("E_VOICE_COMMAND_FAILED", {
      message: `${what} could not start '${argv0}' (${r.startError}); check the command and PATH`,
    });
  if (r.exitCode !== 0) {
    const out = tail(r.stderr) || tail(r.stdout);
    throw new HermesError("E_VOICE_COMMAND_FAILED", {
      message: `${what} exited with code ${r.exitCode ?? "none (killed by a signal)"}${out ? `: ${out}` : ""}`,
    });
  }
}

export async function nonEmptyFile(path: string): Promise<boolean> {
  try {
    const st = await stat(path);
    return st.isFile() && st.size > 0;
  } catch {
    return false;
  }
}

/**
 * Run a `tts.providers.<name>` command: the text goes to `{input_path}` (a UTF-8 file), the command must
 * write audio to `{output_path}`. Returns that file inside `scratch`, which the caller moves and cleans up.
 */
export async function runTtsCommand(cfg: CommandProviderConfig, text: string, run: CommandRun, work: Scratch) {
  const what = `the TTS command provider '${cfg.name}'`;
  const input = join(work.dir, "input.txt");
  const output = join(work.dir, `speech.${cfg.format}`);
  await writeFile(input, text, "utf8");
  const r = await runVoiceCommand(configured(cfg, "tts"), what, run, {
    input_path: input,
    text_path: input,
    output_path: output,
    format: cfg.format,
    voice: cfg.voice,
    model: cfg.model,
  });
  if (!(await nonEmptyFile(output)))
    throw new HermesError("E_VOICE_COMMAND_FAILED", {
      message: `${what} exited 0 but wrote no audio to {output_path}${tail(r.stderr) ? `: ${tail(r.stderr)}` : ""}`,
    });
  return output;
}

/** How a voice command is run: its template, where it was configured, the env it may see, its timeout. */
interface VoiceCommand {
  template: string;
  origin: string;
  passthrough: readonly string[];
  timeoutSeconds: number;
}

const configured = (cfg: CommandProviderConfig, kind: "tts" | "stt"): VoiceCommand => ({
  template: cfg.command,
  origin: `${kind}.providers.${cfg.name}.command`,
  passthrough: cfg.envPassthrough,
  timeoutSeconds: cfg.timeoutSeconds,
});

/** A voice command with its placeholders filled, run without a shell in its own group; a failure throws. */
async function runVoiceCommand(
  c: VoiceCommand,
  what: string,
  run: CommandRun,
  values: Parameters<typeof renderCommand>[1],
): Promise<GroupRunResult> {
  const argv = renderCommand(c.template, values, c.origin, run.env.HOME);
  const r = await runArgvInGroup(argv, {
    env: childEnv(run.env, c.passthrough),
    timeoutSeconds: c.timeoutSeconds,
    ...(run.signal ? { signal: run.signal } : {}),
  });
  checkRun(r, what, argv[0]!, c.timeoutSeconds);
  return r;
}

/**
 * The audio as the command sees it: a link with a plain name in the scratch folder, so a path the model
 * chose never becomes part of a command line (not even inside a `sh -c` wrapper someone configured).
 */
async function linkInput(file: string, work: Scratch): Promise<string> {
  const ext = extname(file).toLowerCase();
  const link = join(work.dir, `input${/^\.[a-z0-9]{1,8}$/.test(ext) ? ext : ".audio"}`);
  await symlink(file, link);
  return link;
}

export interface SttRequest {
  file: string;
  model: string;
  language: string;
}

/** Run a `stt.providers.<name>` command; the transcript is `{output_path}` when written, else stdout. */
export async function runSttCommand(cfg: CommandProviderConfig, req: SttRequest, run: CommandRun, work: Scratch) {
  const what = `the STT command provider '${cfg.name}'`;
  const input = await linkInput(req.file, work);
  const output = join(work.dir, `transcript.${cfg.format}`);
  const r = await runVoiceCommand(configured(cfg, "stt"), what, run, {
    input_path: input,
    output_path: output,
    output_dir: work.dir,
    format: cfg.format,
    language: req.language,
    model: req.model,
  });
  if (await nonEmptyFile(output)) return readTextCappedSync(output, MAX_TRANSCRIPT_BYTES, "E_VOICE_COMMAND_FAILED");
  if (r.stdout.trim()) return r.stdout;
  throw new HermesError("E_VOICE_COMMAND_FAILED", {
    message: `${what} wrote no output file and produced no stdout`,
  });
}

/** Every `.txt` file under `dir`, at any depth, sorted (whisper-style tools pick their own file names). */
async function txtFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await txtFiles(p)));
    else if (e.isFile() && e.name.endsWith(".txt")) out.push(p);
  }
  return out.sort();
}

/** Run HERMES_LOCAL_STT_COMMAND: no shell, and the command must write a `.txt` transcript under `{output_dir}`. */
export async function runLocalSttCommand(template: string, req: SttRequest, run: CommandRun, work: Scratch) {
  const what = `the local STT command (${LOCAL_STT_ENV})`;
  const input = await linkInput(req.file, work);
  const outDir = join(work.dir, "out");
  await mkdir(outDir);
  const local = { template, origin: LOCAL_STT_ENV, passthrough: [], timeoutSeconds: LOCAL_COMMAND_TIMEOUT_S };
  await runVoiceCommand(local, what, run, {
    input_path: input,
    output_dir: outDir,
    language: req.language,
    model: req.model,
  });
  const found = await txtFiles(outDir);
  if (!found.length)
    throw new HermesError("E_VOICE_COMMAND_FAILED", { message: `${what} wrote no .txt transcript under {output_dir}` });
  return readTextCappedSync(found[0]!, MAX_TRANSCRIPT_BYTES, "E_VOICE_COMMAND_FAILED");
}
