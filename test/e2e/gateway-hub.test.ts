import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { readTrace, waitFor } from "./agent-helpers.js";
import {
  api,
  echoModel,
  type EchoModel,
  serve,
  type Served,
  writeRecorder,
  writeServeConfig,
} from "./serve-helpers.js";

/**
 * The chat platforms of `hermes serve` (src/gateway/platforms/hub.ts) as a platform plugin's author and
 * an operator meet them: a user platform plugin written into the home registers `loop` (and `loop2`,
 * `idle`, `crashy`), whose adapters each run a small control server: POST /in hands an inbound message
 * to host.deliver, POST /connected flips the adapter's `connected`; everything the gateway makes the
 * adapter do (send, add_reaction, set_thread_title, connect, disconnect) is appended to out.jsonl. The
 * built CLI is spawned as `hermes serve` with the echo model of serve-helpers.ts behind it.
 *
 * Covered: an answer going back to the chat it came from; allowed_users; pre_gateway_dispatch skip and
 * rewrite; /reset (on_session_finalize, on_session_reset), /help, /plugins and plugin commands
 * (pre_command with surface "gateway"); ctx.platform_actions granted two ways and every refusal code
 * produced for real (gateway_unavailable under `hermes chat --query`); ctx.inject_message by session_key
 * with and without allow_gateway_injection; an adapter that cannot connect retrying beside a working
 * API; a SIGHUP reload replacing the adapters.
 */
const scratch = new Scratch("hermes-e2e-gateway-hub-");
let model: EchoModel;
let served: Served;
let home: string;
/** Where the loop plugin keeps its port files and out.jsonl. */
let ctlDir: string;
/** The recorder's and the gate's JSON lines. */
let events: string;
/** What the actor plugins' platform actions and injections returned. */
let results: string;
let env: Record<string, string>;

// ---------------------------------------------------------------- the plugins

/** The platform plugin: four platforms, each adapter with its own control server. */
const LOOP_SOURCE = `import { appendFileSync, existsSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
const DIR = __DIR__;
const out = (r) => appendFileSync(DIR + "/out.jsonl", JSON.stringify(r) + "\\n");
const pause = () => new Promise((r) => setTimeout(r, 20));

/**
 * flaky and flaky-fail: the first adapter of each (the first generation's) fails its first connect and holds
 * its second one while DIR/flaky.hold exists, then connects (flaky) or fails (flaky-fail); any later
 * adapter connects at once.
 */
function makeFlaky(host) {
  const instance = randomUUID();
  const rec = (op, data = {}) => out({ platform: host.name, instance, op, ...data });
  let first = false;
  try {
    writeFileSync(DIR + "/" + host.name + ".first", instance, { flag: "wx" });
    first = true;
  } catch {}
  let calls = 0;
  const adapter = {
    connected: false,
    async connect() {
      const attempt = ++calls;
      rec("connect-start", { attempt });
      if (first && attempt === 1) throw new Error(host.name + ": the first attempt fails");
      if (first) while (existsSync(DIR + "/flaky.hold")) await pause();
      if (first && host.name === "flaky-fail") throw new Error("flaky-fail: gave up");
      adapter.connected = true;
      rec("connect", { attempt });
      return true;
    },
    async disconnect() {
      adapter.connected = false;
      rec("disconnect");
    },
    async send(chat_id, text) {
      rec("send", { chat_id, text });
      return { ok: true };
    },
  };
  return adapter;
}

function makeAdapter(host, kind) {
  const instance = randomUUID();
  const rec = (op, data = {}) => out({ platform: host.name, instance, op, ...data });
  let server;
  const adapter = {
    connected: false,
    max_message_length: Number(host.config.max_message_length ?? 0),
    async connect() {
      if (kind === "crashy") throw new Error("crashy cannot connect");
      server = createServer((req, res) => {
        let body = "";
        req.setEncoding("utf8");
        req.on("data", (d) => (body += d));
        req.on("end", async () => {
          try {
            const m = body ? JSON.parse(body) : {};
            if (req.url === "/in") {
              await host.deliver({
                platform: host.name,
                chat_id: m.chat,
                chat_type: m.chat_type ?? "dm",
                text: m.text,
                ...(m.from !== undefined ? { sender_id: m.from } : {}),
                ...(m.message_id ? { message_id: m.message_id } : {}),
                ...(m.thread ? { thread_id: m.thread } : {}),
              });
              res.end("queued");
            } else if (req.url === "/connected") {
              adapter.connected = m.value === true;
              res.end("ok");
            } else {
              res.statusCode = 404;
              res.end("no such route");
            }
          } catch (e) {
            res.statusCode = 500;
            res.end(String((e && e.stack) || e));
          }
        });
      });
      await new Promise((r) => server.listen(0, "127.0.0.1", r));
      adapter.connected = true;
      const file = DIR + "/" + host.name + ".port";
      writeFileSync(file + ".tmp", JSON.stringify({ port: server.address().port, instance }));
      renameSync(file + ".tmp", file);
      rec("connect");
      return true;
    },
    async disconnect() {
      adapter.connected = false;
      rec("disconnect");
      if (server) {
        server.closeAllConnections();
        await new Promise((r) => server.close(() => r()));
      }
    },
    async send(chat_id, text, opts) {
      rec("send", { chat_id, text, opts: opts ?? {} });
      return { ok: true, message_id: "sent-" + randomUUID() };
    },
  };
  if (kind === "loop") {
    adapter.add_reaction = async (chat_id, message_id, emoji) => {
      if (emoji === "boom") throw new Error("reaction exploded");
      rec("add_reaction", { chat_id, message_id, emoji });
      return emoji !== "refused";
    };
    adapter.set_thread_title = async (chat_id, thread_id, title) => {
      rec("set_thread_title", { chat_id, thread_id, title });
      return true;
    };
  }
  if (kind === "loop2") {
    // No set_thread_title; add_reaction is a plain function, not async, as plugin authors write them too.
    adapter.add_reaction = (chat_id, message_id, emoji) => {
      rec("add_reaction", { chat_id, message_id, emoji });
      return emoji !== "refused";
    };
  }
  return adapter;
}

export function register(ctx) {
  ctx.register_platform("loop", "Loopback", (host) => makeAdapter(host, "loop"));
  ctx.register_platform("loop2", "Loopback without thread titles", (host) => makeAdapter(host, "loop2"));
  ctx.register_platform("idle", "Registered but never enabled", (host) => makeAdapter(host, "loop"));
  ctx.register_platform("crashy", "Throws on connect", (host) => makeAdapter(host, "crashy"));
  ctx.register_platform("flaky", "Connects late", (host) => makeFlaky(host));
  ctx.register_platform("flaky-fail", "Fails late", (host) => makeFlaky(host));
}
`;

