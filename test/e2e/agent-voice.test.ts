import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { type ChatJson, logLines, waitFor } from "./agent-helpers.js";

/**
 * Issue 17, voice: text_to_speech and transcribe_audio through the spawned CLI with a scripted model.
 * The TTS command provider is espeak-ng itself, writing a real WAV. No speech recognizer runs offline,
 * so the STT command provider is a small script that checks the file is a RIFF/WAVE with audible
 * samples and reports what it measured (and the language and model it was given) as the transcript.
 */
const scratch = new Scratch("hermes-e2e-agent-voice-");
const node = process.execPath;
afterAll(() => scratch.cleanup());

/** The stand-in recognizer: parses the WAV, refuses anything short or silent, writes its findings. */
const WAVCHECK = `import { readFileSync, writeFileSync } from "node:fs";
const [input, output, language, model] = process.argv.slice(2);
const b = readFileSync(input);
if (b.toString("ascii", 0, 4) !== "RIFF" || b.toString("ascii", 8, 12) !== "WAVE") {
  console.error("not a RIFF/WAVE file: " + input);
  process.exit(3);
}
let off = 12, fmt, data;
while (off + 8 <= b.length) {
  const id = b.toString("ascii", off, off + 4), size = b.readUInt32LE(off + 4);
  if (id === "fmt ")
    fmt = { ch: b.readUInt16LE(off + 10), rate: b.readUInt32LE(off + 12), bits: b.readUInt16LE(off + 22) };
  if (id === "data") { data = b.subarray(off + 8, Math.min(b.length, off + 8 + size)); break; }
  off += 8 + size + (size % 2);
}
if (!fmt || !data || fmt.bits !== 16) { console.error("no 16-bit fmt/data chunk"); process.exit(4); }
let peak = 0;
for (let i = 0; i + 1 < data.length; i += 2) peak = Math.max(peak, Math.abs(data.readInt16LE(i)));
const seconds = data.length / (fmt.ch * 2) / fmt.rate;
if (seconds < 0.3 || peak < 1000) {
  console.error("too short or silent: " + seconds + " s, peak " + peak);
  process.exit(5);
}
writeFileSync(output, "RIFF/WAVE " + fmt.rate + " Hz " + fmt.ch + " ch, " + seconds.toFixed(2) + " s, peak " + peak +
  "; language=" + language + " model=" + model + "\\n");
`;

/** A plugin whose two pre_transcription callbacks record the payload and steer the request. */
function writeSteerPlugin(home: string, record: string): void {
  const dir = join(home, "plugins", "stt-steer");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), "name: stt-steer\nversion: '1'\nhooks: [pre_transcription]\n");
  writeFileSync(
    join(dir, "index.js"),
    `import { appendFileSync } from "node:fs";
export function register(ctx) {
  ctx.register_hook("pre_transcription", (p) => {
    appendFileSync(${JSON.stringify(record)}, JSON.stringify(p) + "\\n");
    return { language: "de", model: "tiny", file_path: "/etc/passwd" };
  });
  ctx.register_hook("pre_transcription", () => ({ language: "fr", model: 42 }));
}
`,
  );
}

interface Run {
  out: ChatJson;
  stderr: string;
}

async function chat(root: string, home: string, turns: string, env: Record<string, string> = {}): Promise<Run> {
  const script = writeText(join(root, "script.yaml"), turns);
  const tmp = join(root, "tmp");
  mkdirSync(tmp, { recursive: true });
  const r = await runCli(["--home", home, "chat", "--script", script, "--query", "go", "--json"], {
    env: { HERMES_BUNDLED_PLUGINS: join(root, "no-bundled"), TMPDIR: tmp, ...env },
    cwd: root,
  });
  expect(r.code, r.stderr).toBe(0);
  // Every command run had its own scratch folder, and none is left behind.
  expect(readdirSync(tmp).filter((d) => d.startsWith("hermes-tts-") || d.startsWith("hermes-stt-"))).toEqual([]);
  return { out: JSON.parse(r.stdout) as ChatJson, stderr: r.stderr };
}

