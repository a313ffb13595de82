import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { parseDocument } from "yaml";
import { describe, expect, it } from "vitest";
import { SourceDoc } from "../../src/core/yaml-source.js";
import { NOT_SUBSET, parseYamlSubset } from "../../src/core/yaml-subset.js";
import { hasShared, SHARED_FIXTURES } from "../shared-dir.js";

const SHARED = hasShared("test/core/yaml-subset.test.ts: the subset reader against the shared fixtures");
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What the yaml package (as SourceDoc calls it) makes of a text: its value, or why it is not a clean parse. */
function full(text: string): { value?: unknown; problems: string[] } {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
  return problems.length ? { problems } : { value: doc.toJS({ maxAliasCount: 100 }), problems };
}

/** The contract: the subset reader answers NOT_SUBSET, or exactly yaml's value for a text yaml reads cleanly. */
function agrees(text: string): boolean {
  const quick = parseYamlSubset(text);
  if (quick === NOT_SUBSET) return false;
  const ref = full(text);
  expect(ref.problems, `yaml reports problems with a text the subset read:\n${text}`).toEqual([]);
  expect(
    isDeepStrictEqual(quick, ref.value),
    `subset ${JSON.stringify(quick)} ≠ yaml ${JSON.stringify(ref.value)}\n${text}`,
  ).toBe(true);
  return true;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => /\.ya?ml$/.test(f) && !f.includes("node_modules"))
    .map((f) => join(dir, f));
}

describe("parseYamlSubset", () => {
  it("reads the shapes manifests are written in, as yaml does", () => {
    const texts = [
      'name: p0001\nversion: "1.1.1"\ndescription: Synthetic plugin number 1\nprovides_hooks:\n  - post_tool_call\n',
      "a:\n- x\n- y\nb: 1\n",
      "list:\n  - name: A\n    value: 'it''s'\n  - name: B # comment\n    empty:\n",
      'tags: [a, \'b\', "c d", 3, ~]\nschema: {x: {type: str, default: ""}, y: []}\nz: {}\n',
      "description: >-\n  one\n  two\n\n  three\nnext: |\n  keep\n    more\n\n  end\nlast: x\n",
      "# comment\n\nversion: 1.0.0\nnum: 007\nneg: -3\nf: 1.5e3\nhex: 0x1F\n",
      "oct: 0o17\ninf: -.inf\nnan: .NaN\nt: True\n",
      "url: http://x:8080/a#b\nc: C#\nq: ?x\n",
      "a: [b, [c, {d: e}]]\n",
      "a: abc \u00a0 \nb: 'x' # c\nc: > # c\n  x\n",
      `${"a".repeat(1024)}: 1\nl:\n- ${"k".repeat(1024)}: x\n`, // the longest implicit key yaml takes
    ];
    for (const t of texts) expect(agrees(t), t).toBe(true);
  });

  it("hands to yaml what it does not read (anchors, tags, keys yaml would not make strings, escapes, …)", () => {
    const texts = [
      "",
      "just text\n",
      "a: &x 1\nb: *x\n",
      "a: !!str 1\n",
      "null: 1\n",
      "__proto__: 1\n",
      "a: 1\na: 2\n",
      '"quoted key": 1\n',
      'a: "esc\\n"\n',
      "a: b: c\n",
      "a: one\n  continued\n",
      "a: |+\n  x\n\n",
      "a: |2\n  x\n",
      "a: >\n  x\n    more\n",
      "a: |\n  x",
      "a:\tb\n",
      "a: b\r\n",
      "---\na: 1\n",
      "%YAML 1.2\n---\na: 1\n",
      "a: [b,]\n",
      "a: [x: 1]\n",
      "a: {b}\n",
      "a: - b\n",
      "  a: 1\nb: 2\n",
      `a: ${"[".repeat(5000)}${"]".repeat(5000)}\n`,
      Array.from({ length: 5000 }, (_, i) => `${" ".repeat(i)}k:`).join("\n"),
      Array.from({ length: 5000 }, (_, i) => `${" ".repeat(2 * i)}- k:`).join("\n"),
      "a:\n    b: 1\n  c: 2\n",
      // yaml: "The : indicator must be at most 1024 chars after the start of an implicit block mapping key".
      `${"a".repeat(1025)}: 1\n`,
      `- ${"a".repeat(1025)}: 1\n`,
      `x:\n  ${"k".repeat(1025)}:\n`,
    ];
    for (const t of texts) expect(parseYamlSubset(t), JSON.stringify(t)).toBe(NOT_SUBSET);
  });

  it("agrees with yaml on every YAML file of this repository, and reads its plugin manifests", () => {
    let manifests = 0;
    let read = 0;
    for (const f of [
      ...yamlFiles(join(ROOT, "test")),
      ...yamlFiles(join(ROOT, "plugins")),
      ...yamlFiles(join(ROOT, "data")),
    ]) {
      const ok = agrees(readFileSync(f, "utf8").replace(/^\ufeff/, ""));
      if (f.endsWith("plugin.yaml")) {
        manifests++;
        if (ok) read++;
      }
    }
    expect(manifests).toBeGreaterThan(20);
    expect(read / manifests).toBeGreaterThan(0.9);
  });

  it.skipIf(!SHARED)("agrees with yaml on the real-world fixtures, and reads nearly every real manifest", () => {
    const notRead: string[] = [];
    const manifests = yamlFiles(join(SHARED_FIXTURES, "manifests"));
    for (const f of yamlFiles(SHARED_FIXTURES))
      if (!agrees(readFileSync(f, "utf8").replace(/^\ufeff/, "")) && manifests.includes(f)) notRead.push(f);
    expect(manifests.length).toBeGreaterThan(50);
    expect(notRead.length / manifests.length, notRead.join("\n")).toBeLessThan(0.05);
  });

  it("agrees with yaml on generated documents near the subset's edges", () => {
    let read = 0;
    let runs = 0;
    fc.assert(
      fc.property(docArb, editArb, (doc, edit) => {
        let text = render(doc, 0).join("\n") + "\n";
        if (edit) text = text.slice(0, edit[0] % text.length) + edit[1] + text.slice(edit[0] % text.length);
        runs++;
        if (agrees(text)) read++;
      }),
      { numRuns: Number(process.env.SUBSET_RUNS ?? 3000) },
    );
    // The generator must reach the fast path often, or the comparison above proves little.
    expect(read / runs).toBeGreaterThan(0.1);
  });

  it("SourceDoc gives the same value, and yaml's positions, for a text the subset reads", () => {
    const text = "name: x\nlist:\n  - a\n  - b: 1\n    c: [1, 2]\n";
    const src = new SourceDoc(text, "plugin.yaml");
    expect(src.ok).toBe(true);
    expect(src.value).toEqual(full(text).value);
    expect(src.positionOf(["list", 1, "c"])).toEqual({ line: 5, col: 8 });
    expect(src.locate(["list", 1], { key: false })).toMatchObject({ file: "plugin.yaml", line: 4, col: 5 });
  });
});

