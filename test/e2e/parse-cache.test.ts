import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

/**
 * The parse caches (issue 19): compile keeps each manifest's parse and config.yaml's in the home's
 * cache/ folder, keyed by the bytes' sha256 and the parser's version, and the plugins commands read
 * them. Spawned as a user runs `hermes`; the cache files are read and rewritten with node:v8 as the
 * kit writes them, to show which runs were answered from them.
 */
const scratch = new Scratch("hermes-e2e-parse-cache-");
afterAll(() => scratch.cleanup());

interface CacheFile {
  format: number;
  tag: string;
  entries: Array<[string, string, Uint8Array]>;
}
interface StoredParse {
  dirName: string;
  parse: { manifest?: { description: string }; diagnostics: Array<{ code: string; message: string }> };
  quietFields: string[];
}

function setup(manifest = "name: memo\nversion: '1'\ndescription: first\n") {
  const home = scratch.dir("home");
  const bundled = scratch.dir("bundled");
  const plugin = writePlugin(join(home, "plugins", "memo"), manifest);
  writeText(join(home, "config.yaml"), "# mine\nplugins:\n  enabled: [memo]\n");
  const cli = (...args: string[]) => runCli(["--home", home, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } });
  const manifests = join(home, "cache", "manifests.v8");
  return { home, bundled, plugin, cli, manifests, config: join(home, "config.yaml") };
}

const readCache = (file: string) => deserialize(readFileSync(file)) as CacheFile;

/** Rewrite every stored parse (and optionally the file's tag) as another kit version might have left them. */
function rewriteCache(file: string, edit: (p: StoredParse) => void, tag?: (t: string) => string): void {
  const c = readCache(file);
  for (const e of c.entries) {
    const p = deserialize(e[2]) as StoredParse;
    edit(p);
    e[2] = serialize(p);
  }
  if (tag) c.tag = tag(c.tag);
  writeFileSync(file, serialize(c));
}

const description = async (t: ReturnType<typeof setup>) => {
  const r = await t.cli("plugins", "list", "--json");
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as Array<{ key: string; description: string }>).find((p) => p.key === "memo")
    ?.description;
};

describe("the manifest parse cache", () => {
  it("compile writes it; plugins list answers from it until the manifest's bytes change", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    const c = readCache(t.manifests);
    expect(c.tag).toMatch(/^manifest parser \d+, kit /);
    expect(c.entries.map(([path]) => path)).toEqual([join(t.plugin, "plugin.yaml")]);
    // An entry the parser could not have made shows that list reads the cache.
    rewriteCache(t.manifests, (p) => {
      p.parse.manifest!.description = "from the cache";
    });
    expect(await description(t)).toBe("from the cache");
    // Edited bytes have another sha256: parsed again, the stale entry is not used.
    writeText(join(t.plugin, "plugin.yaml"), "name: memo\nversion: '1'\ndescription: second\n");
    expect(await description(t)).toBe("second");
  });

  it("a cache written by another parser version is ignored", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    const tag = readCache(t.manifests).tag;
    const bump = (x: string) => x.replace(/^manifest parser (\d+)/, (_, n: string) => `manifest parser ${+n + 1}`);
    rewriteCache(
      t.manifests,
      (p) => {
        p.parse.manifest!.description = "from another parser";
      },
      bump,
    );
    expect(readCache(t.manifests).tag).not.toBe(tag);
    expect(await description(t)).toBe("first");
    // A compile that runs (config changed) replaces it with this version's parses.
    writeText(t.config, "# mine, edited\nplugins:\n  enabled: [memo]\n");
    expect((await t.cli("compile")).code).toBe(0);
    const c = readCache(t.manifests);
    expect(c.tag).toBe(tag);
    expect((deserialize(c.entries[0]![2]) as StoredParse).parse.manifest!.description).toBe("first");
  });

  it("keeps the parser's warnings: a run answered from the cache prints the same ones", async () => {
    // An unknown kind is coerced with a warning; an unknown field of a version-1 manifest is a debug line.
    const t = setup("name: memo\nversion: '1'\nkind: gadget\nextra_field: 1\n");
    const first = await t.cli("compile");
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain("W_MANIFEST_COERCED");
    const stored = deserialize(readCache(t.manifests).entries[0]![2]) as StoredParse;
    expect(stored.parse.diagnostics.map((d) => d.code)).toEqual(["W_MANIFEST_COERCED"]);
    expect(stored.quietFields).toEqual(["extra_field"]);

    const show = async () => {
      const r = await runCli(["--home", t.home, "plugins", "show", "memo", "--json"], {
        env: { HERMES_BUNDLED_PLUGINS: t.bundled, HERMES_LOG_LEVEL: "debug" },
      });
      expect(r.code, r.stderr).toBe(0);
      const warnings = (JSON.parse(r.stdout) as { diagnostics: Array<{ code: string; message: string }> }).diagnostics;
      return { warnings, debug: r.stderr.includes("unknown manifest field(s) ignored: extra_field") };
    };
    const cached = await show();
    expect(cached.warnings.map((d) => d.code)).toEqual(["W_MANIFEST_COERCED"]);
    expect(cached.debug).toBe(true);
    // Without the cache the parser runs and says the same.
    writeFileSync(t.manifests, "");
    expect(await show()).toEqual(cached);

    // A compile that plans (config changed) from a cached parse prints the warning too.
    writeText(t.config, "# edited\nplugins:\n  enabled: [memo]\n");
    expect((await t.cli("compile")).code).toBe(0);
    expect(statSync(t.manifests).size).toBeGreaterThan(0);
    writeText(t.config, "# edited again\nplugins:\n  enabled: [memo]\n");
    const again = await t.cli("compile");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("W_MANIFEST_COERCED");
    expect(again.stderr).toContain('unknown kind "gadget"');
  });

  it("a corrupt or foreign cache file is ignored, and the next compile writes a good one", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    for (const bytes of [Buffer.from("not a cache"), serialize({ format: 1, tag: 7, entries: "x" }), Buffer.alloc(0)]) {
      writeFileSync(t.manifests, bytes);
      writeFileSync(join(t.home, "cache", "config.v8"), bytes);
      const r = await t.cli("plugins", "list", "--json");
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(STACK_RE);
      expect((JSON.parse(r.stdout) as Array<{ key: string; status: string }>).map((p) => [p.key, p.status])).toEqual([
        ["memo", "enabled"],
      ]);
    }
    writeText(t.config, "# edited\nplugins:\n  enabled: [memo]\n");
    expect((await t.cli("compile")).code).toBe(0);
    expect(readCache(t.manifests).entries).toHaveLength(1);
  });
});

