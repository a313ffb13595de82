// Discord for hermes serve: the REST calls ctx.platform_actions needs (reactions, thread names).
// Receiving messages needs Discord's websocket gateway, which this adapter does not open.

const API = "https://discord.com/api/v10";

function restClient(host) {
  const base = String(host.config.base_url ?? API).replace(/\/+$/, "");
  const token = host.env.DISCORD_BOT_TOKEN ?? "";
  return async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bot ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    const where = path.replace(/\/\d+/g, "/…");
    if (!res.ok) throw new Error(`discord ${method} ${where}: HTTP ${res.status} ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) : null;
  };
}

const NUMERIC = /^\d+$/;

function adapter(host) {
  const call = restClient(host);
  const self = {
    connected: false,
    max_message_length: 2000,
    async connect() {
      if (!host.env.DISCORD_BOT_TOKEN) throw new Error("DISCORD_BOT_TOKEN is not set in the service's environment");
      const me = await call("GET", "/users/@me");
      self.connected = true;
      host.log.info(`discord: connected as ${me?.username ?? "the bot"} (actions only: no messages are received)`);
      return true;
    },
    async disconnect() {
      self.connected = false;
    },
    async send(chat_id, text) {
      if (!NUMERIC.test(chat_id)) return { ok: false, error: "discord channel ids are numeric" };
      try {
        const m = await call("POST", `/channels/${chat_id}/messages`, { content: text });
        return { ok: true, message_id: m?.id };
      } catch (e) {
        return { ok: false, error: String(e?.message ?? e) };
      }
    },
    async add_reaction(chat_id, message_id, emoji) {
      if (!NUMERIC.test(chat_id) || !NUMERIC.test(message_id)) throw new Error("discord ids are numeric");
      await call("PUT", `/channels/${chat_id}/messages/${message_id}/reactions/${encodeURIComponent(emoji)}/@me`);
      return true;
    },
    async set_thread_title(_chat_id, thread_id, title) {
      if (!NUMERIC.test(thread_id)) throw new Error("discord thread ids are numeric");
      const name = title.replace(/\s+/g, " ").trim().slice(0, 100);
      await call("PATCH", `/channels/${thread_id}`, { name });
      return true;
    },
  };
  return self;
}

export function register(ctx) {
  ctx.register_platform("discord", "Discord", adapter, () => true);
}
