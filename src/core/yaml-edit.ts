import { isDeepStrictEqual } from "node:util";
import type { Document, Node, Pair } from "yaml";
import { isMap, isPair, isScalar, isSeq, parseDocument, stringify } from "./yaml-lib.js";
import type { JsonPath } from "./yaml-source.js";

/**
 * Minimal, comment-preserving edits of a YAML text.
 *
 * People keep comments and hand-chosen order in config.yaml; a parse-and-dump loses both. Each
 * edit splices only the text of the node it changes, so every byte outside it stays as written.
 * The result is re-parsed and checked against the same edits applied to a plain object; if a
 * splice ever disagrees (an exotic layout), the document is re-serialised instead, which still
 * keeps comments but may re-indent.
 */
export type YamlEdit =
  | { op: "set"; path: JsonPath; value: unknown }
  | { op: "delete"; path: JsonPath }
  | { op: "append"; path: JsonPath; value: unknown }
  | { op: "remove"; path: JsonPath; match: (item: unknown) => boolean };

type Range = [number, number, number];

function rangeOf(n: unknown): Range | undefined {
  return (n as { range?: Range } | null | undefined)?.range ?? undefined;
}

function lineStart(text: string, pos: number): number {
  return text.lastIndexOf("\n", pos - 1) + 1;
}

function lineEndIncl(text: string, pos: number): number {
  const nl = text.indexOf("\n", pos);
  return nl < 0 ? text.length : nl + 1;
}

function colOf(text: string, pos: number): number {
  return pos - lineStart(text, pos);
}

function renderBlock(value: unknown, indent: number): string {
  const body = stringify(value, { lineWidth: 0, indentSeq: true }).replace(/\n$/, "");
  const pad = " ".repeat(indent);
  return body
    .split("\n")
    .map((l) => (l ? pad + l : l))
    .join("\n");
}

function renderInline(value: unknown): string {
  return stringify(value, { lineWidth: 0, collectionStyle: "flow", flowCollectionPadding: false }).replace(/\n$/, "");
}

function isCollection(v: unknown): boolean {
  return v !== null && typeof v === "object" && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0);
}

function findPair(map: unknown, key: string | number): Pair | undefined {
  if (!isMap(map)) return undefined;
  return map.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(key)) as Pair | undefined;
}

/** Where new content may be inserted after a node: the start of the line after it ends. */
function afterNode(text: string, end: number): number {
  if (end > 0 && text[end - 1] === "\n") return end;
  return lineEndIncl(text, end);
}

function ensureNewline(text: string, pos: number): { text: string; pos: number } {
  if (pos === text.length && text.length > 0 && !text.endsWith("\n")) return { text: `${text}\n`, pos: pos + 1 };
  return { text, pos };
}

function splice(text: string, start: number, end: number, insert: string): string {
  return text.slice(0, start) + insert + text.slice(end);
}

