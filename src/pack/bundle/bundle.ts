import { randomBytes } from "node:crypto";
import { sha256Hex } from "../../core/hash.js";
import { promises as fsp } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { writeFileAtomic } from "../../core/atomic-fs.js";
import { HermesError } from "../../core/errors.js";
import { pidAlive } from "../../core/pid.js";
import { hashTree } from "../../compile/tree-hash.js";
import { parsePackOrThrow } from "../source.js";
import type { Pack, PackEntry } from "../parse.js";
import { exportPack, type ExportOptions, type ExportedPlugin } from "../export.js";
import { buildTree, checkProof, type GitFile } from "./git-objects.js";
import { isDirty, readRevisionTree } from "./git-read.js";
import {
  BUNDLE_FORMAT,
  MANIFEST_FILE,
  manifestProblems,
  PACK_FILE,
  PLUGINS_DIR,
  serializeManifest,
  type BundleManifest,
  type BundlePlugin,
} from "./manifest.js";
import { readTarGz, TarReadError, writeTarGz, type ReadTarEntry, type TarEntry } from "./tar.js";

/**
 * Reproducible bundles (`pack export --bundle`, `pack install <bundle>`): the exported pack plus
 * every plugin's tree at its revision, for installs without network access.
 *
 * Trees come from git objects of the installed checkouts (git-read.ts), never from the working
 * tree, so local edits, copied `*.example` files and build output are not carried, and two
 * exports of the same state are byte-identical (tar.ts). A bundle is trusted only after:
 *
 * 1. the gzip layer is the canonical one and inflates cleanly (every byte is covered by the
 *    header check or the CRC-32), within the size and entry limits;
 * 2. every tar entry is a file, folder or symlink with a relative path inside the bundle's
 *    layout (no absolute paths, `..`, `.git`, duplicates, links leaving the plugin's folder,
 *    or paths through a link);
 * 3. the manifest is valid, and hermes-pack.yaml matches its sha256 and lists exactly the
 *    bundled plugins at the bundled revisions;
 * 4. each plugin's files hash to the git tree id the manifest records, and that tree is proven
 *    to be `<revision>:<subdir>` by the raw commit and path trees (git-objects.ts);
 * 5. each plugin's materialized tree has the recorded integrity (`sha256-tree:`, the hash the
 *    lock uses).
 *
 * All five pass for every plugin before anything is installed.
 */

export const BUNDLE_MAX_BYTES = 1024 * 1024 * 1024;
export const BUNDLE_MAX_ENTRIES = 200_000;

export interface BundleExportResult {
  file: string;
  sha256: string;
  bytes: number;
  plugins: BundlePlugin[];
  warnings: string[];
  yaml: string;
}

/** Write a plugin's files (and empty submodule folders) under `dest`, modes set explicitly. */
export async function materialize(
  dest: string,
  files: readonly GitFile[],
  emptyDirs: readonly string[] = [],
): Promise<void> {
  await fsp.mkdir(dest, { recursive: true });
  for (const d of emptyDirs) await fsp.mkdir(join(dest, ...d.split("/")), { recursive: true });
  for (const f of files) {
    if (f.mode === "160000") {
      await fsp.mkdir(join(dest, ...f.path.split("/")), { recursive: true });
      continue;
    }
    const p = join(dest, ...f.path.split("/"));
    await fsp.mkdir(dirname(p), { recursive: true });
    if (f.mode === "120000") await fsp.symlink(f.data!.toString("utf8"), p);
    else {
      await fsp.writeFile(p, f.data ?? Buffer.alloc(0));
      await fsp.chmod(p, f.mode === "100755" ? 0o755 : 0o644);
    }
  }
}