describe("the config parse cache", () => {
  it("answers plugins list for the bytes compile saw; an edit by hand is parsed again", async () => {
    const t = setup();
    writePlugin(join(t.home, "plugins", "other"), "name: other\nversion: '1'\n");
    expect((await t.cli("compile")).code).toBe(0);
    const status = async () => {
      const r = await t.cli("plugins", "list", "--json");
      expect(r.code, r.stderr).toBe(0);
      return Object.fromEntries(
        (JSON.parse(r.stdout) as Array<{ key: string; status: string }>).map((p) => [p.key, p.status]),
      );
    };
    expect(await status()).toEqual({ memo: "enabled", other: "not enabled" });
    writeText(t.config, "# mine\nplugins:\n  enabled: [other]\n");
    expect(await status()).toEqual({ memo: "not enabled", other: "enabled" });
    // A config that does not parse is still refused, cached or not.
    writeText(t.config, "plugins: [\n");
    const broken = await t.cli("plugins", "list");
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain("E_YAML_PARSE");
  });
});

describe("the no-op compile", () => {
  it("notices a same-size rewrite with the mtime put back, a new hooks/ folder and a new bundled plugin", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    expect((await t.cli("compile", "--check")).code).toBe(0);

    const entry = join(t.plugin, "index.js");
    const st = statSync(entry);
    const text = readFileSync(entry, "utf8");
    writeFileSync(entry, text.replace("register", "registeR"));
    utimesSync(entry, st.atime, st.mtime);
    expect(statSync(entry).size).toBe(st.size);
    expect((await t.cli("compile", "--check")).code).toBe(1);
    expect((await t.cli("compile")).code).toBe(0);
    expect((await t.cli("compile", "--check")).code).toBe(0);

    writeText(join(t.home, "hooks", "audit", "HOOK.yaml"), "name: audit\nevents: [agent:start]\n");
    writeText(join(t.home, "hooks", "audit", "handler.js"), "export default async function handle() {}\n");
    expect((await t.cli("compile", "--check")).code).toBe(1);
    expect((await t.cli("compile")).code).toBe(0);
    expect((await t.cli("compile", "--check")).code).toBe(0);

    writePlugin(join(t.bundled, "shipped"), "name: shipped\nversion: '1'\n");
    expect((await t.cli("compile", "--check")).code).toBe(1);
  });
});