/**
 * pre_gateway_dispatch: records every event; "drop…" is skipped, "rw <text>" rewritten to "rewritten <text>",
 * "as-command <text>" to <text>. Two commands.
 */
const GATE_SOURCE = `import { appendFileSync } from "node:fs";
const OUT = __OUT__;
export function register(ctx) {
  ctx.register_hook("pre_gateway_dispatch", ({ event }) => {
    const seen = { ev: "dispatch", platform: event.platform, chat: event.chat_id, sender: event.sender_id ?? null };
    appendFileSync(OUT, JSON.stringify({ ...seen, text: event.text }) + "\\n");
    if (event.text.startsWith("drop")) return { action: "skip", reason: "dropped by the gate" };
    if (event.text.startsWith("rw ")) return { action: "rewrite", text: "rewritten " + event.text.slice(3) };
    if (event.text.startsWith("as-command ")) return { action: "rewrite", text: event.text.slice(11) };
    return null;
  });
  ctx.register_command("ping", (raw) => "pong " + raw, "answer pong");
  ctx.register_command("boom", () => {
    throw new Error("the boom command broke");
  }, "always fails");
}
`;

/**
 * A plugin that acts on a message `<key>: <json>` (pre_gateway_dispatch under serve, then skipped;
 * pre_llm_call under chat): `{op: "add_reaction"|"set_thread_title", args}` calls ctx.platform_actions,
 * `{op: "inject", session_key, text}` ctx.inject_message; the result is appended to results.jsonl.
 */
const ACTOR_SOURCE = `import { appendFileSync } from "node:fs";
const KEY = __KEY__;
const OUT = __OUT__;
async function act(ctx, text) {
  const prefix = KEY + ": ";
  if (typeof text !== "string" || !text.startsWith(prefix)) return false;
  const spec = JSON.parse(text.slice(prefix.length));
  let result;
  try {
    result =
      spec.op === "inject"
        ? ctx.inject_message(spec.text, "user", { session_key: spec.session_key })
        : await ctx.platform_actions[spec.op](spec.args);
  } catch (e) {
    result = { threw: String(e) };
  }
  appendFileSync(OUT, JSON.stringify({ plugin: KEY, tag: spec.tag, pid: process.pid, result }) + "\\n");
  return true;
}
export function register(ctx) {
  ctx.register_hook("pre_gateway_dispatch", async ({ event }) =>
    (await act(ctx, event.text)) ? { action: "skip", reason: "an actor command" } : null,
  );
  ctx.register_hook("pre_llm_call", async ({ user_message }) => {
    await act(ctx, user_message);
    return null;
  });
}
`;

/** A tool whose every call needs a person's approval (pre_tool_call "approve"). */
const GUARD_SOURCE = `export function register(ctx) {
  const parameters = { type: "object", properties: {} };
  ctx.register_tool({
    name: "guarded",
    description: "needs approval",
    schema: { name: "guarded", description: "needs approval", parameters },
    handler: () => "guarded ran",
  });
  ctx.register_hook("pre_tool_call", ({ tool_name }) =>
    tool_name === "guarded" ? { action: "approve", message: "run the guarded tool?", rule_key: "guarded" } : null,
  );
}
`;

const ACTORS = ["actor", "actor-legacy", "actor-plain"] as const;
type Actor = (typeof ACTORS)[number];

/** The platform plugin, keeping its files in `dir`. */
function writeLoopPlatform(plugins: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeText(
    join(plugins, "loop-platform", "plugin.yaml"),
    'name: loop-platform\nversion: "1"\nkind: platform\nlabel: Loopback\n',
  );
  writeText(
    join(plugins, "loop-platform", "index.js"),
    LOOP_SOURCE.replace("__DIR__", () => JSON.stringify(dir)),
  );
}

