/**
 * The bundled Telegram platform of hermes serve (docs/gateway.md, "Telegram"): a bot on the Bot API that
 * receives by long polling (getUpdates) and answers with sendMessage. Plain JavaScript on the global fetch,
 * no dependencies. Configured by `gateway.platforms.telegram` ({enabled, base_url, allowed_users,
 * poll_timeout}); the token comes from TELEGRAM_BOT_TOKEN and never reaches a log line or an error (it is
 * part of every request URL, so only method names are logged and error texts are scrubbed of it).
 */

const DEFAULT_BASE_URL = "https://api.telegram.org";
const DEFAULT_POLL_TIMEOUT = 25;
/** Telegram's limit for one text message (UTF-16 units; answers are sent without parse_mode). */
const MAX_MESSAGE_LENGTH = 4096;
/** Forum topic names: 1–128 characters. */
const MAX_TOPIC_NAME = 128;
const CALL_TIMEOUT_MS = 30_000;
const MAX_BACKOFF_MS = 30_000;
/** A 429 on a send is waited out and retried once when Telegram asks for at most this long. */
const MAX_RETRY_AFTER_S = 10;
/** How long the polling loop waits for the gateway to take one message before it goes on with the next. */
const DELIVER_WAIT_MS = 2000;
/** How long disconnect() waits for the polling loop to finish the message it is handing on. */
const DISCONNECT_WAIT_MS = 5000;
const MISSING_TOKEN =
  "TELEGRAM_BOT_TOKEN is not set: put the bot token from @BotFather in hermes serve's environment " +
  "(under Nix: services.hermes-agent.environmentFile)";

export function register(ctx) {
  ctx.register_platform(
    "telegram",
    "Telegram",
    (host) => new TelegramAdapter(host),
    () => {
      // Thrown rather than `false`: the gateway shows the message in /health/detailed and the log.
      if (!String(process.env.TELEGRAM_BOT_TOKEN ?? "").trim()) throw new Error(MISSING_TOKEN);
      return true;
    },
  );
}

class TelegramAdapter {
  constructor(host) {
    this.host = host;
    this.connected = false;
    this.max_message_length = MAX_MESSAGE_LENGTH;
    this.token = String(host.env?.TELEGRAM_BOT_TOKEN ?? "").trim();
    const config = host.config ?? {};
    this.baseUrl = String(config.base_url || DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.pollTimeout = pollTimeout(config.poll_timeout, host.log);
    /** The update_id the next getUpdates asks from (last handled + 1); earlier ones are duplicates. */
    this.offset = undefined;
    /** The offset Telegram was last sent: updates before it are confirmed and never sent again. */
    this.confirmed = undefined;
    this.controller = undefined;
    this.loop = undefined;
    this.me = undefined;
  }

  /** getMe checks the token, then the long-polling loop runs until disconnect(). */
  async connect() {
    await this.disconnect();
    if (!this.token) throw new Error(MISSING_TOKEN);
    if (!/^https?:\/\/[^/]/.test(this.baseUrl))
      throw new Error(`gateway.platforms.telegram.base_url must be an http(s) URL, not '${this.baseUrl}'`);
    const controller = new AbortController();
    const me = await this.call("getMe", {}, { signal: controller.signal });
    // Worded so that the log's secret masking (`token: <value>`) leaves Telegram's reason readable.
    if (!me.ok) throw new Error(`the Bot API refused getMe: ${apiError(me)}; check TELEGRAM_BOT_TOKEN`);
    this.me = me.result ?? {};
    this.controller = controller;
    this.connected = true;
    this.loop = this.poll(controller.signal);
    this.host.log.info(
      `connected as @${this.me.username ?? "?"} (${this.me.id ?? "?"}); long polling getUpdates, ` +
        `timeout ${this.pollTimeout} s`,
    );
    return true;
  }

  /** Stop polling (the request in flight is aborted) and confirm the updates already handled. */
  async disconnect() {
    const controller = this.controller;
    this.controller = undefined;
    this.connected = false;
    if (!controller) return;
    controller.abort();
    // The loop ends at once unless a message it is handing on is still held by the gateway: not waited for long.
    await within(this.loop, DISCONNECT_WAIT_MS);
    this.loop = undefined;
    if (this.offset === undefined || this.offset === this.confirmed) return;
    // Without this, the updates of the last batch would be sent again to the next poller (a restart).
    const r = await this.call(
      "getUpdates",
      { offset: this.offset, timeout: 0, limit: 1, allowed_updates: ["message"] },
      { timeoutMs: 3000 },
    ).catch((e) => ({ ok: false, description: e.message }));
    if (r.ok) this.confirmed = this.offset;
    else this.host.log.warn(`confirming the handled updates failed: ${apiError(r)}`);
  }

  async poll(signal) {
    let failures = 0;
    while (!signal.aborted) {
      const params = { timeout: this.pollTimeout, allowed_updates: ["message"] };
      if (this.offset !== undefined) params.offset = this.offset;
      const timeoutMs = (this.pollTimeout + 15) * 1000;
      const r = await this.call("getUpdates", params, { signal, timeoutMs }).catch((e) => ({
        ok: false,
        description: e.message,
      }));
      if (signal.aborted) break;
      if (!r.ok) {
        failures++;
        // 401/404: the token was revoked or the bot deleted; sends cannot work either until it polls again.
        if (r.error_code === 401 || r.error_code === 404) this.connected = false;
        const asked = Number(r.parameters?.retry_after);
        const wait = asked > 0 ? asked * 1000 : Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(failures - 1, 5));
        this.host.log.warn(`getUpdates failed: ${apiError(r)}; polling again in ${wait} ms`);
        await sleep(wait, signal);
        continue;
      }
      if (failures) this.host.log.info(`getUpdates answers again after ${failures} failure(s)`);
      failures = 0;
      this.connected = true;
      if (params.offset !== undefined) this.confirmed = params.offset;
      for (const u of Array.isArray(r.result) ? r.result : []) {
        if (signal.aborted) break;
        await this.update(u);
      }
    }
  }

