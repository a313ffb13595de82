/**
 * What a path in a plugin folder is, for the scanner: whether it ships and runs, and which
 * patterns make sense in it.
 *
 * - kind `code` (js, py, sh, …): executable; every pattern applies outside comments.
 * - kind `doc` (md, txt, rst, html): prose; code examples in it are not executable, so only the
 *   prose patterns (prompt injection, agent-config persistence) and secrets apply.
 * - kind `config` (yaml, json, toml, …) and `other` text: every pattern applies (the plugin
 *   exemptions for code never apply here).
 * - a file under `test/`, `tests/`, `__tests__/`, repository metadata (`.github/`, …) or named like a
 *   test (`x.test.js`, `test_x.py`) is `nonRuntime`: it ships but the runtime never loads it, so code
 *   and prose patterns are skipped there; secrets and invisible characters are still reported (low).
 *   Runtime code that imports from such a folder turns it back into runtime code (see scan.ts).
 */
import { basename, extname, posix } from "node:path";

export type FileKind = "code" | "doc" | "config" | "other";
export type Lang = "js" | "py" | "sh" | "rb" | "pl" | "php" | "win" | "doc" | "config" | "other";

export interface FileClass {
  kind: FileKind;
  lang: Lang;
  /** Markdown: fenced blocks and inline code spans are tracked. */
  markdown: boolean;
  /** Set when the runtime never loads this file: the folder (or file) that makes it so, and why. */
  nonRuntime?: { root: string; why: string };
}

/** Folders that never ship as part of what runs: skipped entirely (listed once in `skipped`). */
export const SKIPPED_DIRS: Readonly<Record<string, { reason: "vcs" | "cache"; detail: string }>> = {
  // Only git's: .hg/.svn are scanned, since hermes-kit never creates them and what a plugin ships can be loaded.
  ".git": { reason: "vcs", detail: "version control metadata" },
  __pycache__: { reason: "cache", detail: "Python bytecode cache" },
  ".mypy_cache": { reason: "cache", detail: "tool cache" },
  ".pytest_cache": { reason: "cache", detail: "tool cache" },
  ".ruff_cache": { reason: "cache", detail: "tool cache" },
  ".tox": { reason: "cache", detail: "tool cache" },
  ".venv": { reason: "cache", detail: "Python virtualenv (not loaded by this runtime)" },
  venv: { reason: "cache", detail: "Python virtualenv (not loaded by this runtime)" },
  ".nyc_output": { reason: "cache", detail: "coverage cache" },
};

/** Test trees: shipped but never loaded by the runtime. */
export const TEST_DIRS: ReadonlySet<string> = new Set(["test", "tests", "__tests__"]);

/** Repository metadata folders: CI and editor configuration, never loaded by the runtime. */
export const REPO_META_DIRS: ReadonlySet<string> = new Set([
  ".github",
  ".gitlab",
  ".circleci",
  ".husky",
  ".vscode",
  ".idea",
  ".devcontainer",
]);

const TEST_FILE_RE = /(?:\.(?:test|spec)\.[cm]?[jt]sx?$|^test_[^/]*\.py$|_test\.py$|^conftest\.py$)/;

/** Binaries that can run (or be loaded as native code): reported as `binary_file`. */
export const EXECUTABLE_BINARY_EXTS: ReadonlySet<string> = new Set([
  ".exe",
  ".dll",
  ".so",
  ".dylib",
  ".bin",
  ".dat",
  ".com",
  ".msi",
  ".dmg",
  ".app",
  ".deb",
  ".rpm",
  ".node",
  ".wasm",
  ".pyc",
  ".pyo",
  ".pyd",
  ".jar",
  ".class",
  ".a",
  ".o",
  ".elf",
  ".apk",
  ".scr",
  ".sys",
]);

/** Known non-text formats: not read, listed as skipped (no finding). */
const DATA_BINARY_EXTS: ReadonlySet<string> = new Set([
  ".png",
  ".jpg",
  ".jpeg",
  ".gif",
  ".webp",
  ".ico",
  ".bmp",
  ".tif",
  ".tiff",
  ".avif",
  ".heic",
  ".woff",
  ".woff2",
  ".ttf",
  ".otf",
  ".eot",
  ".mp3",
  ".mp4",
  ".m4a",
  ".wav",
  ".ogg",
  ".oga",
  ".flac",
  ".webm",
  ".mov",
  ".avi",
  ".mkv",
  ".zip",
  ".tar",
  ".gz",
  ".tgz",
  ".bz2",
  ".xz",
  ".zst",
  ".7z",
  ".rar",
  ".whl",
  ".egg",
  ".pdf",
  ".doc",
  ".docx",
  ".xls",
  ".xlsx",
  ".ppt",
  ".pptx",
  ".odt",
  ".sqlite",
  ".sqlite3",
  ".db",
  ".parquet",
  ".npy",
  ".npz",
  ".pt",
  ".onnx",
  ".safetensors",
  ".gguf",
]);

/** Generated text that does not run (source maps repeat the sources they map). */
const GENERATED_EXTS: ReadonlySet<string> = new Set([".map"]);