function writePlugins(plugins: string): void {
  writeLoopPlatform(plugins, ctlDir);
  writeText(join(plugins, "gate", "plugin.yaml"), 'name: gate\nversion: "1"\nhooks: [pre_gateway_dispatch]\n');
  writeText(
    join(plugins, "gate", "index.js"),
    GATE_SOURCE.replace("__OUT__", () => JSON.stringify(events)),
  );
  writeText(
    join(plugins, "guard", "plugin.yaml"),
    'name: guard\nversion: "1"\nprovides_tools: [guarded]\nhooks: [pre_tool_call]\n',
  );
  writeText(join(plugins, "guard", "index.js"), GUARD_SOURCE);
  writeRecorder(plugins, "rec", { file: events, hooks: ["on_session_finalize", "on_session_reset", "pre_command"] });
  for (const key of ACTORS) {
    // actor-legacy is written as for the original: no capabilities declared, the legacy config key set.
    const caps = key === "actor-legacy" ? "" : "capabilities: [gateway.platform_actions]\n";
    writeText(
      join(plugins, key, "plugin.yaml"),
      `name: ${key}\nversion: "1"\nhooks: [pre_gateway_dispatch, pre_llm_call]\n${caps}`,
    );
    writeText(
      join(plugins, key, "index.js"),
      ACTOR_SOURCE.replace("__KEY__", () => JSON.stringify(key)).replace("__OUT__", () => JSON.stringify(results)),
    );
  }
}

const CONFIG = `plugins:
  enabled: [loop-platform, gate, guard, rec, actor-legacy, actor-plain]
  entries:
    actor:
      allow_gateway_injection: true
    actor-legacy:
      allow_platform_actions: true
approvals:
  allow_permanent: false
  timeout: 30
gateway:
  platforms:
    loop:
      enabled: true
      allowed_users: [alice]
    loop2:
      enabled: true
      allowed_users: [alice]
      max_message_length: 24
    crashy:
      enabled: true
      allowed_users: [alice]
`;

/** A second home with only the platform plugin, flaky and flaky-fail enabled (its first retries held). */
let race: { served: Served; dir: string };

async function startRaceHome(): Promise<typeof race> {
  const root = scratch.dir("race");
  const raceHome = join(root, "home");
  const dir = join(root, "ctl");
  writeLoopPlatform(join(raceHome, "plugins"), dir);
  writeText(join(dir, "flaky.hold"), "");
  writeServeConfig(
    raceHome,
    model.url,
    "plugins:\n  enabled: [loop-platform]\ngateway:\n  platforms:\n" +
      "    flaky: { enabled: true, allowed_users: [alice] }\n" +
      "    flaky-fail: { enabled: true, allowed_users: [alice] }\n",
  );
  return { served: await serve(raceHome, [], env), dir };
}

async function startMainHome(): Promise<Served> {
  writePlugins(join(home, "plugins"));
  writeServeConfig(home, model.url, CONFIG);
  const granted = await runCli(["--home", home, "plugins", "enable", "actor", "--grant", "gateway.platform_actions"], {
    env,
  });
  expect(granted.code, granted.stdout + granted.stderr).toBe(0);
  const s = await serve(home, [], env);
  try {
    await waitFor(() => existsSync(join(ctlDir, "loop.port")) && existsSync(join(ctlDir, "loop2.port")), 15_000);
  } catch (e) {
    throw new Error(`${(e as Error).message}: the loop adapters did not connect\n${s.proc.stderr()}`);
  }
  return s;
}

beforeAll(async () => {
  model = await echoModel();
  const root = scratch.dir("hub");
  home = join(root, "home");
  ctlDir = join(root, "ctl");
  events = join(root, "events.jsonl");
  results = join(root, "results.jsonl");
  env = { HERMES_BUNDLED_PLUGINS: scratch.dir("bundled-empty") };
  [served, race] = await Promise.all([startMainHome(), startRaceHome()]);
});

afterAll(async () => {
  await Promise.all([served?.stop("SIGKILL"), race?.served.stop("SIGKILL")]);
  await model?.close();
  scratch.cleanup();
});

// ---------------------------------------------------------------- driving the adapters

interface OutRecord {
  platform: string;
  instance: string;
  op: string;
  attempt?: number;
  chat_id?: string;
  text?: string;
  opts?: Record<string, unknown>;
  message_id?: string;
  emoji?: string;
  thread_id?: string;
  title?: string;
}

