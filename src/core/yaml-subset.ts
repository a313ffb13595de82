/**
 * A reader for the plain block subset of YAML that plugin manifests and most configs are written in:
 * block mappings with identifier keys, block sequences, one-line plain or quoted scalars, `|`/`>` block
 * scalars, one-line flow lists and mappings, comments. It answers the value the `yaml` package (YAML 1.2, core
 * schema) gives for the same text, or `NOT_SUBSET` for anything else, and then the caller parses with
 * `yaml`. It exists for speed: a cold compile parses 1,000 manifests, and the full parser costs ~0.3 ms
 * each before the JIT warms up. It never reports errors: any doubt is `NOT_SUBSET`.
 */
export const NOT_SUBSET: unique symbol = Symbol("not the plain YAML subset");

interface Line {
  row: number; // index in the text's rows
  indent: number;
  text: string; // after the indentation, trailing spaces kept
}

/** Deeper nesting is left to yaml (it has its own limits): the reader recurses once per level. */
const MAX_DEPTH = 64;

/** Thrown inside the reader only; turned into NOT_SUBSET at the top. */
class Bail {}
const BAIL = new Bail();

// yaml refuses an implicit block key longer than 1024 characters: a longer one is not a key here either.
const KEY = /^([A-Za-z_][A-Za-z0-9_.-]{0,1023}):(?: +|$)/;
// Keys the core schema would not read as a string, or that yaml defines specially on the object.
const NON_STRING_KEYS = new Set(["null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"]);
// Characters that make YAML read a line as something other than text, or that yaml may refuse.
const UNSAFE_CHAR = /[\t\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff\u2028\u2029\ufffe\uffff]/;

export function parseYamlSubset(text: string): unknown | typeof NOT_SUBSET {
  if (UNSAFE_CHAR.test(text)) return NOT_SUBSET;
  const rows = text.split("\n");
  const lines = contentLines(rows);
  if (!lines?.length) return NOT_SUBSET;
  try {
    const reader = new Reader(rows, lines);
    const value = reader.block(lines[0]!.indent);
    return reader.at === lines.length ? value : NOT_SUBSET;
  } catch (e) {
    if (e === BAIL) return NOT_SUBSET;
    throw e;
  }
}

/** The lines that carry content: no blank or comment lines; undefined when a directive or document marker appears. */
function contentLines(rows: string[]): Line[] | undefined {
  const out: Line[] = [];
  for (let row = 0; row < rows.length; row++) {
    const raw = rows[row]!;
    let indent = 0;
    while (raw.charCodeAt(indent) === 32) indent++;
    if (indent === raw.length || raw.charCodeAt(indent) === 35 /* # */) continue;
    if (indent === 0 && (raw[0] === "%" || raw.startsWith("---") || raw.startsWith("..."))) return undefined;
    out.push({ row, indent, text: raw.slice(indent) });
  }
  return out;
}

const isItem = (t: string): boolean => t === "-" || t.startsWith("- ");

class Reader {
  at = 0;
  private depth = 0;
  constructor(
    private readonly rows: string[],
    private readonly lines: Line[],
  ) {}

  private get next(): Line | undefined {
    return this.lines[this.at];
  }

  /** The node whose first line is the current one, at `indent`. */
  block(indent: number): unknown {
    return this.nested(() => (isItem(this.next!.text) ? this.sequence(indent) : this.mapping(indent)));
  }

  /** One level deeper: past MAX_DEPTH the text is yaml's. */
  private nested<T>(read: () => T): T {
    if (++this.depth > MAX_DEPTH) throw BAIL;
    const value = read();
    this.depth--;
    return value;
  }

