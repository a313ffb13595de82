import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support/cli.js";

// Every folder the use cases may combine.
const BELOW_APP = [
  "core",
  "contracts",
  "config",
  "manifest",
  "consent",
  "discovery",
  "compile",
  "runtime",
  "install",
  "agent",
  "pack",
  "gateway",
];

/**
 * The layers of src/ (docs/architecture.md draws them): each folder may import only the folders listed
 * for it. `plugin.ts` is the public entry for plugin authors and re-exports types of the run layer.
 */
const LAYERS: Readonly<Record<string, readonly string[]>> = {
  core: [],
  contracts: ["core"],
  config: ["core", "contracts"],
  manifest: ["core", "contracts"],
  consent: ["core", "contracts", "config"],
  discovery: ["core", "contracts", "config", "manifest", "consent"],
  compile: ["core", "contracts", "config", "manifest", "consent", "discovery"],
  runtime: ["core", "contracts", "config", "manifest", "consent", "discovery"],
  install: ["core", "contracts", "config", "manifest", "consent", "discovery", "compile"],
  agent: ["core", "contracts", "config", "manifest", "consent", "discovery", "runtime"],
  pack: ["core", "contracts", "config", "manifest", "consent", "discovery", "compile", "install"],
  gateway: ["core", "contracts", "config", "manifest", "consent", "discovery", "runtime", "agent"],
  app: BELOW_APP,
  cli: [...BELOW_APP, "app"],
  "plugin.ts": ["contracts", "manifest", "runtime"],
};

interface ImportEdge {
  file: string;
  line: number;
  spec: string;
  from: string;
  to: string;
}

const IMPORT_RE = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listTs(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Top-level folder (or top-level file) of a path under `src`. */
function unitOf(src: string, file: string): string {
  return relative(src, file).split(sep)[0] ?? "";
}

/** Every relative import of every file under `src` that crosses from one folder into another. */
function importEdges(src: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of listTs(src)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? "";
      const from = unitOf(src, file);
      const to = unitOf(src, resolve(dirname(file), spec));
      if (from === to) continue;
      const line = text.slice(0, m.index).split("\n").length;
      edges.push({ file: relative(join(src, ".."), file), line, spec, from, to });
    }
  }
  return edges;
}

/** Imports the layer table forbids, one message per import naming the file, line and target. */
function layerViolations(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter((e) => !(LAYERS[e.from] ?? []).includes(e.to))
    .map((e) => `${e.file}:${e.line} imports '${e.spec}': ${e.from} may not import ${e.to}`);
}

/** A cycle between folders, as the list of folders around it, or undefined. */
function folderCycle(edges: readonly ImportEdge[]): string[] | undefined {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === "open") return [...stack.slice(stack.indexOf(n)), n];
    if (state.get(n) === "done") return undefined;
    state.set(n, "open");
    stack.push(n);
    for (const m of next.get(n) ?? []) {
      const found = visit(m);
      if (found) return found;
    }
    stack.pop();
    state.set(n, "done");
    return undefined;
  };
  for (const n of next.keys()) {
    const found = visit(n);
    if (found) return found;
  }
  return undefined;
}

const SRC = join(ROOT, "src");

describe("architecture: the import graph of src/", () => {
  const edges = importEdges(SRC);

  it("names a layer for every folder of src/", () => {
    const units = new Set(readdirSync(SRC));
    expect([...units].filter((u) => !(u in LAYERS))).toEqual([]);
  });

  it("has no import a layer forbids", () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it("has no cycle between folders", () => {
    expect(folderCycle(edges)).toBeUndefined();
  });

  it("reports a forbidden import with its file and line, and a cycle it closes", () => {
    const bad: ImportEdge = {
      file: "src/compile/plan.ts",
      line: 3,
      spec: "../runtime/hooks.js",
      from: "compile",
      to: "runtime",
    };
    expect(layerViolations([...edges, bad])).toEqual([
      "src/compile/plan.ts:3 imports '../runtime/hooks.js': compile may not import runtime",
    ]);
    const back: ImportEdge = { file: "src/core/x.ts", line: 1, spec: "../config/y.js", from: "core", to: "config" };
    expect(folderCycle([...edges, back])).toEqual(expect.arrayContaining(["core", "config"]));
  });

  it("folds hook results only through the typed dispatchers: the raw result list stays inside the bus", () => {
    const raw = listTs(SRC)
      .filter((f) => !f.endsWith(join("runtime", "hooks.ts")))
      .filter((f) => /\.invoke\(/.test(readFileSync(f, "utf8")))
      .map((f) => relative(ROOT, f));
    expect(raw).toEqual([]);
  });

  it("finds a forbidden import written into a real file of a scratch copy of src/", async () => {
    const { cpSync, mkdtempSync, appendFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const scratch = mkdtempSync(join(tmpdir(), "hermes-arch-"));
    try {
      cpSync(SRC, join(scratch, "src"), { recursive: true });
      appendFileSync(join(scratch, "src/discovery/scan.ts"), '\nimport { HookBus } from "../runtime/hooks.js";\n');
      const found = layerViolations(importEdges(join(scratch, "src")));
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(
        /^src\/discovery\/scan\.ts:\d+ imports '\.\.\/runtime\/hooks\.js': discovery may not import runtime$/,
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
