import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { deserialize, serialize } from "node:v8";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseManifestText } from "../../src/manifest/parse.js";
import { MANIFEST_CACHE_FILE, ManifestCache, manifestParserTag } from "../../src/manifest/parse-cache.js";
import { Scratch, writeText } from "../support/home.js";

/** The manifest parse cache on real files (manifest/parse-cache.ts); the CLI side is test/e2e/parse-cache.test.ts. */
const s = new Scratch("hk-parse-cache-");
afterAll(() => s.cleanup());

const WARNS = "name: memo\nversion: '1'\nkind: gadget\ncapabilities: [no.such]\n";

function setup(text = WARNS) {
  const dir = s.dir("case");
  const cacheDir = join(dir, "cache");
  const file = writeText(join(dir, "plugins", "memo", "plugin.yaml"), text);
  return { cacheDir, file };
}

/** A cache as a new process sees it: opened from the file the last one saved. */
async function roundTrip(cacheDir: string, file: string, text: string, tag?: string) {
  const c = ManifestCache.open(cacheDir, tag);
  const parse = await c.parse(text, file, "memo");
  await c.save();
  return parse;
}

describe("ManifestCache", () => {
  it("returns what the parser returns, warnings included, from the parser and then from the file", async () => {
    const t = setup();
    const fresh = parseManifestText(WARNS, t.file, "memo");
    expect(fresh.diagnostics.map((d) => d.code)).toEqual(["W_MANIFEST_COERCED", "W_MANIFEST_COERCED"]);
    expect(await roundTrip(t.cacheDir, t.file, WARNS)).toEqual(fresh);
    expect(existsSync(join(t.cacheDir, MANIFEST_CACHE_FILE))).toBe(true);
    // A new process reads it back from the file: an equal parse, not the same object.
    const served = await ManifestCache.open(t.cacheDir).parse(WARNS, t.file, "memo");
    expect(served).toEqual(fresh);
    expect(served).not.toBe(fresh);
  });

  it("hands out a fresh copy per hit: a caller's change (discovery infers kind) never reaches the next", async () => {
    const t = setup("name: memo\nversion: '1'\n");
    await roundTrip(t.cacheDir, t.file, "name: memo\nversion: '1'\n");
    const c = ManifestCache.open(t.cacheDir);
    const a = await c.parse("name: memo\nversion: '1'\n", t.file, "memo");
    a.manifest!.kind = "exclusive";
    const b = await c.parse("name: memo\nversion: '1'\n", t.file, "memo");
    expect(b.manifest!.kind).toBe("standalone");
  });

  it("an edit is parsed again and replaces the entry; a deleted manifest's entry goes at the next save", async () => {
    const t = setup();
    await roundTrip(t.cacheDir, t.file, WARNS);
    const edited = "name: memo\nversion: '2'\n";
    writeFileSync(t.file, edited);
    const p = await roundTrip(t.cacheDir, t.file, edited);
    expect(p.manifest!.version).toBe("2");
    expect(p.diagnostics).toEqual([]);
    expect(p).toEqual(parseManifestText(edited, t.file, "memo"));
    // The other plugin is new, so this save writes; memo's entry goes with its file.
    const other = writeText(join(t.cacheDir, "..", "plugins", "other", "plugin.yaml"), "name: other\n");
    rmSync(t.file);
    const c = ManifestCache.open(t.cacheDir);
    await c.parse("name: other\n", other, "other");
    await c.save();
    const file = deserialize(readFileSync(join(t.cacheDir, MANIFEST_CACHE_FILE))) as { entries: [string][] };
    expect(file.entries.map((e) => e[0])).toEqual([other]);
  });

  it("a cache written under another parser tag (a version bump) is not used", async () => {
    const t = setup();
    const tag = manifestParserTag();
    expect(tag).toMatch(/^manifest parser \d+, kit \S+, hermes \S+, [0-9a-f]{64}$/);
    await roundTrip(t.cacheDir, t.file, WARNS, tag);
    // A stored version the parser would not give these bytes: used while the tag matches, not after a bump.
    const cacheFile = join(t.cacheDir, MANIFEST_CACHE_FILE);
    const c = deserialize(readFileSync(cacheFile)) as { entries: Array<[string, string, Uint8Array]> };
    const stored = deserialize(c.entries[0]![2]) as { parse: { manifest: { version: string } } };
    stored.parse.manifest.version = "9";
    c.entries[0]![2] = serialize(stored);
    writeFileSync(cacheFile, serialize(c));
    expect((await ManifestCache.open(t.cacheDir, tag).parse(WARNS, t.file, "memo")).manifest!.version).toBe("9");
    const bumped = tag.replace(/^manifest parser (\d+)/, (_, n: string) => `manifest parser ${+n + 1}`);
    expect((await ManifestCache.open(t.cacheDir, bumped).parse(WARNS, t.file, "memo")).manifest!.version).toBe("1");
  });

  it("a corrupt file is an empty cache", async () => {
    const t = setup();
    writeText(join(t.cacheDir, MANIFEST_CACHE_FILE), "\xff\x0d garbage");
    expect(await roundTrip(t.cacheDir, t.file, WARNS)).toEqual(parseManifestText(WARNS, t.file, "memo"));
  });
});