  private mapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let line = this.next; line && line.indent === indent && !isItem(line.text); line = this.next) {
      const m = KEY.exec(line.text);
      out[newKey(m?.[1], out)] = this.valueAfter(line.text.slice(m![0].length), indent, true);
    }
    this.endOfBlock(indent);
    return out;
  }

  private sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    for (let line = this.next; line && line.indent === indent && isItem(line.text); line = this.next) {
      let offset = 1;
      while (line.text.charCodeAt(offset) === 32) offset++;
      const rest = line.text.slice(offset);
      if (KEY.test(rest)) {
        // `- key: value`: a mapping whose keys sit where this first key starts.
        this.lines[this.at] = { row: line.row, indent: indent + offset, text: rest };
        out.push(this.nested(() => this.mapping(indent + offset)));
      } else out.push(this.valueAfter(rest, indent, false));
    }
    this.endOfBlock(indent);
    return out;
  }

  /** A line indented deeper than the block that just ended belongs to nothing we read: bail. */
  private endOfBlock(indent: number): void {
    const line = this.next;
    if (line && line.indent > indent) throw BAIL;
  }

  /** The value written after `key:` or `-` on the current line (`rest`), and the lines nested under it. */
  private valueAfter(rest: string, indent: number, inMapping: boolean): unknown {
    this.at++;
    if (rest === "" || rest.startsWith("#")) {
      const line = this.next;
      if (line && line.indent > indent) return this.block(line.indent);
      // A mapping's value may be a sequence at the mapping's own indentation.
      if (inMapping && line && line.indent === indent && isItem(line.text)) return this.sequence(indent);
      return null;
    }
    if (isItem(rest)) throw BAIL;
    if (rest[0] === "|" || rest[0] === ">") return this.blockScalar(rest, indent);
    const value = inlineValue(rest);
    const line = this.next;
    if (line && line.indent > indent) throw BAIL; // a multi-line scalar, or a mistake yaml reports
    return value;
  }

  /**
   * `|`, `|-`, `>`, `>-` and the rows under it, the current line being the first after the header. Bails on
   * what needs more of the spec: explicit indentation, `+`, leading or space-only blank rows, a folded
   * scalar's more-indented rows, a scalar that ends the text without a line break.
   */
  private blockScalar(header: string, parent: number): string {
    const m = /^([|>])(-?)(?: +#.*)?$/.exec(header);
    if (!m) throw BAIL;
    const headerRow = this.lines[this.at - 1]!.row;
    const body: string[] = [];
    let indent = -1;
    let row = headerRow + 1;
    for (; row < this.rows.length; row++) {
      const raw = this.rows[row]!;
      if (raw === "") {
        if (indent < 0) throw BAIL;
        body.push("");
        continue;
      }
      let n = 0;
      while (raw.charCodeAt(n) === 32) n++;
      if (n === raw.length) throw BAIL;
      if (n <= parent) break;
      if (indent < 0) indent = n;
      else if (n < indent || (n > indent && m[1] === ">")) throw BAIL;
      body.push(raw.slice(indent));
    }
    if (indent < 0 || (row === this.rows.length && this.rows[row - 1] !== "")) throw BAIL; // empty, or no final break
    while (body[body.length - 1] === "") body.pop();
    while (this.next && this.next.row < row) this.at++;
    const text = m[1] === "|" ? body.join("\n") : fold(body);
    return m[2] === "-" ? text : `${text}\n`;
  }
}

/** Folded rows: a single break between two text rows is a space; each blank row between them is a break. */
function fold(body: string[]): string {
  let out = body[0]!;
  let blanks = 0;
  for (let i = 1; i < body.length; i++) {
    const row = body[i]!;
    if (row === "") blanks++;
    else {
      out += blanks ? "\n".repeat(blanks) + row : ` ${row}`;
      blanks = 0;
    }
  }
  return out;
}

/** A one-line value: quoted, `[]`/`{}`/flow list, or plain; a trailing comment is allowed after it. */
function inlineValue(rest: string): unknown {
  const c = rest[0];
  if (c === '"' || c === "'") {
    const { value, end } = quoted(rest, 0);
    afterValue(rest, end);
    return value;
  }
  if (c === "[" || c === "{") {
    const at = { s: rest, i: 0, depth: 0 };
    const value = flowNode(at);
    afterValue(rest, at.i);
    return value;
  }
  let end = rest.indexOf(" #");
  if (end < 0) end = rest.length;
  return plain(trimSpaces(rest.slice(0, end)), false);
}