const CODE_EXTS: Readonly<Record<string, Lang>> = {
  ".js": "js",
  ".mjs": "js",
  ".cjs": "js",
  ".jsx": "js",
  ".ts": "js",
  ".mts": "js",
  ".cts": "js",
  ".tsx": "js",
  ".py": "py",
  ".pyw": "py",
  ".pyi": "py",
  ".sh": "sh",
  ".bash": "sh",
  ".zsh": "sh",
  ".ksh": "sh",
  ".fish": "sh",
  ".command": "sh",
  ".rb": "rb",
  ".pl": "pl",
  ".pm": "pl",
  ".php": "php",
  ".ps1": "win",
  ".psm1": "win",
  ".bat": "win",
  ".cmd": "win",
  ".vbs": "win",
};

const DOC_EXTS: ReadonlySet<string> = new Set([".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc", ".html", ".htm"]);
const MARKDOWN_EXTS: ReadonlySet<string> = new Set([".md", ".markdown", ".mdx"]);

const CONFIG_EXTS: ReadonlySet<string> = new Set([
  ".yaml",
  ".yml",
  ".json",
  ".jsonc",
  ".json5",
  ".toml",
  ".cfg",
  ".ini",
  ".conf",
  ".env",
  ".properties",
  ".xml",
  ".plist",
  ".lock",
]);

const DOC_NAMES = new RegExp(
  String.raw`^(?:readme|license|licence|copying|changelog|changes|history|authors|contributors|notice|` +
    String.raw`security|code_of_conduct)(?:\.[a-z]+)?$`,
  "i",
);
const SHELL_NAMES = /^(?:makefile|gnumakefile|dockerfile|containerfile|justfile|procfile|vagrantfile)$/i;

export type BinaryClass = "executable" | "data" | "generated" | undefined;

/** How a path is treated before its bytes are read. */
export function binaryClass(rel: string): BinaryClass {
  const ext = extname(rel).toLowerCase();
  if (EXECUTABLE_BINARY_EXTS.has(ext)) return "executable";
  if (DATA_BINARY_EXTS.has(ext)) return "data";
  if (GENERATED_EXTS.has(ext)) return "generated";
  return undefined;
}

function shebangLang(firstLine: string): Lang | undefined {
  if (!firstLine.startsWith("#!")) return undefined;
  if (/\b(?:node|deno|bun|tsx|ts-node)\b/.test(firstLine)) return "js";
  if (/\bpython[0-9.]*\b/.test(firstLine)) return "py";
  if (/\b(?:ruby)\b/.test(firstLine)) return "rb";
  if (/\bperl\b/.test(firstLine)) return "pl";
  if (/\bphp\b/.test(firstLine)) return "php";
  return "sh";
}

/** The folder (or file) that makes a path non-runtime, if any. `rel` is `/`-separated. */
export function nonRuntimeRoot(rel: string): { root: string; why: string } | undefined {
  const parts = rel.split("/");
  for (let i = 0; i < parts.length - 1; i++) {
    const p = parts[i]!;
    if (TEST_DIRS.has(p)) return { root: `${parts.slice(0, i + 1).join("/")}/`, why: "test tree" };
    if (REPO_META_DIRS.has(p)) return { root: `${parts.slice(0, i + 1).join("/")}/`, why: "repository metadata" };
  }
  const name = parts[parts.length - 1]!;
  if (TEST_FILE_RE.test(name)) return { root: rel, why: "test file" };
  return undefined;
}

/** Classify a text file by its path (and first line, for extension-less scripts). */
export function classify(rel: string, firstLine = ""): FileClass {
  const name = basename(rel);
  const ext = extname(name).toLowerCase();
  const nonRuntime = nonRuntimeRoot(rel);
  const base = (kind: FileKind, lang: Lang, markdown = false): FileClass =>
    nonRuntime ? { kind, lang, markdown, nonRuntime } : { kind, lang, markdown };

  const codeLang = CODE_EXTS[ext];
  if (codeLang) return base("code", codeLang);
  if (/^requirements[\w.-]*\.txt$/i.test(name) || /^constraints[\w.-]*\.txt$/i.test(name))
    return base("config", "config");
  if (DOC_EXTS.has(ext)) return base("doc", "doc", MARKDOWN_EXTS.has(ext));
  if (
    CONFIG_EXTS.has(ext) ||
    /^\.env(?:\.|$)/.test(name) ||
    /^\.(?:npmrc|yarnrc|editorconfig|gitattributes|gitignore|nvmrc)$/.test(name)
  ) {
    return base("config", "config");
  }
  const sb = shebangLang(firstLine);
  if (sb) return base("code", sb);
  if (SHELL_NAMES.test(name)) return base("code", "sh");
  if (ext === "" && DOC_NAMES.test(name)) return base("doc", "doc");
  if (DOC_NAMES.test(name)) return base("doc", "doc");
  return base("other", "other");
}

/** Resolve an import specifier (relative to the importing file) to a plugin-relative path. */
export function resolveSpecifier(fromRel: string, spec: string): string | undefined {
  if (!spec.startsWith("./") && !spec.startsWith("../")) return undefined;
  const joined = posix.normalize(posix.join(posix.dirname(fromRel), spec));
  if (joined === ".." || joined.startsWith("../")) return undefined;
  return joined;
}
