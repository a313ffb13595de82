import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import { sleep } from "../support/util.js";
import { fakeTelegram, type FakeTelegram, type TgCall, type TgChat, type TgUser } from "./fake-telegram.js";
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
 * The bundled telegram platform (plugins/platforms/telegram) in `hermes serve`, against the fake Bot API of
 * fake-telegram.ts and the echo model: chats answered in their thread as replies, sessions per chat, the
 * allowed_users check, chat commands (/reset, /help, a plugin command), ctx.platform_actions with and
 * without the capability grant, approvals answered in the chat, a poll that fails once, and a bad or
 * missing token shown by /health/detailed while the API keeps serving.
 */
const scratch = new Scratch("hermes-e2e-gateway-telegram-");
let model: EchoModel;
let tg: FakeTelegram;
let main: Served;
let badToken: Served;
let noToken: Served;
let home: string;
let recFile: string;
let actFile: string;
/** Every message the gateway got (pre_gateway_dispatch's event), as the granted actions plugin writes it. */
let dispatchFile: string;

const ADA: TgUser = { id: 1001, first_name: "Ada", username: "ada" };
const EVE: TgUser = { id: 666, first_name: "Eve" };
const DM: TgChat = { id: 1001, type: "private" };
const EVE_DM: TgChat = { id: 666, type: "private" };
const FORUM: TgChat = { id: -1002000, type: "supergroup", title: "Team", is_forum: true };
const GROUP: TgChat = { id: -1003000, type: "group", title: "Ops" };

/** Reacts to (and renames the topic of) a message that starts with "please react"; the command is optional. */
const ACTIONS_PLUGIN = `import { appendFileSync } from "node:fs";
const seen = new Map();
const keyOf = (e) =>
  ["agent", "main", e.platform, e.chat_type, e.chat_id, ...(e.thread_id ? [e.thread_id] : [])].join(":");
export function register(ctx) {
  ctx.register_hook("pre_gateway_dispatch", ({ event }) => {
    seen.set(keyOf(event), event);
    if (ctx.get_config("dispatched")) appendFileSync(ctx.get_config("dispatched"), JSON.stringify(event) + "\\n");
    return null;
  });
  ctx.register_hook("post_llm_call", async ({ session_id, user_message }) => {
    if (!String(user_message).startsWith("please react")) return;
    const e = seen.get(session_id);
    const where = { platform: "telegram", chat_id: e.chat_id };
    const reaction = await ctx.platform_actions.add_reaction({ ...where, message_id: e.message_id, emoji: "👍" });
    const title = await ctx.platform_actions.set_thread_title({ ...where, thread_id: e.thread_id, title: "Reacted" });
    const line = JSON.stringify({ label: ctx.get_config("label"), reaction, title });
    appendFileSync(ctx.get_config("results"), line + "\\n");
  });
  if (ctx.get_config("command")) ctx.register_command("ping", (raw) => ("pong " + raw).trim(), "Answer pong");
}
`;

function writeActions(pluginsDir: string, key: string): void {
  mkdirSync(join(pluginsDir, key), { recursive: true });
  writeFileSync(
    join(pluginsDir, key, "plugin.yaml"),
    `name: ${key}\nversion: "1"\ncapabilities: [gateway.platform_actions]\n` +
      "hooks: [pre_gateway_dispatch, post_llm_call]\n",
  );
  writeFileSync(join(pluginsDir, key, "index.js"), ACTIONS_PLUGIN);
}

/** Bundled plugins: only a copy of the telegram platform (other bundled plugins are not this test's business). */
function bundled(): string {
  const dir = scratch.dir("bundled");
  cpSync(join(ROOT, "plugins", "platforms", "telegram"), join(dir, "platforms", "telegram"), { recursive: true });
  return dir;
}

function telegramYaml(baseUrl: string, pollTimeout: number): string {
  return (
    "gateway:\n  shutdown_grace_seconds: 1\n  platforms:\n    telegram:\n      enabled: true\n" +
    `      base_url: ${baseUrl}\n      allowed_users: [${ADA.id}]\n      poll_timeout: ${pollTimeout}\n`
  );
}

