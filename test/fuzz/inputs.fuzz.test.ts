/**
 * Property tests over every input format hermes-kit reads: seeded mutations of a valid document
 * (hostile keys such as `toString`/`valueOf`, wrong types, deep nesting) are fed to the real
 * parsers, and every outcome must be a result whose problems carry catalog codes, or a HermesError
 * with a catalog code, never a raw Error/TypeError/RangeError. Fixed seed: a failure reproduces.
 */
import fc from "fast-check";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ERROR_CATALOG, HermesError, type Diagnostic } from "../../src/core/errors.js";
import { parseConfigText } from "../../src/config/config-file.js";
import { parseManifestText } from "../../src/manifest/parse.js";
import { candidateFromFolder } from "../../src/discovery/scan.js";
import { parsePackText } from "../../src/pack/parse.js";
import { parsePackOrThrow } from "../../src/pack/source.js";
import { parseDeploySpec } from "../../src/compile/deploy-spec.js";
import { parseIndexText } from "../../src/install/index/load.js";
import { parseLockText, serializeLock, type Lock } from "../../src/contracts/lock.js";
import { parseMetadata } from "../../src/install/metadata.js";
import { manifestProblems } from "../../src/pack/bundle/manifest.js";
import { cleanupTemp, tempDir } from "../support/home.js";

const SEED = 1313;
const RUNS = 250;
const dir = tempDir("hermes-fuzz-");
afterAll(cleanupTemp);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Keys that break code treating a parsed object as a plain record. */
const HOSTILE_KEYS = [
  "toString",
  "valueOf",
  "constructor",
  "hasOwnProperty",
  "__proto__",
  "toJSON",
  "then",
  "length",
  "",
];
const hostileObject: fc.Arbitrary<Json> = fc.constantFrom<Json>(
  { toString: 1 },
  { valueOf: 1 },
  { toString: 1, valueOf: 1 },
  { toString: "x", valueOf: "y", constructor: 1 },
  { hasOwnProperty: 1 },
  { toJSON: 1 },
  { length: -1 },
  // biome-ignore lint/suspicious/noThenProperty: a hostile input on purpose (a thenable-looking object)
  { then: 1 },
  // Two alike in one list: schema checks compare list items through valueOf()/toString().
  [{ valueOf: 1 }, { valueOf: 1 }],
  [{ toString: 1 }, { toString: 1 }],
  [{ valueOf: 1 }, { toString: 1 }],
);
const leaf: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2),
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    "",
    " ",
    "..",
    "../x",
    "/etc/passwd",
    "a/b",
    "-",
    "~",
    "ÿ",
    "\u0000",
    "0x1",
    "1e999",
    "true",
    "null",
    "{}",
    "[]",
  ),
);
const value: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    hostileObject,
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...HOSTILE_KEYS)), tie("v"), { maxKeys: 3 }),
  ),
})).v;

/** Every path to an object or array inside `doc`, the root included. */
function containers(doc: Json, at: Array<string | number> = []): Array<Array<string | number>> {
  if (doc === null || typeof doc !== "object") return [];
  const out = [at];
  if (Array.isArray(doc)) doc.forEach((v, i) => out.push(...containers(v, [...at, i])));
  else for (const [k, v] of Object.entries(doc)) out.push(...containers(v, [...at, k]));
  return out;
}

function getAt(doc: Json, path: Array<string | number>): Json {
  let cur: Json = doc;
  for (const p of path) cur = (cur as Record<string, Json>)[p as string] as Json;
  return cur;
}

type Mutation = { target: number; key: number; hostileKey: string; v: Json; op: "set" | "add" | "delete" };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  target: fc.nat(),
  key: fc.nat(),
  hostileKey: fc.constantFrom(...HOSTILE_KEYS),
  v: value,
  op: fc.constantFrom<Mutation["op"]>("set", "set", "add", "delete"),
});

