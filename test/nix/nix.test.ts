/**
 * The Nix surface, tested with real Nix (Debian's nix-bin, single-user, no daemon, no substituters):
 * every .nix file parses; nix/lib.nix renders deploy specs that match the schema; plugin folders
 * put in the store with builtins.path (and a built derivation) are linked from /nix/store by
 * `hermes compile`, locked, trusted by `hermes lock verify`, kept alive by GC roots; removing a
 * plugin from the Nix expression removes its link; a bad entry changes nothing.
 *
 * The modules (which need nixpkgs' lib) are evaluated by modules.test.ts; the package's files and
 * the flake lock by package.test.ts.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateSchema } from "../../src/core/schema.js";
import { CLI, ROOT, runCli } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";
import { checkNix, nixEnv as nixEnvFor, nixRun } from "./helpers.js";

/** Bundled model-provider profiles load in every home (as the original registers them all), first in order. */
const ALWAYS = ["model-providers/openrouter"];

const NIX_DIR = join(ROOT, "nix");
const LIB = join(NIX_DIR, "lib.nix");
const ACTIVATE = join(NIX_DIR, "activate.sh");

const unavailable = checkNix("test/nix");

const scratch = new Scratch("hermes-nix-");
afterAll(() => scratch.cleanup());

const nixEnv = () => nixEnvFor(join(scratch.root, ".user-home"));
const nix = (cmd: string, args: string[]) => nixRun(cmd, args, join(scratch.root, ".user-home"));

/** `nix-instantiate --eval --strict --json` of an expression; read-write so builtins.path really adds to the store. */
function evalJson<T = unknown>(expr: string): T {
  const r = nix("nix-instantiate", ["--eval", "--strict", "--json", "--read-write-mode", "-E", expr]);
  if (r.code !== 0) throw new Error(`nix-instantiate failed:\n${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

function evalError(expr: string): string {
  const r = nix("nix-instantiate", ["--eval", "--strict", "--json", "-E", expr]);
  expect(r.code, `expected an evaluation error, got ${r.stdout}`).not.toBe(0);
  return r.stderr;
}

const lib = `(import ${LIB})`;
const inStore = (dir: string) => `(builtins.path { path = ${dir}; name = "${dir.split("/").pop()}"; })`;

interface SpecJson {
  version: 1;
  plugins: Array<{
    path: string;
    enable: boolean;
    grants: string[];
    settings: Record<string, unknown>;
    required: boolean;
  }>;
  npmPackages: SpecJson["plugins"];
  settings: Record<string, unknown>;
  listPolicy: "union" | "replace";
  home?: string;
}

interface LockJson {
  plugins: Array<{
    key: string;
    state: string;
    origin: string;
    managed: boolean;
    target: string | null;
    path: string;
    integrity: string;
    capabilities: { granted: string[]; consent: string | null };
  }>;
  load_order: string[];
  deployment: { kind: string | null; links: Array<{ link: string; target: string }>; spec: string | null };
}

const readLock = (home: string) => JSON.parse(readFileSync(join(home, "hermes.lock.json"), "utf8")) as LockJson;

/** Every path under a folder with its type and content or link value: "what the home is". */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      const rel = relative(dir, p);
      if (st.isSymbolicLink()) out[rel] = `-> ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[rel] = `dir ${(st.mode & 0o777).toString(8)}`;
        walk(p);
      } else out[rel] = `file ${(st.mode & 0o777).toString(8)} ${readFileSync(p, "utf8")}`;
    }
  };
  walk(dir);
  return out;
}

/** Sample plugin sources, outside the store (the expressions copy them in). */
function samples() {
  const src = scratch.dir("src");
  writePlugin(join(src, "alpha"), "name: alpha\nversion: '1.0'\ncapabilities: [tools.override]\n");
  writePlugin(join(src, "beta"), "name: beta  # the key\nversion: '2.0'\n");
  mkdirSync(join(src, "empty"), { recursive: true });
  writeFileSync(join(src, "empty", "README.md"), "no manifest here\n");
  return src;
}

