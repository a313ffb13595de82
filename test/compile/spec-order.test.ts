/**
 * Declaration order is not configuration: the order of a deploy spec's entries, of each entry's
 * grants and of every settings mapping's keys never changes the lock bytes, the config.yaml the
 * compile writes, the inputs hash or the verdict of `compile --check`; and a `--managed nixos`
 * home compiled from any permutation starts. Only `plugins.order` (a list value) orders plugins.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compile } from "../../src/compile/compile.js";
import { startRuntime } from "../../src/app/start-runtime.js";
// The benchmarks' seeded PRNG: every fast-check seed maps to one shuffle.
import { prng } from "../../bench/lib/synthetic-home.mjs";
import { runCli } from "../support/cli.js";
import { Scratch, writePlugin } from "../support/home.js";

const scratch = new Scratch("hermes-spec-order-");
afterAll(() => scratch.cleanup());

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

interface Entry {
  path: string;
  grants: string[];
  settings: { [k: string]: Json };
  required?: boolean;
  key?: string;
}

function shuffle<T>(xs: readonly T[], rnd: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The same value with every mapping's keys in a shuffled insertion order; list values keep their order. */
function shuffleKeys(v: Json, rnd: () => number): Json {
  if (Array.isArray(v)) return v.map((x) => shuffleKeys(x, rnd));
  if (v && typeof v === "object") {
    const out: { [k: string]: Json } = {};
    for (const k of shuffle(Object.keys(v), rnd)) out[k] = shuffleKeys(v[k]!, rnd);
    return out;
  }
  return v;
}

let src: string;
let bundled: string;
let env: NodeJS.ProcessEnv;
let entries: Entry[];
let settings: { [k: string]: Json };

beforeAll(() => {
  src = scratch.dir("src");
  bundled = scratch.dir("bundled");
  env = { PATH: process.env.PATH, HERMES_BUNDLED_PLUGINS: bundled };
  const hook = (h: string) => `export function register(ctx) { ctx.register_hook("${h}", () => {}); }\n`;
  const plugin = (name: string, manifest: string, code: string) => {
    writePlugin(join(src, name), `name: ${name}\nversion: "1.0"\n${manifest}`);
    writeFileSync(join(src, name, "index.js"), code);
    return join(src, name);
  };
  // Keys deliberately not in alphabetical order in the canonical spec below.
  entries = [
    {
      path: plugin(
        "zeta",
        "capabilities: [tools.override, llm.model_override, llm.provider_override]\nprovides_hooks: [post_tool_call]\n",
        hook("post_tool_call"),
      ),
      grants: ["tools.override", "llm.model_override", "llm.provider_override"],
      settings: { units: "metric", limits: { max: 3, min: 1 }, tags: ["b", "a"] },
      required: true,
    },
    {
      path: plugin(
        "alpha",
        "capabilities: [llm.task_override, llm.agent_id_override]\nprovides_hooks: [post_tool_call, pre_tool_call]\n",
        hook("pre_tool_call"),
      ),
      grants: ["llm.task_override", "llm.agent_id_override"],
      settings: { z: 1, a: { y: true, b: null } },
      key: "alpha",
    },
    {
      path: plugin("mid", "requires_plugins: [alpha]\nprovides_hooks: [post_tool_call]\n", hook("post_tool_call")),
      grants: [],
      settings: {},
    },
    {
      path: plugin("beta", "provides_hooks: [post_tool_call]\n", hook("post_tool_call")),
      grants: [],
      settings: { only: "one" },
    },
    { path: plugin("gamma", "", "export function register() {}\n"), grants: [], settings: { x: { c: 3, b: 2, a: 1 } } },
  ];
  settings = {
    model: { provider: "custom", default: "test/model" },
    agent: { max_turns: 7, system_prompt: "be brief" },
    plugins: { order: ["zeta", "beta"], hook_callback_timeout: 12 },
  };
});

