/**
 * `scanPluginDir`: the install-time security scan of one plugin folder.
 *
 *   walk (what ships) → classify each file (code / doc / config, runtime or test) →
 *   match the catalog line by line → plugin adjustments → operator waivers → verdict.
 *
 * Pure with respect to the plugin: nothing in the folder can change how it is judged except its
 * content. Waivers come only from the caller (the operator's config), never from the folder.
 */
import { basename, posix } from "node:path";
import type { LoadedConfig } from "../../config/config-file.js";
import { MANIFEST_FILES, parseManifestText, type PluginManifest } from "../../manifest/parse.js";
import { classify, nonRuntimeRoot, resolveSpecifier, type FileClass } from "./files.js";
import { matchFile } from "./match.js";
import { patternById } from "./patterns.js";
import { SCANNER_VERSION, type Finding, type ScanReport, type ScanWaiver } from "./types.js";
import { compareFindings, countsOf, decidingOf, summaryOf, verdictOf } from "./verdict.js";
import { applyWaivers, parseScanWaivers } from "./waivers.js";
import { DEFAULT_LIMITS, resolveScanRoot, walkPlugin, type ScanLimits, type TextFile } from "./walk.js";

export interface ScanOptions {
  /** Plugin key and revision (40-hex or `local`): both are needed for waivers to apply. */
  pluginKey?: string;
  revision?: string;
  /** Operator waivers (from config.yaml `plugins.scan_waivers`; see settings.ts). Wins over `config`. */
  waivers?: readonly ScanWaiver[];
  /**
   * The home's config (the parsed config.yaml mapping, or a LoadedConfig): when `waivers` is not
   * given, they are read from its `plugins.scan_waivers` (malformed entries are ignored).
   */
  config?: unknown;
  /** Where the waivers were read from, recorded on waived findings. */
  waiverSource?: string;
  /** Display only: the install identifier, or the name at update. */
  source?: string;
  /** Environment variables the plugin declares; default: requires_env + optional_env of its plugin.yaml. */
  declaredEnv?: Iterable<string>;
  limits?: Partial<ScanLimits>;
}

function isLoadedConfig(c: unknown): c is LoadedConfig {
  return !!c && typeof c === "object" && "value" in c && "file" in c && "source" in c;
}

function manifestOf(files: readonly TextFile[], root: string): PluginManifest | undefined {
  const f = MANIFEST_FILES.map((name) => files.find((x) => x.rel === name)).find((x) => x !== undefined);
  if (!f) return undefined;
  return parseManifestText(f.text, `${root}/${f.rel}`, basename(root)).manifest;
}