/** Apply mutations to a deep copy of a valid document: replace, add (under a hostile key) or delete members. */
function mutate(seed: Json, ms: readonly Mutation[]): Json {
  let doc = structuredClone(seed);
  for (const m0 of ms) {
    // Constants are shared instances: inserting a copy keeps the document a tree.
    const m = { ...m0, v: structuredClone(m0.v) };
    const paths = containers(doc);
    if (!paths.length) return m.v;
    const path = paths[m.target % paths.length]!;
    const c = getAt(doc, path) as Record<string, Json> | Json[];
    const keys = Object.keys(c);
    if (m.op === "add" && !Array.isArray(c))
      Object.defineProperty(c, m.hostileKey, { value: m.v, enumerable: true, writable: true, configurable: true });
    else if (!keys.length) {
      if (!path.length) doc = m.v;
      else (getAt(doc, path.slice(0, -1)) as Record<string, Json>)[path[path.length - 1] as string] = m.v;
    } else {
      const k = keys[m.key % keys.length]!;
      if (m.op === "delete") delete (c as Record<string, Json>)[k];
      else (c as Record<string, Json>)[k] = m.v;
    }
  }
  return doc;
}

/** Every member of `seed` replaced in turn by each hostile value (deterministic, complements the random runs). */
function hostileVariants(seed: Json): Json[] {
  const out: Json[] = [];
  const hostile: Json[] = [
    { toString: 1 },
    { valueOf: 1 },
    [{ valueOf: 1 }, { toString: 1 }],
    [{ valueOf: 1 }, { valueOf: 1 }],
  ];
  for (const path of containers(seed)) {
    const c = getAt(seed, path) as Record<string, Json>;
    for (const k of Object.keys(c)) {
      for (const h of hostile) {
        const doc = structuredClone(seed);
        (getAt(doc, path) as Record<string, Json>)[k] = structuredClone(h);
        out.push(doc);
      }
    }
  }
  return out;
}

/** A document that is `seed` mutated 1–4 times, or (rarely) a value that is not the format at all. */
const docFrom = (seed: Json) =>
  fc.oneof(
    { arbitrary: fc.array(mutation, { minLength: 1, maxLength: 4 }).map((ms) => mutate(seed, ms)), weight: 9 },
    { arbitrary: value, weight: 1 },
  );

const isCatalogCode = (c: unknown) => typeof c === "string" && Object.prototype.hasOwnProperty.call(ERROR_CATALOG, c);

/** The property: a result (its diagnostics all with catalog codes) or a HermesError with one; nothing else. */
function outcome(run: () => unknown): void {
  let r: unknown;
  try {
    r = run();
  } catch (e) {
    if (e instanceof HermesError && isCatalogCode(e.code)) return;
    throw new Error(`not a catalog error: ${(e as Error)?.name}: ${(e as Error)?.message}`);
  }
  const ds = (r as { diagnostics?: Diagnostic[] } | undefined)?.diagnostics ?? [];
  for (const d of ds) expect(isCatalogCode(d.code), `${d.code}: ${d.message}`).toBe(true);
}

async function outcomeAsync(run: () => Promise<unknown>): Promise<void> {
  let r: unknown;
  try {
    r = await run();
  } catch (e) {
    if (e instanceof HermesError && isCatalogCode(e.code)) return;
    throw new Error(`not a catalog error: ${(e as Error)?.name}: ${(e as Error)?.message}`);
  }
  for (const d of (r as { diagnostics?: Diagnostic[] } | undefined)?.diagnostics ?? [])
    expect(isCatalogCode(d.code), `${d.code}: ${d.message}`).toBe(true);
}

/** YAML text of a document; the YAML library itself never sees a hostile prototype (plain data only). */
const yamlOf = (doc: Json) => stringify(doc, { aliasDuplicateObjects: false });