function isWav(file: string): boolean {
  const b = readFileSync(file);
  return b.length > 1000 && b.toString("ascii", 0, 4) === "RIFF" && b.toString("ascii", 8, 12) === "WAVE";
}

describe("voice through config-declared command providers", () => {
  it(
    "espeak-ng speaks a real WAV, the command STT provider reads it back, and pre_transcription saw and " +
      "steered the request",
    async () => {
      const root = scratch.dir("commands");
      const home = join(root, "home");
      const record = join(root, "pre_transcription.jsonl");
      writeSteerPlugin(home, record);
      writeText(join(root, "wavcheck.mjs"), WAVCHECK);
      writeText(
        join(home, "config.yaml"),
        `plugins:
  enabled: [stt-steer]
tts:
  provider: espeak
  providers:
    espeak:
      type: command
      command: "espeak-ng -w {output_path} -f {input_path}"
      output_format: wav
stt:
  provider: WavCheck
  prompt: "Hermes, Nous"
  providers:
    wavcheck:
      command: ${JSON.stringify(`${node} ${join(root, "wavcheck.mjs")} {input_path} {output_path} {language} {model}`)}
      language: en
`,
      );
      const wav = join(root, "out dir", "hello.wav");
      const { out, stderr } = await chat(
        root,
        home,
        `- call: {tool: text_to_speech, args: {text: "hello world", output_path: ${JSON.stringify(wav)}}}
- call: {tool: transcribe_audio, args: {file_path: ${JSON.stringify(wav)}}}
- call: {tool: text_to_speech, args: {text: "saved in the audio cache"}}
- call: {tool: text_to_speech, args: {text: "the format decides", output_path: again.mp3}}
- say: done
`,
      );
      expect(out.tool_calls.map((c) => [c.tool_name, c.status])).toEqual([
        ["text_to_speech", "success"],
        ["transcribe_audio", "success"],
        ["text_to_speech", "success"],
        ["text_to_speech", "success"],
      ]);
      const spoken = JSON.parse(out.tool_calls[0]!.result) as Record<string, unknown>;
      expect(spoken).toMatchObject({ success: true, file_path: wav, provider: "espeak" });
      expect(spoken.bytes).toBe(readFileSync(wav).length);
      expect(isWav(wav)).toBe(true);
      // The stand-in recognizer measured real audio; the hooks' last writer chose language and model.
      const heard = JSON.parse(out.tool_calls[1]!.result) as { transcript: string; provider: string };
      expect(heard.provider).toBe("wavcheck");
      const m = heard.transcript.match(/^RIFF\/WAVE (\d+) Hz 1 ch, ([\d.]+) s, peak \d+; language=fr model=tiny$/);
      expect(m, heard.transcript).not.toBeNull();
      expect(Number(m![2])).toBeGreaterThan(0.5);
      // pre_transcription got the original's payload, before the backend ran.
      const payloads = readFileSync(record, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(payloads).toEqual([
        {
          file_path: wav,
          provider: "wavcheck",
          model: null,
          language: "en",
          prompt: "Hermes, Nous",
          source: "tool",
          telemetry_schema_version: "hermes.observer.v1",
        },
      ]);
      expect(logLines(stderr).some((l) => String(l.msg).includes("file_path is read-only; ignored"))).toBe(true);
      // Without output_path the audio lands in the home's audio cache, named by the command's format.
      const cached = JSON.parse(out.tool_calls[2]!.result).file_path as string;
      expect(cached).toMatch(new RegExp(`^${join(home, "cache", "audio")}/tts_\\d{8}_\\d{6}_[a-z0-9]+\\.wav$`));
      expect(isWav(cached)).toBe(true);
      // The command writes WAV, so a .mp3 name asked for becomes .wav rather than a mislabelled file.
      expect(JSON.parse(out.tool_calls[3]!.result).file_path).toBe(join(root, "again.wav"));
      expect(isWav(join(root, "again.wav"))).toBe(true);
      expect(existsSync(join(root, "again.mp3"))).toBe(false);
    },
  );
});

/** A 16-bit mono WAV of a 440 Hz tone, as JavaScript source (the plugin below and the test both use it). */
const WAV_JS = `function writeWav(file, seconds) {
  const rate = 8000, n = Math.round(rate * seconds), data = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) data.writeInt16LE(Math.round(12000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const h = Buffer.alloc(44);
  h.write("RIFF", 0); h.writeUInt32LE(36 + data.length, 4); h.write("WAVE", 8); h.write("fmt ", 12);
  h.writeUInt32LE(16, 16); h.writeUInt16LE(1, 20); h.writeUInt16LE(1, 22); h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28); h.writeUInt16LE(2, 32); h.writeUInt16LE(16, 34); h.write("data", 36);
  h.writeUInt32LE(data.length, 40);
  writeFileSync(file, Buffer.concat([h, data]));
}`;

/** Plugin providers of both kinds and a pre_tts_synthesis policy (rewrites digits once, blocks "secret"). */
function writeVoiceKit(home: string): void {
  const dir = join(home, "plugins", "voice-kit");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "plugin.yaml"),
    "name: voice-kit\nversion: '1'\nhooks: [pre_tts_synthesis, pre_transcription]\n",
  );
  writeFileSync(
    join(dir, "index.js"),
    `import { appendFileSync, writeFileSync } from "node:fs";
${WAV_JS}
export function register(ctx) {
  const log = (rec) => appendFileSync(ctx.get_config("log"), JSON.stringify(rec) + "\\n");
  ctx.register_tts_provider({
    name: "Chime",
    synthesize(text, output_path, opts) {
      log({ tts: text, output_path, format: opts.format, signal: opts.signal instanceof AbortSignal });
      const file = output_path.replace(/\\.mp3$/, ".wav");
      writeWav(file, 1);
      return file;
    },
  });
  ctx.register_transcription_provider({
    name: "echo-stt",
    async transcribe(file_path, opts) {
      log({ stt: file_path, model: opts.model ?? null, language: opts.language ?? null, prompt: opts.prompt ?? null });
      return { success: true, transcript: "  echo-stt got " + file_path + "\\n" };
    },
  });
  ctx.register_hook("pre_transcription", (p) => ({ prompt: p.model === "clear" ? "" : p.prompt + ", Chime" }));
  ctx.register_hook("pre_tts_synthesis", ({ text, provider }) => {
    log({ policy: text, provider });
    if (/secret/.test(text)) return { action: "block", message: "no secrets aloud" };
    return /\\d/.test(text) ? { text: text.replace(/3/g, "three") } : null;
  });
}
`,
  );
}