function out(dir = ctlDir): OutRecord[] {
  const file = join(dir, "out.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OutRecord);
}

/** What the gateway sent to one chat of a platform, in order. */
function sentTo(chat: string, platform = "loop"): string[] {
  return out()
    .filter((r) => r.op === "send" && r.platform === platform && r.chat_id === chat)
    .map((r) => r.text ?? "");
}

async function waitSent(chat: string, count = 1, platform = "loop"): Promise<string[]> {
  try {
    await waitFor(() => sentTo(chat, platform).length >= count, 15_000, `${count} message(s) to ${platform}:${chat}`);
  } catch (e) {
    const sent = out().filter((r) => r.op === "send");
    throw new Error(`${(e as Error).message}; sent so far: ${JSON.stringify(sent)}\n${served.proc.stderr()}`);
  }
  return sentTo(chat, platform);
}

function control(platform: string): { port: number; instance: string } {
  return JSON.parse(readFileSync(join(ctlDir, `${platform}.port`), "utf8")) as { port: number; instance: string };
}

async function post(platform: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${control(platform).port}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
}

interface Inbound {
  chat: string;
  text: string;
  from?: string;
  message_id?: string;
  thread?: string;
  chat_type?: string;
}

/** An inbound message; resolves once host.deliver resolved (dispatched, not answered). */
function inbound(m: Inbound, platform = "loop"): Promise<void> {
  return post(platform, "/in", { from: "alice", ...m });
}

/** Every user message the model received. */
function modelSaw(): string[] {
  return model.requests.flatMap((r) => r.messages.filter((m) => m.role === "user").map((m) => String(m.content)));
}

interface ActorResult {
  plugin: Actor;
  tag: string;
  pid: number;
  result: unknown;
}

function actorResults(): ActorResult[] {
  if (!existsSync(results)) return [];
  return readFileSync(results, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ActorResult);
}

/** Have `actor` run one op (through a message in loop:ops) and return what it got. */
async function act(actor: Actor, tag: string, spec: Record<string, unknown>): Promise<unknown> {
  await inbound({ chat: "ops", text: `${actor}: ${JSON.stringify({ tag, ...spec })}` });
  // deliver resolved after pre_gateway_dispatch: the result is already written.
  const r = actorResults().find((x) => x.tag === tag);
  expect(r, `no result for ${tag}`).toBeDefined();
  expect(r!.plugin).toBe(actor);
  return r!.result;
}

const reaction = (over: Record<string, string> = {}) => ({
  op: "add_reaction",
  args: { platform: "loop", chat_id: "ops", message_id: "m-1", emoji: "👍", ...over },
});

const title = (over: Record<string, string> = {}) => ({
  op: "set_thread_title",
  args: { platform: "loop", chat_id: "ops", thread_id: "t-1", title: "Deploy notes", ...over },
});

async function health(): Promise<Record<string, unknown>> {
  const r = await api(served.url, "/health/detailed");
  expect(r.status).toBe(200);
  return r.body;
}

function platformsOf(h: Record<string, unknown>): Record<string, Record<string, unknown>> {
  return Object.fromEntries((h.platforms as Array<Record<string, unknown>>).map((p) => [String(p.name), p]));
}

const ECHO = (text: string) => new RegExp(`^echo: ${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\[\\d+ messages\\]$`);

// ---------------------------------------------------------------- the tests

describe("inbound messages", () => {
  it("a message from alice runs a turn whose answer is sent back to her chat, as a reply to her message", async () => {
    await inbound({ chat: "c-alice", text: "hello there", message_id: "in-1" });
    const [answer] = await waitSent("c-alice");
    expect(answer).toMatch(ECHO("hello there"));
    const send = out().find((r) => r.op === "send" && r.chat_id === "c-alice")!;
    expect(send.opts).toEqual({ reply_to: "in-1" });
    expect(modelSaw()).toContain("hello there");
    // The session is the chat's: its key is the session id of the API.
    const s = await api(served.url, `/v1/sessions/${encodeURIComponent("agent:main:loop:dm:c-alice")}`);
    expect(s.status, JSON.stringify(s.body)).toBe(200);
  });

  it("a thread's answer goes to that thread, and the thread is a session of its own", async () => {
    await inbound({ chat: "c-threads", thread: "t9", chat_type: "forum", text: "in a thread" });
    await waitSent("c-threads");
    const send = out().find((r) => r.op === "send" && r.chat_id === "c-threads")!;
    expect(send.opts).toEqual({ thread_id: "t9" });
    const s = await api(served.url, `/v1/sessions/${encodeURIComponent("agent:main:loop:forum:c-threads:t9")}`);
    expect(s.status, JSON.stringify(s.body)).toBe(200);
  });

  it("mallory (not in allowed_users) and a message without a sender start no turn and get no answer", async () => {
    await inbound({ chat: "c-mallory", from: "mallory", text: "mallory wants a turn" });
    await post("loop", "/in", { chat: "c-mallory", text: "nobody wants a turn" });
    // pre_gateway_dispatch saw both (it runs before the sender check) …
    const seen = readTrace(events).filter((e) => e.ev === "dispatch" && e.chat === "c-mallory");
    expect(seen.map((e) => [e.sender, e.text])).toEqual([
      ["mallory", "mallory wants a turn"],
      [null, "nobody wants a turn"],
    ]);
    // … and alice, in the same chat afterwards, is answered with a conversation of her own message only.
    await inbound({ chat: "c-mallory", text: "alice after mallory" });
    expect(await waitSent("c-mallory")).toEqual([expect.stringMatching(ECHO("alice after mallory"))]);
    expect(modelSaw().filter((t) => t.includes("wants a turn"))).toEqual([]);
  });

  it("an answer longer than the adapter's max_message_length is sent in several messages", async () => {
    await inbound({ chat: "c-long", text: "one two three four five six seven eight" }, "loop2");
    // "echo: one … eight [n messages]" is about 55 characters: three sends of at most 24.
    await waitFor(() => sentTo("c-long", "loop2").join("").includes("messages]"), 15_000, "the last part");
    const parts = sentTo("c-long", "loop2");
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(24);
    expect(parts.join("")).toMatch(ECHO("one two three four five six seven eight"));
  });
});

describe("pre_gateway_dispatch", () => {
  it('{action: "skip"} drops the message: no turn, nothing sent', async () => {
    await inbound({ chat: "c-gate", text: "drop this one" });
    await inbound({ chat: "c-gate", text: "keep this one" });
    expect(await waitSent("c-gate")).toEqual([expect.stringMatching(ECHO("keep this one"))]);
    expect(modelSaw().filter((t) => t.includes("drop this one"))).toEqual([]);
  });

  it('{action: "rewrite", text} is what the model receives (and what the session keeps)', async () => {
    await inbound({ chat: "c-rewrite", text: "rw what was sent" });
    expect(await waitSent("c-rewrite")).toEqual([expect.stringMatching(ECHO("rewritten what was sent"))]);
    expect(modelSaw()).toContain("rewritten what was sent");
    expect(modelSaw().filter((t) => t.includes("rw what was sent"))).toEqual([]);
  });

  it("a message rewritten into a command runs the command", async () => {
    await inbound({ chat: "c-rewrite-cmd", text: "as-command /ping via a rewrite" });
    expect(await waitSent("c-rewrite-cmd")).toEqual(["pong via a rewrite"]);
    expect(modelSaw().filter((t) => t.includes("via a rewrite"))).toEqual([]);
  });
});

describe("chat commands", () => {
  it("/reset fires on_session_finalize then on_session_reset, says so, and the next turn starts afresh", async () => {
    const key = "agent:main:loop:dm:c-reset";
    await inbound({ chat: "c-reset", text: "first" });
    const [first] = await waitSent("c-reset");
    await inbound({ chat: "c-reset", text: "second" });
    const [, second] = await waitSent("c-reset", 2);
    const count = (s: string | undefined) => Number(/\[(\d+) messages\]$/.exec(s ?? "")?.[1]);
    expect(count(second)).toBeGreaterThan(count(first));
    await inbound({ chat: "c-reset", text: "/reset" });
    expect((await waitSent("c-reset", 3))[2]).toBe("Session reset.");
    const hooks = readTrace(events).filter(
      (e) => (e.ev === "hook:on_session_finalize" || e.ev === "hook:on_session_reset") && e.session_id === key,
    );
    expect(hooks.map((e) => [e.ev, e.reason])).toEqual([
      ["hook:on_session_finalize", "reset"],
      ["hook:on_session_reset", "reset"],
    ]);
    await inbound({ chat: "c-reset", text: "third" });
    const [, , , third] = await waitSent("c-reset", 4);
    expect(third).toMatch(ECHO("third"));
    expect(count(third)).toBe(count(first));
  });

  it("/reset in a chat without a session still answers, and fires no hook", async () => {
    await inbound({ chat: "c-reset-new", text: "/reset" });
    expect(await waitSent("c-reset-new")).toEqual(["Session reset."]);
    expect(readTrace(events).filter((e) => String(e.session_id ?? "").endsWith(":c-reset-new"))).toEqual([]);
  });

  it("/approve with nothing waiting is answered as such, and is not a message for the model", async () => {
    await inbound({ chat: "c-approve-none", text: "/approve" });
    expect(await waitSent("c-approve-none")).toEqual(["Nothing is waiting for your approval."]);
    expect(modelSaw()).not.toContain("/approve");
  });

  it("/help lists the built-in and the plugin commands; /plugins the loaded plugins", async () => {
    await inbound({ chat: "c-help", text: "/help" });
    const [help] = await waitSent("c-help");
    expect(help!.split("\n")).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/reset\s/),
        expect.stringMatching(/^\/help\s/),
        expect.stringMatching(/^\/plugins\s/),
        "/ping  answer pong",
        "/boom  always fails",
      ]),
    );
    await inbound({ chat: "c-help", text: "/plugins" });
    const [, plugins] = await waitSent("c-help", 2);
    expect(plugins).toMatch(/^Plugins: /);
    const keys = plugins!.slice("Plugins: ".length).split(", ");
    expect(keys.sort()).toEqual(["actor", "actor-legacy", "actor-plain", "gate", "guard", "loop-platform", "rec"]);
    expect(modelSaw().filter((t) => t.startsWith("/help") || t.startsWith("/plugins"))).toEqual([]);
  });

  it("a plugin command runs from the chat; pre_command fires with surface gateway, key and platform", async () => {
    await inbound({ chat: "c-cmd", text: "/ping some args" });
    expect(await waitSent("c-cmd")).toEqual(["pong some args"]);
    const pre = readTrace(events).filter(
      (e) => e.ev === "hook:pre_command" && e.session_key === "agent:main:loop:dm:c-cmd",
    );
    expect(pre).toEqual([
      expect.objectContaining({
        plugin: "rec",
        surface: "gateway",
        command: "ping",
        args_raw: "some args",
        session_key: "agent:main:loop:dm:c-cmd",
        platform: "loop",
      }),
    ]);
    // A bot-name suffix (/cmd@bot, as group chats send it) and any case name the same command.
    await inbound({ chat: "c-cmd", text: "/PING@loopbot again" });
    expect((await waitSent("c-cmd", 2))[1]).toBe("pong again");
    // A command that throws is answered with its error; an unknown one is a message for the model.
    await inbound({ chat: "c-cmd", text: "/boom" });
    expect((await waitSent("c-cmd", 3))[2]).toBe("/boom failed: the boom command broke");
    await inbound({ chat: "c-cmd", text: "/nosuch thing" });
    expect((await waitSent("c-cmd", 4))[3]).toMatch(ECHO("/nosuch thing"));
    expect(modelSaw().filter((t) => t.includes("/ping") || t.includes("/PING") || t.includes("/boom"))).toEqual([]);
  });
});