function editSet(text: string, doc: Document.Parsed, path: JsonPath, value: unknown): string {
  if (path.length === 0) return `${stringify(value, { lineWidth: 0 })}`;
  // Deepest existing mapping along the path.
  let node: unknown = doc.contents;
  let depth = 0;
  let pair: Pair | undefined;
  for (; depth < path.length; depth++) {
    const seg = path[depth]!;
    if (isSeq(node) && typeof seg === "number" && node.items[seg] !== undefined) {
      pair = undefined;
      node = node.items[seg];
      continue;
    }
    const p = findPair(node, seg);
    if (!p) break;
    pair = p;
    node = p.value;
  }
  if (depth === path.length) {
    const r = rangeOf(node);
    const keyR = pair ? rangeOf(pair.key) : undefined;
    if (!r || (!isScalar(node) && !isMap(node) && !isSeq(node))) {
      if (!keyR) throw new Error("internal: value has no source range (applyYamlEdits falls back to re-serialising)");
      return replaceAfterKey(text, keyR, r, value, colOf(text, keyR[0]));
    }
    const flow = (isMap(node) || isSeq(node)) && node.flow;
    if (!flow && (isMap(node) || isSeq(node)) && keyR)
      return replaceAfterKey(text, keyR, r, value, colOf(text, keyR[0]));
    if (flow || !isCollection(value)) {
      if (!flow && isCollection(value) && keyR) return replaceAfterKey(text, keyR, r, value, colOf(text, keyR[0]));
      return splice(text, r[0], r[1], renderInline(value));
    }
    if (isScalar(node) && keyR) return replaceAfterKey(text, keyR, r, value, colOf(text, keyR[0]));
    if (keyR) return replaceAfterKey(text, keyR, r, value, colOf(text, keyR[0]));
    // A collection that is a list item: re-render it in place at its column.
    const col = colOf(text, r[0]);
    return splice(
      text,
      r[0],
      r[1],
      renderBlock(value, col).slice(col).replace(/\n$/, "") + (text[r[1] - 1] === "\n" ? "\n" : ""),
    );
  }
  // Build the missing tail as a nested object and attach it to the deepest existing node.
  let nested: unknown = value;
  for (let i = path.length - 1; i > depth; i--) nested = { [String(path[i])]: nested };
  const key = String(path[depth]);
  if (isMap(node) && !node.flow && node.items.length > 0) {
    const first = node.items[0] as Pair;
    const indent = colOf(text, rangeOf(first.key)![0]);
    const last = node.items[node.items.length - 1] as Pair;
    const end = Math.max(rangeOf(last.value)?.[1] ?? 0, rangeOf(last.key)?.[1] ?? 0);
    const at = ensureNewline(text, afterNode(text, end));
    return splice(at.text, at.pos, at.pos, `${renderBlock({ [key]: nested }, indent)}\n`);
  }
  if (depth === 0 && (node === null || node === undefined || (isScalar(node) && node.value === null))) {
    // Empty document (maybe only comments): append at the end.
    const r = rangeOf(node);
    const base = r ? splice(text, r[0], r[1], "") : text;
    const at = ensureNewline(base, base.length);
    return `${at.text}${renderBlock({ [key]: nested }, 0)}\n`;
  }
  if (isMap(node) || (isScalar(node) && node.value === null)) {
    // Flow or empty mapping (`plugins: {}` / `plugins:`): re-render the mapping with the new key.
    const parentPath = path.slice(0, depth);
    const current = (node as Node).toJSON() as Record<string, unknown> | null;
    return editSet(text, doc, parentPath, { ...(current ?? {}), [key]: nested });
  }
  // The parent exists but is not a mapping (a scalar or a list): replace it wholesale.
  return editSet(text, doc, path.slice(0, depth), { [key]: nested });
}

function replaceAfterKey(text: string, keyR: Range, valueR: Range | undefined, value: unknown, keyCol: number): string {
  const colon = text.indexOf(":", keyR[1]);
  const end = valueR ? valueR[1] : colon + 1;
  const trailingNl = end > 0 && text[end - 1] === "\n";
  const rendered = isCollection(value) ? `\n${renderBlock(value, keyCol + 2)}` : ` ${renderInline(value)}`;
  return splice(text, colon + 1, end, rendered + (trailingNl ? "\n" : ""));
}

function editDelete(text: string, doc: Document.Parsed, path: JsonPath): string {
  const parent = path.length > 1 ? doc.getIn(path.slice(0, -1), true) : doc.contents;
  const last = path[path.length - 1]!;
  if (isMap(parent)) {
    const p = findPair(parent, last);
    if (!p) return text;
    if (parent.flow || parent.items.length === 1) {
      const rest = (parent.toJSON() as Record<string, unknown>) ?? {};
      delete rest[String(last)];
      return editSet(text, doc, path.slice(0, -1), rest);
    }
    const start = lineStart(text, rangeOf(p.key)![0]);
    const end = afterNode(text, Math.max(rangeOf(p.value)?.[1] ?? 0, rangeOf(p.key)![1]));
    return splice(text, start, end, "");
  }
  if (isSeq(parent) && typeof last === "number")
    return removeItems(text, doc, path.slice(0, -1), (_v, i) => i === last);
  return text;
}

function removeItems(
  text: string,
  doc: Document.Parsed,
  path: JsonPath,
  match: (v: unknown, i: number) => boolean,
): string {
  const seq = doc.getIn(path, true);
  if (!isSeq(seq)) return text;
  const values = seq.toJSON() as unknown[];
  const keep = values.filter((v, i) => !match(v, i));
  if (keep.length === values.length) return text;
  if (seq.flow || keep.length === 0) return editSet(text, doc, path, keep);
  let out = text;
  for (let i = seq.items.length - 1; i >= 0; i--) {
    if (!match(values[i], i)) continue;
    const r = rangeOf(seq.items[i])!;
    const start = lineStart(out, r[0]);
    const end = afterNode(out, r[2]);
    out = splice(out, start, end, "");
  }
  return out;
}