async function integrityOf(files: readonly GitFile[]): Promise<string> {
  const dir = await fsp.mkdtemp(join(tmpdir(), "hermes-bundle-hash-"));
  try {
    await materialize(join(dir, "p"), files);
    return (await hashTree(join(dir, "p"))).integrity;
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

export async function exportBundle(
  o: ExportOptions & { out: string; env?: NodeJS.ProcessEnv },
): Promise<BundleExportResult> {
  const ex = await exportPack(o);
  const warnings = [...ex.warnings];
  const entries: TarEntry[] = [];
  const plugins: BundlePlugin[] = [];
  for (const p of ex.plugins) {
    const rt = await readRevisionTree(p.dir, p.revision, p.subdir, o.env);
    const built = buildTree(rt.files);
    if (built.root !== rt.tree) {
      throw new HermesError("E_INTERNAL", {
        message: `the tree rebuilt from ${p.dir} at ${p.revision} is ${built.root}, git says ${rt.tree}`,
      });
    }
    if (await isDirty(p.dir, o.env))
      warnings.push(`${p.key}: local changes in ${p.dir} are not bundled — the bundle carries ${p.revision} exactly.`);
    const folder = p.folder;
    let bytes = 0;
    let count = 0;
    const gitlinks: Array<{ path: string; commit: string }> = [];
    for (const f of rt.files) {
      const path = `${PLUGINS_DIR}/${folder}/${f.path}`;
      if (f.mode === "160000") {
        gitlinks.push({ path: f.path, commit: f.sha! });
        entries.push({ path, type: "dir" });
        continue;
      }
      count++;
      bytes += f.data!.length;
      if (f.mode === "120000") entries.push({ path, type: "symlink", linkpath: f.data!.toString("utf8") });
      else entries.push({ path, type: "file", mode: f.mode === "100755" ? 0o755 : 0o644, data: f.data });
    }
    plugins.push({
      name: p.key,
      folder,
      source: p.source,
      repo: p.repo,
      ...(p.subdir ? { subdir: p.subdir } : {}),
      revision: p.revision,
      tree: rt.tree,
      integrity: await integrityOf(rt.files),
      files: count,
      bytes,
      ...(gitlinks.length ? { gitlinks } : {}),
      proof: { commit: rt.commit.toString("base64"), trees: rt.pathTrees.map((t) => t.toString("base64")) },
    });
  }
  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    pack: { file: PACK_FILE, sha256: sha256Hex(ex.yaml) },
    plugins,
  };
  entries.push({ path: MANIFEST_FILE, type: "file", data: Buffer.from(serializeManifest(manifest), "utf8") });
  entries.push({ path: PACK_FILE, type: "file", data: Buffer.from(ex.yaml, "utf8") });
  const gz = writeTarGz(entries);
  await writeFileAtomic(o.out, gz);
  return { file: o.out, sha256: sha256Hex(gz), bytes: gz.length, plugins, warnings, yaml: ex.yaml };
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface BundledPlugin {
  meta: BundlePlugin;
  /** The pack entry this tree installs. */
  entry: PackEntry;
  files: GitFile[];
  emptyDirs: string[];
}

export interface VerifiedBundle {
  file: string;
  sha256: string;
  manifest: BundleManifest;
  packText: string;
  pack: Pack;
  plugins: BundledPlugin[];
}

function corrupt(file: string, why: string): HermesError {
  return new HermesError("E_BUNDLE_CORRUPT", {
    message: `bundle ${file} cannot be read: ${why}; nothing was installed`,
    file,
  });
}

function unsafe(file: string, entry: string, why: string): HermesError {
  return new HermesError("E_BUNDLE_UNSAFE_ENTRY", {
    message: `bundle ${file}: entry ${JSON.stringify(entry)} ${why}; nothing was installed`,
    file,
  });
}

const TYPE_OF: Record<string, "file" | "dir" | "symlink"> = {
  File: "file",
  OldFile: "file",
  Directory: "dir",
  SymbolicLink: "symlink",
};

/** Reject anything that is not a plain relative path of the bundle layout. */
function checkPath(file: string, raw: string): string {
  const p = raw.replace(/\/+$/, "");
  if (!p) throw unsafe(file, raw, "has an empty path");
  if (/[\u0000-\u001f\u007f\\]/.test(p)) throw unsafe(file, raw, "has a control character or a backslash in its path");
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) throw unsafe(file, raw, "has an absolute path");
  const segs = p.split("/");
  if (segs.some((s) => s === "" || s === "." || s === ".."))
    throw unsafe(file, raw, "has an empty, '.' or '..' segment (path traversal)");
  if (segs.some((s) => s.toLowerCase() === ".git")) throw unsafe(file, raw, "is inside a .git folder");
  return p;
}

/** Read, unpack and check a bundle (steps 1–4 of the module comment); integrity needs `verifyIntegrity`. */
export async function readBundle(file: string): Promise<VerifiedBundle> {
  const st = await fsp.stat(file).catch(() => undefined);
  if (!st || !st.isFile())
    throw new HermesError("E_PACK_NOT_FOUND", { message: `bundle file not found: ${file}`, file });
  if (st.size > BUNDLE_MAX_BYTES)
    throw new HermesError("E_BUNDLE_TOO_LARGE", {
      message: `bundle ${file} is ${st.size} bytes, over the limit`,
      file,
    });
  const buf = await fsp.readFile(file);
  let raw: ReadTarEntry[];
  try {
    raw = await readTarGz(buf, { maxBytes: BUNDLE_MAX_BYTES, maxEntries: BUNDLE_MAX_ENTRIES });
  } catch (e) {
    if (e instanceof TarReadError && e.kind === "too-large")
      throw new HermesError("E_BUNDLE_TOO_LARGE", { message: `bundle ${file}: ${e.message}`, file });
    throw corrupt(file, (e as Error).message);
  }
  const byPath = checkedEntries(file, raw);
  const { manifest, packText, pack } = readManifestAndPack(file, byPath);
  const used = new Set<number>();
  const plugins: BundledPlugin[] = [];
  for (const meta of manifest.plugins) {
    const entry = pack.plugins.find(
      (e, i) =>
        !used.has(i) &&
        e.ref === meta.revision &&
        e.repo === meta.repo &&
        (e.subdir ?? undefined) === (meta.subdir ?? undefined),
    );
    if (!entry) {
      throw new HermesError("E_BUNDLE_MANIFEST_INVALID", {
        message:
          `bundle ${file}: plugin ${meta.name} (${meta.repo}${meta.subdir ? `/${meta.subdir}` : ""} ` +
          `@ ${meta.revision}) is not an entry of ${PACK_FILE}`,
        file,
      });
    }
    used.add(entry.index);
    plugins.push(verifyPluginTree(file, byPath, meta, entry));
  }
  if (used.size !== pack.plugins.length) {
    const missing = pack.plugins.filter((e) => !used.has(e.index)).map((e) => e.label);
    throw new HermesError("E_BUNDLE_MANIFEST_INVALID", {
      message: `bundle ${file}: pack entries ${missing.join(", ")} have no plugin tree in the bundle`,
      file,
    });
  }
  return { file, sha256: sha256Hex(buf), manifest, packText, pack, plugins };
}

interface BundleEntry {
  type: "file" | "dir" | "symlink";
  mode: number;
  data: Buffer;
  linkpath?: string;
}

/** Step 2: every entry is a safe path, a symlink stays in its plugin folder, nothing goes through a link or a file. */
function checkedEntries(file: string, raw: ReadTarEntry[]): Map<string, BundleEntry> {
  const byPath = new Map<string, BundleEntry>();
  const links = new Set<string>();
  for (const e of raw) {
    const type = TYPE_OF[e.type];
    if (!type) throw unsafe(file, e.path, `is a ${e.type} entry (only files, folders and symlinks are allowed)`);
    const p = checkPath(file, e.path);
    if (byPath.has(p)) throw unsafe(file, e.path, "appears twice");
    if (type === "symlink") {
      const target = e.linkpath ?? "";
      const segs = p.split("/");
      if (segs[0] !== PLUGINS_DIR || segs.length < 3)
        throw unsafe(file, e.path, "is a symlink outside a plugin folder");
      if (!target || target.startsWith("/") || /^[A-Za-z]:/.test(target) || target.includes("\\"))
        throw unsafe(file, e.path, `is a symlink to ${JSON.stringify(target)}, an absolute or empty target`);
      const root = segs.slice(0, 2).join("/");
      const resolved = posix.normalize(posix.join(posix.dirname(p), target));
      if (resolved !== root && !resolved.startsWith(`${root}/`))
        throw unsafe(file, e.path, `is a symlink to ${JSON.stringify(target)}, which leaves its plugin folder`);
      links.add(p);
    }
    byPath.set(p, { type, mode: e.mode, data: e.data, linkpath: e.linkpath });
  }
  for (const p of byPath.keys()) {
    const segs = p.split("/");
    for (let i = 1; i < segs.length; i++) {
      const anc = segs.slice(0, i).join("/");
      if (links.has(anc)) throw unsafe(file, p, `goes through the symlink ${JSON.stringify(anc)}`);
      const a = byPath.get(anc);
      if (a && a.type !== "dir") throw unsafe(file, p, `is below ${JSON.stringify(anc)}, which is not a folder`);
    }
  }
  return byPath;
}

/** Step 3: a valid manifest, the pack it hashes, and no file outside the plugins it lists. */
function readManifestAndPack(
  file: string,
  byPath: Map<string, BundleEntry>,
): { manifest: BundleManifest; packText: string; pack: Pack } {
  const mEntry = byPath.get(MANIFEST_FILE);
  if (!mEntry || mEntry.type !== "file")
    throw new HermesError("E_BUNDLE_MANIFEST_INVALID", {
      message: `bundle ${file} has no ${MANIFEST_FILE}; it is not a hermes-kit bundle`,
      file,
    });
  let manifestRaw: unknown;
  try {
    manifestRaw = JSON.parse(mEntry.data.toString("utf8"));
  } catch (e) {
    throw new HermesError("E_BUNDLE_MANIFEST_INVALID", {
      message: `bundle ${file}: ${MANIFEST_FILE} is not valid JSON (${(e as Error).message})`,
      file,
    });
  }
  const problems = manifestProblems(manifestRaw);
  if (problems.length)
    throw new HermesError("E_BUNDLE_MANIFEST_INVALID", {
      message: `bundle ${file}: ${MANIFEST_FILE} is not valid: ${problems.join("; ")}`,
      file,
    });
  const manifest = manifestRaw as BundleManifest;
  const pEntry = byPath.get(PACK_FILE);
  if (!pEntry || pEntry.type !== "file")
    throw new HermesError("E_BUNDLE_MANIFEST_INVALID", { message: `bundle ${file} has no ${PACK_FILE}`, file });
  if (sha256Hex(pEntry.data) !== manifest.pack.sha256) {
    throw new HermesError("E_BUNDLE_INTEGRITY", {
      message: `bundle ${file}: ${PACK_FILE} does not match the sha256 its manifest records; nothing was installed`,
      file,
    });
  }
  const packText = pEntry.data.toString("utf8");
  const pack = parsePackOrThrow(packText, `${file}!${PACK_FILE}`);
  const folders = new Set(manifest.plugins.map((p) => p.folder));
  for (const p of byPath.keys()) {
    const segs = p.split("/");
    if (p === MANIFEST_FILE || p === PACK_FILE || p === PLUGINS_DIR) continue;
    if (segs[0] !== PLUGINS_DIR || !folders.has(segs[1]!))
      throw unsafe(file, p, "is not part of any plugin listed in the manifest");
  }
  return { manifest, packText, pack };
}

/** Step 4: one plugin's files → git tree → revision, checked against the manifest and its proof. */
function verifyPluginTree(
  file: string,
  byPath: Map<string, BundleEntry>,
  meta: BundlePlugin,
  entry: PackEntry,
): BundledPlugin {
  const prefix = `${PLUGINS_DIR}/${meta.folder}/`;
  const gitlinkPaths = new Set((meta.gitlinks ?? []).map((g) => g.path));
  const files: GitFile[] = [];
  const emptyDirs: string[] = [];
  for (const [p, e] of byPath) {
    if (!p.startsWith(prefix)) continue;
    const rel = p.slice(prefix.length);
    if (e.type === "dir") {
      if (gitlinkPaths.has(rel)) emptyDirs.push(rel);
      continue;
    }
    if (gitlinkPaths.has(rel)) throw unsafe(file, p, "is a file where the manifest records a submodule");
    files.push(
      e.type === "symlink"
        ? { path: rel, mode: "120000", data: Buffer.from(e.linkpath ?? "", "utf8") }
        : { path: rel, mode: e.mode & 0o111 ? "100755" : "100644", data: e.data },
    );
  }
  if (files.length !== meta.files) {
    throw new HermesError("E_BUNDLE_INTEGRITY", {
      message:
        `bundle ${file}: plugin ${meta.name} has ${files.length} file(s), its manifest records ${meta.files}; ` +
        "nothing was installed",
      file,
    });
  }
  const withLinks: GitFile[] = [
    ...files,
    ...(meta.gitlinks ?? []).map((g): GitFile => ({ path: g.path, mode: "160000", sha: g.commit })),
  ];
  const built = buildTree(withLinks);
  if (built.root !== meta.tree) {
    throw new HermesError("E_BUNDLE_REVISION", {
      message:
        `bundle ${file}: the files of plugin ${meta.name} form git tree ${built.root}, not ${meta.tree} ` +
        `(${meta.revision}${meta.subdir ? `:${meta.subdir}` : ""}); nothing was installed`,
      file,
    });
  }
  const why = checkProof({
    revision: meta.revision,
    tree: meta.tree,
    subdir: meta.subdir,
    commit: Buffer.from(meta.proof.commit, "base64"),
    pathTrees: meta.proof.trees.map((t) => Buffer.from(t, "base64")),
  });
  if (why)
    throw new HermesError("E_BUNDLE_REVISION", {
      message:
        `bundle ${file}: plugin ${meta.name} is not proven ` + `to be ${meta.revision}: ${why}; nothing was installed`,
      file,
    });
  return { meta, entry, files: withLinks, emptyDirs };
}

/** Materialize one verified plugin under `dest` and check its integrity (step 5). */
export async function materializeVerified(file: string, p: BundledPlugin, dest: string): Promise<void> {
  await materialize(dest, p.files, p.emptyDirs);
  const got = (await hashTree(dest)).integrity;
  if (got !== p.meta.integrity) {
    throw new HermesError("E_BUNDLE_INTEGRITY", {
      message:
        `bundle ${file}: plugin ${p.meta.name} hashes to ${got}, its manifest records ${p.meta.integrity}; ` +
        "nothing was installed",
      file,
    });
  }
}

/** A private scratch folder next to the plugins (same filesystem, so placing is a rename). */
export async function scratchDir(base: string): Promise<string> {
  await fsp.mkdir(base, { recursive: true });
  const d = join(base, `.bundle-${process.pid}-${randomBytes(6).toString("hex")}`);
  await fsp.mkdir(d);
  return d;
}

/** Scratch folders of processes that no longer run (a bundle install killed mid-way). */
export async function sweepScratch(base: string): Promise<void> {
  const names = await fsp.readdir(base).catch(() => [] as string[]);
  for (const n of names) {
    const m = /^\.bundle-(\d+)-[0-9a-f]+$/.exec(n);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && !pidAlive(pid))
      await fsp.rm(join(base, n), { recursive: true, force: true }).catch(() => undefined);
  }
}

export type { ExportedPlugin };
