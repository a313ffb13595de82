import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import { agentHome, type ChatJson, fakeOpenAI, logLines, type Reply } from "./agent-helpers.js";

/**
 * Issue 17: image and video generation providers and terminal environment providers, selected by
 * their config keys (image_gen.provider, video_gen.provider, terminal.backend) and used by the agent,
 * against a real chat-completions server, with plugins that write real files and run real commands.
 */
const scratch = new Scratch("hermes-e2e-agent-providers-");
afterAll(() => scratch.cleanup());

// A 1×1 PNG.
const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function writePlugin(dir: string, manifest: string, code: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), manifest);
  writeFileSync(join(dir, "index.js"), code);
}

/** A bundled backend (loads without plugins.enabled): an image provider writing a real PNG into $MEDIA_OUT. */
function writePngmaker(bundled: string): void {
  writePlugin(
    join(bundled, "image_gen", "pngmaker"),
    'name: pngmaker\nversion: "1"\nkind: backend\n',
    `import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
export function register(ctx) {
  ctx.register_image_gen_provider({
    name: "pngmaker",
    is_available: () => process.env.PNGMAKER_OFF !== "1",
    generate(prompt, options) {
      const dir = process.env.MEDIA_OUT;
      mkdirSync(dir, { recursive: true });
      const file = join(dir, "pngmaker-1.png");
      writeFileSync(file, Buffer.from(${JSON.stringify(PNG_B64)}, "base64"));
      writeFileSync(join(dir, "pngmaker-call.json"), JSON.stringify({ prompt, options: { ...options, signal: ` +
      `options.signal instanceof AbortSignal } }));
      return { success: true, image: file, model: options.model, aspect_ratio: options.aspect_ratio, prompt };
    },
  });
}
`,
  );
}

/** A user plugin (enabled in config.yaml): a video provider that answers with a bare path. */
function writeClipmaker(plugins: string): void {
  writePlugin(
    join(plugins, "clipmaker"),
    'name: clipmaker\nversion: "1"\nkind: backend\n',
    `import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
export function register(ctx) {
  ctx.register_video_gen_provider({
    name: "clipmaker",
    async generate(prompt, options) {
      const dir = process.env.MEDIA_OUT;
      mkdirSync(dir, { recursive: true });
      const file = join(dir, "clip.mp4");
      writeFileSync(file, "not really an mp4: " + prompt);
      const { signal, ...rest } = options;
      writeFileSync(join(dir, "clipmaker-call.json"), JSON.stringify({ prompt, options: rest }));
      return file;
    },
  });
}
`,
  );
}

