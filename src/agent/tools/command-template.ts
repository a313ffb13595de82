import { HermesError } from "../../core/errors.js";
import { SplitWordsError, splitWords } from "../../core/split-words.js";

/** Split a command template into shell-like words (see splitWords); a bad template is E_VOICE_COMMAND_TEMPLATE. */
export function splitCommand(template: string, what: string, home?: string): string[] {
  try {
    return splitWords(template, home);
  } catch (e) {
    if (e instanceof SplitWordsError)
      throw new HermesError("E_VOICE_COMMAND_TEMPLATE", { message: `${what}: ${e.message}` });
    throw e;
  }
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
