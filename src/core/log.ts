import { pino, type Logger } from "pino";

const LEVEL_NAMES: Record<number, string> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

/** A terminal gets one readable line per record; pipes and files get pino's JSON lines. */
function prettyStream(out: NodeJS.WritableStream) {
  return {
    write(line: string) {
      try {
        const { level, msg, time: _t, pid: _p, hostname: _h, plugin, ...rest } = JSON.parse(line) as Record<string, unknown>;
        const extra = Object.entries(rest)
          .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
          .join(" ");
        out.write(`${LEVEL_NAMES[level as number] ?? level}${plugin ? ` [${String(plugin)}]` : ""}: ${String(msg ?? "")}${extra ? ` ${extra}` : ""}\n`);
      } catch {
        out.write(line);
      }
    },
  };
}

let root: Logger | undefined;

export function logger(): Logger {
  if (root) return root;
  const level = process.env.HERMES_LOG_LEVEL?.trim().toLowerCase() || "warn";
  const valid = ["trace", "debug", "info", "warn", "error", "fatal", "silent"].includes(level) ? level : "warn";
  const dest = process.stderr.isTTY ? prettyStream(process.stderr) : pino.destination({ fd: 2, sync: true });
  root = pino({ level: valid, base: undefined }, dest);
  return root;
}

/** Per-plugin child logger: every line names the plugin key. */
export function pluginLogger(key: string): Logger {
  return logger().child({ plugin: key });
}
