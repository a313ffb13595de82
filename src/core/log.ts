import { createRequire } from "node:module";
import type { Logger } from "pino";
import { redactText } from "./redact.js";

const require = createRequire(import.meta.url);

const LEVEL_NAMES: Record<number, string> = {
  10: "trace",
  20: "debug",
  30: "info",
  40: "warn",
  50: "error",
  60: "fatal",
};

/** A terminal gets one readable line per record; pipes and files get pino's JSON lines. */
function prettyStream(out: NodeJS.WritableStream) {
  return {
    write(line: string) {
      try {
        const {
          level,
          msg,
          time: _t,
          pid: _p,
          hostname: _h,
          plugin,
          ...rest
        } = JSON.parse(line) as Record<string, unknown>;
        const extra = Object.entries(rest)
          .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
          .join(" ");
        out.write(
          `${LEVEL_NAMES[level as number] ?? level}${plugin ? ` [${String(plugin)}]` : ""}: ` +
            `${String(msg ?? "")}${extra ? ` ${extra}` : ""}\n`,
        );
      } catch {
        out.write(line);
      }
    },
  };
}

let root: Logger | undefined;

/** Every log line passes the secret filter before it is written (plugins log what servers echo). */
function redacting(dest: { write(line: string): unknown }): { write(line: string): void } {
  return { write: (line: string) => void dest.write(redactText(line)) };
}

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** HERMES_LOG_LEVEL as a level; `undefined` when unset or empty, `false` when it names no level. */
export function envLogLevel(env: NodeJS.ProcessEnv = process.env): LogLevel | undefined | false {
  const v = env.HERMES_LOG_LEVEL?.trim().toLowerCase();
  if (!v) return undefined;
  return (LOG_LEVELS as readonly string[]).includes(v) ? (v as LogLevel) : false;
}

/** Set the level for this process and the processes it starts (`--verbose`, `--quiet`). */
export function setLogLevel(level: LogLevel): void {
  process.env.HERMES_LOG_LEVEL = level;
  if (root) root.level = level;
}

export function logger(): Logger {
  if (root) return root;
  // An unknown level is refused by the CLI before any command runs; code running outside it falls back.
  const valid = envLogLevel() || "warn";
  // Loaded on first log use: commands that never log (--help, list, …) do not pay for pino.
  const { pino } = require("pino") as typeof import("pino");
  const dest = redacting(process.stderr.isTTY ? prettyStream(process.stderr) : pino.destination({ fd: 2, sync: true }));
  root = pino({ level: valid, base: undefined }, dest);
  return root;
}

/** Per-plugin child logger: every line names the plugin key. */
export function pluginLogger(key: string): Logger {
  return logger().child({ plugin: key });
}
