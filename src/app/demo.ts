import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../compile/compile.js";
import { PACKAGE_ROOT } from "../core/paths.js";
import type { TurnResult } from "../agent/agent.js";
import { loadScript, ScriptedProvider } from "../agent/providers/scripted.js";
import { startAgent } from "./start-agent.js";
import { TimelinePrinter, traceText } from "../agent/timeline.js";
import type { LlmRequest, LlmResponse, Provider, ProviderCallOptions } from "../agent/types.js";

/** The bundled example plugins the demo enables: a minimal plugin and four middleware examples. */
export const DEMO_PLUGINS = [
  "hello-world",
  "middleware-demo-tag-request",
  "middleware-demo-terminal-workdir",
  "middleware-demo-time-llm",
  "middleware-demo-annotate-tool",
] as const;

export const DEMO_QUERY =
  "Run `echo hello` in the terminal, greet the demo with hello_world, and tell me what happened.";

const DEMO_SCRIPT =
  `# The model's side of the demo conversation (the scripted provider plays one turn per model call).
- call: ` +
  `{tool: terminal, args: {command: "echo hello"}}
- call: {tool: hello_world, args: {name: demo}}
- say: "The ` +
  `terminal printed \\"hello\\" and hello_world answered \\"Hello, demo!\\". Both tools ran once, through ` +
  `every hook and middleware."
`;

const DEMO_CONFIG = `# hermes demo: a throwaway home with the bundled example plugins enabled.
plugins:
  enabled:
${DEMO_PLUGINS.map((p) => `    - ${p}`).join("\n")}
model:
  provider: scripted
  script: demo-script.yaml
approvals:
  mode: manual
`;

/** Records the requests a provider receives (what a real server would see in the body). */
class RecordingProvider implements Provider {
  readonly requests: LlmRequest[];
  constructor(
    private readonly inner: Provider,
    requests: LlmRequest[] = [],
  ) {
    this.requests = requests;
  }
  get name() {
    return this.inner.name;
  }
  get model() {
    return this.inner.model;
  }
  get baseUrl() {
    return this.inner.baseUrl;
  }
  get apiMode() {
    return this.inner.apiMode;
  }
  get stream() {
    return this.inner.stream;
  }
  complete(request: LlmRequest, opts: ProviderCallOptions): Promise<LlmResponse> {
    this.requests.push(structuredClone(request));
    return this.inner.complete(request, opts);
  }
  withModel(model: string): Provider {
    return new RecordingProvider(this.inner.withModel(model), this.requests);
  }
}

export interface DemoOptions {
  keep?: boolean;
  write?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

export interface DemoResult {
  home: string;
  kept: boolean;
  result: TurnResult;
  requests: LlmRequest[];
}

/**
 * `hermes demo`: make a throwaway home with the bundled example plugins enabled, compile it,
 * start the runtime, and run one scripted conversation (offline) in which the model calls the
 * terminal and hello_world, then answers. Every hook and middleware is printed as it happens,
 * then what each of the four middleware examples did.
 */
export async function runDemo(o: DemoOptions = {}): Promise<DemoResult> {
  const write = o.write ?? ((l: string) => process.stdout.write(`${l}\n`));
  const home = mkdtempSync(join(tmpdir(), "hermes-demo-"));
  // The example plugins come from this package, whatever the shell's plugin settings say.
  const env: NodeJS.ProcessEnv = {
    ...(o.env ?? process.env),
    HERMES_HOME: home,
    HERMES_BUNDLED_PLUGINS: join(PACKAGE_ROOT, "plugins"),
    HERMES_ENABLE_PROJECT_PLUGINS: "0",
  };
  let result: TurnResult | undefined;
  const requests: LlmRequest[] = [];
  try {
    writeFileSync(join(home, "config.yaml"), DEMO_CONFIG);
    writeFileSync(join(home, "demo-script.yaml"), DEMO_SCRIPT);
    write(`hermes demo — a throwaway home at ${home}${o.keep ? "" : " (removed at the end; --keep keeps it)"}`);
    const c = await compile({ home, env });
    write(
      `compiled: generation ${c.generation}, ${c.plan.lock.load_order.length} plugin(s) load in this ` +
        `order: ${c.plan.lock.load_order.join(" → ")}`,
    );
    const scripted = new ScriptedProvider(await loadScript(join(home, "demo-script.yaml")));
    const provider = new RecordingProvider(scripted, requests);
    const printer = new TimelinePrinter(write);
    const h = await startAgent({ home, env, provider, emit: printer.print });
    try {
      const m = h.runtime.middleware;
      write(
        "middleware chains: " +
          (["llm_request", "llm_execution", "tool_request", "tool_execution"] as const)
            .map((k) => `${k}=[${m.owners(k).join(", ")}]`)
            .join("  "),
      );
      write(
        `tools: ${h.runtime.tools
          .list(env)
          .map((t) => `${t.name} (${t.owner})`)
          .join(", ")}`,
      );
      write("");
      write("timeline (hooks and middleware in the order they run; lines without indent are printed by plugins):");
      result = await h.agent.runTurn(DEMO_QUERY);
    } finally {
      await h.close();
    }
    write("");
    write("what the four middleware examples did:");
    const tagged = requests.filter(
      (r) =>
        (r.extra_body as { metadata?: { hermes_middleware_demo?: unknown } } | undefined)?.metadata
          ?.hermes_middleware_demo === true,
    ).length;
    write(
      `  tag llm request      ${tagged} of ${requests.length} provider request(s) carried ` +
        "extra_body.metadata.hermes_middleware_demo = true",
    );
    const terminal = result.tool_calls.find((t) => t.tool_name === "terminal");
    write(
      "  terminal workdir     " +
        `${
          terminal
            ? `the model sent no workdir; policy and the tool saw workdir=${String(terminal.args.workdir)}  ` +
              `trace=${traceText(terminal.middleware_trace)}`
            : "no terminal call"
        }`,
    );
    write(`  time llm execution   printed one "llm_execution elapsed_ms=…" line per provider call (above)`);
    write(
      `  annotate tool        wrapped ${result.tool_calls.filter((t) => t.executions === 1).length} tool ` +
        "execution(s); each ran once and its result went back unchanged",
    );
    write("");
    write(`answer: ${result.answer ?? `(none: ${result.error?.code ?? result.exit_reason})`}`);
    return { home, kept: Boolean(o.keep), result, requests };
  } finally {
    if (!o.keep) rmSync(home, { recursive: true, force: true });
  }
}
