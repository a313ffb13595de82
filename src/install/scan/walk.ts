/**
 * Walk a plugin folder and decide, file by file, what is read: the files that ship.
 *
 * - `.git`, Python caches and virtualenvs are skipped (listed once each): they never run.
 * - `node_modules` inside a plugin ships and runs, so it is scanned like any other code, within its
 *   own file and byte budget; past the budget the rest is listed as skipped and the report gets a
 *   `scan_truncated` finding (high): the verdict must not claim what was not read.
 * - Symlinks are never followed out of the tree (`symlink_escape`, critical) and never followed
 *   inside it either (the target is scanned at its own path), except into a skipped folder, where
 *   the content is scanned under the link's name so nothing can hide behind `.git/`.
 * - Executable binaries give `binary_file`; images, fonts, archives and source maps are listed as
 *   skipped; a file over the size cap gives `oversized_file` (high when it is code that runs).
 */
import { promises as fsp, type Dirent } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { isInside } from "../../core/contain.js";
import { HermesError } from "../../core/errors.js";
import { binaryClass, classify, SKIPPED_DIRS } from "./files.js";
import { patternById } from "./patterns.js";
import type { Finding, Severity, Skipped } from "./types.js";

export interface ScanLimits {
  /** Files larger than this are not read (`oversized_file`). */
  maxFileBytes: number;
  /** More files than this outside node_modules gives `too_many_files` (informational). */
  maxFiles: number;
  /** More bytes than this outside node_modules gives `oversized_bundle` (informational). */
  maxTotalBytes: number;
  /** node_modules budget: files and bytes read before the rest is skipped (`scan_truncated`). */
  nodeModulesMaxFiles: number;
  nodeModulesMaxBytes: number;
  /** Overall budget of bytes read; past it everything else is skipped (`scan_truncated`). */
  maxScanBytes: number;
}

export const DEFAULT_LIMITS: Readonly<ScanLimits> = {
  maxFileBytes: 4 * 1024 * 1024,
  maxFiles: 400,
  maxTotalBytes: 10 * 1024 * 1024,
  nodeModulesMaxFiles: 5000,
  nodeModulesMaxBytes: 64 * 1024 * 1024,
  maxScanBytes: 128 * 1024 * 1024,
};

export interface TextFile {
  rel: string;
  text: string;
  size: number;
  nodeModules: boolean;
}

export interface WalkResult {
  root: string;
  files: TextFile[];
  findings: Finding[];
  skipped: Skipped[];
}

/** Files read at once. */
const READ_CONCURRENCY = 16;

/** At most this many per-file "cap" entries are listed; the rest are counted in one entry. */
const MAX_CAP_ENTRIES = 200;

const toPosix = (p: string) => p.split(sep).join("/");

function structural(id: string, file: string, match: string, severity?: Severity, why?: string): Finding {
  const spec = patternById(id)!;
  const f: Finding = {
    id,
    severity: spec.severity,
    category: spec.category,
    file,
    line: 0,
    col: 0,
    match,
    description: spec.description,
  };
  if (severity && severity !== spec.severity) f.adjusted = { from: spec.severity, why: why ?? "" };
  if (severity) f.severity = severity;
  return f;
}

function underSkippedDir(rel: string): boolean {
  return rel.split("/").some((seg) => seg in SKIPPED_DIRS);
}

