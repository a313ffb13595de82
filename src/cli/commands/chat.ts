import { Command, InvalidArgumentError } from "../commander.js";
import type { GlobalOptions } from "../context.js";

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number ≥ 1");
  return n;
}

function seconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a number of seconds > 0");
  return n;
}

interface ChatFlags {
  query?: string;
  provider?: string;
  baseUrl?: string;
  model?: string;
  script?: string;
  maxTurns?: number;
  json?: boolean;
  stream?: boolean;
  timeout?: number;
  timeline?: boolean;
}

/** `hermes chat`: a REPL, or `--query` for one answer. */
export function chatCommand(): Command {
  return new Command("chat")
    .description("talk to the agent: a REPL with plugin slash commands, or --query for one answer")
    .option("-q, --query <text>", "ask once, print the final answer and exit")
    .option(
      "--provider <name>",
      "model provider: openai-compatible, scripted or a model-provider plugin's name (default: model.provider)",
    )
    .option("--base-url <url>", "openai-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    .option("--model <name>", "model name (default: config.yaml model.default)")
    .option("--script <file>", "YAML script for the scripted provider (implies --provider scripted)")
    .option(
      "--max-turns <n>",
      "model calls per turn before the agent stops (default: agent.max_turns, 90)",
      positiveInt,
    )
    .option("--timeout <seconds>", "seconds to wait for the provider (default: model.timeout, 120)", seconds)
    .option("--no-stream", "do not stream responses")
    .option("--timeline", "print every hook and middleware call to stderr as it happens")
    .option("--json", "with --query: print one JSON document (answer, tool calls, outcome)")
    .action(async (o: ChatFlags, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const [{ chatInHome }, { resolveHome }, { err }] = await Promise.all([
        import("../../app/chat-home.js"),
        import("../../core/paths.js"),
        import("../output.js"),
      ]);
      process.exitCode = await chatInHome({
        home: resolveHome({ home: g.home, profile: g.profile }),
        warn: err,
        flags: {
          provider: o.provider,
          baseUrl: o.baseUrl,
          model: o.model,
          script: o.script,
          ...(o.stream === false ? { stream: false } : {}),
          ...(o.timeout ? { timeout: o.timeout } : {}),
        },
        ...(o.query !== undefined ? { query: o.query } : {}),
        ...(o.maxTurns !== undefined ? { maxTurns: o.maxTurns } : {}),
        json: Boolean(o.json),
        timeline: Boolean(o.timeline),
      });
    });
}

/** `hermes demo`: the whole pipeline, offline, in a throwaway home. */
export function demoCommand(): Command {
  return new Command("demo")
    .description(
      "run a scripted conversation with the bundled example plugins in a throwaway home and print the hook " +
        "and middleware timeline (offline)",
    )
    .option("--keep", "keep the throwaway home and print its path")
    .option("--json", "print the turn's result as JSON on stdout (the timeline goes to stderr)")
    .action(async (o: { keep?: boolean; json?: boolean }) => {
      const [{ consoleToStderr, turnJson }, { runDemo }] = await Promise.all([
        import("../../app/chat.js"),
        import("../../app/demo.js"),
      ]);
      // In --json mode stdout carries only the JSON document: the timeline and what plugins print go to stderr.
      const restore = o.json ? consoleToStderr(process.stderr) : () => undefined;
      let r: Awaited<ReturnType<typeof runDemo>>;
      try {
        r = await runDemo({
          keep: Boolean(o.keep),
          ...(o.json ? { write: (l: string) => process.stderr.write(`${l}\n`) } : {}),
        });
      } finally {
        restore();
      }
      if (o.json)
        process.stdout.write(
          `${JSON.stringify(
            { home: r.home, kept: r.kept, api_requests: r.requests.length, ...turnJson(r.result) },
            null,
            2,
          )}` + "\n",
        );
      else if (o.keep) process.stdout.write(`kept: ${r.home}\n`);
      process.exitCode = r.result.completed ? 0 : 1;
    });
}