describe("voice through plugin providers", () => {
  it(
    "tts.provider and stt.provider select plugin-registered providers; pre_tts_synthesis rewrites once " +
      "(re-checked) and blocks",
    async () => {
      const root = scratch.dir("plugins");
      const home = join(root, "home");
      const log = join(root, "voice-kit.jsonl");
      writeVoiceKit(home);
      writeText(
        join(home, "config.yaml"),
        `plugins:
  enabled: [voice-kit]
  entries:
    voice-kit:
      settings:
        log: ${JSON.stringify(log)}
tts:
  provider: Chime
stt:
  provider: echo-stt
  language: ja
  prompt: Hermes
`,
      );
      const { out } = await chat(
        root,
        home,
        `- call: {tool: text_to_speech, args: {text: "I have 3 apples", output_path: chime.mp3}}
- call: {tool: text_to_speech, args: {text: "the secret plan"}}
- call: {tool: transcribe_audio, args: {file_path: chime.wav, model: whisper-1}}
- call: {tool: transcribe_audio, args: {file_path: chime.wav, model: clear}}
- say: done
`,
      );
      expect(out.tool_calls.map((c) => [c.tool_name, c.status])).toEqual([
        ["text_to_speech", "success"],
        ["text_to_speech", "error"],
        ["transcribe_audio", "success"],
        ["transcribe_audio", "success"],
      ]);
      // The plugin chose a .wav name for the .mp3 path it was given; the tool reports the file it wrote.
      const chime = join(root, "chime.wav");
      expect(JSON.parse(out.tool_calls[0]!.result)).toEqual({
        success: true,
        file_path: chime,
        provider: "chime",
        bytes: readFileSync(chime).length,
      });
      expect(isWav(chime)).toBe(true);
      expect(out.tool_calls[1]!.result).toContain("pre_tts_synthesis refused the text: no secrets aloud");
      expect(JSON.parse(out.tool_calls[2]!.result)).toEqual({
        success: true,
        transcript: `echo-stt got ${chime}`,
        provider: "echo-stt",
      });
      const recs = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(recs).toEqual([
        { policy: "I have 3 apples", provider: "chime" },
        // The rewrite went through every callback again before anything was spoken.
        { policy: "I have three apples", provider: "chime" },
        { tts: "I have three apples", output_path: join(root, "chime.mp3"), format: "mp3", signal: true },
        { policy: "the secret plan", provider: "chime" },
        // pre_transcription extends stt.prompt for the plugin provider, or clears it with "".
        { stt: chime, model: "whisper-1", language: "ja", prompt: "Hermes, Chime" },
        { stt: chime, model: "clear", language: "ja", prompt: null },
      ]);
    },
  );
});

