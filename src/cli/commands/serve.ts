import { Command, InvalidArgumentError } from "../commander.js";
import type { GlobalOptions } from "../context.js";

function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("expected a port number 0-65535");
  return n;
}

interface ServeFlags {
  host?: string;
  port?: number;
  watch?: boolean;
  provider?: string;
  baseUrl?: string;
  model?: string;
  script?: string;
}

/** `hermes serve`: the agent behind an OpenAI-compatible API until SIGTERM; SIGHUP reloads. */
export function serveCommand(): Command {
  return new Command("serve")
    .description(
      "run the agent as a service: an OpenAI-compatible API (chat completions, runs, health) on " +
        "gateway.api_server.host:port (127.0.0.1:8642); SIGHUP loads the current generation, SIGTERM stops",
    )
    .option("--host <address>", "address to listen on (default: gateway.api_server.host, 127.0.0.1)")
    .option("--port <n>", "port to listen on, 0 for any free one (default: gateway.api_server.port, 8642)", port)
    .option("--watch", "reload when hermes.lock.json changes (a new generation was compiled)")
    .option("--provider <name>", "model provider (default: config.yaml model.provider)")
    .option("--base-url <url>", "openai-compatible base URL of the provider")
    .option("--model <name>", "model name (default: config.yaml model.default)")
    .option("--script <file>", "YAML script for the scripted provider (implies --provider scripted)")
    .addHelpText(
      "after",
      "\nAPI_SERVER_KEY in the environment is the bearer key clients must send; it is required when the host\n" +
        "is not a loopback address. Sessions are kept in <home>/sessions/sessions.db. See docs/serve.md.",
    )
    .action(async (o: ServeFlags, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const [{ startServe }, { resolveHome }, { err }] = await Promise.all([
        import("../../app/serve.js"),
        import("../../core/paths.js"),
        import("../output.js"),
      ]);
      const h = await startServe({
        home: resolveHome({ home: g.home, profile: g.profile }),
        ...(o.host !== undefined ? { host: o.host } : {}),
        ...(o.port !== undefined ? { port: o.port } : {}),
        watch: Boolean(o.watch),
        flags: { provider: o.provider, baseUrl: o.baseUrl, model: o.model, script: o.script },
        warn: err,
      });
      // Listeners before the line: whoever waits for "listening on" may signal at once, and a signal with no
      // listener kills the process. They stay for the whole stop: a library's exit handler re-raises otherwise.
      const stopped = new Promise<void>((resolve) => {
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) return void err(`hermes serve: ${signal}: already stopping`);
          stopping = true;
          err(`hermes serve: ${signal}: stopping (turns in flight may finish)`);
          void h.stop().then(resolve);
        };
        process.on("SIGTERM", () => stop("SIGTERM"));
        process.on("SIGINT", () => stop("SIGINT"));
        process.on("SIGHUP", () => {
          err("hermes serve: SIGHUP: loading the current generation");
          void h.reload().then(() => {
            const r = h.service.lastReload;
            err(
              r?.ok
                ? `hermes serve: generation ${r.generation} serves new turns`
                : `hermes serve: reload failed, generation ${h.service.generation} keeps serving: ${r?.error}`,
            );
          });
        });
      });
      err(
        `hermes serve: listening on ${h.url} · generation ${h.generation} · ${h.plugins} plugin(s) loaded` +
          `${o.watch ? " · watching hermes.lock.json" : ""}`,
      );
      await stopped;
    });
}