  /** One update: duplicates (an update_id already handled) are skipped, messages are delivered. */
  async update(u) {
    const id = Number(u?.update_id);
    if (!Number.isSafeInteger(id)) return;
    if (this.offset !== undefined && id < this.offset) return;
    this.offset = id + 1;
    const m = inbound(u.message, this.me?.username);
    if (!m) return;
    const delivered = Promise.resolve()
      .then(() => this.host.deliver(m))
      .then(
        () => true,
        (e) => {
          this.host.log.error(`message ${m.message_id} in ${m.chat_id} was not delivered: ${e?.message ?? e}`);
          return true;
        },
      );
    // In order, but a message the gateway holds (a /reset waiting behind a turn that waits for an approval)
    // must not stop the bot from receiving the /approve that turn needs.
    if (!(await within(delivered, DELIVER_WAIT_MS)))
      this.host.log.info(`message ${m.message_id} in ${m.chat_id} is still being handed on; receiving the next`);
  }

  async send(chat_id, text, opts = {}) {
    const params = { chat_id: idOf(chat_id), text };
    if (opts.thread_id) params.message_thread_id = idOf(opts.thread_id);
    if (opts.reply_to) params.reply_parameters = { message_id: idOf(opts.reply_to), allow_sending_without_reply: true };
    const r = await this.request("sendMessage", params);
    if (!r.ok) return { ok: false, error: r.description ?? apiError(r) };
    return { ok: true, message_id: String(r.result?.message_id ?? "") };
  }

  async edit(chat_id, message_id, text) {
    const r = await this.request("editMessageText", { chat_id: idOf(chat_id), message_id: idOf(message_id), text });
    if (!r.ok) return { ok: false, error: r.description ?? apiError(r) };
    return { ok: true, message_id: String(message_id) };
  }

  async typing(chat_id, opts = {}) {
    const params = { chat_id: idOf(chat_id), action: "typing" };
    if (opts.thread_id) params.message_thread_id = idOf(opts.thread_id);
    const r = await this.request("sendChatAction", params);
    if (!r.ok) this.host.log.warn(`sendChatAction in ${chat_id} failed: ${apiError(r)}`);
  }

  /** setMessageReaction: the bot's reaction to the message becomes `emoji` (it replaces the previous one). */
  async add_reaction(chat_id, message_id, emoji) {
    const r = await this.request("setMessageReaction", {
      chat_id: idOf(chat_id),
      message_id: idOf(message_id),
      reaction: [{ type: "emoji", emoji }],
    });
    if (!r.ok) this.host.log.warn(`setMessageReaction on ${message_id} in ${chat_id} failed: ${apiError(r)}`);
    return r.ok === true;
  }

  /** editForumTopic: renames a topic of a forum supergroup (the bot needs can_manage_topics). */
  async set_thread_title(chat_id, thread_id, title) {
    const r = await this.request("editForumTopic", {
      chat_id: idOf(chat_id),
      message_thread_id: idOf(thread_id),
      name: [...String(title)].slice(0, MAX_TOPIC_NAME).join(""),
    });
    if (!r.ok) this.host.log.warn(`editForumTopic of topic ${thread_id} in ${chat_id} failed: ${apiError(r)}`);
    return r.ok === true;
  }

  /** A call that never throws: network failures become `{ok: false, description}`; a short 429 is retried once. */
  async request(method, params) {
    const once = () => this.call(method, params).catch((e) => ({ ok: false, description: e.message }));
    const r = await once();
    const after = Number(r.parameters?.retry_after);
    if (r.ok || r.error_code !== 429 || !(after > 0) || after > MAX_RETRY_AFTER_S) return r;
    this.host.log.warn(`${method}: Telegram asked to wait ${after} s (429); retrying once`);
    await sleep(after * 1000);
    return once();
  }