// ---- a generator of documents: real structure, tricky scalars and keys, every style the reader knows ----

const SCALARS = [
  ..."abc x-y a.b é 😀 — C# a#b http://h:1/p".split(" "),
  ...["", " ", "a  b", " lead", "trail ", "a: b", "a:b", "a:", ":a", "- a", "-a", "-", "? x", "?x", "#x", "a #b"],
  ...["null", "Null", "nULL", "~", "true", "TRUE", "tRue", "yes", "no", "on", "y"],
  ...["0", "1", "-0", "+1", "007", "0o17", "0o8", "0x1F", "0xg", "1.0", "1.", ".5", "1.0.0", "1e3", "1E-3", "1e"],
  ...[".inf", "-.Inf", "+.INF", ".nan", ".NaN", "nan", "12345678901234567890", "0.1e+2"],
  ...["'q'", '"q"', "it's", 'say "hi"', "[x]", "{x}", "a, b", "a,b", "@x", "`x", "%x", "&a", "*a", "!t", "|", ">"],
  ...["back\\slash", "{}", "[]", "a]b", "a}b", "x\u0085y", "\u00a0", "a\u2028b"],
];
const KEYS = ["name", "a", "b_c", "x-y", "a.b", "B", "_k", "null", "true", "__proto__", "1", "a b", "é", "-x", "k:"];
const EDIT_CHARS = [" ", "\n", "-", ":", "#", "'", '"', "[", "]", "{", "}", ",", "\t", "|", ">", "&", "*", "!"];

// A third of the documents get one character inserted somewhere: texts just outside the subset, or broken.
const editArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.constantFrom(...EDIT_CHARS)) },
);