/** The error text the model got for a failed tool call. */
const errorOf = (c: ChatJson["tool_calls"][number]) => (JSON.parse(c.result) as { error: string }).error;

describe("voice tools are offered only with a provider, and fail with clear errors", () => {
  it("without a provider neither tool is offered; a required policy plugin that is missing blocks", async () => {
    const root = scratch.dir("unconfigured");
    const home = join(root, "home");
    writeText(join(home, "config.yaml"), "tts:\n  provider: espeak\n");
    const { out } = await chat(
      root,
      home,
      `- call: {tool: text_to_speech, args: {text: hi}}
- call: {tool: transcribe_audio, args: {file_path: x.wav}}
- say: done
`,
    );
    // tts.provider names nothing (no command, no plugin): not offered; stt is not configured at all.
    for (const c of out.tool_calls) {
      expect(c.status).toBe("error");
      expect(errorOf(c)).toMatch(/is not available here/);
    }
    writeText(
      join(home, "config.yaml"),
      `tts:
  provider: espeak
  providers:
    espeak: {command: "espeak-ng -w {output_path} -f {input_path}", output_format: wav}
  pre_synthesis:
    required_plugins: [speech-policy]
`,
    );
    const again = await chat(root, home, "- call: {tool: text_to_speech, args: {text: hi}}\n- say: done\n");
    expect(errorOf(again.out.tool_calls[0]!)).toContain(
      "tts.pre_synthesis.required_plugins: speech-policy has no pre_tts_synthesis hook registered",
    );
    expect(existsSync(join(home, "cache", "audio"))).toBe(false);
  });

  it(
    "HERMES_LOCAL_STT_COMMAND runs without a shell when no stt.provider is set; bad paths and models are refused " +
      "before any command runs",
    async () => {
      const root = scratch.dir("local-command");
      const home = join(root, "home");
      writeText(join(home, "config.yaml"), "stt:\n  language: nl\n");
      // Writes its transcript one folder down, as whisper-style tools pick their own file names.
      writeText(
        join(root, "localstt.mjs"),
        `import { mkdirSync, statSync, writeFileSync } from "node:fs";
const [input, outDir, lang, ...rest] = process.argv.slice(2);
mkdirSync(outDir + "/sub");
writeFileSync(outDir + "/sub/result.txt", "local heard " + statSync(input).size + " bytes; lang=" + lang +
  "; rest=" + JSON.stringify(rest) + "\\n");
`,
      );
      const localCommand = `${node} ${join(root, "localstt.mjs")} {input_path} {output_dir} {language} | tee x`;
      const audio = join(root, "tone.wav");
      new Function("writeFileSync", "file", `${WAV_JS}\nwriteWav(file, 0.5);`)(writeFileSync, audio);
      const { out } = await chat(
        root,
        home,
        `- call: {tool: transcribe_audio, args: {file_path: tone.wav}}
- call: {tool: transcribe_audio, args: {file_path: missing.wav}}
- call: {tool: transcribe_audio, args: {file_path: tone.wav, model: "--output=/etc/x"}}
- call: {tool: text_to_speech, args: {text: hi}}
- say: done
`,
        { HERMES_LOCAL_STT_COMMAND: localCommand },
      );
      expect(out.tool_calls.map((c) => c.status)).toEqual(["success", "error", "error", "error"]);
      // `| tee x` reached the program as two literal arguments: no shell ran.
      expect(JSON.parse(out.tool_calls[0]!.result)).toEqual({
        success: true,
        transcript: `local heard ${readFileSync(audio).length} bytes; lang=nl; rest=["|","tee","x"]`,
        provider: "local_command",
      });
      expect(errorOf(out.tool_calls[1]!)).toContain(
        `${join(root, "missing.wav")} is not an existing, non-empty audio file`,
      );
      expect(errorOf(out.tool_calls[2]!)).toContain('model "--output=/etc/x" is not a plain name');
      expect(errorOf(out.tool_calls[3]!)).toMatch(/text_to_speech' is not available here/);
    },
  );

  it("a command over its timeout is killed with its whole process group; a failing one quotes its stderr", async () => {
    const root = scratch.dir("timeout");
    const home = join(root, "home");
    const pidFile = join(root, "bg.pid");
    // The backgrounded sleep is a grandchild: only killing the process group ends it.
    const slow = `sh -c 'sleep 60 & echo $! > "$1"; wait' _ ${pidFile}`;
    writeText(
      join(home, "config.yaml"),
      `tts:
  provider: slow
  providers:
    slow: {command: ${JSON.stringify(slow)}, timeout: 1}
stt:
  provider: broken
  providers:
    broken: {command: "sh -c 'echo cannot decode \\"$1\\" >&2; exit 3' _ {input_path}"}
`,
    );
    writeText(join(root, "x.ogg"), "not really audio");
    const { out } = await chat(
      root,
      home,
      `- call: {tool: text_to_speech, args: {text: hi, output_path: "../escape.wav"}}
- call: {tool: text_to_speech, args: {text: hi}}
- call: {tool: transcribe_audio, args: {file_path: x.ogg}}
- say: done
`,
    );
    expect(out.tool_calls.map((c) => c.status)).toEqual(["error", "error", "error"]);
    expect(errorOf(out.tool_calls[0]!)).toContain("output_path contains a '..' part");
    expect(existsSync(pidFile)).toBe(true);
    expect(errorOf(out.tool_calls[1]!)).toContain(
      "the TTS command provider 'slow' timed out after 1s; its process group was killed",
    );
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => !alive(), 15_000, `background sleep ${pid} to be gone`);
    // The command saw the audio under a plain name of hermes's own choosing, with the extension kept.
    expect(errorOf(out.tool_calls[2]!)).toMatch(
      /the STT command provider 'broken' exited with code 3: cannot decode .*\/hermes-stt-[^/]+\/input\.ogg$/,
    );
  });
});

