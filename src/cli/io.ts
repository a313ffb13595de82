import type { Io } from "../consent/flow.js";

/** A person can be asked only when both stdin and stdout are terminals (never a pipe, never a file). */
export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

async function lineQuestion(question: string): Promise<string | null> {
  // Loaded when a question is asked: most commands never ask one.
  const { createInterface } = await import("node:readline");
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    let answered = false;
    rl.on("close", () => {
      if (!answered) {
        process.stdout.write("\n");
        resolve(null);
      }
    });
    rl.on("SIGINT", () => rl.close());
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
  });
}

/** Masked input: each character echoes as `*`; Enter ends, Ctrl-C / Ctrl-D (on empty input) cancel. */
function secretQuestion(question: string): Promise<string | null> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    process.stdout.write(question);
    let value = "";
    const wasRaw = stdin.isRaw;
    stdin.setRawMode?.(true);
    stdin.resume();
    stdin.setEncoding("utf8");
    const finish = (v: string | null) => {
      stdin.off("data", onData);
      stdin.setRawMode?.(wasRaw ?? false);
      stdin.pause();
      process.stdout.write("\n");
      resolve(v);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return finish(value);
        if (ch === "\u0003" || (ch === "\u0004" && !value)) return finish(null);
        if (ch === "\u007f" || ch === "\b") {
          if (value) {
            value = value.slice(0, -1);
            process.stdout.write("\b \b");
          }
        } else if (ch >= " ") {
          value += ch;
          process.stdout.write("*");
        }
      }
    };
    stdin.on("data", onData);
  });
}

/**
 * The terminal side of deep code's `Io`. Without a terminal, `confirm`/`ask` are never reached
 * (callers check `interactive`), and stdin is never read: a closed stdin or an open pipe that
 * nobody writes to cannot make a command wait.
 */
export function terminalIo(opts: { toStderr?: boolean } = {}): Io {
  const interactive = isInteractive();
  const write = (line = "") => (opts.toStderr ? process.stderr : process.stdout).write(`${line}\n`);
  return {
    interactive,
    out: write,
    warn: (line) => process.stderr.write(`${line}\n`),
    async confirm(question) {
      if (!interactive) return false;
      const a = await lineQuestion(question);
      return a !== null && /^\s*y(es)?\s*$/i.test(a);
    },
    async ask(question, o) {
      if (!interactive) return null;
      return o?.secret ? secretQuestion(question) : lineQuestion(question);
    },
  };
}
