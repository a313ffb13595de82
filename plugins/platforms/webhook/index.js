// The bundled `webhook` chat platform of hermes serve (docs/gateway.md, "Webhook"): signed HTTP POSTs to
// /webhook/<route> become inbound messages; answers are POSTed, signed the same way, to the route's url.
// Plain ESM on node: builtins only.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

/** Largest request body read (1 MiB); larger ones get 413. */
const MAX_BODY = 1024 * 1024;
/** A refused body is read and dropped up to this size (so the client sees the 413), then the socket is cut. */
const MAX_DRAIN = 8 * MAX_BODY;
/** How far X-Hermes-Timestamp may be from now, either way, in seconds. */
const WINDOW_S = 300;
const SEND_TIMEOUT_MS = 10_000;
const ROUTE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Longest chat_id, sender_id or message_id accepted. */
const MAX_ID = 256;

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` with `secret`. */
export function sign(secret, timestamp, body) {
  return `sha256=${digest(secret, timestamp, body).toString("hex")}`;
}

function digest(secret, timestamp, body) {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();
}

/** gateway.platforms.webhook as settings; throws (the platform fails, named in /health/detailed) when wrong. */
function settingsOf(config, env) {
  const host = config.host ?? "127.0.0.1";
  if (typeof host !== "string" || !host.trim()) throw new Error("gateway.platforms.webhook.host must be an address");
  const port = config.port ?? 8644;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error("gateway.platforms.webhook.port must be a port number 0-65535 (0: any free port)");
  const raw = config.routes;
  if (!raw || typeof raw !== "object" || Array.isArray(raw) || Object.keys(raw).length === 0)
    throw new Error("gateway.platforms.webhook.routes must name at least one route ({<route>: {secret_env}})");
  const routes = new Map();
  for (const [name, r] of Object.entries(raw)) {
    const where = `gateway.platforms.webhook.routes.${name}`;
    if (!ROUTE_NAME.test(name)) throw new Error(`${where}: a route name is 1-64 of A-Z a-z 0-9 _ -`);
    if (!r || typeof r !== "object" || Array.isArray(r)) throw new Error(`${where} must be a mapping`);
    if ("secret" in r)
      throw new Error(`${where}.secret: secrets are not read from config.yaml; set secret_env to a variable's name`);
    if (typeof r.secret_env !== "string" || !ENV_NAME.test(r.secret_env))
      throw new Error(`${where}.secret_env must name an environment variable`);
    const secret = env[r.secret_env];
    if (typeof secret !== "string" || secret === "")
      throw new Error(`${where}: the environment variable ${r.secret_env} (its secret) is not set`);
    let url;
    if (r.url !== undefined && r.url !== null) {
      try {
        url = new URL(String(r.url));
      } catch {
        throw new Error(`${where}.url is not a URL`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${where}.url must be http(s)`);
    }
    routes.set(name, { name, secret, secretEnv: r.secret_env, ...(url ? { url: url.href } : {}) });
  }
  return { host: host.trim(), port, routes };
}

function respond(res, status, body, headers = {}) {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

/**
 * The raw body: a Buffer, `null` when it is over MAX_BODY (the rest is read and dropped, up to MAX_DRAIN),
 * `undefined` when the client went away first.
 */
function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let over = false;
    req.on("data", (d) => {
      size += d.length;
      if (!over && size > MAX_BODY) {
        over = true;
        chunks.length = 0;
        resolve(null);
      }
      if (!over) chunks.push(d);
      else if (size > MAX_DRAIN) req.socket.destroy();
    });
    req.on("end", () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks)));
    req.on("close", () => resolve(undefined));
    req.on("error", () => resolve(undefined));
  });
}

/** An optional id of the body: undefined, or a string of at most MAX_ID characters; false when malformed. */
function idOf(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v === "string" && v !== "" && v.length <= MAX_ID) return v;
  return false;
}

/** The message of a verified body, or the 400 error code. */
function messageOf(route, body) {
  let data;
  try {
    data = JSON.parse(body.toString("utf8"));
  } catch {
    return { error: "invalid_json" };
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) return { error: "body_not_an_object" };
  if (typeof data.text !== "string" || !data.text.trim()) return { error: "missing_text" };
  const chat = idOf(data.chat_id);
  const sender = idOf(data.sender_id);
  const messageId = idOf(data.message_id);
  if (chat === false || sender === false || messageId === false)
    return { error: `bad_id: chat_id, sender_id and message_id are strings of 1-${MAX_ID} characters` };
  return {
    message: {
      platform: "webhook",
      chat_type: "webhook",
      chat_id: `${route.name}:${chat ?? "default"}`,
      sender_id: sender ?? `webhook:${route.name}`,
      ...(messageId !== undefined ? { message_id: messageId } : {}),
      text: data.text,
    },
  };
}

export function createWebhookAdapter(host) {
  const settings = settingsOf(host.config, host.env);
  /** Signatures accepted in the window (hex → when they may be forgotten, ms): a replay is refused. */
  const seen = new Map();
  let server;
  let pruned = 0;

  const remember = (sig, ts) => {
    const now = Date.now();
    if (now - pruned > 1000) {
      pruned = now;
      for (const [k, until] of seen) if (until < now) seen.delete(k);
    }
    seen.set(sig, (ts + WINDOW_S + 1) * 1000);
  };

  /** Why a request is not authentic (status and code), or undefined when it is. */
  const refusal = (route, req, body) => {
    const ts = req.headers["x-hermes-timestamp"];
    const sig = req.headers["x-hermes-signature"];
    if (typeof ts !== "string" || !/^\d{1,12}$/.test(ts) || typeof sig !== "string")
      return { status: 401, error: "missing_signature" };
    const m = /^sha256=([0-9a-fA-F]{64})$/.exec(sig.trim());
    const got = m ? Buffer.from(m[1], "hex") : Buffer.alloc(0);
    const want = digest(route.secret, ts, body);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return { status: 401, error: "bad_signature" };
    if (Math.abs(Date.now() / 1000 - Number(ts)) > WINDOW_S) return { status: 401, error: "stale_timestamp" };
    const key = got.toString("hex");
    if (seen.has(key)) return { status: 409, error: "replayed" };
    remember(key, Number(ts));
    return undefined;
  };

  const handle = async (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const name = /^\/webhook\/([^/]+)$/.exec(path)?.[1];
    const route = name === undefined ? undefined : settings.routes.get(name);
    if (!route) {
      req.resume();
      return respond(res, 404, { error: "unknown_route" });
    }
    if (req.method !== "POST") {
      req.resume();
      return respond(res, 405, { error: "method_not_allowed" }, { allow: "POST" });
    }
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY) {
      if (Number(req.headers["content-length"]) > MAX_DRAIN) req.socket.destroy();
      else req.resume();
      return respond(res, 413, { error: "body_too_large", max_bytes: MAX_BODY });
    }
    const body = await readBody(req);
    if (body === undefined) return;
    if (body === null) return respond(res, 413, { error: "body_too_large", max_bytes: MAX_BODY });
    const refused = refusal(route, req, body);
    if (refused) {
      host.log.warn(`webhook route ${route.name}: refused a request (${refused.error})`);
      return respond(res, refused.status, { error: refused.error });
    }
    const parsed = messageOf(route, body);
    if (parsed.error) return respond(res, 400, { error: parsed.error });
    try {
      await host.deliver(parsed.message);
    } catch (e) {
      host.log.error(`webhook route ${route.name}: delivery failed: ${e?.message ?? String(e)}`);
      return respond(res, 500, { error: "delivery_failed" });
    }
    respond(res, 202, { accepted: true });
  };

  return {
    get connected() {
      return server?.listening === true;
    },

    async connect() {
      if (server?.listening) return true;
      const s = createServer((req, res) => {
        handle(req, res).catch((e) => {
          host.log.error(`webhook: ${e?.message ?? String(e)}`);
          respond(res, 500, { error: "internal_error" });
        });
      });
      s.requestTimeout = 30_000;
      s.headersTimeout = 10_000;
      await new Promise((resolve, reject) => {
        s.once("error", reject);
        s.listen(settings.port, settings.host, () => {
          s.off("error", reject);
          resolve();
        });
      });
      s.on("error", (e) => host.log.error(`webhook server: ${e?.message ?? String(e)}`));
      server = s;
      const a = s.address();
      const at = a.family === "IPv6" ? `[${a.address}]` : a.address;
      // "listening at", not "listening on": hermes serve's own "listening on <url>" line is what tools look for.
      host.log.info(`webhook listening at http://${at}:${a.port} (routes: ${[...settings.routes.keys()].join(", ")})`);
      return true;
    },

    async disconnect() {
      const s = server;
      server = undefined;
      if (!s) return;
      await new Promise((resolve) => {
        const timer = setTimeout(() => s.closeAllConnections(), 2000);
        s.close(() => {
          clearTimeout(timer);
          resolve();
        });
        s.closeIdleConnections();
      });
    },

    async send(chat_id, text, opts = {}) {
      const at = chat_id.indexOf(":");
      const name = at < 0 ? chat_id : chat_id.slice(0, at);
      const chat = at < 0 ? "default" : chat_id.slice(at + 1);
      const route = settings.routes.get(name);
      if (!route) return { ok: false, error: `no webhook route '${name}'` };
      if (!route.url) {
        host.log.info(`webhook reply to ${chat_id} (route ${name} has no url): ${text}`);
        return { ok: true };
      }
      const body = JSON.stringify({
        route: name,
        chat_id: chat,
        text,
        ...(opts.reply_to ? { reply_to: opts.reply_to } : {}),
      });
      const ts = String(Math.floor(Date.now() / 1000));
      try {
        const res = await fetch(route.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-hermes-timestamp": ts,
            "x-hermes-signature": sign(route.secret, ts, body),
          },
          body,
          redirect: "manual",
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
        await res.arrayBuffer().catch(() => undefined);
        return res.ok ? { ok: true } : { ok: false, error: `HTTP ${res.status} from the url of route ${name}` };
      } catch (e) {
        return { ok: false, error: `POST to the url of route ${name}: ${e?.cause?.message ?? e?.message ?? e}` };
      }
    },
  };
}

export function register(ctx) {
  ctx.register_platform("webhook", "Webhook", (host) => createWebhookAdapter(host));
}