/** A deploy spec rendered by lib.nix from an expression, written where hermes compile reads it. */
function renderSpec(file: string, args: string): SpecJson {
  const spec = evalJson<SpecJson>(`${lib}.mkDeploySpec ${args}`);
  writeText(file, `${JSON.stringify(spec, null, 2)}\n`);
  return spec;
}

const suite = unavailable ? describe.skip : describe;

suite("Nix: parse and evaluate (real nix-instantiate)", () => {
  beforeAll(() => {
    const v = execFileSync("nix-instantiate", ["--version"], { encoding: "utf8" }).trim();
    console.info(`test/nix: ${v}`);
  });

  it("every .nix file of the repo parses", () => {
    const files = [
      join(ROOT, "flake.nix"),
      ...readdirSync(NIX_DIR, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith(".nix"))
        .map((f) => join(NIX_DIR, f)),
    ];
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const f of files) {
      expect(existsSync(f), f).toBe(true);
      const r = nix("nix-instantiate", ["--parse", f]);
      expect(r.code, `${f}: ${r.stderr}`).toBe(0);
    }
  });

  it("every option the modules declare is in nix/README.md's option table", () => {
    const readme = readFileSync(join(NIX_DIR, "README.md"), "utf8");
    const table = readme
      .slice(readme.indexOf("\n## Options\n"))
      .split("\n")
      .filter((l) => l.startsWith("| `"));
    const rows = table.map((l) => l.slice(3, l.indexOf("`", 3)));
    const declared = new Set<string>();
    for (const f of ["module.nix", "nixos.nix", "home-manager.nix"]) {
      const text = readFileSync(join(NIX_DIR, f), "utf8");
      for (const m of text.matchAll(
        /^\s*([\w.]+) = (?:mkOption|lib\.mkOption|lib\.mkEnableOption|pluginListOption|\w+Option)\b/gm,
      ))
        declared.add(m[1]!);
    }
    declared.delete("build"); // internal
    for (const d of [...declared]) if (d.endsWith("Option")) declared.delete(d); // let-bound option builders
    expect(declared.size).toBeGreaterThan(20);
    const missing = [...declared].filter((leaf) => !rows.some((r) => r === leaf || r.endsWith(`.${leaf}`)));
    expect(missing, "regenerate the table: see nix/README.md").toEqual([]);
    // Type, default, example, where, description: every row has all six cells.
    for (const r of table) expect(r.replace(/\\\|/g, "").split(" | ").length, r).toBe(6);
  });

  it("lib.nix knows exactly the schema's capability ids and list policies", () => {
    const schema = JSON.parse(readFileSync(join(ROOT, "schemas", "plugin-manifest.schema.json"), "utf8")) as {
      $defs: { capabilityId: { enum: string[] } };
    };
    const spec = JSON.parse(readFileSync(join(ROOT, "schemas", "deploy-spec.schema.json"), "utf8")) as {
      properties: { listPolicy: { enum: string[] } };
    };
    const got = evalJson<{ caps: string[]; policies: string[] }>(
      `{ caps = ${lib}.capabilities; policies = ${lib}.listPolicies; }`,
    );
    expect(got.caps).toEqual(schema.$defs.capabilityId.enum);
    expect(got.policies).toEqual(spec.properties.listPolicy.enum);
  });

  it("mkDeploySpec output validates against schemas/deploy-spec.schema.json for every entry form", () => {
    const src = samples();
    const cases: Record<string, string> = {
      minimal: `{ plugins = [ ]; }`,
      "path literal": `{ plugins = [ ${src}/alpha ]; }`,
      "store path string": `{ plugins = [ "/nix/store/0123456789abcdfghijklmnpqrsvwxyz-x" ]; }`,
      derivation: `{ plugins = [ (derivation { name = "d"; system = "x86_64-linux"; builder = "/bin/sh"; }) ]; }`,
      "full entry":
        `{
        plugins = [ { package = ${src}/alpha; enable = false; grants = [ "tools.override" ]; ` +
        `settings = { depth = 2; tags = [ "a" ]; }; required = true; } ];
        npmPackages = [ { package ` +
        `= "/nix/store/0123456789abcdfghijklmnpqrsvwxyz-pkg/lib/node_modules/p"; key = "p"; } ];
        ` +
        `settings = { model.default = "llama"; plugins.disabled = [ "x" ]; agent.max_turns = 12; flag = ` +
        `null; };
        listPolicy = "replace";
        home = "/var/lib/hermes/.hermes";
      }`,
    };
    for (const [name, args] of Object.entries(cases)) {
      const spec = evalJson<SpecJson>(`${lib}.mkDeploySpec ${args}`);
      expect(validateSchema("deploy-spec", spec), name).toEqual([]);
      expect(spec.version, name).toBe(1);
    }
    const full = evalJson<SpecJson>(`${lib}.mkDeploySpec ${cases["full entry"]}`);
    expect(full.plugins[0]).toMatchObject({
      enable: false,
      grants: ["tools.override"],
      settings: { depth: 2, tags: ["a"] },
      required: true,
    });
    expect(full.plugins[0]!.path).toMatch(/^\/nix\/store\/[0-9a-z]{32}-alpha$/);
    expect(full.npmPackages[0]).toEqual({
      path: "/nix/store/0123456789abcdfghijklmnpqrsvwxyz-pkg/lib/node_modules/p",
      key: "p",
      enable: true,
      grants: [],
      settings: {},
      required: false,
    });
    // No stated key, no `key` in the spec.
    expect(full.plugins[0]).not.toHaveProperty("key");
    expect(full).toMatchObject({
      listPolicy: "replace",
      home: "/var/lib/hermes/.hermes",
      settings: { model: { default: "llama" }, flag: null },
    });
  });

  it("plugin keys are known at evaluation time from path manifests or explicit keys; duplicates are named", () => {
    const src = samples();
    writePlugin(join(src, "alpha-copy"), "name: alpha\n");
    const keys = evalJson<string[]>(
      `${lib}.pluginKeys [ ${src}/alpha ${src}/beta { package = ` +
        `"/nix/store/0123456789abcdfghijklmnpqrsvwxyz-g"; key = "gamma"; } ` +
        `"/nix/store/0123456789abcdfghijklmnpqrsvwxyz-unknown" ]`,
    );
    expect(keys).toEqual(["alpha", "beta", "gamma"]);
    const dups = evalJson<string[]>(`${lib}.describeDuplicates [ ${src}/alpha ${src}/beta ${src}/alpha-copy ]`);
    expect(dups).toEqual([`alpha (claimed by ${src}/alpha and ${src}/alpha-copy)`]);
    expect(evalError(`${lib}.mkDeploySpec { plugins = [ ${src}/alpha ${src}/alpha-copy ]; }`)).toContain(
      "duplicate plugin keys: alpha (claimed by",
    );
  });

  it("bad entries fail evaluation with a message that names the entry and the fix", () => {
    const src = samples();
    expect(evalError(`${lib}.mkDeploySpec { plugins = [ { package = ${src}/alpha; grant = [ ]; } ]; }`)).toContain(
      "unknown attribute 'grant' (did you mean 'grants'?)",
    );
    expect(
      evalError(`${lib}.mkDeploySpec { plugins = [ { package = ${src}/alpha; grants = [ "tools.overide" ]; } ]; }`),
    ).toContain("unknown capability 'tools.overide' (did you mean 'tools.override'?)");
    expect(evalError(`${lib}.mkDeploySpec { plugins = [ { enable = true; } ]; }`)).toContain("needs `package`");
    expect(evalError(`${lib}.mkDeploySpec { plugins = [ "relative/dir" ]; }`)).toContain("is not an absolute path");
    expect(evalError(`${lib}.mkDeploySpec { plugins = [ ]; listPolicy = "merge"; }`)).toContain(
      "`listPolicy` must be one of union replace",
    );
  });
});

