import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { HermesError } from "../../core/errors.js";
import type { LlmRequest, LlmResponse, Provider, ProviderCallOptions, ToolCall } from "../types.js";
import { ProviderError } from "./errors.js";

/** One model call's answer: a reply, one or more tool calls, or a failure (for offline retry demos). */
export type ScriptTurn =
  | { say: string }
  | { call: Array<{ tool: string; args?: Record<string, unknown>; arguments?: string }> }
  | { fail: { status: number; message: string } };

export interface Script {
  model: string;
  turns: ScriptTurn[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Parse a script: a YAML list of turns (or `{model, turns}`), each `say: text`,
 * `call: {tool, args}` (or a list of such for parallel calls; `arguments: "raw text"` sends the
 * arguments verbatim, e.g. to show what happens with arguments that are not JSON), or
 * `fail: {status, message}`. All problems are reported at once.
 */
export function parseScript(text: string, file = "script"): Script {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new HermesError("E_AGENT_SCRIPT", { message: `${file}: not valid YAML: ${(e as Error).message}`, file });
  }
  const model = isObject(doc) && typeof doc.model === "string" ? doc.model : "scripted";
  const list = Array.isArray(doc) ? doc : isObject(doc) && Array.isArray(doc.turns) ? doc.turns : undefined;
  if (!list)
    throw new HermesError("E_AGENT_SCRIPT", {
      message: `${file}: expected a list of turns (or a mapping with turns:)`,
      file,
    });
  const problems: string[] = [];
  const turns: ScriptTurn[] = [];
  list.forEach((t: unknown, i: number) => {
    const at = `turns[${i}]`;
    if (!isObject(t)) return problems.push(`${at}: expected a mapping with say:, call: or fail:`);
    const keys = Object.keys(t).filter((k) => ["say", "call", "fail"].includes(k));
    if (keys.length !== 1)
      return problems.push(
        `${at}: give exactly one of say:, call:, fail: (got ${Object.keys(t).join(", ") || "nothing"})`,
      );
    if ("say" in t) {
      if (typeof t.say !== "string") return problems.push(`${at}.say: expected text`);
      return turns.push({ say: t.say });
    }
    if ("fail" in t) {
      const f = isObject(t.fail) ? t.fail : {};
      const status = typeof f.status === "number" ? f.status : 500;
      return turns.push({
        fail: { status, message: typeof f.message === "string" ? f.message : `scripted failure ${status}` },
      });
    }
    const calls = Array.isArray(t.call) ? t.call : [t.call];
    const out: Array<{ tool: string; args?: Record<string, unknown>; arguments?: string }> = [];
    calls.forEach((c: unknown, j: number) => {
      const cat = Array.isArray(t.call) ? `${at}.call[${j}]` : `${at}.call`;
      if (!isObject(c) || typeof c.tool !== "string" || !c.tool)
        return problems.push(`${cat}: expected {tool: NAME, args: {...}}`);
      if (c.args !== undefined && !isObject(c.args)) return problems.push(`${cat}.args: expected a mapping`);
      if (c.arguments !== undefined && typeof c.arguments !== "string")
        return problems.push(`${cat}.arguments: expected text`);
      out.push({
        tool: c.tool,
        ...(c.args ? { args: c.args } : {}),
        ...(typeof c.arguments === "string" ? { arguments: c.arguments } : {}),
      });
    });
    if (out.length) turns.push({ call: out });
  });
  if (problems.length) throw new HermesError("E_AGENT_SCRIPT", { message: `${file}: ${problems.join("; ")}`, file });
  if (!turns.length) throw new HermesError("E_AGENT_SCRIPT", { message: `${file}: the script has no turns`, file });
  return { model, turns };
}

export async function loadScript(file: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new HermesError("E_AGENT_SCRIPT", {
      message: `cannot read the script ${file}: ${(e as Error).message}`,
      file,
    });
  }
  return parseScript(text, file);
}

/**
 * The deterministic offline provider: each model call takes the next turn of the script. It
 * streams like a server does (start, word deltas, end) when the request asks for a stream, so
 * the whole pipeline, streaming observers included, runs with no network.
 */
export class ScriptedProvider implements Provider {
  readonly name = "scripted";
  readonly apiMode = "chat_completions";
  readonly baseUrl = "scripted://";
  readonly stream: boolean;
  /** Shared by every clone (ctx.llm model overrides take turns from the same script). */
  private readonly state: { next: number; calls: number };

  constructor(
    private readonly script: Script,
    readonly model: string = script.model,
    opts: { stream?: boolean; state?: { next: number; calls: number } } = {},
  ) {
    this.stream = opts.stream ?? true;
    this.state = opts.state ?? { next: 0, calls: 0 };
  }

  withModel(model: string): Provider {
    return new ScriptedProvider(this.script, model, { stream: this.stream, state: this.state });
  }

  get remaining(): number {
    return this.script.turns.length - this.state.next;
  }

  async complete(request: LlmRequest, opts: ProviderCallOptions): Promise<LlmResponse> {
    if (opts.signal.aborted) throw new ProviderError("interrupted", "the request was interrupted before it was sent");
    const i = this.state.next;
    const turn = this.script.turns[i];
    if (!turn)
      throw new ProviderError(
        "script",
        `the script has ${this.script.turns.length} turn(s) and all were used; add a say: turn to end the conversation`,
      );
    this.state.next++;
    this.state.calls++;
    const id = `scripted-${this.state.calls}`;
    const model = typeof request.model === "string" && request.model ? request.model : this.model;
    if ("fail" in turn)
      throw new ProviderError("http", `HTTP ${turn.fail.status} (scripted): ${turn.fail.message}`, {
        status_code: turn.fail.status,
        body: { error: { message: turn.fail.message } },
      });
    if ("call" in turn) {
      const tool_calls: ToolCall[] = turn.call.map((c, j) => ({
        id: `call_${this.state.calls}_${j + 1}`,
        type: "function",
        function: { name: c.tool, arguments: c.arguments ?? JSON.stringify(c.args ?? {}) },
      }));
      if (request.stream) {
        opts.onStream?.({ type: "start" });
        opts.onStream?.({ type: "end", final_text: "", finished: true });
      }
      return {
        id,
        object: "chat.completion",
        model,
        choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls }, finish_reason: "tool_calls" }],
        usage: usage(request, ""),
      };
    }
    if (request.stream) {
      opts.onStream?.({ type: "start" });
      for (const piece of turn.say.match(/\S+\s*|\s+/g) ?? [])
        opts.onStream?.({ type: "delta", text: piece, kind: "text" });
      opts.onStream?.({ type: "end", final_text: turn.say, finished: true });
    }
    return {
      id,
      object: "chat.completion",
      model,
      choices: [{ index: 0, message: { role: "assistant", content: turn.say }, finish_reason: "stop" }],
      usage: usage(request, turn.say),
    };
  }
}

function usage(request: LlmRequest, out: string) {
  const prompt = Math.ceil(JSON.stringify(request.messages ?? []).length / 4);
  const completion = Math.ceil(out.length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
