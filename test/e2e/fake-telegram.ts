/**
 * A fake Telegram Bot API on 127.0.0.1 for the gateway tests: `/bot<token>/<method>` with JSON bodies, the
 * methods the telegram platform uses (getMe, getUpdates as a long poll, sendMessage, editMessageText,
 * sendChatAction, setMessageReaction, editForumTopic), every call recorded, updates pushed by the test.
 * Answers have the Bot API's shape: `{ok: true, result}` or `{ok: false, error_code, description}`.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { sleep } from "../support/util.js";

export interface TgCall {
  method: string;
  params: Record<string, unknown>;
  /** The token in the path was the fake's token. */
  authorized: boolean;
  at: number;
}

export interface TgChat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  title?: string;
  is_forum?: boolean;
}

export interface TgUser {
  id: number;
  is_bot?: boolean;
  first_name: string;
  username?: string;
}

export interface PushedMessage {
  chat: TgChat;
  from?: TgUser;
  text?: string;
  /** A forum topic: sets message_thread_id and is_topic_message. */
  thread?: number;
}

export interface ApiFailure {
  error_code: number;
  description: string;
  parameters?: Record<string, unknown>;
}

interface Poll {
  offset: number;
  res: ServerResponse;
  timer: NodeJS.Timeout;
}

export interface FakeTelegram {
  /** `base_url` for gateway.platforms.telegram. */
  url: string;
  token: string;
  bot: TgUser & { username: string };
  calls: TgCall[];
  /** Queue one update holding `message`; returns it with the update_id and message_id it got. */
  push(m: PushedMessage): { update_id: number; message_id: number; update: Record<string, unknown> };
  /** Send `update` with the next getUpdates answer whatever offset it asks from (a duplicate delivery). */
  replay(update: Record<string, unknown>): void;
  /** The next `times` calls of `method` get this error instead of an answer. */
  fail(method: string, failure: ApiFailure, times?: number): void;
  /** getUpdates requests being held open now. */
  pendingPolls(): number;
  /** getUpdates requests answered 409 because another one came (two pollers at once). */
  conflicts(): number;
  /** Injected failures of `method` not served yet. */
  failuresLeft(method: string): number;
  /** Calls of `method` (optionally matching `where`) recorded so far. */
  callsOf(method: string, where?: (params: Record<string, unknown>) => boolean): TgCall[];
  /** Wait until a call of `method` matching `where` is recorded (after `since` calls, if given). */
  waitFor(
    method: string,
    where?: (params: Record<string, unknown>) => boolean,
    opts?: { ms?: number; since?: number },
  ): Promise<TgCall>;
  close(): Promise<void>;
}

const BOT = { id: 700_000_001, is_bot: true, first_name: "Hermes", username: "hermes_fake_bot" };
/** The longest a getUpdates is held, whatever timeout it asks for. */
const MAX_HOLD_S = 60;