suite("Nix: store paths applied by hermes compile (real /nix/store)", () => {
  it("links plugins from /nix/store by key, locks them, and lock verify trusts them", async () => {
    const src = samples();
    const root = scratch.dir("apply");
    const home = join(root, "home");
    const specFile = join(root, "spec.json");
    const spec = renderSpec(
      specFile,
      `{ plugins = [ { package = ${inStore(`${src}/alpha`)}; grants = [ "tools.override" ]; settings.depth = ` +
        `3; } ${inStore(`${src}/beta`)} ]; settings.model.default = "llama"; }`,
    );
    expect(validateSchema("deploy-spec", spec)).toEqual([]);
    const [alpha, beta] = spec.plugins.map((p) => p.path);
    for (const p of [alpha!, beta!]) {
      expect(p).toMatch(/^\/nix\/store\/[0-9a-z]{32}-(alpha|beta)$/);
      expect(statSync(join(p, "plugin.yaml")).isFile()).toBe(true);
    }
    const r = await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain(`+ plugins/nix-managed-alpha → ${alpha}`);
    // The link is named after the key and resolves into the store, exactly as on NixOS.
    expect(readlinkSync(join(home, "plugins", "nix-managed-alpha"))).toBe(
      "../generations/current/links/plugins%2Fnix-managed-alpha",
    );
    expect(realpathSync(join(home, "plugins", "nix-managed-alpha"))).toBe(alpha);
    expect(realpathSync(join(home, "plugins", "nix-managed-beta"))).toBe(beta);
    const lock = readLock(home);
    expect(lock.deployment.kind).toBe("nixos");
    expect(lock.deployment.links).toEqual([
      { link: "plugins/nix-managed-alpha", target: alpha },
      { link: "plugins/nix-managed-beta", target: beta },
    ]);
    const a = lock.plugins.find((p) => p.key === "alpha")!;
    expect(a).toMatchObject({ state: "enabled", origin: "nix", managed: true, target: alpha });
    expect(a.capabilities).toMatchObject({ granted: ["tools.override"], consent: "declarative" });
    expect(a.integrity).toMatch(/^sha256-tree:[0-9a-f]{64}$/);
    expect(lock.load_order).toEqual([...ALWAYS, "alpha", "beta"]);
    const cfg = readFileSync(join(home, "config.yaml"), "utf8");
    expect(cfg).toContain("default: llama");
    expect(cfg).toMatch(/enabled:\n\s+- alpha\n\s+- beta\n/);
    expect(readFileSync(join(home, ".managed"), "utf8")).toContain('"kind":"nixos"');
    const v = await runCli(["--home", home, "lock", "verify"]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/trusted\s+alpha/);
    expect(v.stdout).toMatch(/trusted\s+beta/);
    expect(v.stdout).toContain("no drift");
    const full = await runCli(["--home", home, "lock", "verify", "--full"]);
    expect(full.code, full.stderr).toBe(0);
    // Applying the same expression again is a no-op.
    const again = await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos", "--check"]);
    expect(again.code, again.stdout).toBe(0);
  });

  it("a derivation built by Nix is a plugin entry like a path", async () => {
    const root = scratch.dir("drv");
    const home = join(root, "home");
    const specFile = join(root, "spec.json");
    const drv =
      `(derivation { name = "gamma-plugin"; system = builtins.currentSystem; builder = "/bin/sh";
      args ` +
      `= [ "-c" "/bin/mkdir $out && echo 'name: gamma' > $out/plugin.yaml && echo 'export function ` +
      `register(ctx) {}' > $out/index.js" ]; })`;
    // Build the derivation first (nix-instantiate only evaluates; the store path must exist).
    const drvFile = join(root, "plugin.nix");
    writeText(drvFile, drv);
    const b = nix("nix-build", ["--no-out-link", drvFile]);
    expect(b.code, b.stderr).toBe(0);
    const built = b.stdout.trim();
    const spec = renderSpec(specFile, `{ plugins = [ { package = ${drv}; key = "gamma"; } ]; }`);
    expect(evalJson<string[]>(`${lib}.pluginKeys [ { package = ${drv}; key = "gamma"; } ]`)).toEqual(["gamma"]);
    expect(spec.plugins[0]!.path).toBe(built);
    const r = await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(realpathSync(join(home, "plugins", "nix-managed-gamma"))).toBe(built);
    expect(readLock(home).load_order).toEqual([...ALWAYS, "gamma"]);
  });

  it(
    "removing a plugin from the Nix expression and " + "recompiling removes its link; an empty list removes all",
    async () => {
      const src = samples();
      const root = scratch.dir("remove");
      const home = join(root, "home");
      writePlugin(join(home, "plugins", "mine"), "name: mine\nversion: '1'\n");
      writeText(join(home, "config.yaml"), "# by hand\nplugins:\n  enabled:\n    - mine # mine\n");
      const specFile = join(root, "spec.json");
      const both = `{ plugins = [ ${inStore(`${src}/alpha`)} ${inStore(`${src}/beta`)} ]; }`;
      renderSpec(specFile, both);
      expect((await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"])).code).toBe(0);
      expect(readLock(home).load_order).toEqual([...ALWAYS, "alpha", "beta", "mine"]);

      renderSpec(specFile, `{ plugins = [ ${inStore(`${src}/beta`)} ]; }`);
      const r = await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("- plugins/nix-managed-alpha");
      expect(existsSync(join(home, "plugins", "nix-managed-alpha"))).toBe(false);
      expect(lstatSync(join(home, "plugins", "nix-managed-beta")).isSymbolicLink()).toBe(true);
      expect(readLock(home).load_order).toEqual([...ALWAYS, "beta", "mine"]);
      let cfg = readFileSync(join(home, "config.yaml"), "utf8");
      expect(cfg).not.toContain("alpha");
      expect(cfg).toContain("- mine # mine");

      renderSpec(specFile, `{ plugins = [ ]; }`);
      expect((await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"])).code).toBe(0);
      expect(readdirSync(join(home, "plugins")).sort()).toEqual(["mine"]);
      expect(readLock(home).load_order).toEqual([...ALWAYS, "mine"]);
      cfg = readFileSync(join(home, "config.yaml"), "utf8");
      expect(cfg).toContain("# by hand");
      // The hand-installed plugin was never touched, and rollback brings the declared ones back.
      const rb = await runCli(["--home", home, "compile", "--rollback", "1"]);
      expect(rb.code, rb.stderr).toBe(0);
      expect(realpathSync(join(home, "plugins", "nix-managed-alpha"))).toMatch(/^\/nix\/store\/[0-9a-z]{32}-alpha$/);
    },
  );

  it("an entry without plugin.yaml changes nothing: compile exits 1 and the home is as it was", async () => {
    const src = samples();
    const root = scratch.dir("bad");
    const home = join(root, "home");
    const specFile = join(root, "spec.json");
    renderSpec(specFile, `{ plugins = [ ${inStore(`${src}/alpha`)} ]; settings.model.default = "a"; }`);
    expect((await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"])).code).toBe(0);
    const before = snapshot(home);
    const spec = renderSpec(
      specFile,
      `{ plugins = [ ${inStore(`${src}/alpha`)} ${inStore(`${src}/beta`)} ${inStore(`${src}/empty`)} ]; ` +
        `settings.model.default = "b"; }`,
    );
    const emptyPath = spec.plugins[2]!.path;
    const r = await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_SPEC_NO_MANIFEST");
    expect(r.stderr).toContain(`${emptyPath} has no plugin.yaml`);
    expect(r.stderr).toContain("nothing was changed");
    expect(snapshot(home)).toEqual(before);
    expect(realpathSync(join(home, "plugins", "nix-managed-alpha"))).toBe(spec.plugins[0]!.path);
  });
});

suite("Nix: nix/activate.sh (what the modules run at activation)", () => {
  const isRoot = process.getuid?.() === 0;

  function activate(args: string[], pathPrefix?: string) {
    const env: NodeJS.ProcessEnv = { ...nixEnv(), NO_COLOR: "1" };
    if (pathPrefix) env.PATH = `${pathPrefix}:${env.PATH}`;
    for (const k of Object.keys(env)) if (k.startsWith("HERMES_")) delete env[k];
    const r = spawnSync("bash", [ACTIVATE, "--hermes", CLI, "--kind", "nixos", ...args], { encoding: "utf8", env });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it(
    "compiles every home, registers GC roots that keep the " + "plugins alive, and releases homes no longer declared",
    () => {
      const src = samples();
      const root = scratch.dir("activate");
      const main = join(root, "hermes");
      const work = join(main, "profiles", "work");
      const state = join(root, "state", "homes");
      const mainSpec = join(root, "main.json");
      const workSpec = join(root, "work.json");
      const spec = renderSpec(
        mainSpec,
        `{ plugins = [ { package = ${inStore(`${src}/alpha`)}; grants = [ "tools.override" ]; } ]; }`,
      );
      renderSpec(workSpec, `{ plugins = [ ${inStore(`${src}/beta`)} ]; }`);
      const alpha = spec.plugins[0]!.path;

      const r = activate(["--state", state, "--home", "main", main, mainSpec, "--home", "work", work, workSpec]);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(realpathSync(join(main, "plugins", "nix-managed-alpha"))).toBe(alpha);
      expect(realpathSync(join(work, "plugins", "nix-managed-beta"))).toMatch(/-beta$/);
      expect(readFileSync(state, "utf8")).toBe(`${main}\n${work}\n`);

      // GC roots: generations/<n>/gcroots/<link> → store path, registered with Nix.
      const rootLink = join(main, "generations", "1", "gcroots", "plugins%2Fnix-managed-alpha");
      expect(readlinkSync(rootLink)).toBe(alpha);
      const roots = nix("nix-store", ["--gc", "--print-roots"]);
      expect(roots.code, roots.stderr).toBe(0);
      expect(roots.stdout).toContain(`${rootLink} -> ${alpha}`);
      const del = nix("nix-store", ["--delete", alpha]);
      expect(del.code).not.toBe(0);
      expect(del.stderr).toContain("still alive");

      // The profile is dropped from the configuration: its links go, its managed marker too.
      const again = activate(["--state", state, "--home", "main", main, mainSpec]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`releasing ${work}`);
      expect(existsSync(join(work, "plugins", "nix-managed-beta"))).toBe(false);
      expect(existsSync(join(work, ".managed"))).toBe(false);
      expect(readFileSync(state, "utf8")).toBe(`${main}\n`);
    },
  );

  it("a refused home keeps its generation, the others still compile, and the exit status is 1", () => {
    const src = samples();
    const root = scratch.dir("activate-bad");
    const good = join(root, "good");
    const bad = join(root, "bad");
    const goodSpec = join(root, "good.json");
    const badSpec = join(root, "bad.json");
    renderSpec(goodSpec, `{ plugins = [ ${inStore(`${src}/beta`)} ]; }`);
    renderSpec(badSpec, `{ plugins = [ ${inStore(`${src}/alpha`)} ]; }`);
    expect(activate(["--home", "bad", bad, badSpec]).code).toBe(0);
    const before = snapshot(bad);
    renderSpec(badSpec, `{ plugins = [ ${inStore(`${src}/alpha`)} ${inStore(`${src}/empty`)} ]; }`);
    const r = activate(["--home", "bad", bad, badSpec, "--home", "good", good, goodSpec]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("has no plugin.yaml");
    // The summary names the home, the spec and the first error of hermes' output (which is shown too).
    const emptyPath = JSON.parse(readFileSync(badSpec, "utf8")).plugins[1].path as string;
    expect(r.stderr).toMatch(/^error E_COMPILE_REFUSED/m);
    expect(r.stderr).toContain(
      `hermes-agent: bad: hermes compile refused ${badSpec}; ${bad} keeps the generation it had: error ` +
        `E_SPEC_NO_MANIFEST ${badSpec}:`,
    );
    expect(r.stderr).toContain(`plugins[1].path: ${emptyPath} has no plugin.yaml\n`);
    expect(snapshot(bad)).toEqual(before);
    expect(lstatSync(join(good, "plugins", "nix-managed-beta")).isSymbolicLink()).toBe(true);
  });

  it(
    "a GC root that cannot be registered fails the activation, names the generation and store path, and leaves " +
      "no .done",
    () => {
      const src = samples();
      const root = scratch.dir("activate-gcroot");
      const home = join(root, "home");
      const specFile = join(root, "spec.json");
      const alpha = renderSpec(
        specFile,
        `{ plugins = [ { package = ${inStore(`${src}/alpha`)}; grants = [ "tools.override" ]; } ]; }`,
      ).plugins[0]!.path;
      // A nix-store that refuses --add-root (a read-only gcroots folder, a daemon that says no); the rest is the real
      // one.
      const real = spawnSync("sh", ["-c", "command -v nix-store"], { encoding: "utf8" }).stdout.trim();
      const bin = join(root, "bin");
      writeText(
        join(bin, "nix-store"),
        `#!/bin/sh\ncase " $* " in *" --add-root "*) echo "error: cannot add root: permission denied" >&2; ` +
          `exit 1 ;; esac\nexec ${real} "$@"\n`,
      );
      chmodSync(join(bin, "nix-store"), 0o755);
      const gen = join(home, "generations", "1");

      const r = activate(["--home", "main", home, specFile], bin);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(
        `hermes-agent: GC root failed for generation ${gen}: ${alpha} is not rooted (nix-store --add-root: ` +
          "error: cannot add root: permission denied)",
      );
      expect(existsSync(join(gen, "gcroots", ".done"))).toBe(false);
      // The compile itself stood: the home is on its new generation.
      expect(realpathSync(join(home, "plugins", "nix-managed-alpha"))).toBe(alpha);

      // The next activation (a working nix-store) roots what was missed.
      const again = activate(["--home", "main", home, specFile]);
      expect(again.code, again.stderr).toBe(0);
      expect(existsSync(join(gen, "gcroots", ".done"))).toBe(true);
      expect(readlinkSync(join(gen, "gcroots", "plugins%2Fnix-managed-alpha"))).toBe(alpha);
    },
  );

  it("with no --home, every home of the state file is released and the state file goes (a disabled module)", () => {
    const src = samples();
    const root = scratch.dir("activate-off");
    const home = join(root, "home");
    const state = join(root, "state", "homes");
    const specFile = join(root, "spec.json");
    renderSpec(specFile, `{ plugins = [ ${inStore(`${src}/beta`)} ]; settings.model.default = "m"; }`);
    expect(activate(["--state", state, "--home", "main", home, specFile]).code).toBe(0);
    expect(readFileSync(state, "utf8")).toBe(`${home}\n`);
    const r = activate(["--state", state]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`releasing ${home}`);
    expect(existsSync(join(home, "plugins", "nix-managed-beta"))).toBe(false);
    expect(existsSync(join(home, ".managed"))).toBe(false);
    expect(existsSync(state)).toBe(false);
  });

  it("--dry-run prints the plans and writes nothing", () => {
    const src = samples();
    const root = scratch.dir("activate-dry");
    const home = join(root, "home");
    const spec = join(root, "spec.json");
    renderSpec(spec, `{ plugins = [ ${inStore(`${src}/beta`)} ]; }`);
    const r = activate(["--dry-run", "--state", join(root, "state"), "--home", "main", home, spec]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("+ plugins/nix-managed-beta");
    expect(existsSync(home)).toBe(false);
    expect(existsSync(join(root, "state"))).toBe(false);
  });

  it.runIf(isRoot)("as root, hermes compile itself registers indirect roots in /nix/var/nix/gcroots/auto", async () => {
    const src = samples();
    const root = scratch.dir("auto-roots");
    const home = join(root, "home");
    const specFile = join(root, "spec.json");
    const spec = renderSpec(specFile, `{ plugins = [ ${inStore(`${src}/beta`)} ]; }`);
    // Nix makes this folder on its first indirect root; a fresh single-user store may not have it yet.
    mkdirSync("/nix/var/nix/gcroots/auto", { recursive: true });
    const r = await runCli(["--home", home, "compile", "--spec", specFile, "--managed", "nixos"]);
    expect(r.code, r.stderr).toBe(0);
    const farm = join(home, "generations", "1", "links", "plugins%2Fnix-managed-beta");
    const roots = nix("nix-store", ["--gc", "--print-roots"]);
    expect(roots.stdout).toContain(`${farm} -> ${spec.plugins[0]!.path}`);
  });
});