function hasNul(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

/** Resolve and check the folder to scan; every failure is E_SCAN_DIR_UNREADABLE. */
export async function resolveScanRoot(dir: string): Promise<string> {
  let root: string;
  try {
    root = await fsp.realpath(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new HermesError("E_SCAN_DIR_UNREADABLE", {
      message: code === "ENOENT" ? `${dir} does not exist` : `${dir} cannot be read (${code ?? (e as Error).message})`,
      file: dir,
      cause: e,
    });
  }
  const st = await fsp.stat(root).catch((e: unknown) => {
    throw new HermesError("E_SCAN_DIR_UNREADABLE", {
      message: `${dir} cannot be read (${(e as NodeJS.ErrnoException).code ?? ""})`,
      file: dir,
      cause: e,
    });
  });
  if (!st.isDirectory())
    throw new HermesError("E_SCAN_DIR_UNREADABLE", { message: `${dir} is not a folder`, file: dir });
  try {
    await fsp.readdir(root);
  } catch (e) {
    throw new HermesError("E_SCAN_DIR_UNREADABLE", {
      message: `${dir} cannot be listed (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      file: dir,
      cause: e,
    });
  }
  return root;
}

/** A file chosen for reading, in walk order (read later, a few at a time). */
interface PendingRead {
  abs: string;
  rel: string;
  nodeModules: boolean;
}

/** Everything one walk accumulates; shared by the step functions below. */
interface WalkState {
  root: string;
  limits: ScanLimits;
  findings: Finding[];
  skipped: Skipped[];
  visited: Set<string>;
  pending: PendingRead[];
  count: number;
  bytes: number;
  nmCount: number;
  nmBytes: number;
  readBytes: number;
  capEntries: number;
  capOverflow: number;
  truncated: boolean;
}

function skipCap(s: WalkState, rel: string, detail: string): void {
  s.truncated = true;
  if (s.capEntries < MAX_CAP_ENTRIES) {
    s.skipped.push({ path: rel, reason: "cap", detail });
    s.capEntries++;
  } else s.capOverflow++;
}

/** Binary, generated and oversized files are listed, never read; true when the file was handled here. */
function listWithoutReading(s: WalkState, rel: string, size: number): boolean {
  const bin = binaryClass(rel);
  if (bin === "executable") {
    const cls = classify(rel);
    s.findings.push(
      cls.nonRuntime
        ? structural(
            "binary_file",
            rel,
            rel,
            "low",
            `${cls.nonRuntime.why} (${cls.nonRuntime.root}): shipped but never loaded by the runtime`,
          )
        : structural("binary_file", rel, rel),
    );
    s.skipped.push({ path: rel, reason: "binary", detail: "executable or native module" });
    return true;
  }
  if (bin === "data") {
    s.skipped.push({ path: rel, reason: "binary" });
    return true;
  }
  if (bin === "generated") {
    s.skipped.push({ path: rel, reason: "generated", detail: "source map (does not run)" });
    return true;
  }
  if (size > s.limits.maxFileBytes) {
    const cls = classify(rel);
    const runs = cls.kind === "code" && !cls.nonRuntime;
    s.findings.push(
      runs
        ? structural("oversized_file", rel, `${size} bytes`, "high", "code that runs could not be scanned")
        : structural("oversized_file", rel, `${size} bytes`),
    );
    s.skipped.push({ path: rel, reason: "too-large", detail: `${size} bytes > ${s.limits.maxFileBytes}` });
    return true;
  }
  return false;
}

/** Decide what happens to one regular file (synchronous, so budgets are deterministic). */
function considerFile(s: WalkState, abs: string, rel: string, size: number): void {
  const nodeModules = rel.split("/").includes("node_modules");
  if (nodeModules) {
    s.nmCount++;
    s.nmBytes += size;
  } else {
    s.count++;
    s.bytes += size;
  }
  if (listWithoutReading(s, rel, size)) return;
  if (nodeModules && (s.nmCount > s.limits.nodeModulesMaxFiles || s.nmBytes > s.limits.nodeModulesMaxBytes)) {
    return skipCap(s, rel, "node_modules budget reached");
  }
  if (s.readBytes + size > s.limits.maxScanBytes) return skipCap(s, rel, "scan budget reached");
  s.readBytes += size;
  s.pending.push({ abs, rel, nodeModules });
}

async function loadFile(s: WalkState, item: PendingRead): Promise<TextFile | undefined> {
  let buf: Buffer;
  try {
    buf = await fsp.readFile(item.abs);
  } catch (e) {
    s.findings.push(structural("unreadable_path", item.rel, (e as NodeJS.ErrnoException).code ?? "unreadable"));
    s.skipped.push({ path: item.rel, reason: "unreadable", detail: (e as NodeJS.ErrnoException).code });
    return undefined;
  }
  // Known text kinds are always read (a NUL byte must not hide a script); unknown ones are sniffed.
  if (classify(item.rel).kind === "other" && hasNul(buf)) {
    s.skipped.push({ path: item.rel, reason: "binary", detail: "contains NUL bytes" });
    return undefined;
  }
  return { rel: item.rel, text: buf.toString("utf8"), size: buf.length, nodeModules: item.nodeModules };
}

async function walkDir(s: WalkState, absDir: string, relDir: string): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await fsp.readdir(absDir, { withFileTypes: true });
  } catch (e) {
    s.findings.push(structural("unreadable_path", `${relDir}/`, (e as NodeJS.ErrnoException).code ?? "unreadable"));
    s.skipped.push({ path: `${relDir}/`, reason: "unreadable", detail: (e as NodeJS.ErrnoException).code });
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const stats = new Map(
    await Promise.all(
      entries
        .filter((e) => e.isFile())
        .map(async (e) => [e.name, await fsp.lstat(join(absDir, e.name)).catch(() => undefined)] as const),
    ),
  );
  for (const ent of entries) {
    const abs = join(absDir, ent.name);
    const rel = relDir ? `${relDir}/${ent.name}` : ent.name;
    if (ent.isSymbolicLink()) {
      await onLink(s, abs, rel);
    } else if (ent.isDirectory()) {
      const skip = SKIPPED_DIRS[ent.name];
      if (skip) {
        s.skipped.push({ path: `${rel}/`, reason: skip.reason, detail: skip.detail });
        continue;
      }
      s.visited.add(abs);
      await walkDir(s, abs, rel);
    } else if (ent.isFile()) {
      const st = stats.get(ent.name);
      if (!st) {
        s.findings.push(structural("unreadable_path", rel, "vanished or unreadable"));
        s.skipped.push({ path: rel, reason: "unreadable" });
        continue;
      }
      considerFile(s, abs, rel, st.size);
    } else {
      s.skipped.push({ path: rel, reason: "special", detail: "not a regular file" });
    }
  }
}

async function onLink(s: WalkState, abs: string, rel: string): Promise<void> {
  const target = await fsp.readlink(abs).catch(() => "?");
  let real: string;
  try {
    real = await fsp.realpath(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    s.findings.push(structural("broken_symlink", rel, `${rel} -> ${target}${code === "ELOOP" ? " (circular)" : ""}`));
    s.skipped.push({ path: rel, reason: "broken-symlink", detail: target });
    return;
  }
  if (!isInside(s.root, real)) {
    s.findings.push(structural("symlink_escape", rel, `${rel} -> ${target}`));
    s.skipped.push({
      path: rel,
      reason: "symlink-outside",
      detail: isAbsolute(target) ? target : `${target} (${real})`,
    });
    return;
  }
  const relTarget = toPosix(relative(s.root, real)) || ".";
  if (!underSkippedDir(relTarget)) {
    s.skipped.push({ path: rel, reason: "symlink", detail: `-> ${relTarget} (scanned at its own path)` });
    return;
  }
  // A link into a skipped folder: scan what it points at, under the link's name.
  const st = await fsp.stat(real).catch(() => undefined);
  if (st?.isDirectory()) {
    if (s.visited.has(real))
      return void s.skipped.push({ path: rel, reason: "symlink", detail: `-> ${relTarget} (already scanned)` });
    s.visited.add(real);
    await walkDir(s, real, rel);
  } else if (st?.isFile()) considerFile(s, real, rel, st.size);
  else s.skipped.push({ path: rel, reason: "special", detail: `-> ${relTarget}` });
}

/** Read the pending files a few at a time, keeping walk order. */
async function readPending(s: WalkState): Promise<TextFile[]> {
  const loaded: Array<TextFile | undefined> = new Array(s.pending.length);
  let next = 0;
  const worker = async () => {
    while (next < s.pending.length) {
      const i = next++;
      loaded[i] = await loadFile(s, s.pending[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, s.pending.length) }, worker));
  const files: TextFile[] = [];
  for (const f of loaded) if (f) files.push(f);
  return files;
}

/** Whole-plugin findings from the totals, added once the walk is done. */
function addTotalsFindings(s: WalkState): void {
  const { limits } = s;
  if (s.count > limits.maxFiles)
    s.findings.push(
      structural("too_many_files", ".", `${s.count} files (limit ${limits.maxFiles}, node_modules not counted)`),
    );
  if (s.bytes > limits.maxTotalBytes)
    s.findings.push(
      structural("oversized_bundle", ".", `${s.bytes} bytes (limit ${limits.maxTotalBytes}, node_modules not counted)`),
    );
  if (s.capOverflow > 0)
    s.skipped.push({ path: "…", reason: "cap", detail: `${s.capOverflow} more file(s) not scanned` });
  if (s.truncated)
    s.findings.push(
      structural("scan_truncated", ".", `${s.capEntries + s.capOverflow} file(s) not scanned (budget reached)`),
    );
}

export async function walkPlugin(root: string, limits: ScanLimits = DEFAULT_LIMITS): Promise<WalkResult> {
  const s: WalkState = {
    root,
    limits,
    findings: [],
    skipped: [],
    visited: new Set<string>([root]),
    pending: [],
    count: 0,
    bytes: 0,
    nmCount: 0,
    nmBytes: 0,
    readBytes: 0,
    capEntries: 0,
    capOverflow: 0,
    truncated: false,
  };
  await walkDir(s, root, "");
  const files = await readPending(s);
  addTotalsFindings(s);
  s.skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { root, files, findings: s.findings, skipped: s.skipped };
}
