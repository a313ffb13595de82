/**
 * Helpers for the `hermes serve` tests: a model server on 127.0.0.1 whose answers depend on the last
 * user message (so concurrent sessions get predictable answers), a home that uses it, and the built
 * CLI spawned as `hermes serve --port 0` with its address read from the line it prints.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { spawnCli, type Spawned } from "../support/cli.js";
import { writeText } from "../support/home.js";
import { sleep } from "../support/util.js";

interface Msg {
  role: string;
  content: string | null;
  tool_calls?: unknown[];
}

export interface EchoModel {
  url: string;
  /** Requests received, in order. */
  requests: Array<{ messages: Msg[]; stream?: boolean; tools?: unknown[] }>;
  close(): Promise<void>;
}

function completion(message: Record<string, unknown>, finish: string) {
  return {
    id: "chatcmpl-echo",
    object: "chat.completion",
    created: 1,
    model: "echo",
    choices: [{ index: 0, message, finish_reason: finish }],
  };
}

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return {
    id: "chatcmpl-echo",
    object: "chat.completion.chunk",
    created: 1,
    model: "echo",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

/**
 * What the model answers, by the last user message:
 * - `tool:<name> <json args>`: calls that tool once; after the tool result it says `done: <result>`;
 * - `slow:<ms> <text>`: streams the words of `echo: <text>`, one every <ms> milliseconds;
 * - `hang`: never answers;
 * - anything else: `echo: <text> [<n> messages]` (n counts the whole conversation it was sent).
 */
function answer(body: { messages: Msg[] }): {
  text?: string;
  tool?: { name: string; args: string };
  delayMs?: number;
  hang?: boolean;
} {
  const msgs = body.messages;
  const last = msgs[msgs.length - 1]!;
  const lastUser = [...msgs].reverse().find((m) => m.role === "user");
  const text = String(lastUser?.content ?? "").split("\n\n")[0]!;
  if (last.role === "tool") return { text: `done: ${String(last.content)}` };
  const tool = /^tool:(\S+)\s*(.*)$/s.exec(text);
  if (tool) return { tool: { name: tool[1]!, args: tool[2] || "{}" } };
  const slow = /^slow:(\d+)\s+(.*)$/s.exec(text);
  if (slow) return { text: `echo: ${slow[2]}`, delayMs: Number(slow[1]) };
  if (text === "hang") return { hang: true };
  return { text: `echo: ${text} [${msgs.length} messages]` };
}

async function reply(res: ServerResponse, body: { messages: Msg[]; stream?: boolean }, hanging: Set<ServerResponse>) {
  const a = answer(body);
  if (a.hang) return void hanging.add(res);
  if (a.tool) {
    const call = {
      id: `call_${Date.now()}`,
      type: "function",
      function: { name: a.tool.name, arguments: a.tool.args },
    };
    if (!body.stream)
      return void res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(completion({ role: "assistant", content: null, tool_calls: [call] }, "tool_calls")));
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(`data: ${JSON.stringify(chunk({ role: "assistant", tool_calls: [{ index: 0, ...call }] }))}\n\n`);
    res.write(`data: ${JSON.stringify(chunk({}, "tool_calls"))}\n\n`);
    return void res.end("data: [DONE]\n\n");
  }
  const text = a.text ?? "";
  if (!body.stream)
    return void res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(completion({ role: "assistant", content: text }, "stop")));
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const w of text.match(/\S+\s*/g) ?? []) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk({ content: w }))}\n\n`);
    if (a.delayMs) await sleep(a.delayMs);
  }
  res.write(`data: ${JSON.stringify(chunk({}, "stop"))}\n\n`);
  res.end("data: [DONE]\n\n");
}

export async function echoModel(): Promise<EchoModel> {
  const requests: EchoModel["requests"] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw) as EchoModel["requests"][number];
      requests.push(body);
      void reply(res, body, hanging);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const h of hanging) h.socket?.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** config.yaml of a home whose model is `modelUrl`; `extra` is appended as YAML. */
export function writeServeConfig(home: string, modelUrl: string, extra = ""): void {
  writeText(
    join(home, "config.yaml"),
    `model:\n  provider: openai-compatible\n  base_url: ${modelUrl}\n  default: echo\nagent:\n  api_max_retries: 0\n${extra}`,
  );
}

export interface Served {
  url: string;
  proc: Spawned;
  /** Send a signal and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const LISTENING = /listening on (http:\/\/\S+)/;

/** Spawn `hermes --home <home> serve --port 0 …args` and wait until it prints its address. */
export async function serve(home: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const proc = spawnCli(["--home", home, "serve", "--port", "0", ...args], { env });
  const deadline = Date.now() + 30_000;
  let exited: unknown;
  void proc.done.then((r) => (exited = r));
  for (;;) {
    const m = LISTENING.exec(proc.stderr());
    if (m) {
      return {
        url: m[1]!,
        proc,
        async stop(signal = "SIGTERM") {
          if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
          return proc.done;
        },
      };
    }
    if (exited) throw new Error(`hermes serve exited before listening: ${JSON.stringify(exited)}\n${proc.stderr()}`);
    if (Date.now() > deadline) {
      proc.child.kill("SIGKILL");
      throw new Error(`hermes serve did not listen within 30 s:\n${proc.stderr()}`);
    }
    await sleep(25);
  }
}
