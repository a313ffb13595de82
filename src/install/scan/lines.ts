/**
 * Line structure of one text file, as far as the scanner cares: which lines are comments or
 * docstrings (code patterns skip them: they do not execute) and, in Markdown, which lines are in a
 * fenced block and where the inline code spans are (a quoted injection phrase is a mention).
 *
 * Deliberately conservative: only whole-line comments are recognised, and a block comment or
 * docstring must start at the beginning of a line. Anything unclear is treated as code, so a
 * comment marker inside a string can never hide code from the scanner.
 */
import type { FileClass } from "./files.js";

export interface LineInfo {
  text: string;
  /** The whole line is a comment or a docstring. */
  comment: boolean;
  /** Markdown: inside (or on the fence of) a fenced code block. */
  fence: boolean;
}

export function splitLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

const HASH_COMMENT_LANGS = new Set(["py", "sh", "rb", "pl", "config", "other"]);

/** True when nothing but whitespace (or another comment) follows `end` on the line. */
function restIsEmpty(line: string, end: number, lineComment?: string): boolean {
  const rest = line.slice(end).trim();
  return rest === "" || (lineComment !== undefined && rest.startsWith(lineComment));
}

export function analyzeLines(text: string, cls: FileClass): LineInfo[] {
  const lines = splitLines(text);
  const out: LineInfo[] = [];
  if (cls.kind === "doc") {
    let fence: string | undefined;
    for (const line of lines) {
      const t = line.trimStart();
      const m = cls.markdown ? /^(`{3,}|~{3,})/.exec(t) : null;
      if (m) {
        if (fence === undefined) fence = m[1]![0]!;
        else if (m[1]![0] === fence) fence = undefined;
        out.push({ text: line, comment: false, fence: true });
        continue;
      }
      out.push({ text: line, comment: false, fence: fence !== undefined });
    }
    return out;
  }

  const js = cls.lang === "js" || cls.lang === "php";
  const hash = HASH_COMMENT_LANGS.has(cls.lang) || cls.lang === "php";
  const py = cls.lang === "py";
  let inBlock = false; // JS /* … */
  let doc: string | undefined; // Python docstring delimiter while inside one

  for (const line of lines) {
    const t = line.trimStart();
    let comment = false;
    if (inBlock) {
      const end = line.indexOf("*/");
      if (end < 0) comment = true;
      else {
        inBlock = false;
        comment = restIsEmpty(line, end + 2, "//");
      }
    } else if (doc !== undefined) {
      const end = line.indexOf(doc);
      if (end < 0) comment = true;
      else {
        comment = restIsEmpty(line, end + 3, "#");
        doc = undefined;
      }
    } else if (js && t.startsWith("//")) {
      comment = true;
    } else if (js && t.startsWith("/*")) {
      const end = t.indexOf("*/", 2);
      if (end < 0) {
        inBlock = true;
        comment = true;
      } else comment = restIsEmpty(t, end + 2, "//");
    } else if (hash && t.startsWith("#")) {
      comment = true;
    } else if (cls.lang === "config" && /^[;]/.test(t)) {
      comment = true;
    } else if (cls.lang === "win" && /^(?:rem\b|::)/i.test(t)) {
      comment = true;
    } else if (py) {
      // A docstring is a bare string statement: it starts the line.
      const m = /^[rRbBuUfF]{0,2}("""|''')/.exec(t);
      if (m) {
        const delim = m[1]!;
        const start = m[0].length;
        const end = t.indexOf(delim, start);
        if (end < 0) {
          doc = delim;
          comment = true;
        } else comment = restIsEmpty(t, end + 3, "#");
      }
    }
    out.push({ text: line, comment, fence: false });
  }
  return out;
}

/** Markdown inline code spans of one line, as [start, end) ranges. */
export function codeSpans(line: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const re = /(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line)) !== null) spans.push([m.index, m.index + m[0].length]);
  return spans;
}

/** Quoted text on a line: ranges inside "…", '…' and “…” (a phrase quoted in prose is a mention). */
export function quotedSpans(line: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const re = /"[^"\n]{3,}"|“[^”\n]{3,}”|«[^»\n]{3,}»/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line)) !== null) spans.push([m.index, m.index + m[0].length]);
  return spans;
}