  /** POST one Bot API method; resolves to Telegram's answer object, throws (token-free) when none came. */
  async call(method, params, opts = {}) {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? CALL_TIMEOUT_MS);
    const signal = opts.signal ? anySignal([opts.signal, timeout]) : timeout;
    try {
      const res = await fetch(`${this.baseUrl}/bot${this.token}/${method}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(params ?? {}),
        signal,
      });
      const text = await res.text();
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (body && typeof body === "object" && typeof body.ok === "boolean") return body;
      return { ok: false, error_code: res.status, description: `HTTP ${res.status} without a Bot API answer` };
    } catch (e) {
      throw new Error(this.scrub(`${method}: ${failure(e)}`));
    }
  }

  scrub(text) {
    return this.token ? String(text).split(this.token).join("<token>") : String(text);
  }
}

/** The InboundMessage of a Telegram message, or undefined for what the gateway does not take. */
function inbound(msg, me) {
  if (!msg || typeof msg !== "object" || !msg.chat || msg.chat.id === undefined) return undefined;
  // Other bots (and anonymous group admins, who post as GroupAnonymousBot) start no turns.
  if (msg.from?.is_bot) return undefined;
  // Media, stickers, service messages: not built; only text is handed on.
  if (typeof msg.text !== "string" || !msg.text.trim()) return undefined;
  const text = addressed(msg.text, me);
  if (text === undefined) return undefined;
  const chat = msg.chat;
  const inTopic = msg.is_topic_message === true || (chat.is_forum === true && msg.message_thread_id !== undefined);
  const thread = inTopic && msg.message_thread_id !== undefined ? String(msg.message_thread_id) : undefined;
  const chatType =
    chat.type === "private"
      ? "dm"
      : chat.type === "channel"
        ? "channel"
        : chat.type === "group" || chat.type === "supergroup"
          ? thread
            ? "forum"
            : "group"
          : "group";
  const from = msg.from;
  return {
    platform: "telegram",
    chat_id: String(chat.id),
    chat_type: chatType,
    ...(thread ? { thread_id: thread } : {}),
    ...(msg.message_id !== undefined ? { message_id: String(msg.message_id) } : {}),
    ...(from?.id !== undefined ? { sender_id: String(from.id), sender_name: nameOf(from) } : {}),
    text,
  };
}

/**
 * `/cmd@thisbot args` → `/cmd args` (group clients add the bot's name to commands); a command
 * addressed to another bot is not for us (undefined). Anything else is returned as it is.
 */
function addressed(text, me) {
  const m = /^\/([A-Za-z0-9_]+)@([A-Za-z0-9_]+)(?=\s|$)/.exec(text);
  if (!m) return text;
  if (me && m[2].toLowerCase() === String(me).toLowerCase()) return `/${m[1]}${text.slice(m[0].length)}`;
  return undefined;
}

function nameOf(from) {
  const full = [from.first_name, from.last_name].filter((s) => typeof s === "string" && s).join(" ");
  return full || (from.username ? `@${from.username}` : String(from.id));
}

/** Chat, message and thread ids go back to Telegram as numbers when they are (`@channel` names stay strings). */
function idOf(s) {
  const v = String(s);
  return /^-?\d{1,16}$/.test(v) ? Number(v) : v;
}

function apiError(r) {
  const code = r?.error_code !== undefined ? ` (${r.error_code})` : "";
  return `${r?.description ?? "no description"}${code}`;
}

/** What went wrong with a fetch, without its URL. */
function failure(e) {
  if (e?.name === "TimeoutError") return "timed out";
  if (e?.name === "AbortError") return "aborted";
  const cause = e?.cause;
  const detail = cause ? ` (${cause.code ?? cause.message ?? cause})` : "";
  return `${e?.message ?? e}${detail}`;
}

function pollTimeout(v, log) {
  if (v === undefined || v === null) return DEFAULT_POLL_TIMEOUT;
  const n = Number(v);
  if (Number.isInteger(n) && n >= 1 && n <= 300) return n;
  log.warn(`gateway.platforms.telegram.poll_timeout must be 1–300 seconds; using ${DEFAULT_POLL_TIMEOUT}`);
  return DEFAULT_POLL_TIMEOUT;
}

function anySignal(signals) {
  if (typeof AbortSignal.any === "function") return AbortSignal.any(signals);
  const c = new AbortController();
  for (const s of signals) {
    if (s.aborted) c.abort(s.reason);
    else s.addEventListener("abort", () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}

/** `promise`'s value (undefined when it rejects), or undefined after `ms`; no timer is left behind. */
function within(promise, ms) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([Promise.resolve(promise).catch(() => undefined), late]).finally(() => clearTimeout(timer));
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