const JS_IMPORT_RE =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+|\bnew\s+URL\s*\(\s*)(["'`])(\.{1,2}\/[^"'`\n]+)\1/gm;
const PY_REL_IMPORT_RE = /^\s*from\s+(\.+)([\w.]*)\s+import\b/gm;
const PY_ABS_TEST_IMPORT_RE = /^\s*(?:from|import)\s+((?:tests?|__tests__)(?:\.[\w.]+)?)\b/gm;

interface ImportRef {
  target: string;
  line: number;
  col: number;
  text: string;
}

function lineCol(text: string, index: number): { line: number; col: number } {
  let line = 1;
  let last = -1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) {
    line++;
    last = i;
  }
  return { line, col: index - last };
}

/** Plugin-relative paths that a code file imports (relative specifiers only). */
function importsOf(file: TextFile, cls: FileClass): ImportRef[] {
  const refs: ImportRef[] = [];
  const push = (target: string | undefined, index: number, text: string) => {
    if (target === undefined) return;
    refs.push({ target, ...lineCol(file.text, index), text });
  };
  if (cls.lang === "js") {
    for (const m of file.text.matchAll(JS_IMPORT_RE))
      push(resolveSpecifier(file.rel, m[2]!), m.index! + m[0].indexOf(m[2]!), m[2]!);
  } else if (cls.lang === "py") {
    for (const m of file.text.matchAll(PY_REL_IMPORT_RE)) {
      let dir = posix.dirname(file.rel);
      for (let i = 1; i < m[1]!.length; i++) dir = posix.dirname(dir);
      const mod = m[2]!.replace(/\./g, "/");
      const target = posix.normalize(dir === "." ? mod || "." : `${dir}/${mod}`);
      push(target.startsWith("..") ? undefined : target, m.index!, m[0].trim());
    }
    for (const m of file.text.matchAll(PY_ABS_TEST_IMPORT_RE)) push(m[1]!.replace(/\./g, "/"), m.index!, m[0].trim());
  }
  return refs;
}

/**
 * Test trees and test files that runtime code imports (or that `main:` points into) are runtime
 * code after all. Returns the promoted roots and one `test_tree_imported` finding per root.
 */
function promotedRoots(
  files: readonly TextFile[],
  classes: ReadonlyMap<string, FileClass>,
  main: string | undefined,
): { roots: Set<string>; findings: Finding[] } {
  const roots = new Set<string>();
  const findings: Finding[] = [];
  const spec = patternById("test_tree_imported")!;
  const rootOf = (target: string): string | undefined => {
    const direct = nonRuntimeRoot(target);
    if (direct) return direct.root;
    const hit = files.find(
      (f) =>
        (f.rel === target || f.rel.startsWith(`${target}.`) || f.rel.startsWith(`${target}/`)) &&
        classes.get(f.rel)?.nonRuntime,
    );
    return hit ? classes.get(hit.rel)!.nonRuntime!.root : undefined;
  };
  const promote = (root: string, where: Omit<Finding, "id" | "severity" | "category" | "description">) => {
    if (roots.has(root)) return false;
    roots.add(root);
    findings.push({
      id: spec.id,
      severity: spec.severity,
      category: spec.category,
      description: `${spec.description}: ${root}`,
      ...where,
    });
    return true;
  };
  if (main) {
    const r = rootOf(posix.normalize(main));
    if (r) promote(r, { file: "plugin.yaml", line: 0, col: 0, match: `main: ${main}` });
  }
  const runtime = (f: TextFile) => {
    const c = classes.get(f.rel)!;
    return c.kind === "code" && (!c.nonRuntime || roots.has(c.nonRuntime.root));
  };
  // Fixpoint: a promoted test file may import further test files.
  const done = new Set<string>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const f of files) {
      if (done.has(f.rel) || !runtime(f)) continue;
      done.add(f.rel);
      for (const ref of importsOf(f, classes.get(f.rel)!)) {
        const r = rootOf(ref.target);
        const own = classes.get(f.rel)!.nonRuntime?.root;
        if (r && r !== own && promote(r, { file: f.rel, line: ref.line, col: ref.col, match: ref.text }))
          changed = true;
      }
    }
  }
  return { roots, findings };
}

export async function scanPluginDir(dir: string, opts: ScanOptions = {}): Promise<ScanReport> {
  const root = await resolveScanRoot(dir);
  const limits: ScanLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const walk = await walkPlugin(root, limits);

  const manifest = manifestOf(walk.files, root);
  const declaredEnv = new Set<string>(
    opts.declaredEnv ?? [...(manifest?.requires_env ?? []), ...(manifest?.optional_env ?? [])].map((e) => e.name),
  );

  const classes = new Map<string, FileClass>();
  for (const f of walk.files) classes.set(f.rel, classify(f.rel, f.text.slice(0, 200).split(/\r?\n/, 1)[0]));
  const promoted = promotedRoots(walk.files, classes, manifest?.main);

  const findings: Finding[] = [...walk.findings, ...promoted.findings];
  for (const f of walk.files) {
    let cls = classes.get(f.rel)!;
    if (cls.nonRuntime && promoted.roots.has(cls.nonRuntime.root))
      cls = { kind: cls.kind, lang: cls.lang, markdown: cls.markdown };
    findings.push(...matchFile(f.text, f.rel, cls, { declaredEnv }));
  }

  let waivers = opts.waivers;
  let waiverSource = opts.waiverSource;
  if (!waivers && opts.config !== undefined) {
    const loaded = isLoadedConfig(opts.config) ? opts.config : undefined;
    waivers = parseScanWaivers(loaded ? loaded.value : opts.config).waivers;
    waiverSource ??= loaded?.file;
  }
  const waived = applyWaivers(findings, waivers ?? [], {
    pluginKey: opts.pluginKey,
    revision: opts.revision,
    source: waiverSource,
  });
  const all = waived.findings.sort(compareFindings);
  const verdict = verdictOf(all);
  const name = basename(root);
  const report: ScanReport = {
    scanner: "hermes-kit plugin-guard",
    version: SCANNER_VERSION,
    dir: root,
    name,
    verdict,
    findings: all,
    deciding: decidingOf(all, verdict),
    scannedFiles: walk.files.map((f) => f.rel).sort(),
    skipped: walk.skipped,
    waiversApplied: waived.applied,
    waiversUnused: waived.unused,
    counts: countsOf(all),
    summary: summaryOf(name, verdict, all),
  };
  if (opts.source) report.source = opts.source;
  if (opts.pluginKey) report.pluginKey = opts.pluginKey;
  if (opts.revision) report.revision = opts.revision;
  return report;
}