/** Nothing but spaces and a comment may follow a value on its line. */
function afterValue(s: string, end: number): void {
  const tail = s.slice(end);
  if (!/^ *$/.test(tail) && !/^ +#/.test(tail)) throw BAIL;
}

/** Trailing spaces off; YAML's white space is only space and tab, not every Unicode space trimEnd() takes. */
const trimSpaces = (s: string): string => s.replace(/ +$/, "");

/** A quoted scalar starting at `start`: single quotes with `''`; double quotes without escapes. */
function quoted(s: string, start: number): { value: string; end: number } {
  const q = s[start];
  let value = "";
  for (let i = start + 1; i < s.length; i++) {
    const c = s[i];
    if (q === '"' && c === "\\") throw BAIL;
    if (c !== q) value += c;
    else if (q === "'" && s[i + 1] === "'") {
      value += "'";
      i++;
    } else return { value, end: i + 1 };
  }
  throw BAIL; // the closing quote is on a later line
}

/** A cursor in a one-line flow collection. */
interface Cursor {
  s: string;
  i: number;
  depth: number;
}

const FLOW_KEY = /^([A-Za-z_][A-Za-z0-9_.-]*): +/;

/** A node of a one-line flow collection: `[…]`, `{key: …}`, a quoted or a plain scalar; no empty entry. */
function flowNode(at: Cursor): unknown {
  skipSpaces(at);
  const c = at.s[at.i];
  if (c === "[" || c === "{") {
    if (++at.depth > MAX_DEPTH) throw BAIL;
    const close = c === "[" ? "]" : "}";
    const list: unknown[] = [];
    const map: Record<string, unknown> = {};
    at.i++;
    for (let first = true; ; first = false) {
      skipSpaces(at);
      if (at.s[at.i] === close) {
        at.i++;
        at.depth--;
        return c === "[" ? list : map;
      }
      if (!first && at.s[at.i++] !== ",") throw BAIL;
      if (c === "[") list.push(flowNode(at));
      else {
        skipSpaces(at);
        const m = FLOW_KEY.exec(at.s.slice(at.i));
        const key = newKey(m?.[1], map);
        at.i += m![0].length;
        map[key] = flowNode(at);
      }
    }
  }
  if (c === '"' || c === "'") {
    const q = quoted(at.s, at.i);
    at.i = q.end;
    return q.value;
  }
  const m = /^[^,[\]{}#"']*/.exec(at.s.slice(at.i))!;
  at.i += m[0].length;
  return plain(trimSpaces(m[0]), true);
}

function skipSpaces(at: Cursor): void {
  while (at.s[at.i] === " ") at.i++;
}

/** A mapping key as yaml would make it a string property of `into`, new there; else the text is yaml's. */
function newKey(key: string | undefined, into: Record<string, unknown>): string {
  if (!key || NON_STRING_KEYS.has(key) || key === "__proto__" || Object.hasOwn(into, key)) throw BAIL;
  return key;
}

/** A plain scalar, resolved as the core schema does; anything that could be an indicator bails. */
function plain(s: string, inFlow: boolean): unknown {
  if (s === "") throw BAIL;
  const c = s[0]!;
  if (",[]{}#&*!|>'\"%@`".includes(c)) throw BAIL;
  if ((c === "-" || c === "?" || c === ":") && (s.length === 1 || s[1] === " ")) throw BAIL;
  if (s.endsWith(":") || s.includes(": ") || (inFlow && s.includes(":"))) throw BAIL;
  return resolvePlain(s);
}

/** The core schema's tags, tried in the order yaml tries them. */
function resolvePlain(s: string): unknown {
  if (/^(?:~|[Nn]ull|NULL)$/.test(s)) return null;
  if (/^(?:[Tt]rue|TRUE)$/.test(s)) return true;
  if (/^(?:[Ff]alse|FALSE)$/.test(s)) return false;
  if (/^0o[0-7]+$/.test(s)) return Number.parseInt(s.slice(2), 8);
  if (/^[-+]?[0-9]+$/.test(s)) return Number.parseInt(s, 10);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return Number.parseInt(s.slice(2), 16);
  if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(s))
    return s.slice(-3).toLowerCase() === "nan" ? Number.NaN : s[0] === "-" ? -Infinity : Infinity;
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/.test(s) || /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/.test(s))
    return Number.parseFloat(s);
  return s;
}