export async function fakeTelegram(token = "700000001:fake-token-ABCdef_123"): Promise<FakeTelegram> {
  const calls: TgCall[] = [];
  const updates: Array<Record<string, unknown>> = [];
  const failures = new Map<string, { failure: ApiFailure; times: number }>();
  const polls = new Set<Poll>();
  const sent = new Map<string, Record<string, unknown>>();
  /** Updates for the next answer whatever its offset (Telegram sending one again). */
  const replays: Array<Record<string, unknown>> = [];
  let nextUpdate = 1;
  let conflicts = 0;
  let nextMessage = 100;

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  const ok = (res: ServerResponse, result: unknown) => answer(res, 200, { ok: true, result });
  const bad = (res: ServerResponse, description: string, code = 400) =>
    answer(res, code, { ok: false, error_code: code, description });

  const pending = (offset: number) => [...replays, ...updates.filter((u) => Number(u.update_id) >= offset)];
  const release = (p: Poll) => {
    clearTimeout(p.timer);
    polls.delete(p);
    ok(p.res, pending(p.offset));
    replays.length = 0;
  };
  const wake = () => {
    for (const p of [...polls]) if (pending(p.offset).length) release(p);
  };

  function getUpdates(params: Record<string, unknown>, res: ServerResponse) {
    const offset = Number(params.offset ?? 0);
    // As Telegram: asking from an offset confirms (forgets) every earlier update.
    if (offset > 0) updates.splice(0, updates.length, ...updates.filter((u) => Number(u.update_id) >= offset));
    // As Telegram: a second poller terminates the one being held.
    for (const p of [...polls]) {
      clearTimeout(p.timer);
      polls.delete(p);
      conflicts++;
      bad(p.res, "Conflict: terminated by other getUpdates request", 409);
    }
    const limit = Number(params.limit ?? 100);
    const now = pending(offset).slice(0, limit);
    const timeout = Math.min(MAX_HOLD_S, Number(params.timeout ?? 0));
    if (now.length || !(timeout > 0)) {
      replays.length = 0;
      return ok(res, now);
    }
    const p: Poll = { offset, res, timer: setTimeout(() => release(p), timeout * 1000) };
    polls.add(p);
    // The client went away (an aborted poll): the response closes before it was written.
    res.on("close", () => {
      clearTimeout(p.timer);
      polls.delete(p);
    });
  }

  function message(params: Record<string, unknown>, text: unknown): Record<string, unknown> {
    return {
      message_id: nextMessage++,
      date: Math.floor(Date.now() / 1000),
      chat: { id: params.chat_id, type: Number(params.chat_id) > 0 ? "private" : "supergroup" },
      from: BOT,
      text,
      ...(params.message_thread_id !== undefined ? { message_thread_id: params.message_thread_id } : {}),
    };
  }

  function method(name: string, params: Record<string, unknown>, res: ServerResponse) {
    const needs = (...keys: string[]) => {
      const missing = keys.find((k) => params[k] === undefined || params[k] === null || params[k] === "");
      if (missing) bad(res, `Bad Request: ${missing} is required`);
      return !missing;
    };
    switch (name) {
      case "getMe":
        return ok(res, BOT);
      case "getUpdates":
        return getUpdates(params, res);
      case "sendMessage": {
        if (!needs("chat_id")) return;
        const text = String(params.text ?? "");
        if (!text.trim()) return bad(res, "Bad Request: message text is empty");
        if (text.length > 4096) return bad(res, "Bad Request: message is too long");
        const m = message(params, text);
        sent.set(`${String(params.chat_id)}:${String(m.message_id)}`, m);
        return ok(res, m);
      }
      case "editMessageText": {
        if (!needs("chat_id", "message_id", "text")) return;
        const m = sent.get(`${String(params.chat_id)}:${String(params.message_id)}`);
        if (!m) return bad(res, "Bad Request: message to edit not found");
        m.text = params.text;
        return ok(res, m);
      }
      case "sendChatAction":
        return needs("chat_id", "action") && ok(res, true);
      case "setMessageReaction": {
        if (!needs("chat_id", "message_id")) return;
        const r = params.reaction;
        const valid =
          Array.isArray(r) &&
          r.every((x) => x && typeof x === "object" && x.type === "emoji" && typeof x.emoji === "string");
        return valid ? ok(res, true) : bad(res, "Bad Request: REACTION_INVALID");
      }
      case "editForumTopic":
        return needs("chat_id", "message_thread_id", "name") && ok(res, true);
      default:
        return bad(res, "Not Found", 404);
    }
  }

  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (raw += d));
    req.on("end", () => {
      const m = /^\/bot([^/]*)\/([A-Za-z]+)$/.exec(new URL(req.url ?? "/", "http://x").pathname);
      if (!m) return bad(res, "Not Found", 404);
      let params: Record<string, unknown> = {};
      try {
        params = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        return bad(res, "Bad Request: the body is not JSON");
      }
      const authorized = decodeURIComponent(m[1]!) === token;
      calls.push({ method: m[2]!, params, authorized, at: Date.now() });
      if (!authorized) return bad(res, "Unauthorized", 401);
      const f = failures.get(m[2]!);
      if (f && f.times > 0) {
        f.times--;
        const { error_code, description, parameters } = f.failure;
        return answer(res, error_code, { ok: false, error_code, description, ...(parameters ? { parameters } : {}) });
      }
      method(m[2]!, params, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));

  const callsOf = (name: string, where?: (p: Record<string, unknown>) => boolean) =>
    calls.filter((c) => c.method === name && (!where || where(c.params)));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    bot: BOT,
    calls,
    push(m) {
      const update_id = nextUpdate++;
      const message_id = nextMessage++;
      const message: Record<string, unknown> = {
        message_id,
        date: Math.floor(Date.now() / 1000),
        chat: m.chat,
        ...(m.from ? { from: m.from } : {}),
        ...(m.text !== undefined ? { text: m.text } : {}),
        ...(m.thread !== undefined ? { message_thread_id: m.thread, is_topic_message: true } : {}),
      };
      const update = { update_id, message };
      updates.push(update);
      wake();
      return { update_id, message_id, update };
    },
    replay(update) {
      replays.push(update);
      wake();
    },
    fail(name, failure, times = 1) {
      failures.set(name, { failure, times });
    },
    pendingPolls: () => polls.size,
    conflicts: () => conflicts,
    failuresLeft: (name) => failures.get(name)?.times ?? 0,
    callsOf,
    async waitFor(name, where, opts = {}) {
      const deadline = Date.now() + (opts.ms ?? 15_000);
      for (;;) {
        const found = calls.slice(opts.since ?? 0).find((c) => c.method === name && (!where || where(c.params)));
        if (found) return found;
        if (Date.now() > deadline) {
          const seen = calls.map((c) => `${c.method} ${JSON.stringify(c.params)}`).join("\n");
          throw new Error(`no ${name} call as expected within ${opts.ms ?? 15_000} ms; calls:\n${seen}`);
        }
        await sleep(20);
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const p of polls) clearTimeout(p.timer);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