async function chat(home: string, bundled: string, cwd: string, replies: Reply[], env: Record<string, string>) {
  const server = await fakeOpenAI(replies);
  try {
    const r = await runCli(
      ["--home", home, "chat", "--base-url", server.url, "--model", "m", "--query", "go", "--json"],
      { env: { HERMES_BUNDLED_PLUGINS: bundled, ...env }, cwd },
    );
    const offered = ((server.requests[0]?.tools ?? []) as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    if (!r.stdout) throw new Error(`no JSON on stdout (exit ${r.code}): ${r.stderr}`);
    return { ...r, json: JSON.parse(r.stdout) as ChatJson, offered, requests: server.requests };
  } finally {
    await server.close();
  }
}

describe("image and video generation providers", () => {
  function mediaHome(name: string, extraYaml: string) {
    const root = scratch.dir(name);
    const bundled = join(root, "bundled");
    writePngmaker(bundled);
    const h = agentHome(root, { enabled: ["clipmaker"], bundled, extraYaml });
    writeClipmaker(join(h.home, "plugins"));
    const out = join(root, "media");
    const work = join(root, "work");
    mkdirSync(work);
    return { ...h, out, work };
  }

  it(
    "selected by image_gen.provider / video_gen.provider: the model calls image_generate and video_generate, " +
      "the providers write real files and the results name them",
    async () => {
      const h = mediaHome(
        "media",
        "image_gen:\n  provider: pngmaker\n  model: tiny-v1\nvideo_gen:\n  provider: clipmaker\n",
      );
      const r = await chat(
        h.home,
        h.bundled,
        h.work,
        [
          {
            tools: [
              { name: "image_generate", arguments: JSON.stringify({ prompt: "a red dot", aspect_ratio: "square" }) },
              {
                name: "video_generate",
                arguments: JSON.stringify({ prompt: "a dot moving", duration: 4, model: "ignored", audio: false }),
              },
            ],
          },
          { say: "done" },
        ],
        { MEDIA_OUT: h.out },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.offered).toEqual(expect.arrayContaining(["image_generate", "video_generate", "terminal"]));
      const [img, vid] = r.json.tool_calls;
      expect(img).toMatchObject({ tool_name: "image_generate", status: "success" });
      const png = join(h.out, "pngmaker-1.png");
      expect(JSON.parse(img!.result)).toEqual({
        success: true,
        image: png,
        model: "tiny-v1",
        aspect_ratio: "square",
        prompt: "a red dot",
        provider: "pngmaker",
      });
      // A real PNG on disk: the signature, then the IHDR chunk.
      const bytes = readFileSync(png);
      expect(bytes.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
      expect(bytes.subarray(12, 16).toString("ascii")).toBe("IHDR");
      // The provider got the configured model and an abort signal; the model cannot pick the model.
      expect(JSON.parse(readFileSync(join(h.out, "pngmaker-call.json"), "utf8"))).toEqual({
        prompt: "a red dot",
        options: { aspect_ratio: "square", model: "tiny-v1", signal: true },
      });
      const clip = join(h.out, "clip.mp4");
      expect(vid).toMatchObject({ tool_name: "video_generate", status: "success" });
      expect(JSON.parse(vid!.result)).toEqual({
        success: true,
        video: clip,
        provider: "clipmaker",
        prompt: "a dot moving",
      });
      expect(readFileSync(clip, "utf8")).toBe("not really an mp4: a dot moving");
      expect(JSON.parse(readFileSync(join(h.out, "clipmaker-call.json"), "utf8"))).toEqual({
        prompt: "a dot moving",
        options: { duration: 4, audio: false },
      });
      // What the model read back is the result that names the files.
      const toolMsgs = (r.requests[1]!.messages as Array<{ role: string; content: string }>).filter(
        (m) => m.role === "tool",
      );
      expect(toolMsgs.map((m) => JSON.parse(m.content).image ?? JSON.parse(m.content).video)).toEqual([png, clip]);
    },
  );

  it("without the keys, neither tool is offered though both providers are loaded", async () => {
    const h = mediaHome("media-off", "");
    const r = await chat(h.home, h.bundled, h.work, [{ say: "nothing to draw" }], { MEDIA_OUT: h.out });
    expect(r.code, r.stderr).toBe(0);
    expect(r.offered).toContain("terminal");
    expect(r.offered).not.toContain("image_generate");
    expect(r.offered).not.toContain("video_generate");
  });

  it(
    "an unavailable provider (is_available false) or a key naming no registered provider: not offered, and a " +
      "call anyway says the tool is not available",
    async () => {
      const h = mediaHome("media-unavailable", "image_gen:\n  provider: pngmaker\nvideo_gen:\n  provider: clipmakr\n");
      const r = await chat(
        h.home,
        h.bundled,
        h.work,
        [{ tools: [{ name: "image_generate", arguments: JSON.stringify({ prompt: "x" }) }] }, { say: "ok" }],
        { MEDIA_OUT: h.out, PNGMAKER_OFF: "1" },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.offered).not.toContain("image_generate");
      expect(r.offered).not.toContain("video_generate");
      expect(r.json.tool_calls[0]).toMatchObject({ tool_name: "image_generate", status: "error" });
      expect(JSON.parse(r.json.tool_calls[0]!.result).error).toMatch(/^tool 'image_generate' is not available here/);
      expect(existsSync(h.out)).toBe(false);
    },
  );
});

describe("terminal environment providers", () => {
  /** A terminal environment that runs commands through `sh -c` in $JAIL_DIR and prefixes the output. */
  function writeJailbox(plugins: string): void {
    writePlugin(
      join(plugins, "jailbox"),
      'name: jailbox\nversion: "1"\nkind: backend\n',
      `import { spawnSync } from "node:child_process";
import { appendFileSync } from "node:fs";
const log = (ev) => appendFileSync(process.env.JAIL_LOG, JSON.stringify(ev) + "\\n");
export function register(ctx) {
  ctx.register_terminal_environment_provider({
    name: "JailBox",
    create_environment({ cwd, timeout, task_id }) {
      log({ ev: "create", timeout, task_id: typeof task_id });
      return {
        execute(command, { cwd: workdir, timeout, signal }) {
          log({ ev: "execute", command, workdir, timeout, signal: signal instanceof AbortSignal });
          const r = spawnSync("sh", ["-c", command], { cwd: process.env.JAIL_DIR, encoding: "utf8" });
          return { output: "[jailbox] " + r.stdout + r.stderr, exit_code: r.status };
        },
        cleanup() { log({ ev: "cleanup" }); },
      };
    },
  });
  // The built-in name: refused with a warning, so it can never stand in for the local terminal.
  ctx.register_terminal_environment_provider({ name: "Local", create_environment() { throw new Error("no"); } });
}
`,
    );
    // An approval transport that approves once and records what it was asked.
    writePlugin(
      join(plugins, "approver"),
      'name: approver\nversion: "1"\n',
      `import { appendFileSync } from "node:fs";
export function register(ctx) {
  ctx.register_approval_transport("test-ui", (request) => {
    appendFileSync(process.env.JAIL_LOG, JSON.stringify({ ev: "approval", command: request.command, ` +
        `description: request.description }) + "\\n");
    return request.respond("once");
  });
}
`,
    );
  }

  function jailHome(name: string, backend: string) {
    const root = scratch.dir(name);
    const h = agentHome(root, {
      enabled: ["jailbox", "approver"],
      extraYaml: `terminal:\n  backend: ${backend}\nsecurity:\n  approval:\n    transport: test-ui\n`,
    });
    writeJailbox(join(h.home, "plugins"));
    const work = join(root, "work");
    const jail = join(root, "jail");
    for (const d of [work, jail]) mkdirSync(join(d, "victim"), { recursive: true });
    const log = join(root, "jail.jsonl");
    const events = () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [];
    return { ...h, work: realpathSync(work), jail: realpathSync(jail), log, events };
  }

  it(
    "terminal.backend routes the terminal tool through the registered environment; a dangerous command still " +
      "needs approval, and the request names the backend",
    async () => {
      const h = jailHome("jail", "jailbox");
      const term = (command: string): Reply => ({
        tools: [{ name: "terminal", arguments: JSON.stringify({ command }) }],
      });
      const r = await chat(h.home, h.bundled, h.work, [term("pwd && echo hi"), term("rm -rf victim"), { say: "ok" }], {
        JAIL_DIR: h.jail,
        JAIL_LOG: h.log,
      });
      expect(r.code, r.stderr).toBe(0);
      const [pwd, rm] = r.json.tool_calls;
      expect(JSON.parse(pwd!.result)).toEqual({ output: `[jailbox] ${h.jail}\nhi\n`, exit_code: 0, error: null });
      expect(rm).toMatchObject({ status: "success" });
      // It ran in the jail, not in the agent's directory.
      expect(existsSync(join(h.jail, "victim"))).toBe(false);
      expect(existsSync(join(h.work, "victim"))).toBe(true);
      expect(h.events()).toEqual([
        { ev: "create", timeout: 180, task_id: "string" },
        { ev: "execute", command: "pwd && echo hi", workdir: null, timeout: 180, signal: true },
        { ev: "cleanup" },
        {
          ev: "approval",
          command: "rm -rf victim",
          description: "recursive delete (on terminal backend 'jailbox')",
        },
        { ev: "create", timeout: 180, task_id: "string" },
        { ev: "execute", command: "rm -rf victim", workdir: null, timeout: 180, signal: true },
        { ev: "cleanup" },
      ]);
      const warn = logLines(r.stderr).find((l) => String(l.msg).includes("terminal_environment provider 'local'"));
      expect(warn?.msg).toMatch(/'local' is the built-in terminal_environment name; ignored/);
    },
  );

  it("an unknown terminal.backend: the tool runs nothing and names the nearest registered backend", async () => {
    const h = jailHome("jail-typo", "JailBx");
    const r = await chat(
      h.home,
      h.bundled,
      h.work,
      [{ tools: [{ name: "terminal", arguments: JSON.stringify({ command: "touch marker" }) }] }, { say: "ok" }],
      { JAIL_DIR: h.jail, JAIL_LOG: h.log },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.tool_calls[0]).toMatchObject({ tool_name: "terminal", status: "error" });
    expect(JSON.parse(r.json.tool_calls[0]!.result).error).toBe(
      "tool 'terminal' failed: terminal.backend 'jailbx' is not a registered terminal environment; did you mean " +
        "'jailbox'? (registered: local, jailbox); nothing was run",
    );
    expect(existsSync(join(h.work, "marker")) || existsSync(join(h.jail, "marker"))).toBe(false);
    expect(h.events()).toEqual([]);
  });
});