async function mainHome(bundledDir: string): Promise<string> {
  const h = scratch.dir("main");
  recFile = join(h, "rec.jsonl");
  actFile = join(h, "actions.jsonl");
  dispatchFile = join(h, "dispatched.jsonl");
  writeRecorder(join(h, "plugins"), "tgrec", { hooks: ["on_session_reset", "pre_llm_call"], file: recFile });
  writeActions(join(h, "plugins"), "tgact");
  writeActions(join(h, "plugins"), "tgact-nogrant");
  writeServeConfig(
    h,
    model.url,
    "plugins:\n  enabled: [tgrec, tgact-nogrant]\n  entries:\n" +
      `    tgact:\n      settings:\n        results: ${JSON.stringify(actFile)}\n        label: granted\n` +
      `        command: true\n        dispatched: ${JSON.stringify(dispatchFile)}\n` +
      `    tgact-nogrant:\n      settings:\n        results: ${JSON.stringify(actFile)}\n        label: not-granted\n` +
      telegramYaml(tg.url, 10),
  );
  const en = await runCli(["--home", h, "plugins", "enable", "tgact", "--grant", "gateway.platform_actions"], {
    env: { HERMES_BUNDLED_PLUGINS: bundledDir },
  });
  expect(en.code, en.stderr).toBe(0);
  return h;
}

function otherHome(name: string): string {
  const h = scratch.dir(name);
  writeServeConfig(h, model.url, telegramYaml(tg.url, 10));
  return h;
}

beforeAll(async () => {
  model = await echoModel();
  tg = await fakeTelegram();
  const env = { HERMES_BUNDLED_PLUGINS: bundled() };
  home = await mainHome(env.HERMES_BUNDLED_PLUGINS);
  [main, badToken, noToken] = await Promise.all([
    serve(home, [], { ...env, TELEGRAM_BOT_TOKEN: tg.token }),
    serve(otherHome("bad-token"), [], { ...env, TELEGRAM_BOT_TOKEN: "700000001:not-the-token" }),
    serve(otherHome("no-token"), [], { ...env, TELEGRAM_BOT_TOKEN: undefined }),
  ]);
});

afterAll(async () => {
  await Promise.all([main, badToken, noToken].map((s) => s?.stop("SIGKILL")));
  await tg?.close();
  await model?.close();
  scratch.cleanup();
});

// ---------------------------------------------------------------- helpers

const sends = () => tg.callsOf("sendMessage");

/** Push a message and wait for the bot's sendMessage answering it (a reply to it). */
async function says(chat: TgChat, from: TgUser, text: string, thread?: number): Promise<Said> {
  const { message_id, update } = tg.push({ chat, from, text, ...(thread !== undefined ? { thread } : {}) });
  const call = await tg.waitFor("sendMessage", (p) => replyTo(p) === message_id);
  return { ...call, id: message_id, update };
}

/** The bot's answer, the id of the message it answers, and the update that carried that message. */
type Said = TgCall & { id: number; update: Record<string, unknown> };

const replyTo = (p: Record<string, unknown>) => (p.reply_parameters as { message_id?: number } | undefined)?.message_id;

/** Push a message and wait for the next sendMessage to the chat (commands and approval questions are not replies). */
async function answerTo(chat: TgChat, from: TgUser, text: string): Promise<string> {
  const since = tg.calls.length;
  tg.push({ chat, from, text });
  const call = await tg.waitFor("sendMessage", (p) => p.chat_id === chat.id, { since });
  return String(call.params.text);
}