type Style = "plain" | "single" | "double" | "literal" | "folded" | "literal-" | "folded-";
interface Entry {
  k: string;
  v: Doc;
  comment: boolean;
  blank: boolean;
  tail: string;
}
type Doc =
  | { t: "scalar"; v: string; style: Style }
  | { t: "map"; entries: Entry[]; step: number; flow: boolean }
  | { t: "seq"; items: Doc[]; step: number; flow: boolean; sameIndent: boolean };

const scalarArb: fc.Arbitrary<Doc> = fc.record({
  t: fc.constant("scalar" as const),
  v: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom("a", "x y", "1.0.0", "C#", "é", "12", "true", "http://h:1/p") },
    fc.constantFrom(...SCALARS),
    fc.array(fc.constantFrom(...SCALARS), { minLength: 1, maxLength: 4 }).map((a) => a.join("\n")),
  ),
  style: fc.constantFrom<Style>("plain", "plain", "single", "double", "literal", "folded", "literal-", "folded-"),
});
const { doc: docArb } = fc.letrec<{ doc: Doc; node: Doc }>((tie) => ({
  doc: fc.oneof({ weight: 4, arbitrary: mapArb(tie("node")) }, { weight: 1, arbitrary: seqArb(tie("node")) }),
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalarArb, mapArb(tie("node")), seqArb(tie("node"))),
}));

function mapArb(node: fc.Arbitrary<Doc>): fc.Arbitrary<Doc> {
  const entry = fc.record({
    k: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...KEYS.slice(0, 7)) }, fc.constantFrom(...KEYS)),
    v: node,
    comment: fc.boolean(),
    blank: fc.boolean(),
    tail: fc.constantFrom("", "", "", " ", " # c", "  #c", "#c", "\t"),
  });
  return fc.record({
    t: fc.constant("map" as const),
    entries: fc.oneof(
      { weight: 3, arbitrary: fc.uniqueArray(entry, { selector: (e) => e.k, maxLength: 4 }) },
      fc.array(entry, { maxLength: 4 }),
    ),
    step: fc.integer({ min: 1, max: 4 }),
    flow: fc.boolean(),
  });
}

function seqArb(node: fc.Arbitrary<Doc>): fc.Arbitrary<Doc> {
  return fc.record({
    t: fc.constant("seq" as const),
    items: fc.array(node, { maxLength: 4 }),
    step: fc.integer({ min: 1, max: 4 }),
    flow: fc.boolean(),
    sameIndent: fc.boolean(),
  });
}

const pad = (n: number) => " ".repeat(n);

/** One-line form of a node (flow collections, quoted or plain scalars). */
function inline(d: Doc): string {
  if (d.t === "map") return `{${d.entries.map((e) => `${e.k}: ${inline(e.v)}`).join(", ")}}`;
  if (d.t === "seq") return `[${d.items.map(inline).join(", ")}]`;
  const v = d.v.replaceAll("\n", " ");
  if (d.style === "single") return `'${v.replaceAll("'", "''")}'`;
  if (d.style === "double") return `"${v}"`;
  return v;
}

/** The lines of a node that starts a block at `indent`; a scalar is a one-line value there. */
function render(d: Doc, indent: number): string[] {
  if (d.t === "scalar") return [pad(indent) + inline(d)];
  if (d.t === "seq") return d.items.flatMap((item) => valueLines(`${pad(indent)}-`, item, indent, d.step));
  return d.entries.flatMap((e) => [
    ...(e.blank ? [""] : []),
    ...(e.comment ? [`${pad(indent)}# note`] : []),
    ...valueLines(`${pad(indent)}${e.k}:`, e.v, indent, d.step).map((l, i) => (i ? l : l + e.tail)),
  ]);
}

/** `lead` (a key or a dash) followed by a value: inline, a block scalar, or a nested block below it. */
function valueLines(lead: string, v: Doc, indent: number, step: number): string[] {
  if (v.t === "scalar" && v.style !== "plain" && v.style !== "single" && v.style !== "double") {
    const head = `${v.style.startsWith("literal") ? "|" : ">"}${v.style.endsWith("-") ? "-" : ""}`;
    return [`${lead} ${head}`, ...v.v.split("\n").map((row) => (row ? pad(indent + step) + row : ""))];
  }
  if (v.t === "scalar" || v.flow) return [`${lead} ${inline(v)}`];
  if ((v.t === "map" && !v.entries.length) || (v.t === "seq" && !v.items.length)) return [lead];
  const sameIndent = v.t === "seq" && v.sameIndent && lead.trimStart() !== "-";
  return [lead, ...render(v, sameIndent ? indent : indent + step)];
}