function specText(rnd?: () => number): string {
  const es = rnd ? shuffle(entries, rnd) : entries;
  const plugins = es.map((e) => {
    const o: { [k: string]: Json } = {
      path: e.path,
      grants: rnd ? shuffle(e.grants, rnd) : e.grants,
      settings: rnd ? shuffleKeys(e.settings, rnd) : e.settings,
    };
    if (e.required !== undefined) o.required = e.required;
    if (e.key !== undefined) o.key = e.key;
    return rnd ? shuffleKeys(o, rnd) : o;
  });
  const spec: Json = {
    version: 1,
    plugins,
    npmPackages: [],
    settings: rnd ? shuffleKeys(settings, rnd) : settings,
    listPolicy: "union",
  };
  return JSON.stringify(rnd ? shuffleKeys(spec, rnd) : spec, null, 2);
}

describe("deploy spec declaration order", () => {
  it("every permutation of entries, grants and settings keys compiles to the same bytes, checks up to date and " +
    "starts", async () => {
    const home = join(scratch.root, "home");
    const specFile = join(scratch.root, "spec.json");
    const fresh = async (text: string) => {
      rmSync(home, { recursive: true, force: true });
      writeFileSync(specFile, text);
      await compile({ home, specFile, managed: "nixos", env });
      return {
        lock: readFileSync(join(home, "hermes.lock.json"), "utf8"),
        config: readFileSync(join(home, "config.yaml"), "utf8"),
      };
    };
    const baseline = await fresh(specText());
    expect(JSON.parse(baseline.lock).load_order).toEqual(["zeta", "beta", "alpha", "gamma", "mid"]);

    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        async (s1, s2) => {
          const got = await fresh(specText(prng(s1)));
          expect(got.lock).toBe(baseline.lock);
          expect(got.config).toBe(baseline.config);
          // `compile --check` and the runtime both re-plan without the spec: neither may see a change.
          expect((await compile({ home, dryRun: true, env })).plan.changed).toBe(false);
          for (const verify of ["full", "fast"] as const) {
            const rt = await startRuntime({ home, env, verify });
            await rt.unloadAll();
          }
          // Re-applying another permutation over it is a no-op.
          writeFileSync(specFile, specText(prng(s2)));
          const again = await compile({ home, specFile, managed: "nixos", env });
          expect(again.plan.changed).toBe(false);
          expect(readFileSync(join(home, "hermes.lock.json"), "utf8")).toBe(baseline.lock);
        },
      ),
      { numRuns: 200, seed: 20261201 },
    );
  }, 240_000);

  it(
    "the CLI agrees: compile --check is up to date and " + "plugins chain starts for a spec declared out of order",
    async () => {
      const home = scratch.dir("cli-home");
      const specFile = join(scratch.dir("cli-spec"), "spec.json");
      for (const seed of [1, 2, 3]) {
        writeFileSync(specFile, specText(prng(seed)));
        const run = (args: string[]) => runCli(["--home", home, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } });
        const c = await run(["compile", "--spec", specFile, "--managed", "nixos"]);
        expect(c.code, c.stderr).toBe(0);
        const check = await run(["compile", "--check"]);
        expect(check.code, check.stdout + check.stderr).toBe(0);
        const chain = await run(["plugins", "chain", "--json"]);
        expect(chain.code, chain.stderr).toBe(0);
        expect(JSON.parse(chain.stdout).load_order ?? JSON.parse(chain.stdout).loadOrder).toEqual([
          "zeta",
          "beta",
          "alpha",
          "gamma",
          "mid",
        ]);
      }
    },
  );
});

describe("deploy spec key", () => {
  it("an entry whose key differs from the manifest is refused, naming both keys and the path", async () => {
    const home = scratch.dir("key-home");
    const dir = scratch.dir("key-spec");
    mkdirSync(dir, { recursive: true });
    const specFile = join(dir, "spec.yaml");
    writeFileSync(specFile, `version: 1\nplugins:\n  - path: ${entries[0]!.path}\n    key: weather\n`);
    const r = await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"], {
      env: { HERMES_BUNDLED_PLUGINS: bundled },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_SPEC_KEY_MISMATCH");
    expect(r.stderr).toContain(`${specFile}:4`);
    expect(r.stderr).toContain("'weather'");
    expect(r.stderr).toContain("'zeta'");
    expect(r.stderr).toContain(join(entries[0]!.path, "plugin.yaml"));
  });
});