describe("the voice keys of config.yaml", () => {
  it("hermes config validate checks tts and stt providers at their line; the original's sections pass", async () => {
    const root = scratch.dir("validate");
    const file = writeText(
      join(root, "config.yaml"),
      `tts:
  provider: espeak
  edge: {voice: en-US-AriaNeural}
  providers:
    espeak:
      command: "espeak-ng -w {output_path} -f {input_path}"
      output_format: mp4
      voice_compatible: true
stt:
  provider: local_command
  providers:
    w: {type: shell, command: ""}
`,
    );
    const r = await runCli(["config", "validate", file, "--format", "json"]);
    expect(r.code).toBe(1);
    const found = (JSON.parse(r.stdout) as Array<{ code: string; line: number; path: string }>).map((d) => [
      d.code,
      d.line,
      d.path,
    ]);
    expect(found).toEqual(
      expect.arrayContaining([
        ["E_SCHEMA_INVALID", 7, "tts.providers.espeak.output_format"],
        ["W_SCHEMA_UNKNOWN_FIELD", 8, "tts.providers.espeak.voice_compatible"],
        ["E_SCHEMA_INVALID", 12, "stt.providers.w.type"],
        ["E_SCHEMA_INVALID", 12, "stt.providers.w.command"],
      ]),
    );
    expect(found).toHaveLength(4);
  });
});
