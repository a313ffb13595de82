import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/config-file.js";
import { ConfigCache } from "../../src/config/config-cache.js";
import { Scratch, writeText } from "../support/home.js";

/** The config parse cache on real files (config/config-cache.ts): what a compile leaves for the next reader. */
const s = new Scratch("hk-config-cache-");
afterAll(() => s.cleanup());

const TEXT = "plugins:\n  enabled: [memo]\n  hook_callback_timeout: soon\n";

describe("ConfigCache.keep with the compile's own parse", () => {
  it("stores that parse when the file still holds its bytes: the next process reads it without parsing", async () => {
    const dir = s.dir("same");
    const file = writeText(join(dir, "config.yaml"), TEXT);
    const parsed = parseConfigText(TEXT, file);
    expect(parsed.diagnostics.length).toBeGreaterThan(0); // the schema's complaint rides along
    // A marker no parse of TEXT yields: reading it back proves the stored parse was used as given.
    await ConfigCache.open(join(dir, "cache")).keep(file, { text: TEXT, value: { marker: 1 }, diagnostics: [] });
    const next = await ConfigCache.open(join(dir, "cache")).read(file);
    expect(next.value).toEqual({ marker: 1 });
    expect(await ConfigCache.open(join(dir, "cache")).readValue(file)).toEqual({ marker: 1 });
  });

  it("parses the file when it changed after the compile's parse (another writer): nothing stale is kept", async () => {
    const dir = s.dir("changed");
    const file = writeText(join(dir, "config.yaml"), "plugins:\n  enabled: [other]\n");
    await ConfigCache.open(join(dir, "cache")).keep(file, { text: TEXT, value: { marker: 1 }, diagnostics: [] });
    const next = await ConfigCache.open(join(dir, "cache")).read(file);
    expect(next.value).toEqual({ plugins: { enabled: ["other"] } });
    expect(next.diagnostics).toEqual([]);
  });

  it("without a parse, keep parses the file; readValue of unseen bytes parses without storing", async () => {
    const dir = s.dir("plain");
    const file = writeText(join(dir, "config.yaml"), TEXT);
    await ConfigCache.open(join(dir, "cache")).keep(file);
    const next = await ConfigCache.open(join(dir, "cache")).read(file);
    expect(next.value).toEqual(parseConfigText(TEXT, file).value);
    expect(next.diagnostics).toEqual(parseConfigText(TEXT, file).diagnostics);
    writeText(file, "model: m1\n");
    expect(await ConfigCache.open(join(dir, "cache")).readValue(file)).toEqual({ model: "m1" });
  });
});
