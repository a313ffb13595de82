import { copyFile, mkdir, rename, stat, unlink } from "node:fs/promises";
import { dirname, extname, join, resolve } from "node:path";
import { HermesError } from "../../core/errors.js";
import { safeString } from "../../core/safe-string.js";
import type { TranscribeResult } from "../../runtime/provider-shapes.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { ToolEntry } from "../../runtime/registries.js";
import { runningAgent } from "../agent-scope.js";
import type { HookSite } from "../hook-site.js";
import {
  type CommandRun,
  makeScratch,
  nonEmptyFile,
  runLocalSttCommand,
  runSttCommand,
  runTtsCommand,
} from "./voice-command.js";
import {
  requiredPolicyPlugins,
  resolveStt,
  resolveTts,
  type SttChoice,
  sttPrompt,
  type TtsChoice,
} from "./voice-providers.js";

export type VoiceHost = Pick<Runtime, "providers" | "home" | "hooks" | "config" | "log">;

/** The hook site of the agent whose turn runs (its timeline shows the fire), else the runtime's bus. */
function hookSite(host: VoiceHost): Pick<HookSite, "lastWriterPerField" | "ttsPolicy"> {
  return runningAgent.getStore()?.hooks ?? host.hooks;
}

export const TEXT_TO_SPEECH_SCHEMA = {
  name: "text_to_speech",
  description:
    "Convert text to speech audio and save it as a file. The voice and the backend are the user's configuration " +
    "(tts.provider), not your choice. Returns the audio file's absolute path: name it in your answer.",
  parameters: {
    type: "object",
    properties: {
      text: { type: "string", description: "The text to speak" },
      output_path: {
        type: "string",
        description: "Where to save the audio (no '..'); default: <hermes home>/cache/audio/tts_<time>.<format>",
      },
    },
    required: ["text"],
  },
};

export const TRANSCRIBE_AUDIO_SCHEMA = {
  name: "transcribe_audio",
  description:
    "Transcribe an audio file to text with the user's speech-to-text backend (stt.provider). Returns the transcript.",
  parameters: {
    type: "object",
    properties: {
      file_path: { type: "string", description: "Path of the audio file" },
      model: { type: "string", description: "Optional model for the backend; default: the configured one" },
    },
    required: ["file_path"],
  },
};

/** Model and language values end up as command arguments: plain names only, never an option or shell text. */
const PLAIN_VALUE = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;

function plainValue(v: string | null, what: string): string | null {
  if (v === null || v === "" || PLAIN_VALUE.test(v)) return v || null;
  throw new HermesError("E_VOICE_INPUT", {
    message: `${what} ${JSON.stringify(v.slice(0, 80))} is not a plain name (letters, digits, . _ : / @ + -)`,
  });
}

function expandHome(p: string): string {
  const home = process.env.HOME;
  return home && (p === "~" || p.startsWith("~/")) ? join(home, p.slice(1)) : p;
}

