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

const LEVEL_VALUES: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

function rootLevel(): string {
  // An unknown level is refused by the CLI before any command runs; code running outside it falls back.
  return root?.level ?? (envLogLevel() || "warn");
}

function realRoot(): Logger {
  if (root) return root;
  const { pino } = require("pino") as typeof import("pino");
  const dest = redacting(process.stderr.isTTY ? prettyStream(process.stderr) : pino.destination({ fd: 2, sync: true }));
  root = pino({ level: rootLevel(), base: undefined }, dest);
  return root;
}

const noop = () => undefined;
const value = (level: string) => LEVEL_VALUES[level] ?? Infinity;

/**
 * A pino logger made on first real use: a line at a disabled level, or a child, costs no pino load
 * (a runtime gives every plugin a child logger and most never write a line at the default level).
 * Until then its level is its parent's, as a pino child's is.
 */
function lazyLogger(make: () => Logger, levelOf: () => string): Logger {
  let real: Logger | undefined;
  const get = () => (real ??= make());
  const enabled = (level: string) => value(level) >= value(levelOf());
  const self: Logger = new Proxy({} as Logger, {
    get(_t, prop) {
      if (!real && typeof prop === "string") {
        if (Object.hasOwn(LEVEL_VALUES, prop) && !enabled(prop)) return noop;
        if (prop === "level") return levelOf();
        if (prop === "isLevelEnabled") return enabled;
        if (prop === "child")
          return (bindings: Record<string, unknown>, opts?: Record<string, unknown>) =>
            opts
              ? get().child(bindings, opts)
              : lazyLogger(
                  () => get().child(bindings),
                  () => self.level,
                );
      }
      const v: unknown = Reflect.get(get(), prop);
      return typeof v === "function" ? v.bind(real) : v;
    },
    set: (_t, prop, v) => Reflect.set(get(), prop, v),
    has: (_t, prop) => Reflect.has(get(), prop),
  });
  return self;
}

const lazyRoot = lazyLogger(realRoot, rootLevel);

/** The process's logger; pino is loaded on first use: commands that never log do not pay for it. */
export function logger(): Logger {
  return lazyRoot;
}

/** Per-plugin child logger: every line names the plugin key. */
export function pluginLogger(key: string): Logger {
  return logger().child({ plugin: key });
}