function records(file: string): Array<Record<string, unknown>> {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const messageCount = (text: string) => Number(/\[(\d+) messages\]$/.exec(text)?.[1] ?? Number.NaN);

// ---------------------------------------------------------------- tests

describe("hermes serve with the bundled telegram platform (fake Bot API)", () => {
  let firstCount: number;
  let hello: Said;

  it("connects with getMe and long-polls getUpdates for messages only", async () => {
    expect(tg.callsOf("getMe").length).toBeGreaterThan(0);
    const poll = await tg.waitFor("getUpdates", (p) => p.timeout === 10);
    expect(poll.params.allowed_updates).toEqual(["message"]);
    const health = await api<{ platforms: Array<Record<string, unknown>> }>(main.url, "/health/detailed");
    expect(health.body.platforms).toEqual([
      expect.objectContaining({ name: "telegram", state: "connected", plugin: "platforms/telegram" }),
    ]);
  });

  it("answers a direct message as a reply; the next message continues the session", async () => {
    const first = (hello = await says(DM, ADA, "hello"));
    expect(first.params).toMatchObject({
      chat_id: DM.id,
      text: expect.stringMatching(/^echo: hello \[\d+ messages\]$/),
    });
    expect(first.params.message_thread_id).toBeUndefined();
    firstCount = messageCount(String(first.params.text));
    const second = await says(DM, ADA, "again");
    expect(messageCount(String(second.params.text))).toBe(firstCount + 2);
    expect(String(second.params.text)).toMatch(/^echo: again/);
  });

  it("splits an answer longer than 4096 characters into several messages", async () => {
    const since = tg.calls.length;
    const long = `long ${"x".repeat(4500)}`;
    const { message_id } = tg.push({ chat: DM, from: ADA, text: long });
    const parts = await until("two parts", () => {
      const p = tg.calls.slice(since).filter((c) => c.method === "sendMessage" && replyTo(c.params) === message_id);
      return p.length >= 2 ? p : undefined;
    });
    const texts = parts.map((c) => String(c.params.text));
    expect(texts.every((t) => t.length <= 4096)).toBe(true);
    expect(texts.join("")).toMatch(new RegExp(`^echo: ${long} \\[\\d+ messages\\]$`));
  });

  it("gives an unknown sender no turn, and skips duplicates and bot messages", async () => {
    const before = sends().length;
    const modelCalls = model.requests.length;
    const eve = tg.push({ chat: EVE_DM, from: EVE, text: "let me in" });
    const bot = tg.push({ chat: DM, from: { id: 5, is_bot: true, first_name: "Other" }, text: "bot talk" });
    // The update of "hello" once more: already handled.
    tg.replay(hello.update);
    const known = await says(DM, ADA, "still there?");
    expect(String(known.params.text)).toMatch(/^echo: still there\?/);
    const newSends = sends().slice(before);
    expect(newSends.map((c) => c.params.chat_id)).toEqual([DM.id]);
    expect(newSends.some((c) => [eve.message_id, bot.message_id].includes(Number(replyTo(c.params))))).toBe(false);
    const texts = model.requests.slice(modelCalls).map((r) => JSON.stringify(r.messages));
    expect(texts.some((t) => t.includes("let me in") || t.includes("bot talk"))).toBe(false);
    expect(sends().filter((c) => replyTo(c.params) === hello.id)).toHaveLength(1);
    // What reached the gateway: Eve's message (refused there), not the bot's, and "hello" only once.
    const got = records(dispatchFile);
    expect(got.find((e) => e.text === "let me in")).toMatchObject({
      platform: "telegram",
      chat_id: String(EVE_DM.id),
      chat_type: "dm",
      sender_id: String(EVE.id),
      sender_name: "Eve",
      message_id: String(eve.message_id),
    });
    expect(got.filter((e) => e.text === "bot talk")).toEqual([]);
    expect(got.filter((e) => e.text === "hello")).toHaveLength(1);
  });

  it("/reset fires on_session_reset and the next turn is a first turn", async () => {
    expect(await answerTo(DM, ADA, "/reset")).toBe("Session reset.");
    const key = `agent:main:telegram:dm:${DM.id}`;
    expect(records(recFile).filter((r) => r.ev === "hook:on_session_reset" && r.session_id === key)).toHaveLength(1);
    const fresh = await says(DM, ADA, "fresh start");
    expect(messageCount(String(fresh.params.text))).toBe(firstCount);
    const pre = records(recFile).filter((r) => r.ev === "hook:pre_llm_call" && r.session_id === key);
    expect(pre.at(-1)).toMatchObject({ user_message: "fresh start", is_first_turn: true });
  });

  it("/help lists the commands with the plugin's; the plugin command runs, also as /cmd@bot in a group", async () => {
    const help = await answerTo(DM, ADA, "/help");
    for (const c of ["/reset", "/help", "/plugins", "/ping  Answer pong"]) expect(help).toContain(c);
    expect(await answerTo(DM, ADA, "/ping from chat")).toBe("pong from chat");
    expect(await answerTo(GROUP, ADA, `/ping@${tg.bot.username} group`)).toBe("pong group");
    // A command for another bot is not for this one: the next answer in the group is to the message after it.
    tg.push({ chat: GROUP, from: ADA, text: "/ping@some_other_bot nope" });
    expect(await answerTo(GROUP, ADA, "/ping last")).toBe("pong last");
    const inGroup = records(dispatchFile).filter((e) => e.chat_id === String(GROUP.id));
    expect(inGroup.map((e) => [e.chat_type, e.text])).toEqual([
      ["group", "/ping group"],
      ["group", "/ping last"],
    ]);
  });

  it("ctx.platform_actions reacts and renames the forum topic with the grant, and refuses without it", async () => {
    const answer = await says(FORUM, ADA, "please react", 7);
    expect(answer.params).toMatchObject({ chat_id: FORUM.id, message_thread_id: 7 });
    expect(String(answer.params.text)).toMatch(/^echo: please react/);
    expect(records(dispatchFile).find((e) => e.text === "please react")).toMatchObject({
      chat_id: String(FORUM.id),
      chat_type: "forum",
      thread_id: "7",
      message_id: String(answer.id),
    });
    const reaction = await tg.waitFor("setMessageReaction");
    expect(reaction.params).toEqual({
      chat_id: FORUM.id,
      message_id: answer.id,
      reaction: [{ type: "emoji", emoji: "👍" }],
    });
    const topic = await tg.waitFor("editForumTopic");
    expect(topic.params).toEqual({ chat_id: FORUM.id, message_thread_id: 7, name: "Reacted" });
    const results = await until("both plugins' results", () => {
      const r = records(actFile);
      return r.length >= 2 ? r : undefined;
    });
    const by = Object.fromEntries(results.map((r) => [r.label, r]));
    expect(by.granted).toMatchObject({
      reaction: { ok: true, action: "add_reaction" },
      title: { ok: true, action: "set_thread_title" },
    });
    expect(by["not-granted"]).toMatchObject({
      reaction: { ok: false, error: "capability_not_granted" },
      title: { ok: false, error: "capability_not_granted" },
    });
    expect(tg.callsOf("setMessageReaction")).toHaveLength(1);
  });

  it("an approval asked in the chat: /approve runs the command, /deny does not", async () => {
    const approve = async (choice: string) => {
      const victim = scratch.dir(`victim-${choice.slice(1)}`);
      writeFileSync(join(victim, "f"), "x");
      const since = tg.calls.length;
      const { message_id } = tg.push({ chat: DM, from: ADA, text: `tool:terminal {"command":"rm -rf ${victim}"}` });
      const question = await tg.waitFor("sendMessage", (p) => String(p.text).startsWith("Approval needed"), { since });
      expect(String(question.params.text)).toContain(`rm -rf ${victim}`);
      expect(String(question.params.text)).toContain("/approve");
      tg.push({ chat: DM, from: ADA, text: choice });
      const done = await tg.waitFor("sendMessage", (p) => replyTo(p) === message_id);
      return { victim, text: String(done.params.text) };
    };
    const yes = await approve("/approve");
    expect(yes.text).toMatch(/^done: /);
    expect(existsSync(yes.victim)).toBe(false);
    const no = await approve("/deny");
    expect(no.text).toMatch(/^done: /);
    expect(existsSync(join(no.victim, "f"))).toBe(true);
  });

  it("a /reset sent while a turn waits for its approval does not hold up the /approve", async () => {
    const victim = scratch.dir("victim-reset");
    const since = tg.calls.length;
    const { message_id } = tg.push({ chat: DM, from: ADA, text: `tool:terminal {"command":"rm -rf ${victim}"}` });
    await tg.waitFor("sendMessage", (p) => String(p.text).startsWith("Approval needed"), { since });
    // The reset waits behind the turn (the gateway holds that message); the bot still receives the answer.
    tg.push({ chat: DM, from: ADA, text: "/reset" });
    tg.push({ chat: DM, from: ADA, text: "/approve" });
    const done = await tg.waitFor("sendMessage", (p) => replyTo(p) === message_id);
    expect(String(done.params.text)).toMatch(/^done: /);
    expect(existsSync(victim)).toBe(false);
    await tg.waitFor("sendMessage", (p) => p.text === "Session reset.", { since });
  });

  it("a failing getUpdates is retried with backoff and messages still get answered", async () => {
    tg.fail("getUpdates", { error_code: 502, description: "Bad Gateway" });
    // This message releases the poll being held; the next poll gets the 502.
    await says(DM, ADA, "before the failure");
    await until("the failed poll", () => (tg.failuresLeft("getUpdates") === 0 ? true : undefined));
    const after = await says(DM, ADA, "after the failure");
    expect(String(after.params.text)).toMatch(/^echo: after the failure/);
    const health = await api<{ platforms: Array<Record<string, unknown>> }>(main.url, "/health/detailed");
    expect(health.body.platforms[0]).toMatchObject({ name: "telegram", state: "connected" });
  });

  it("a bad token: telegram is retrying with the reason while /health and the API keep serving", async () => {
    const t = await until("telegram retrying", async () => {
      const h = await api<{ platforms: Array<Record<string, unknown>> }>(badToken.url, "/health/detailed");
      const p = h.body.platforms.find((x) => x.name === "telegram");
      return p?.state === "retrying" ? p : undefined;
    });
    expect(String(t.error)).toMatch(/the Bot API refused getMe: Unauthorized \(401\); check TELEGRAM_BOT_TOKEN/);
    expect(badToken.proc.stderr()).toContain("refused getMe: Unauthorized (401)");
    expect(t.next_retry_at).toEqual(expect.any(String));
    expect((await api(badToken.url, "/health")).body).toEqual({ status: "ok", platform: "hermes-agent" });
    expect((await api(badToken.url, "/v1/models")).status).toBe(200);
    expect(tg.calls.some((c) => c.method === "getMe" && !c.authorized)).toBe(true);
  });

  it("no token: telegram failed, naming TELEGRAM_BOT_TOKEN; the API keeps serving", async () => {
    const h = await api<{ platforms: Array<Record<string, unknown>> }>(noToken.url, "/health/detailed");
    expect(h.body.platforms).toEqual([
      expect.objectContaining({
        name: "telegram",
        state: "failed",
        error: expect.stringMatching(/TELEGRAM_BOT_TOKEN/),
      }),
    ]);
    expect((await api(noToken.url, "/health")).status).toBe(200);
  });

  it("a stop ends the long poll at once and confirms the handled updates; no log shows a token", async () => {
    await until("the poll held", () => (tg.pendingPolls() === 1 ? true : undefined));
    // One poller all along (the poll the stop aborts may still be held here when the confirming call comes).
    expect(tg.conflicts()).toBe(0);
    const since = tg.calls.length;
    const started = Date.now();
    await main.stop("SIGTERM");
    expect(Date.now() - started).toBeLessThan(8000);
    expect(tg.pendingPolls()).toBe(0);
    const confirm = tg.calls.slice(since).find((c) => c.method === "getUpdates" && c.params.timeout === 0);
    expect(confirm?.params.offset).toEqual(expect.any(Number));
    for (const s of [main, badToken]) {
      expect(s.proc.stderr()).not.toContain(tg.token);
      expect(s.proc.stderr()).not.toContain("not-the-token");
    }
    await badToken.stop("SIGTERM");
    expect(badToken.proc.stderr()).not.toContain("not-the-token");
  });
});
