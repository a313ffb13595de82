import { createInterface, type Interface as ReadlineInterface } from "node:readline/promises";
import { didYouMean } from "../core/suggest.js";
import { BUILTIN_SLASH_COMMANDS } from "../runtime/context.js";
import type { TurnResult } from "../agent/agent.js";
import { ReadlinePrompter } from "../agent/approvals/prompt.js";
import type { ProviderFlags } from "../agent/providers/resolve.js";
import { startAgent, type AgentHandle } from "./start-agent.js";
import { TimelinePrinter } from "../agent/timeline.js";

export interface ChatOptions {
  home: string;
  flags: ProviderFlags;
  query?: string;
  maxTurns?: number;
  json?: boolean;
  /** Print the hook and middleware timeline to stderr. */
  timeline?: boolean;
  env?: NodeJS.ProcessEnv;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
}

/** Follow-up turns an injected message may start after a one-shot query, at most. */
const MAX_FOLLOW_UPS = 8;

export function exitCodeOf(r: TurnResult): number {
  if (r.interrupted) return 130;
  return r.completed ? 0 : 1;
}

export function turnJson(r: TurnResult) {
  return {
    turn_id: r.turn_id,
    answer: r.answer,
    exit_reason: r.exit_reason,
    completed: r.completed,
    failed: r.failed,
    interrupted: r.interrupted,
    api_calls: r.api_calls,
    error: r.error ?? null,
    tool_calls: r.tool_calls.map((t) => ({
      tool_call_id: t.tool_call_id,
      tool_name: t.tool_name,
      status: t.status,
      error_type: t.error_type,
      args: t.args,
      result: t.result,
      middleware_trace: t.middleware_trace,
    })),
  };
}

/** In --json mode stdout carries only the JSON document: what plugins print goes to stderr. */
export function consoleToStderr(stderr: NodeJS.WriteStream): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  const write = (...args: unknown[]) =>
    stderr.write(`${args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ")}\n`);
  console.log = write;
  console.info = write;
  console.debug = write;
  return () => Object.assign(console, saved);
}

/**
 * `hermes chat`. With --query: one turn (plus any turns injected messages start), the final
 * answer on stdout (or one JSON document with --json), exit 0 when completed, 1 when it failed,
 * 130 when interrupted. Without: a REPL on a terminal, or one message per line from a pipe.
 * Ctrl-C interrupts a running turn; when idle it leaves.
 */
export async function runChat(o: ChatOptions): Promise<number> {
  const stdin = o.stdin ?? process.stdin;
  const stdout = o.stdout ?? process.stdout;
  const stderr = o.stderr ?? process.stderr;
  const tty = Boolean(stdin.isTTY);
  const restoreConsole = o.json ? consoleToStderr(stderr) : () => undefined;
  // One readline for the REPL and the approval prompt, only on a terminal.
  const rl: ReadlineInterface | undefined = tty
    ? createInterface({ input: stdin, output: stderr, terminal: true })
    : undefined;
  const printer = o.timeline ? new TimelinePrinter((l) => stderr.write(`${l}\n`)) : undefined;
  let handle: AgentHandle | undefined;
  try {
    handle = await startAgent({
      home: o.home,
      flags: o.flags,
      ...(o.maxTurns !== undefined ? { maxTurns: o.maxTurns } : {}),
      ...(printer ? { emit: printer.print } : {}),
      ...(rl ? { prompter: new ReadlinePrompter(rl, (s) => stderr.write(s)) } : {}),
      ...(o.env ? { env: o.env } : {}),
    });
    const h = handle;
    // On a terminal readline owns Ctrl-C: it interrupts the running turn, and when idle it leaves.
    rl?.on("SIGINT", () => {
      if (!h.agent.interrupt("interrupted by Ctrl-C")) rl.close();
    });
    return o.query !== undefined ? await oneShot(handle, o, stdout) : await repl(handle, rl, stdin, stdout, stderr);
  } finally {
    rl?.close();
    await handle?.close();
    restoreConsole();
  }
}

async function withSigint<T>(h: AgentHandle, run: () => Promise<T>): Promise<T> {
  const onSigint = () => {
    if (!h.agent.interrupt("interrupted by Ctrl-C")) process.exitCode = 130;
  };
  process.on("SIGINT", onSigint);
  try {
    return await run();
  } finally {
    process.off("SIGINT", onSigint);
  }
}

async function oneShot(h: AgentHandle, o: ChatOptions, stdout: NodeJS.WriteStream): Promise<number> {
  const turns: TurnResult[] = [];
  let r = await withSigint(h, () => h.agent.runTurn(o.query!));
  turns.push(r);
  // Messages injected during the turn (ctx.inject_message) run as the next turns.
  for (let n = 0; n < MAX_FOLLOW_UPS; n++) {
    const next = h.agent.takeQueued();
    if (next === undefined) break;
    r = await withSigint(h, () => h.agent.runTurn(next));
    turns.push(r);
  }
  if (h.agent.queued)
    h.runtime.log.warn(
      `${h.agent.queued} injected message(s) were not run: at most ${MAX_FOLLOW_UPS} follow-up turns after a --query`,
    );
  if (o.json) {
    stdout.write(
      `${JSON.stringify(
        {
          session_id: h.agent.session.session_id,
          provider: h.provider.name,
          model: h.agent.model,
          ...turnJson(r),
          turns: turns.map(turnJson),
        },
        null,
        2,
      )}` + "\n",
    );
  } else if (r.answer !== null) stdout.write(`${r.answer}\n`);
  else if (r.error) process.stderr.write(`${r.error.code}: ${r.error.message}\n`);
  return exitCodeOf(r);
}

