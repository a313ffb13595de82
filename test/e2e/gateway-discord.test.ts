/**
 * The bundled discord platform: ctx.platform_actions reach Discord's REST API (a fake on 127.0.0.1),
 * with the bot token, for a plugin granted gateway.platform_actions; bad ids fail as action_failed.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { type EchoModel, echoModel, type Served, serve, writeServeConfig } from "./serve-helpers.js";

interface Call {
  method: string;
  path: string;
  auth: string | undefined;
  body: string;
}

const scratch = new Scratch("hk-gw-discord-");
const calls: Call[] = [];
let model: EchoModel;
let server: ReturnType<typeof createServer>;
let served: Served;
let home: string;

const ACTOR = `
import { appendFileSync } from "node:fs";
export function register(ctx) {
  ctx.register_hook("pre_llm_call", async ({ user_message }) => {
    const [chat, msg, thread] = String(user_message).split(" ");
    const r1 = await ctx.platform_actions.add_reaction({ platform: "discord", chat_id: chat, message_id: msg,
      emoji: "👍" });
    const r2 = await ctx.platform_actions.set_thread_title({ platform: "discord", chat_id: chat, thread_id: thread,
      title: "  Release   planning " });
    appendFileSync(process.env.ACTOR_OUT, JSON.stringify([r1, r2]) + "\\n");
  });
}
`;

beforeAll(async () => {
  model = await echoModel();
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      calls.push({ method: req.method ?? "", path: req.url ?? "", auth: req.headers.authorization, body });
      if (req.url === "/api/v10/users/@me") return void res.end(JSON.stringify({ id: "1", username: "hermes" }));
      if (req.method === "PUT") return void res.writeHead(204).end();
      res.end(JSON.stringify({ id: "9" }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v10`;
  home = scratch.dir("home");
  writeText(
    join(home, "plugins", "actor", "plugin.yaml"),
    "name: actor\nversion: 1.0.0\ncapabilities: [gateway.platform_actions]\n",
  );
  writeText(join(home, "plugins", "actor", "index.js"), ACTOR);
  writeServeConfig(
    home,
    model.url,
    `gateway:\n  platforms:\n    discord:\n      enabled: true\n      base_url: ${base}\n`,
  );
  const en = await runCli(["--home", home, "plugins", "enable", "actor", "--grant", "gateway.platform_actions"]);
  expect(en.code, en.stderr).toBe(0);
  served = await serve(home, [], { DISCORD_BOT_TOKEN: "bot-token-123", ACTOR_OUT: join(scratch.root, "out.jsonl") });
});

afterAll(async () => {
  await served?.stop("SIGKILL");
  await model.close();
  await new Promise<void>((r) => server.close(() => r()));
  scratch.cleanup();
});

async function chat(text: string): Promise<void> {
  const r = await fetch(`${served.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: text }] }),
  });
  expect(r.status).toBe(200);
}

function results(): unknown[][] {
  return readFileSync(join(scratch.root, "out.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as unknown[]);
}

describe("discord platform actions", () => {
  it("connect checks the token; a reaction and a thread title reach the REST API with it", async () => {
    const health = (await (await fetch(`${served.url}/health/detailed`)).json()) as { platforms: unknown[] };
    expect(health.platforms).toEqual([expect.objectContaining({ name: "discord", state: "connected" })]);
    await chat("111 222 333");
    expect(results().at(-1)).toEqual([
      { ok: true, action: "add_reaction" },
      { ok: true, action: "set_thread_title" },
    ]);
    const put = calls.find((c) => c.method === "PUT")!;
    expect(put.path).toBe(`/api/v10/channels/111/messages/222/reactions/${encodeURIComponent("👍")}/@me`);
    expect(put.auth).toBe("Bot bot-token-123");
    const patch = calls.find((c) => c.method === "PATCH")!;
    expect(patch.path).toBe("/api/v10/channels/333");
    expect(JSON.parse(patch.body)).toEqual({ name: "Release planning" });
  });

  it("ids that are not Discord's fail as action_failed, and the service keeps serving", async () => {
    await chat("general x y");
    const [reaction, title] = results().at(-1)!;
    expect(reaction).toMatchObject({ ok: false, error: "action_failed" });
    expect(title).toMatchObject({ ok: false, error: "action_failed" });
    expect(served.proc.stderr()).not.toContain("bot-token-123");
  });
});
