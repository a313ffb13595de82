/**
 * Fixtures for the agent unit tests: a runtime with no plugins (hooks and middleware are added
 * directly), a provider that replays outcomes, and a timeline recorder.
 */
import { HookSite } from "../../src/agent/hook-site.js";
import type { LlmCallContext } from "../../src/agent/llm-call.js";
import { ProviderError } from "../../src/agent/providers/errors.js";
import type { TimelineEvent } from "../../src/agent/timeline.js";
import type { LlmRequest, LlmResponse, Provider, ProviderCallOptions, ToolCall } from "../../src/agent/types.js";
import type { HookCallback } from "../../src/runtime/hooks.js";
import type { MiddlewareCallback } from "../../src/runtime/middleware.js";
import type { Runtime } from "../../src/runtime/runtime.js";
import { captureLog, start } from "../runtime/helpers.js";

export { captureLog } from "../runtime/helpers.js";

export type Outcome =
  | LlmResponse
  | ProviderError
  | ((req: LlmRequest, opts: ProviderCallOptions) => Promise<LlmResponse>);

export function say(text: string): LlmResponse {
  return {
    id: "r",
    model: "fake",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
}

export function calls(...c: Array<[string, unknown]>): LlmResponse {
  const tool_calls: ToolCall[] = c.map(([name, args], i) => ({
    id: `c${i}`,
    type: "function",
    function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
  }));
  return {
    id: "r",
    model: "fake",
    choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls }, finish_reason: "tool_calls" }],
  };
}

/** A provider that answers with the given outcomes in order and records the requests it got. */
export class FakeProvider implements Provider {
  readonly name: string;
  readonly baseUrl = "fake://";
  readonly apiMode = "chat_completions";
  readonly stream = false;
  readonly requests: LlmRequest[];
  constructor(
    private readonly outcomes: Outcome[],
    readonly model = "fake-model",
    name = "fake",
    requests: LlmRequest[] = [],
  ) {
    this.name = name;
    this.requests = requests;
  }
  async complete(req: LlmRequest, opts: ProviderCallOptions): Promise<LlmResponse> {
    this.requests.push(structuredClone(req));
    const o = this.outcomes.shift();
    if (!o) throw new ProviderError("script", "no more outcomes");
    if (o instanceof ProviderError) throw o;
    if (typeof o === "function") return o(req, opts);
    return structuredClone(o);
  }
  withModel(model: string): Provider {
    return new FakeProvider(this.outcomes, model, this.name, this.requests);
  }
}

export interface Rig {
  rt: Runtime;
  home: string;
  events: TimelineEvent[];
  /** Hook and middleware calls, in order ("hook:<name>", "mw:<kind>"). */
  order: string[];
  hook(name: string, cb?: HookCallback): void;
  mw(kind: string, cb: MiddlewareCallback, opts?: { required?: boolean; owner?: string }): void;
}

/** A started runtime (no plugins) whose hooks and middleware the test adds by hand, recording the order. */
export async function rig(config?: string): Promise<Rig> {
  const { rt, home } = await start([], config === undefined ? {} : { config });
  const order: string[] = [];
  const events: TimelineEvent[] = [];
  return {
    rt,
    home,
    events,
    order,
    hook(name, cb) {
      rt.hooks.add(
        name,
        (p) => {
          order.push(`hook:${name}`);
          return cb?.(p);
        },
        "test",
      );
    },
    mw(kind, cb, opts = {}) {
      rt.middleware.add({
        kind,
        owner: opts.owner ?? "test",
        required: opts.required ?? false,
        cb: (kw) => {
          order.push(`mw:${kind}`);
          return cb(kw);
        },
      });
    },
  };
}

/** A callModel context over a rig's runtime; `events` collects what the call emitted. */
export function llmContext(
  r: Rig,
  provider: Provider,
  over: Partial<LlmCallContext> = {},
): LlmCallContext & { events: TimelineEvent[] } {
  const events: TimelineEvent[] = [];
  return {
    hooks: new HookSite(r.rt.hooks, (e) => events.push(e)),
    hookBus: r.rt.hooks,
    middleware: r.rt.middleware,
    log: captureLog().log,
    emit: (e) => events.push(e),
    signal: new AbortController().signal,
    provider: { current: provider },
    ids: { session_id: "s", task_id: "t", turn_id: "u" },
    platform: "cli",
    user_message: "hi",
    history: () => [],
    messages: () => [{ role: "user", content: "hi" }],
    tools: () => [],
    retry: { maxRetries: 2, backoffMs: 1 },
    counters: { api_call_count: 0 },
    streamReasoning: false,
    iteration: 1,
    surface: "cli",
    events,
    ...over,
  };
}