function helpText(h: AgentHandle): string {
  const lines = [
    "/help            this list",
    "/tools           the tools the model can call",
    "/plugins         the plugins loaded",
    "/exit, /quit     leave",
  ];
  for (const c of h.runtime.commands.values().sort((a, b) => (a.name < b.name ? -1 : 1))) {
    lines.push(`${`/${c.name}${c.args_hint ? ` ${c.args_hint}` : ""}`.padEnd(17)}${c.description} (${c.plugin_key})`);
  }
  return lines.join("\n");
}

/** Run one slash command; returns false to leave the REPL. */
async function slash(h: AgentHandle, line: string, say: (s: string) => void): Promise<boolean> {
  const word = line.slice(1).split(/\s+/)[0] ?? "";
  const name = word.toLowerCase();
  const raw = line.slice(1 + word.length).trim();
  if (name === "exit" || name === "quit") return false;
  if (name === "help") {
    say(helpText(h));
    return true;
  }
  if (name === "tools") {
    say(
      h.runtime.tools
        .list()
        .map((t) => `${t.name.padEnd(24)} ${t.owner.padEnd(16)} ${t.description.split("\n")[0] ?? ""}`)
        .join("\n") || "(no tools)",
    );
    return true;
  }
  if (name === "plugins") {
    const loaded = h.runtime.loadedPlugins();
    say(loaded.length ? loaded.map((p) => p.key).join("\n") : "(no plugins loaded)");
    return true;
  }
  const cmd = h.runtime.commands.get(name);
  if (!cmd) {
    const known = [...h.runtime.commands.values().map((c) => c.name), "help", "tools", "plugins", "exit", "quit"];
    say(
      BUILTIN_SLASH_COMMANDS.has(name)
        ? `/${name} is not available in hermes-kit's chat`
        : `unknown command /${name}${didYouMean(name, known)} (see /help)`,
    );
    return true;
  }
  await h.agent.hooks.observe("pre_command", {
    surface: "cli",
    command: name,
    alias_used: null,
    args_raw: raw,
    session_key: h.agent.session.session_id,
    platform: "cli",
  });
  try {
    const out = await cmd.handler(raw);
    if (typeof out === "string" && out) say(out);
    else if (out !== undefined && out !== null && typeof out !== "string") say(JSON.stringify(out, null, 2));
  } catch (e) {
    say(`/${name} failed: ${(e as Error)?.message ?? String(e)}`);
  }
  return true;
}

/**
 * The REPL: lines from the person (or the pipe) and injected messages feed one queue; each
 * item is a slash command or a turn. On a terminal, Ctrl-C during a turn interrupts it and
 * Ctrl-C at the prompt leaves.
 */
async function repl(
  h: AgentHandle,
  rl: ReadlineInterface | undefined,
  stdin: NodeJS.ReadStream,
  stdout: NodeJS.WriteStream,
  stderr: NodeJS.WriteStream,
): Promise<number> {
  const say = (s: string) => stdout.write(`${s}\n`);
  const inputs: Array<string | null> = [];
  let wake: (() => void) | undefined;
  const push = (v: string | null) => {
    inputs.push(v);
    wake?.();
  };
  h.agent.onQueued = () => wake?.();
  let reader: ReadlineInterface;
  if (rl) {
    reader = rl;
    stderr.write(
      `hermes chat · provider ${h.provider.name}, model ${h.agent.model} · /help for commands, Ctrl-C to ` +
        "interrupt, /exit to leave\n",
    );
  } else {
    reader = createInterface({ input: stdin, terminal: false });
    process.on("SIGINT", () => {
      if (!h.agent.interrupt("interrupted by Ctrl-C")) push(null);
    });
  }
  reader.on("line", (l) => push(l));
  reader.on("close", () => push(null));
  let last: TurnResult | undefined;
  const prompt = () => {
    if (rl && !h.agent.busy) rl.prompt();
  };
  if (rl) rl.setPrompt("you › ");
  prompt();
  for (;;) {
    const injected = h.agent.takeQueued();
    let line: string | null | undefined = injected;
    if (line === undefined) {
      if (!inputs.length) await new Promise<void>((r) => (wake = r));
      wake = undefined;
      const injectedNow = h.agent.takeQueued();
      line = injectedNow !== undefined ? injectedNow : inputs.shift();
      if (line === undefined) continue;
    }
    if (line === null) break;
    const text = line.trim();
    if (!text) {
      prompt();
      continue;
    }
    if (injected === undefined && text.startsWith("/")) {
      if (!(await slash(h, text, say))) break;
      prompt();
      continue;
    }
    last = await h.agent.runTurn(text);
    if (last.answer !== null) say(last.answer);
    else if (last.error) stderr.write(`${last.error.code}: ${last.error.message}\n`);
    prompt();
  }
  if (!rl) reader.close();
  return last ? (last.interrupted ? 0 : exitCodeOf(last)) : 0;
}
