import type { Interface as ReadlineInterface } from "node:readline/promises";

/** Who the built-in approval asks: a person at a terminal. Absent means nobody can be asked (deny). */
export interface ApprovalPrompter {
  /** Resolves to one of `choices`, or "timeout" / "cancelled". */
  ask(question: string, choices: readonly string[], opts: PromptOptions): Promise<string>;
}

/** What a prompter may show besides the question: the action itself (hermes serve's runs API shows it). */
export interface PromptOptions {
  signal: AbortSignal;
  timeoutMs: number;
  action?: {
    command: string;
    description: string;
    pattern_key: string;
    pattern_keys: readonly string[];
    session_key: string;
  };
}

const KEYS: Record<string, string> = { o: "once", s: "session", a: "always", d: "deny", n: "deny", y: "once" };

/** Map an answer (`o`, `once`, `s`, …) to a choice; anything else, or nothing, is deny. */
export function parseChoice(answer: string, choices: readonly string[]): string {
  const a = answer.trim().toLowerCase();
  const c = KEYS[a] ?? (choices.includes(a) ? a : "deny");
  return choices.includes(c) ? c : "deny";
}

/**
 * The CLI prompt, on the REPL's own readline (so it never fights it for stdin). Used only on a
 * TTY; the timeout (approvals.timeout) and an interrupt both end it with a deny.
 */
export class ReadlinePrompter implements ApprovalPrompter {
  constructor(
    private readonly rl: ReadlineInterface,
    private readonly write: (s: string) => void = (s) => process.stderr.write(s),
  ) {}

  async ask(question: string, choices: readonly string[], opts: PromptOptions): Promise<string> {
    const labels = choices.map((c) => `[${c[0]}]${c.slice(1)}`).join("  ");
    this.write(`\n${question}\n`);
    const timeout = AbortSignal.timeout(Math.max(1, opts.timeoutMs));
    const signal = AbortSignal.any([opts.signal, timeout]);
    try {
      const answer = await this.rl.question(`  ${labels} (default deny) › `, { signal });
      return parseChoice(answer, choices);
    } catch {
      this.write("\n");
      return timeout.aborted ? "timeout" : "cancelled";
    }
  }
}