function stamp(): string {
  const d = new Date().toISOString().replace(/[-:]/g, "").replace("T", "_").replace(/\..*/, "");
  return `${d}_${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * The file the audio ends up in: the caller's path (no `..` part), or a fresh one in the home's audio
 * cache. A command provider's format is known, so its file carries that extension whatever was asked.
 */
function audioDestination(arg: unknown, home: string, choice: TtsChoice): string {
  const ext = choice.kind === "command" ? choice.cfg.format : "mp3";
  if (arg === undefined || arg === null || arg === "") return join(home, "cache", "audio", `tts_${stamp()}.${ext}`);
  if (typeof arg !== "string")
    throw new HermesError("E_AGENT_TOOL_ARGS", { message: "text_to_speech: 'output_path' must be a string" });
  if (arg.split(/[\\/]/).includes(".."))
    throw new HermesError("E_VOICE_INPUT", {
      message: `output_path contains a '..' part: ${arg}; use an absolute path or one below the current directory`,
    });
  const dest = resolve(expandHome(arg));
  const given = extname(dest);
  return choice.kind !== "command" || given.toLowerCase() === `.${ext}`
    ? dest
    : `${dest.slice(0, dest.length - given.length)}.${ext}`;
}

async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw e;
    await copyFile(from, to);
    await unlink(from);
  }
}

function signalOf(extra: Record<string, unknown>): AbortSignal {
  return extra.signal instanceof AbortSignal ? extra.signal : new AbortController().signal;
}

const errText = (e: unknown) => (e instanceof Error ? e.message : safeString(e));

/** tts.pre_synthesis.required_plugins, then pre_tts_synthesis: the script to speak, or a refusal. */
async function approvedScript(host: VoiceHost, text: string, provider: string): Promise<string> {
  const owners = host.hooks.owners("pre_tts_synthesis");
  const missing = requiredPolicyPlugins(host.config).filter((k) => !owners.includes(k));
  if (missing.length)
    throw new HermesError("E_VOICE_BLOCKED", {
      message:
        `tts.pre_synthesis.required_plugins: ${missing.join(", ")} ${missing.length > 1 ? "have" : "has"} no ` +
        "pre_tts_synthesis hook registered (not enabled, failed to load, or registers none); nothing was spoken",
    });
  const decision = await hookSite(host).ttsPolicy("pre_tts_synthesis", { text, provider });
  if ("blocked" in decision)
    throw new HermesError("E_VOICE_BLOCKED", { message: `pre_tts_synthesis refused the text: ${decision.blocked}` });
  return decision.text;
}

async function synthesize(choice: TtsChoice, text: string, dest: string, signal: AbortSignal): Promise<string> {
  if (choice.kind === "command") {
    const work = await makeScratch("hermes-tts-");
    try {
      await moveFile(await runTtsCommand(choice.cfg, text, { env: process.env, signal }, work), dest);
      return dest;
    } finally {
      await work.cleanup();
    }
  }
  let returned: unknown;
  try {
    returned = await choice.provider.synthesize(text, dest, { format: "mp3", signal });
  } catch (e) {
    throw new HermesError("E_VOICE_PROVIDER_FAILED", {
      message: `the TTS provider '${choice.name}' failed: ${errText(e)}`,
    });
  }
  const file = typeof returned === "string" && returned.trim() ? resolve(returned) : dest;
  if (!(await nonEmptyFile(file)))
    throw new HermesError("E_VOICE_PROVIDER_FAILED", {
      message: `the TTS provider '${choice.name}' wrote no audio to ${file}`,
    });
  return file;
}

export function textToSpeechTool(host: VoiceHost): Omit<ToolEntry, "owner"> {
  return {
    name: "text_to_speech",
    toolset: "tts",
    schema: TEXT_TO_SPEECH_SCHEMA,
    requires_env: [],
    description: TEXT_TO_SPEECH_SCHEMA.description,
    emoji: "🔊",
    check_fn: () => "choice" in resolveTts(host.config, host.providers),
    handler: async (args, extra) => {
      const text = typeof args.text === "string" ? args.text.trim() : "";
      if (!text) throw new HermesError("E_AGENT_TOOL_ARGS", { message: "text_to_speech needs a non-empty 'text'" });
      const r = resolveTts(host.config, host.providers);
      if ("problem" in r) throw new HermesError("E_VOICE_NO_PROVIDER", { message: r.problem });
      const spoken = await approvedScript(host, text, r.choice.name);
      const dest = audioDestination(args.output_path, host.home, r.choice);
      await mkdir(dirname(dest), { recursive: true });
      const file = await synthesize(r.choice, spoken, dest, signalOf(extra));
      const bytes = (await stat(file)).size;
      return JSON.stringify({ success: true, file_path: file, provider: r.choice.name, bytes });
    },
  };
}

/** The audio file the model named: it must exist, be a file and hold something. */
async function audioInput(arg: unknown): Promise<string> {
  if (typeof arg !== "string" || !arg.trim())
    throw new HermesError("E_AGENT_TOOL_ARGS", { message: "transcribe_audio needs a non-empty 'file_path'" });
  const file = resolve(expandHome(arg.trim()));
  let ok = false;
  try {
    const st = await stat(file);
    ok = st.isFile() && st.size > 0;
  } catch {
    /* reported below */
  }
  if (!ok) throw new HermesError("E_VOICE_INPUT", { message: `${file} is not an existing, non-empty audio file` });
  return file;
}

/** What the backend gets after pre_transcription: model, language and prompt (file_path never changes). */
interface SttRequestFields {
  model: string | null;
  language: string | null;
  prompt: string | null;
}

async function steer(host: VoiceHost, file: string, choice: SttChoice, model: unknown): Promise<SttRequestFields> {
  if (model !== undefined && model !== null && typeof model !== "string")
    throw new HermesError("E_AGENT_TOOL_ARGS", { message: "transcribe_audio: 'model' must be a string" });
  const configured = choice.kind === "command" ? choice.cfg.model : "";
  const base: SttRequestFields = {
    model: plainValue((model as string | undefined)?.trim() || configured || null, "model"),
    language: (choice.kind === "command" ? choice.cfg.language : choice.language) || null,
    prompt: sttPrompt(host.config),
  };
  const payload = { file_path: file, provider: choice.name, ...base, source: "tool" };
  const changes = await hookSite(host).lastWriterPerField("pre_transcription", payload);
  return {
    model: plainValue(changes.model ?? base.model, "pre_transcription model"),
    language: plainValue(changes.language ?? base.language, "pre_transcription language"),
    prompt: changes.prompt !== undefined ? changes.prompt || null : base.prompt,
  };
}

function transcriptOf(name: string, r: unknown): string {
  if (typeof r === "string") return r;
  const o = (r && typeof r === "object" ? r : {}) as Exclude<TranscribeResult, string>;
  if (o.success === false || typeof o.transcript !== "string") {
    const why = typeof o.error === "string" && o.error ? o.error : "no transcript returned";
    throw new HermesError("E_VOICE_PROVIDER_FAILED", {
      message: `the transcription provider '${name}' failed: ${why}`,
    });
  }
  return o.transcript;
}

async function transcribe(host: VoiceHost, choice: SttChoice, file: string, f: SttRequestFields, signal: AbortSignal) {
  if (choice.kind === "plugin") {
    const opts = {
      ...(f.model ? { model: f.model } : {}),
      ...(f.language ? { language: f.language } : {}),
      ...(f.prompt ? { prompt: f.prompt } : {}),
      signal,
    };
    try {
      return transcriptOf(choice.name, await choice.provider.transcribe(file, opts));
    } catch (e) {
      if (e instanceof HermesError) throw e;
      throw new HermesError("E_VOICE_PROVIDER_FAILED", {
        message: `the transcription provider '${choice.name}' failed: ${errText(e)}`,
      });
    }
  }
  // Command backends take no prompt, as in the original: the hint is dropped with a debug line.
  if (f.prompt) host.log.debug(`STT provider '${choice.name}' is a command; the prompt is not passed to it`);
  const run: CommandRun = { env: process.env, signal };
  const req = { file, model: f.model ?? "", language: f.language ?? "en" };
  const work = await makeScratch("hermes-stt-");
  try {
    return choice.kind === "command"
      ? await runSttCommand(choice.cfg, req, run, work)
      : await runLocalSttCommand(choice.template, req, run, work);
  } finally {
    await work.cleanup();
  }
}

export function transcribeAudioTool(host: VoiceHost): Omit<ToolEntry, "owner"> {
  return {
    name: "transcribe_audio",
    toolset: "stt",
    schema: TRANSCRIBE_AUDIO_SCHEMA,
    requires_env: [],
    description: TRANSCRIBE_AUDIO_SCHEMA.description,
    emoji: "🎙️",
    check_fn: () => "choice" in resolveStt(host.config, host.providers, process.env),
    handler: async (args, extra) => {
      const file = await audioInput(args.file_path);
      const r = resolveStt(host.config, host.providers, process.env);
      if ("problem" in r) throw new HermesError("E_VOICE_NO_PROVIDER", { message: r.problem });
      const fields = await steer(host, file, r.choice, args.model);
      const transcript = await transcribe(host, r.choice, file, fields, signalOf(extra));
      return JSON.stringify({ success: true, transcript: transcript.trim(), provider: r.choice.name });
    },
  };
}

/** The voice tools; each is offered only while its configured provider resolves and is available. */
export function voiceTools(host: VoiceHost): Array<Omit<ToolEntry, "owner">> {
  return [textToSpeechTool(host), transcribeAudioTool(host)];
}