/** `[[[…]]]` / `{a: {a: …}}` nested `depth` deep, as YAML flow or JSON text. */
const nested = (depth: number, kind: "list" | "map") =>
  kind === "list" ? `${"[".repeat(depth)}1${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const prop = { seed: SEED, numRuns: RUNS };

const CONFIG: Json = {
  model: { provider: "openai-compatible", default: "m", base_url: "http://127.0.0.1:1/v1", timeout: 10 },
  agent: { max_turns: 3 },
  plugins: {
    enabled: ["a"],
    disabled: ["b"],
    order: ["a"],
    entries: {
      a: {
        granted_capabilities: ["tools.override"],
        capabilities_consent: { hash: "x", granted_via: "flag" },
        required: true,
      },
    },
  },
  hooks: { callback_timeout: 5 },
};
const MANIFEST: Json = {
  name: "p",
  version: "1.0.0",
  description: "d",
  kind: "standalone",
  main: "index.js",
  capabilities: ["tools.override"],
  hooks: ["pre_tool_call"],
  provides_hooks: ["on_session_start"],
  provides_middleware: ["tool_request"],
  requires_env: ["X", { name: "Y", description: "y" }],
  requires_plugins: ["q", { id: "r", version_range: ">=1" }],
  config_schema: { k: { type: "string", default: "v" } },
  requires_hermes: ">=0.1",
  manifest_version: 1,
};
const PACK: Json = {
  name: "pk",
  description: "d",
  plugins: [{ source: "https://example.com/a/b.git", ref: "0".repeat(40), grant: ["tools.override"], enable: true }],
  config: { model: { default: "m" } },
};
const SPEC: Json = {
  listPolicy: "union",
  plugins: [{ path: "/nix/store/x-p", key: "p", grants: ["tools.override"], required: true }],
  settings: { model: { default: "m" }, plugins: { enabled: ["p"] } },
};
const INDEX: Json = {
  version: 1,
  generated_at: "2026-01-01T00:00:00Z",
  plugins: [
    {
      name: "p",
      description: "d",
      repo: "o/r",
      tags: ["t"],
      capabilities: ["tools.override"],
      subdir: "x",
      author: "a",
      stars: 1,
    },
  ],
};
const METADATA: Json = { p: { source: "https://example.com/a/b.git", revision: "a".repeat(40), pinned: true } };
const BUNDLE_MANIFEST: Json = {
  format: "hermes-kit-bundle",
  version: 1,
  pack: { file: "hermes-pack.yaml", sha256: "0".repeat(64) },
  plugins: [
    {
      name: "p",
      key: "p",
      source: "https://example.com/a/b.git",
      revision: "a".repeat(40),
      tree: "b".repeat(40),
      path: "plugins/p",
    },
  ],
};
const LOCK: Lock = {
  schema: "hermes.lock.v1",
  inputs_hash: `sha256:${"0".repeat(64)}`,
  hook_catalog: "1",
  settings: {
    hook_callback_timeout: 30,
    load_timeout_seconds: 10,
    approval_transport: null,
    approval_transport_fallback: "deny",
    memory_provider: null,
    context_engine: null,
  },
  load_order: ["p"],
  chains: { hooks: { pre_tool_call: ["p"] }, middleware: {} },
  deployment: {
    kind: null,
    spec: null,
    list_policy: "union",
    owned_leaves: [],
    owned_items: {},
    links: [],
    plugins: {},
  },
  plugins: [
    {
      key: "p",
      name: "p",
      version: "1",
      kind: "standalone",
      source: "user",
      origin: "local",
      path: "/h/plugins/p",
      target: "/h/plugins/p",
      entry: "index.js",
      integrity: `sha256-tree:${"0".repeat(64)}`,
      manifest_sha256: "0".repeat(64),
      state: "enabled",
      action: "load",
      reason: "enabled",
      load_position: 1,
      required: false,
      capabilities: { declared: [], granted: [], consent_hash: "x", consent: null, not_carried: [] },
      hooks: ["pre_tool_call"],
      middleware: [],
      git: null,
      managed: false,
    },
  ],
};

describe("fuzz: every input format ends in a catalog code", () => {
  it("config.yaml", () => {
    fc.assert(
      fc.property(docFrom(CONFIG), (doc) => outcome(() => parseConfigText(yamlOf(doc), "config.yaml"))),
      prop,
    );
    for (const doc of hostileVariants(CONFIG)) outcome(() => parseConfigText(yamlOf(doc), "config.yaml"));
    for (const kind of ["list", "map"] as const)
      outcome(() => parseConfigText(`plugins: ${nested(5000, kind)}\n`, "config.yaml"));
  });

  it("plugin.yaml (parsed, and discovered from a folder)", async () => {
    fc.assert(
      fc.property(docFrom(MANIFEST), (doc) => outcome(() => parseManifestText(yamlOf(doc), "plugin.yaml", "p"))),
      prop,
    );
    for (const doc of hostileVariants(MANIFEST)) outcome(() => parseManifestText(yamlOf(doc), "plugin.yaml", "p"));
    const folder = join(dir, "plugin");
    await fc.assert(
      fc.asyncProperty(docFrom(MANIFEST), async (doc) => {
        rmSync(folder, { recursive: true, force: true });
        mkdirSync(folder);
        writeFileSync(join(folder, "plugin.yaml"), yamlOf(doc));
        writeFileSync(join(folder, "index.js"), "export function register() {}\n");
        await outcomeAsync(async () => ({
          diagnostics: (await candidateFromFolder(folder, "user"))?.diagnostics ?? [],
        }));
      }),
      { ...prop, numRuns: 60 },
    );
    for (const kind of ["list", "map"] as const)
      outcome(() => parseManifestText(`name: p\nhooks: ${nested(5000, kind)}\n`, "plugin.yaml", "p"));
  });

  it("hermes-pack.yaml", () => {
    fc.assert(
      fc.property(docFrom(PACK), (doc) => {
        outcome(() => parsePackText(yamlOf(doc), "pack.yaml"));
        outcome(() => parsePackOrThrow(yamlOf(doc), "pack.yaml"));
      }),
      prop,
    );
    outcome(() => parsePackOrThrow(`name: p\nplugins: ${nested(5000, "list")}\n`, "pack.yaml"));
    for (const doc of hostileVariants(PACK)) outcome(() => parsePackOrThrow(yamlOf(doc), "pack.yaml"));
  });

  it("deploy spec", () => {
    fc.assert(
      fc.property(docFrom(SPEC), (doc) => outcome(() => parseDeploySpec(yamlOf(doc), "spec.yaml"))),
      prop,
    );
    fc.assert(
      fc.property(docFrom(SPEC), (doc) => outcome(() => parseDeploySpec(JSON.stringify(doc), "spec.json"))),
      { ...prop, numRuns: 50 },
    );
    outcome(() => parseDeploySpec(`plugins: ${nested(5000, "list")}\n`, "spec.yaml"));
    for (const doc of hostileVariants(SPEC)) outcome(() => parseDeploySpec(yamlOf(doc), "spec.yaml"));
  });

  it("community index", () => {
    fc.assert(
      fc.property(docFrom(INDEX), (doc) => outcome(() => parseIndexText(JSON.stringify(doc), "index.json"))),
      prop,
    );
    outcome(() => parseIndexText(nested(5000, "map"), "index.json"));
    for (const doc of hostileVariants(INDEX)) outcome(() => parseIndexText(JSON.stringify(doc), "index.json"));
  });

  it("hermes.lock.json (a lock nested 5,000 deep included)", () => {
    const sealed = JSON.parse(serializeLock(LOCK)) as Json;
    fc.assert(
      fc.property(docFrom(sealed), (doc) => outcome(() => parseLockText(JSON.stringify(doc), "hermes.lock.json"))),
      prop,
    );
    for (const doc of hostileVariants(sealed)) outcome(() => parseLockText(JSON.stringify(doc), "hermes.lock.json"));
    for (const kind of ["list", "map"] as const) {
      const r = parseLockText(nested(5000, kind), "hermes.lock.json");
      expect(r.lock).toBeUndefined();
      expect(r.diagnostics.map((d) => d.code)).toEqual(["E_LOCK_INVALID"]);
    }
  });

  it("install metadata", () => {
    fc.assert(
      fc.property(docFrom(METADATA), (doc) =>
        outcome(() => parseMetadata(JSON.stringify(doc), ".install-metadata.json")),
      ),
      prop,
    );
    outcome(() => parseMetadata(nested(5000, "map"), ".install-metadata.json"));
    for (const doc of hostileVariants(METADATA))
      outcome(() => parseMetadata(JSON.stringify(doc), ".install-metadata.json"));
  });

  it("bundle manifest", () => {
    fc.assert(
      fc.property(docFrom(BUNDLE_MANIFEST), (doc) => {
        // A bundle manifest is checked by manifestProblems: it must answer with reasons, never throw.
        const problems = manifestProblems(JSON.parse(JSON.stringify(doc)));
        expect(Array.isArray(problems)).toBe(true);
      }),
      prop,
    );
  });
});