describe("approvals asked in the chat", () => {
  const ASKED = /^Approval needed: /;

  it("/approve runs the tool; the answer comes after it", async () => {
    await inbound({ chat: "c-approve", text: "tool:guarded {}" });
    const [question] = await waitSent("c-approve");
    expect(question).toMatch(ASKED);
    expect(question).toContain("/approve session");
    // approvals.allow_permanent is false: "always" is not offered.
    expect(question).not.toContain("/approve always");
    await inbound({ chat: "c-approve", text: "/approve" });
    expect((await waitSent("c-approve", 2))[1]).toBe("done: guarded ran");
    expect(modelSaw().filter((t) => t === "/approve")).toEqual([]);
  });

  it("/deny refuses it: the model is told, the tool never ran", async () => {
    await inbound({ chat: "c-deny", text: "tool:guarded {}" });
    expect((await waitSent("c-deny"))[0]).toMatch(ASKED);
    await inbound({ chat: "c-deny", text: "/deny" });
    const [, answer] = await waitSent("c-deny", 2);
    expect(answer).toMatch(/^done: /);
    expect(answer).not.toContain("guarded ran");
  });

  it("an answer the request does not allow (/approve always) is refused in the chat; the approval waits", async () => {
    await inbound({ chat: "c-always", text: "tool:guarded {}" });
    expect((await waitSent("c-always"))[0]).toMatch(ASKED);
    await inbound({ chat: "c-always", text: "/approve always" });
    const [, refused] = await waitSent("c-always", 2);
    expect(refused).toMatch(/always/);
    await inbound({ chat: "c-always", text: "/approve" });
    expect((await waitSent("c-always", 3))[2]).toBe("done: guarded ran");
  });

  it("a message sent while an approval waits does not take the answer away from it", async () => {
    await inbound({ chat: "c-meanwhile", text: "tool:guarded {}" });
    expect((await waitSent("c-meanwhile"))[0]).toMatch(ASKED);
    // A second message queues behind the waiting turn …
    await inbound({ chat: "c-meanwhile", text: "and meanwhile" });
    // … and /approve still answers the waiting approval, after which the queued message runs.
    await inbound({ chat: "c-meanwhile", text: "/approve" });
    const sent = await waitSent("c-meanwhile", 3);
    expect(sent.slice(1)).toEqual(["done: guarded ran", expect.stringMatching(ECHO("and meanwhile"))]);
  });
});