function editAppend(text: string, doc: Document.Parsed, path: JsonPath, value: unknown): string {
  const seq = doc.getIn(path, true);
  if (isSeq(seq) && !seq.flow && seq.items.length > 0) {
    const r = rangeOf(seq)!;
    const indent = colOf(text, r[0]);
    const lastItem = rangeOf(seq.items[seq.items.length - 1])!;
    const at = ensureNewline(text, afterNode(text, lastItem[2]));
    return splice(at.text, at.pos, at.pos, `${" ".repeat(indent)}- ${renderInline(value)}\n`);
  }
  const current = isSeq(seq) ? (seq.toJSON() as unknown[]) : [];
  if (isSeq(seq) && seq.flow && current.length === 0 && path.length > 0) {
    // `enabled: []` growing its first item becomes a block list, the layout people write by hand.
    const parent = path.length > 1 ? doc.getIn(path.slice(0, -1), true) : doc.contents;
    const pair = findPair(parent, path[path.length - 1]!);
    const keyR = pair ? rangeOf(pair.key) : undefined;
    if (keyR && isMap(parent) && !parent.flow)
      return replaceAfterKey(text, keyR, rangeOf(seq), [value], colOf(text, keyR[0]));
  }
  return editSet(text, doc, path, [...current, value]);
}

function applyToText(text: string, e: YamlEdit): string {
  const doc = parseDocument(text);
  switch (e.op) {
    case "set":
      return editSet(text, doc, e.path, e.value);
    case "delete":
      return editDelete(text, doc, e.path);
    case "append":
      return editAppend(text, doc, e.path, e.value);
    case "remove":
      return removeItems(text, doc, e.path, (v) => e.match(v));
  }
}

function applyToValue(root: unknown, e: YamlEdit): unknown {
  const clone = structuredClone(root ?? {}) as Record<string, unknown>;
  if (e.path.length === 0) return e.op === "set" ? structuredClone(e.value) : clone;
  let cur: Record<string, unknown> = clone;
  for (const seg of e.path.slice(0, -1)) {
    const next = cur[seg as string];
    if (next === null || typeof next !== "object") {
      if (e.op === "delete" || e.op === "remove") return clone;
      cur[seg as string] = {};
    }
    cur = cur[seg as string] as Record<string, unknown>;
  }
  const last = e.path[e.path.length - 1] as string;
  switch (e.op) {
    case "set":
      cur[last] = structuredClone(e.value);
      break;
    case "delete":
      if (Array.isArray(cur)) cur.splice(Number(last), 1);
      else delete cur[last];
      break;
    case "append":
      cur[last] = [...(Array.isArray(cur[last]) ? (cur[last] as unknown[]) : []), structuredClone(e.value)];
      break;
    case "remove":
      if (Array.isArray(cur[last])) cur[last] = (cur[last] as unknown[]).filter((v) => !e.match(v));
      break;
  }
  return clone;
}

/** Apply edits to YAML text; returns the new text (identical text when nothing changed). */
export function applyYamlEdits(text: string, edits: readonly YamlEdit[]): string {
  // Windows line endings: edit in LF, then give every line back the ending the file uses.
  if (text.includes("\r\n")) return applyYamlEdits(text.replace(/\r\n/g, "\n"), edits).replace(/\n/g, "\r\n");
  const original = parseDocument(text).toJS() as unknown;
  let expected: unknown = original;
  for (const e of edits) expected = applyToValue(expected, e);
  let out = text;
  try {
    for (const e of edits) out = applyToText(out, e);
    const check = parseDocument(out);
    if (check.errors.length === 0 && isDeepStrictEqual(check.toJS(), expected ?? {})) return out;
  } catch {
    // fall through to the document re-serialisation below
  }
  const doc = parseDocument(text);
  for (const e of edits) {
    if (e.op === "set") doc.setIn(e.path, e.value);
    else if (e.op === "delete") doc.deleteIn(e.path);
    else {
      const cur = doc.getIn(e.path);
      const list = Array.isArray(cur) ? cur : isSeq(cur) ? (cur.toJSON() as unknown[]) : [];
      doc.setIn(e.path, e.op === "append" ? [...list, e.value] : list.filter((v) => !e.match(v)));
    }
  }
  return doc.toString({ lineWidth: 0 });
}
