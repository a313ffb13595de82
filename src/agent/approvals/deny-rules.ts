/**
 * The user's deny rules (`approvals.deny`): fnmatch-style globs that refuse a terminal command outright,
 * after the hardline patterns and before any approval (session, always, mode off, transport or prompt).
 * A rule is matched case-insensitively against the whole command (as written, and with quotes taken
 * out) and against every command it executes: each part of `;`, `&&`, `||`, `|`, `&`, subshells and
 * `$(…)`, after assignments and redirections, at each launcher (`sudo`, `env`, `timeout`, …) and inside
 * `sh -c` payloads, with the executable's path also reduced to its basename. A policy, not a shell.
 */

type Token = { word: string } | { sep: true } | { redir: string };

/** fnmatch: `*` any text, `?` one character, `[…]` a class (`[!…]` negated); the rest literal. */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "*") re += ".*";
    else if (ch === "?") re += ".";
    else if (ch === "[") {
      // As fnmatch: a `]` right after `[` or `[!` is a member, not the end.
      let from = i + 1;
      if (glob[from] === "!") from++;
      if (glob[from] === "]") from++;
      const end = glob.indexOf("]", from);
      if (end < 0) re += "\\[";
      else {
        let body = glob.slice(i + 1, end);
        const neg = body.startsWith("!");
        if (neg) body = body.slice(1);
        re += `[${neg ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
        i = end;
      }
    } else re += ch.replace(/[.+^${}()|\\/\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "is");
}

/** Split a command into words (quotes removed, escapes applied), separators and redirections. */
function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let cur = "";
  let inWord = false;
  const flush = () => {
    if (inWord) out.push({ word: cur });
    cur = "";
    inWord = false;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      cur += end < 0 ? text.slice(i + 1) : text.slice(i + 1, end);
      inWord = true;
      i = end < 0 ? text.length : end;
    } else if (ch === '"') {
      inWord = true;
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === "\\" && /["\\$`]/.test(text[i + 1] ?? "")) i++;
        cur += text[i];
      }
    } else if (ch === "\\") {
      cur += text[++i] ?? "";
      inWord = true;
    } else if (ch === ">" || ch === "<") {
      const fd = /^\d+$/.test(cur) ? cur : "";
      if (!fd) flush();
      const m = /^[<>]+(?:&(?:\d+|-))?/.exec(text.slice(i))![0];
      out.push({ redir: fd + m });
      cur = "";
      inWord = false;
      i += m.length - 1;
    } else if (/[;&|()`\n]/.test(ch) || (ch === "$" && text[i + 1] === "(")) {
      flush();
      out.push({ sep: true });
      if (ch === "$") i++;
    } else if (/\s/.test(ch)) flush();
    else {
      cur += ch;
      inWord = true;
    }
  }
  flush();
  return out;
}

/** Options of a launcher that take the next word, and how many operands come before the command. */
const LAUNCHERS: Record<string, { takes: string[]; operands?: number; lookup?: string[] }> = {
  sudo: { takes: ["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"] },
  env: { takes: ["-u", "-C", "-a", "--unset", "--chdir", "--argv0"] },
  command: { takes: [], lookup: ["-v", "-V"] },
  exec: { takes: ["-a"] },
  nohup: { takes: [] },
  setsid: { takes: [] },
  time: { takes: ["-f", "-o"] },
  nice: { takes: ["-n", "--adjustment"] },
  timeout: { takes: ["-s", "-k", "--signal", "--kill-after"], operands: 1 },
  stdbuf: { takes: ["-i", "-o", "-e"] },
  ionice: { takes: ["-c", "-n", "-p", "-P", "-u"] },
  chrt: { takes: [], operands: 1 },
  taskset: { takes: [], operands: 1 },
  chroot: { takes: ["--userspec", "--groups"], operands: 1 },
};
const SHELLS = new Set(["sh", "bash", "zsh", "ksh", "dash", "mksh", "ash"]);
const KEYWORDS = new Set(["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}"]);

const basename = (w: string) => w.slice(w.lastIndexOf("/") + 1);

/** The executed commands of one simple command (its words), launchers included, recursing into `-c` payloads. */
function commandsOf(words: string[], out: string[], depth: number): void {
  let i = 0;
  while (i < words.length && (KEYWORDS.has(words[i]!) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!))) i++;
  while (i < words.length) {
    const rest = words.slice(i);
    out.push(rest.join(" "));
    const exe = basename(words[i]!);
    if (exe !== words[i]) out.push([exe, ...rest.slice(1)].join(" "));
    const launcher = LAUNCHERS[exe];
    if (SHELLS.has(exe)) {
      const c = rest.findIndex((w, n) => n > 0 && /^-[a-z]*c[a-z]*$/.test(w));
      if (c > 0 && rest[c + 1] !== undefined && depth < 4) candidatesOf(rest[c + 1]!, out, depth + 1);
      return;
    }
    if (!launcher) return;
    let j = i + 1;
    let operands = launcher.operands ?? 0;
    for (; j < words.length; j++) {
      const w = words[j]!;
      if (w === "--") {
        j++;
        break;
      }
      if (launcher.lookup?.includes(w)) return;
      if (exe === "env" && (w === "-S" || w === "--split-string" || w.startsWith("--split-string="))) {
        const payload = w.includes("=") ? w.slice(w.indexOf("=") + 1) : (words[++j] ?? "");
        if (depth < 4) candidatesOf([payload, ...words.slice(j + 1)].join(" "), out, depth + 1);
        return;
      }
      if (exe === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) continue;
      if (w.startsWith("-") && w.length > 1) {
        if (launcher.takes.includes(w)) j++;
        continue;
      }
      if (operands > 0) {
        operands--;
        continue;
      }
      break;
    }
    i = j;
  }
}

/** Every command `text` executes, as candidate strings for the deny rules. */
function candidatesOf(text: string, out: string[], depth: number): void {
  let words: string[] = [];
  let skipTarget = false;
  const end = () => {
    if (words.length) commandsOf(words, out, depth);
    words = [];
  };
  for (const t of tokenize(text)) {
    if ("sep" in t) end();
    else if ("redir" in t) skipTarget = !/&(?:\d+|-)$/.test(t.redir);
    else if (skipTarget) skipTarget = false;
    else words.push(t.word);
  }
  end();
}

/** The texts a rule is matched against: the whole command (as written and unquoted) and each command it runs. */
export function denyCandidates(command: string): string[] {
  const whole = [command, command.replace(/''|""/g, ""), command.replace(/['"\\]/g, "")];
  const out = [...whole, ...whole.map((w) => w.replace(/\s+/g, " ").trim())];
  candidatesOf(command, out, 0);
  return [...new Set(out)];
}

/** The first rule of `rules` that `command` matches, if any. */
export function matchDenyRule(command: string, rules: readonly string[]): string | undefined {
  if (!rules.length) return undefined;
  const candidates = denyCandidates(command);
  return rules.find((rule) => {
    const re = globToRegExp(rule);
    return candidates.some((c) => re.test(c));
  });
}