describe("ctx.platform_actions", () => {
  it("granted with plugins enable --grant: add_reaction and set_thread_title reach the adapter", async () => {
    expect(await act("actor", "grant-react", reaction())).toEqual({ ok: true, action: "add_reaction" });
    expect(await act("actor", "grant-title", title())).toEqual({ ok: true, action: "set_thread_title" });
    const done = out().filter((r) => r.op === "add_reaction" || r.op === "set_thread_title");
    expect(done).toEqual([
      expect.objectContaining({
        platform: "loop",
        op: "add_reaction",
        chat_id: "ops",
        message_id: "m-1",
        emoji: "👍",
      }),
      expect.objectContaining({
        platform: "loop",
        op: "set_thread_title",
        chat_id: "ops",
        thread_id: "t-1",
        title: "Deploy notes",
      }),
    ]);
    // The action messages were skipped by the actor's pre_gateway_dispatch: nothing went to the model.
    expect(sentTo("ops")).toEqual([]);
  });

  it("granted by the legacy plugins.entries.<key>.allow_platform_actions: true", async () => {
    expect(await act("actor-legacy", "legacy-react", reaction({ emoji: "🎉" }))).toEqual({
      ok: true,
      action: "add_reaction",
    });
    expect(out().filter((r) => r.op === "add_reaction" && r.emoji === "🎉")).toHaveLength(1);
  });

  it("capability_not_granted: a plugin that declares the capability but was not granted it", async () => {
    const r = await act("actor-plain", "plain-react", reaction({ emoji: "🚫" }));
    expect(r).toEqual({
      ok: false,
      error: "capability_not_granted",
      detail: expect.stringContaining("hermes plugins enable actor-plain --grant gateway.platform_actions"),
    });
    expect(out().filter((r) => r.emoji === "🚫")).toEqual([]);
  });

  it("invalid_argument: an empty emoji, a missing message_id, a title that is not a string", async () => {
    expect(await act("actor", "bad-emoji", reaction({ emoji: "" }))).toMatchObject({
      ok: false,
      error: "invalid_argument",
      detail: expect.stringContaining("emoji"),
    });
    const noMessage = reaction();
    delete (noMessage.args as Record<string, string | undefined>).message_id;
    expect(await act("actor", "no-message-id", noMessage)).toMatchObject({
      ok: false,
      error: "invalid_argument",
      detail: expect.stringContaining("message_id"),
    });
    expect(
      await act("actor", "title-number", { op: "set_thread_title", args: { ...title().args, title: 5 } }),
    ).toMatchObject({ ok: false, error: "invalid_argument" });
    expect(await act("actor", "no-args", { op: "add_reaction" })).toMatchObject({
      ok: false,
      error: "invalid_argument",
    });
  });

  it("unknown_platform: a platform nobody registered", async () => {
    expect(await act("actor", "nope", reaction({ platform: "nope" }))).toMatchObject({
      ok: false,
      error: "unknown_platform",
    });
  });

  it("adapter_not_registered: a platform a plugin registers but gateway.platforms does not enable", async () => {
    expect(await act("actor", "idle", reaction({ platform: "idle" }))).toMatchObject({
      ok: false,
      error: "adapter_not_registered",
    });
  });

  it("adapter_disconnected: the adapter says it is not connected (and crashy never connected)", async () => {
    await post("loop", "/connected", { value: false });
    try {
      expect(await act("actor", "disconnected", reaction({ emoji: "🔌" }))).toMatchObject({
        ok: false,
        error: "adapter_disconnected",
      });
    } finally {
      await post("loop", "/connected", { value: true });
    }
    expect(await act("actor", "crashy", reaction({ platform: "crashy" }))).toMatchObject({
      ok: false,
      error: "adapter_disconnected",
    });
    expect(out().filter((r) => r.emoji === "🔌")).toEqual([]);
    // Connected again: the same action works.
    expect(await act("actor", "reconnected", reaction({ emoji: "🔋" }))).toEqual({ ok: true, action: "add_reaction" });
  });

  it("unsupported_platform_action: set_thread_title on an adapter without it", async () => {
    expect(await act("actor", "no-titles", title({ platform: "loop2" }))).toMatchObject({
      ok: false,
      error: "unsupported_platform_action",
    });
    // loop2 does have add_reaction.
    expect(await act("actor", "loop2-react", reaction({ platform: "loop2" }))).toEqual({
      ok: true,
      action: "add_reaction",
    });
  });

  it("action_failed: add_reaction throws, or answers false (async or not)", async () => {
    expect(await act("actor", "boom", reaction({ emoji: "boom" }))).toEqual({
      ok: false,
      error: "action_failed",
      detail: expect.stringContaining("reaction exploded"),
    });
    expect(await act("actor", "refused", reaction({ emoji: "refused" }))).toMatchObject({
      ok: false,
      error: "action_failed",
    });
    expect(await act("actor", "refused-sync", reaction({ platform: "loop2", emoji: "refused" }))).toMatchObject({
      ok: false,
      error: "action_failed",
    });
  });

  it("gateway_unavailable: the same plugin under hermes chat --query, where no gateway runs", async () => {
    const ask = async (actor: Actor, tag: string, spec: Record<string, unknown>) => {
      const r = await runCli(["--home", home, "chat", "--query", `${actor}: ${JSON.stringify({ tag, ...spec })}`], {
        env,
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const found = actorResults().find((x) => x.tag === tag);
      expect(found, `no result for ${tag}:\n${r.stderr}`).toBeDefined();
      expect(found!.pid).not.toBe(served.proc.child.pid);
      return found!.result;
    };
    // Four CLI runs at once: each is a process of its own on the same (compiled) home.
    const [react, plain, bad, inject] = await Promise.all([
      ask("actor", "chat-react", reaction()),
      ask("actor-plain", "chat-plain", reaction()),
      ask("actor", "chat-bad", reaction({ emoji: "" })),
      ask("actor", "chat-inject", { op: "inject", session_key: "agent:main:loop:dm:c-alice", text: "hi" }),
    ]);
    expect(react).toMatchObject({ ok: false, error: "gateway_unavailable", detail: expect.stringContaining("serve") });
    // The checks before it still come first: the capability, then the arguments.
    expect(plain).toMatchObject({ ok: false, error: "capability_not_granted" });
    expect(bad).toMatchObject({ ok: false, error: "invalid_argument" });
    // Nor is there a gateway session to inject into.
    expect(inject).toBe(false);
  });
});

describe("ctx.inject_message with a session_key", () => {
  it("allowed (allow_gateway_injection: true): a turn of that chat's session runs, its answer sent there", async () => {
    await inbound({ chat: "c-inject", text: "open the session" });
    await waitSent("c-inject");
    const r = await act("actor", "inject-ok", {
      op: "inject",
      session_key: "agent:main:loop:dm:c-inject",
      text: "injected by a plugin",
    });
    expect(r).toBe(true);
    const [, answer] = await waitSent("c-inject", 2);
    expect(answer).toMatch(ECHO("injected by a plugin"));
    // It continued the chat's conversation: the model saw both messages.
    const last = model.requests
      .at(-1)!
      .messages.filter((m) => m.role === "user")
      .map((m) => m.content);
    expect(last).toEqual(["open the session", "injected by a plugin"]);
  });

  it("without the permission: false, nothing queued, nothing sent", async () => {
    await inbound({ chat: "c-inject-denied", text: "open another session" });
    await waitSent("c-inject-denied");
    expect(
      await act("actor-plain", "inject-denied", {
        op: "inject",
        session_key: "agent:main:loop:dm:c-inject-denied",
        text: "should not arrive",
      }),
    ).toBe(false);
    expect(
      await act("actor", "inject-unknown", {
        op: "inject",
        session_key: "agent:main:loop:dm:nobody-here",
        text: "should not arrive",
      }),
    ).toBe(false);
    // A chat that only ran commands has no session to inject into either.
    expect(
      await act("actor", "inject-no-session", {
        op: "inject",
        session_key: "agent:main:loop:dm:c-help",
        text: "should not arrive",
      }),
    ).toBe(false);
    // A message sent afterwards is answered as the second message of the session: nothing came between.
    await inbound({ chat: "c-inject-denied", text: "still two" });
    const sent = await waitSent("c-inject-denied", 2);
    expect(sent).toHaveLength(2);
    expect(modelSaw().filter((t) => t.includes("should not arrive"))).toEqual([]);
    expect(sentTo("nobody-here")).toEqual([]);
  });
});

describe("adapters in trouble, and a reload", () => {
  it("an adapter that throws on connect is retried with growing attempts while the API keeps answering", async () => {
    let crashy: Record<string, unknown> = {};
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      crashy = platformsOf(await health()).crashy!;
      if (Number(crashy.attempts) >= 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(crashy).toMatchObject({
      name: "crashy",
      state: "retrying",
      plugin: "loop-platform",
      error: "crashy cannot connect",
      next_retry_at: expect.any(String),
    });
    expect(Number(crashy.attempts)).toBeGreaterThanOrEqual(2);
    const h = await health();
    expect(platformsOf(h).loop).toMatchObject({ state: "connected", plugin: "loop-platform", attempts: 1 });
    expect(platformsOf(h).loop2).toMatchObject({ state: "connected" });
    expect(Object.keys(platformsOf(h)).sort()).toEqual(["crashy", "loop", "loop2"]);
    const chat = await api<{ choices: Array<{ message: { content: string } }> }>(served.url, "/v1/chat/completions", {
      messages: [{ role: "user", content: "api still works" }],
    });
    expect(chat.status).toBe(200);
    expect(chat.body.choices[0]!.message.content).toMatch(ECHO("api still works"));
  });

  it("a SIGHUP reload disconnects the old adapters and connects new ones; the chat keeps working", async () => {
    const before = control("loop");
    const generation = (await health()).generation;
    served.proc.child.kill("SIGHUP");
    await waitFor(
      () => existsSync(join(ctlDir, "loop.port")) && control("loop").instance !== before.instance,
      15_000,
      "a new loop adapter",
    );
    let h: Record<string, unknown> = {};
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
      h = await health();
      if ((h.last_reload as { ok?: boolean } | null)?.ok && platformsOf(h).loop?.state === "connected") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(h.last_reload).toMatchObject({ ok: true, generation });
    expect(platformsOf(h).loop).toMatchObject({ state: "connected", attempts: 1 });
    const ops = out().filter((r) => r.platform === "loop" && (r.op === "connect" || r.op === "disconnect"));
    expect(ops.map((r) => [r.op, r.instance === before.instance ? "old" : "new"])).toEqual([
      ["connect", "old"],
      ["disconnect", "old"],
      ["connect", "new"],
    ]);
    await inbound({ chat: "c-after-reload", text: "after the reload" });
    expect(await waitSent("c-after-reload")).toEqual([expect.stringMatching(ECHO("after the reload"))]);
    const send = out().find((r) => r.op === "send" && r.chat_id === "c-after-reload")!;
    expect(send.instance).toBe(control("loop").instance);
    // The old control server is gone with its adapter.
    await expect(
      fetch(`http://127.0.0.1:${before.port}/in`, { method: "POST", body: "{}", signal: AbortSignal.timeout(5000) }),
    ).rejects.toThrow();
  });

  it("an adapter still connecting when a reload stops it does not stay up, nor keep retrying, afterwards", async () => {
    const flaky = (platform: string) => out(race.dir).filter((r) => r.platform === platform);
    // The first generation's adapters failed once and are in their second attempt, held.
    await waitFor(
      () => ["flaky", "flaky-fail"].every((p) => flaky(p).some((r) => r.op === "connect-start" && r.attempt === 2)),
      15_000,
      "the second connect attempts",
    );
    const old = { flaky: flaky("flaky")[0]!.instance, "flaky-fail": flaky("flaky-fail")[0]!.instance };
    race.served.proc.child.kill("SIGHUP");
    let h: Record<string, unknown> = {};
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
      h = (await api(race.served.url, "/health/detailed")).body;
      if ((h.last_reload as { ok?: boolean } | null)?.ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(h.last_reload).toMatchObject({ ok: true });
    expect(platformsOf(h).flaky).toMatchObject({ state: "connected", attempts: 1 });
    expect(platformsOf(h)["flaky-fail"]).toMatchObject({ state: "connected", attempts: 1 });
    // The old attempts now finish: flaky's connects late, flaky-fail's fails late.
    rmSync(join(race.dir, "flaky.hold"));
    await waitFor(
      () => flaky("flaky").some((r) => r.instance === old.flaky && r.op === "connect"),
      15_000,
      "the late connect",
    );
    // The hub undoes the late connect: the old adapter is disconnected again right after it.
    await waitFor(
      () =>
        flaky("flaky")
          .filter((r) => r.instance === old.flaky)
          .at(-1)?.op === "disconnect",
      5000,
      `the old flaky adapter disconnected again: ${JSON.stringify(flaky("flaky"))}`,
    );
    expect(
      flaky("flaky")
        .filter((r) => r.instance === old.flaky)
        .map((r) => r.op),
    ).toEqual(["connect-start", "connect-start", "disconnect", "connect", "disconnect"]);
    // flaky-fail's old adapter is not retried: its next attempt would have come 2 s after the failure.
    await new Promise((r) => setTimeout(r, 2500));
    expect(
      flaky("flaky-fail")
        .filter((r) => r.instance === old["flaky-fail"])
        .map((r) => r.op),
    ).toEqual(["connect-start", "connect-start", "disconnect"]);
    h = (await api(race.served.url, "/health/detailed")).body;
    expect(platformsOf(h).flaky).toMatchObject({ state: "connected", attempts: 1 });
    expect(platformsOf(h)["flaky-fail"]).toMatchObject({ state: "connected", attempts: 1 });
  });
});
