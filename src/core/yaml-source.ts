import type { Document, LineCounter, Node } from "yaml";
import { isMap, isPair, isScalar, isSeq, newLineCounter, parseDocument } from "./yaml-lib.js";
import { diagnostic, type Diagnostic } from "./errors.js";
import { NOT_SUBSET, parseYamlSubset } from "./yaml-subset.js";
import { formatJsonPath, type JsonPath } from "./json-path.js";

export { formatJsonPath, parsePointer, type JsonPath } from "./json-path.js";

export interface Position {
  line: number;
  col: number;
}

/**
 * A parsed YAML (or JSON: YAML is a superset) text that remembers where every value came from,
 * so a schema error on `plugins.enabled[2]` can say `config.yaml:14:5`.
 */
export class SourceDoc {
  readonly value: unknown;
  readonly errors: Diagnostic[] = [];
  readonly warnings: Diagnostic[] = [];
  private parsed?: { doc: Document.Parsed; lineCounter: LineCounter };

  constructor(
    readonly text: string,
    readonly file: string,
  ) {
    // The plain subset is read directly; yaml's document (for positions) is then made only when one is asked for.
    const quick = parseYamlSubset(this.clean);
    if (quick !== NOT_SUBSET) {
      this.value = quick;
      return;
    }
    const { doc, lineCounter } = this.full();
    for (const e of doc.errors) {
      const pos = lineCounter.linePos(e.pos[0]);
      this.errors.push(
        diagnostic("E_YAML_PARSE", e.message.split("\n")[0] ?? e.message, { file, line: pos.line, col: pos.col }),
      );
    }
    for (const w of doc.warnings) {
      const pos = lineCounter.linePos(w.pos[0]);
      this.warnings.push(
        diagnostic("W_SCHEMA_UNKNOWN_FIELD", w.message.split("\n")[0] ?? w.message, {
          file,
          line: pos.line,
          col: pos.col,
        }),
      );
    }
    let value: unknown;
    if (!this.errors.length) {
      try {
        value = doc.toJS({ maxAliasCount: 100 });
      } catch (e) {
        // An alias bomb (or another resolution failure) is bad input like a syntax error.
        this.errors.push(
          diagnostic("E_YAML_PARSE", (e as Error).message.split("\n")[0] ?? "cannot resolve the document", {
            file,
            line: 1,
            col: 1,
          }),
        );
      }
    }
    this.value = value;
  }

  /** A UTF-8 BOM is common in files saved by Windows editors and is not content. */
  private get clean(): string {
    return this.text.charCodeAt(0) === 0xfeff ? this.text.slice(1) : this.text;
  }

  /** yaml's document of the text, made once. */
  private full(): { doc: Document.Parsed; lineCounter: LineCounter } {
    if (!this.parsed) {
      const lineCounter = newLineCounter();
      const doc = parseDocument(this.clean, { lineCounter, prettyErrors: false, uniqueKeys: true });
      this.parsed = { doc, lineCounter };
    }
    return this.parsed;
  }

  get ok(): boolean {
    return this.errors.length === 0;
  }

  /** Position of the value at `path`; `key: true` points at the mapping key instead. */
  positionOf(path: JsonPath, opts: { key?: boolean } = {}): Position | undefined {
    const { doc, lineCounter } = this.full();
    let node: unknown = doc.contents;
    let last: Node | undefined = node as Node | undefined;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]!;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        if (opts.key && i === path.length - 1 && isScalar(pair.key)) {
          last = pair.key;
          break;
        }
        node = pair.value;
        last = (pair.value as Node | null) ?? (pair.key as Node);
      } else if (isSeq(node) && typeof seg === "number") {
        node = node.items[seg];
        if (!node) break;
        last = node as Node;
      } else break;
    }
    const range = (last as { range?: [number, number, number] } | undefined)?.range;
    if (!range) return undefined;
    return lineCounter.linePos(range[0]);
  }

  locate(path: JsonPath, opts: { key?: boolean } = {}): { file: string; line?: number; col?: number; path: string } {
    const pos = this.positionOf(path, opts);
    return { file: this.file, line: pos?.line, col: pos?.col, path: formatJsonPath(path) };
  }
}
