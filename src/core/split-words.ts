/** Why a command line could not be split into words. */
export class SplitWordsError extends Error {}

/**
 * Split a command line into words the way a POSIX shell would (whitespace outside quotes,
 * '…' literal, "…" with \" \\ \$ \` escapes, \x outside quotes, an unquoted leading `~/` is `home`),
 * without expanding anything else: no variables, globs, pipes or redirections.
 */
export function splitWords(template: string, home?: string): string[] {
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
  if (quote) throw new SplitWordsError(`unterminated ${quote} quote`);
  if (inWord) words.push(cur);
  if (!words.length) throw new SplitWordsError("the command is empty");
  return words;
}
