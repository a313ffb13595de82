import { HermesError } from "../../core/errors.js";

/**
 * Split a command template into words the way a POSIX shell would (whitespace outside quotes,
 * '…' literal, "…" with \" \\ \$ \` escapes, \x outside quotes, an unquoted leading `~/` is `home`),
 * without expanding anything else: no variables, globs, pipes or redirections.
 */
export function splitCommand(template: string, what: string, home?: string): string[] {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === "\\" && i + 1 < template.length && '"\\$`'.includes(template[i + 1]!)) cur += template[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < template.length) {
      cur += template[++i];
      inWord = true;
    } else if (c === "~" && !inWord && home && (i + 1 === template.length || /[/\s]/.test(template[i + 1]!))) {
      cur += home;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote) throw new HermesError("E_VOICE_COMMAND_TEMPLATE", { message: `${what}: unterminated ${quote} quote` });
  if (inWord) words.push(cur);
  if (!words.length) throw new HermesError("E_VOICE_COMMAND_TEMPLATE", { message: `${what}: the command is empty` });
  return words;
}

/** Replace `{name}` in one word; `{{` and `}}` are literal braces; an unknown name is refused. */
function renderWord(word: string, values: Readonly<Record<string, string>>, what: string): string {
  return word.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (m, name: string | undefined) => {
    if (m === "{{") return "{";
    if (m === "}}") return "}";
    if (name !== undefined && Object.hasOwn(values, name)) return values[name]!;
    throw new HermesError("E_VOICE_COMMAND_TEMPLATE", {
      message: `${what}: unknown placeholder ${m} (known: ${Object.keys(values)
        .map((k) => `{${k}}`)
        .join(", ")})`,
    });
  });
}

/**
 * The argv of a command template: split into words first, then placeholders filled in each word, so
 * a value (a path with spaces, say) is always exactly one argument and is never parsed again.
 */
export function renderCommand(
  template: string,
  values: Readonly<Record<string, string>>,
  what: string,
  home?: string,
): string[] {
  return splitCommand(template, what, home).map((w) => renderWord(w, values, what));
}
