/**
 * What the Nix package installs and how the flake is pinned, checked without nixpkgs:
 * - nix/source.nix (the package's source fileset), listed by the vendored nixpkgs lib's
 *   lib.fileset, holds every file `npm pack` ships, plus the inputs of dist/ (buildNpmPackage runs
 *   `npm run build` and then `npm pack` on it, so the installed files are exactly npm's);
 * - nix/package.nix, called with stub build functions, builds every npm package with an install
 *   script (native addons: better-sqlite3) from source against the Node it runs on, offline, and
 *   its install check loads each addon (the check's Node expression is run here too);
 * - the package ships the Python plugin bridge (python/hermes_kit_bridge), its `hermes` defaults
 *   HERMES_PYTHON to the `python` it exposes, and its install check imports the bridge with it
 *   (the check's Python expression is run here too);
 * - flake.lock is a version-7 lock whose root inputs are flake.nix's, and the flake exports
 *   homeModules beside homeManagerModules.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/cli.js";
import { writeText } from "../support/home.js";
import { nixRun, nixTestFile } from "./helpers.js";

const {
  scratch,
  userHome,
  libDir,
  noNix,
  suite: withLib,
} = nixTestFile("test/nix/package.test.ts", "lib.fileset, flake outputs", "hermes-nix-package-");

/** Shipped by npm and deliberately not by Nix: README.md is what the npm registry page shows. */
const NPM_ONLY = new Set(["README.md"]);

function evalJson<T>(expr: string): T {
  const file = writeText(join(scratch.dir("expr"), "e.nix"), expr);
  const r = nixRun("nix-instantiate", ["--eval", "--strict", "--json", file], userHome);
  if (r.code !== 0) throw new Error(`nix-instantiate failed:\n${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

const importLib = () => `(import ${join(ROOT, "nix", "tests", "nixpkgs-lib.nix")} ${libDir})`;

/** The source file a dist/ file is built from. */
function buildInputOf(dist: string): string {
  const m = /^dist\/core\/schema-validators\/([\w-]+\.schema\.json)[^/]*\.cjs$/.exec(dist);
  if (m) return `schemas/${m[1]}`; // scripts/precompile-schemas.mjs
  if (dist === "dist/cli/root-help.txt") return "src/cli/program.ts"; // scripts/postbuild.mjs runs `hermes help`
  return `src/${dist.slice("dist/".length).replace(/(\.d\.ts\.map|\.d\.ts|\.js\.map|\.js)$/, "")}.ts`;
}

withLib("Nix package: its files are npm's", () => {
  let npmFiles: string[] = [];
  let fileset: string[] = [];

  beforeAll(() => {
    // --ignore-scripts: list what is there; `prepare` would rebuild dist/.
    const r = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    npmFiles = (JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path).sort();
    fileset = evalJson<string[]>(
      `map toString (${importLib()}.fileset.toList (import ${join(ROOT, "nix", "source.nix")} { lib ` +
        `= ${importLib()}; }))`,
    )
      .map((p) => relative(ROOT, p))
      .sort();
  });

  it("every file npm ships is in nix/source.nix, or built into dist/ from files that are", () => {
    expect(npmFiles.some((f) => f.startsWith("dist/"))).toBe(true);
    expect(npmFiles).toContain("data/plugin_index.json");
    const inSet = new Set(fileset);
    const missing = npmFiles.filter((f) => !f.startsWith("dist/") && !NPM_ONLY.has(f) && !inSet.has(f));
    expect(missing, "add these to nix/source.nix").toEqual([]);
    const noInput = npmFiles.filter((f) => f.startsWith("dist/") && !inSet.has(buildInputOf(f)));
    expect(noInput, "dist/ files whose source is not in nix/source.nix").toEqual([]);
    // The Python plugin bridge ships with both, without bytecode.
    for (const f of ["python/hermes_kit_bridge/__init__.py", "python/hermes_kit_bridge/__main__.py"]) {
      expect(npmFiles, f).toContain(f);
      expect(inSet.has(f), f).toBe(true);
    }
    expect([...npmFiles, ...fileset].filter((f) => f.endsWith(".pyc"))).toEqual([]);
    for (const f of [
      "tsconfig.json",
      "tsconfig.types.json",
      "package.json",
      "package-lock.json",
      "scripts/postbuild.mjs",
      "scripts/precompile-schemas.mjs",
    ])
      expect(inSet.has(f), f).toBe(true);
  });

  it("nix/source.nix holds nothing npm does not ship except the build's inputs", () => {
    const shipped = new Set(npmFiles);
    const buildOnly = (f: string) =>
      f.startsWith("src/") ||
      f.startsWith("scripts/") ||
      f === "tsconfig.json" ||
      f === "tsconfig.types.json" ||
      f === "package-lock.json";
    expect(fileset.filter((f) => !shipped.has(f) && !buildOnly(f))).toEqual([]);
    for (const f of NPM_ONLY)
      expect(shipped.has(f), `${f} is no longer shipped by npm: drop it from NPM_ONLY`).toBe(true);
  });
});

interface PackageAttrs {
  nodejs: string;
  nativeBuildInputs: string[];
  npm_config_build_from_source: string;
  npmRebuildFlags: string[];
  preBuild: string;
  installCheckPhase: string;
  postInstall: string;
  nativeAddons: Record<string, string>;
  bridgeCheck: string;
  python: string;
}

/** nix/package.nix with buildNpmPackage returning its arguments, Node 20 beside a default Node 22. */
function packageAttrs(): PackageAttrs {
  return evalJson<PackageAttrs>(`
    let
      lib = ${importLib()};
      drv = name: {
        type = "derivation";
        inherit name;
        outPath = "/nix/store/00000000000000000000000000000000-\${name}";
      };
      nodejs_20 = drv "nodejs-20.19.0" // { passthru.python = drv "python3-3.12.9"; };
      attrs = import ${join(ROOT, "nix", "package.nix")} {
        inherit lib nodejs_20;
        buildNpmPackage = args: args;
        importNpmLock = { __functor = _: _: drv "npm-deps"; npmConfigHook = drv "npm-config-hook"; };
        nodejs = drv "nodejs-22.14.0";
        python3 = drv "python3-3.13.2";
        srcOnly = d: drv "\${d.name}-source";
      };
    in {
      nodejs = attrs.nodejs.name;
      nativeBuildInputs = map (d: d.name) attrs.nativeBuildInputs;
      inherit (attrs) npm_config_build_from_source npmRebuildFlags preBuild installCheckPhase postInstall;
      inherit (attrs.passthru) nativeAddons bridgeCheck;
      python = attrs.passthru.python.name;
    }`);
}

/** The packages of package-lock.json whose install script npm would run. */
function lockInstallScripts(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { hasInstallScript?: boolean; name?: string }>;
  };
  return Object.entries(lock.packages)
    .filter(([path, m]) => path !== "" && m.hasInstallScript)
    .map(([path, m]) => m.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length))
    .sort();
}

withLib("Nix package: native addons (better-sqlite3) build offline against the Node it runs on", () => {
  it("every package with an install script is a native addon package.nix builds from source and loads", () => {
    const p = packageAttrs();
    expect(lockInstallScripts()).toContain("better-sqlite3");
    expect(Object.keys(p.nativeAddons).sort(), "nativeAddons in nix/package.nix").toEqual(lockInstallScripts());
    // No prebuilt download: node-gyp compiles, with Python, against the headers of the Node that runs hermes.
    expect(p.nodejs).toBe("nodejs-20.19.0");
    expect(p.npm_config_build_from_source).toBe("true");
    expect(p.nativeBuildInputs).toContain("python3-3.12.9");
    // The hook's rebuild (built against nixpkgs' default Node) runs no install script; preBuild does, with Node 20.
    expect(p.npmRebuildFlags).toEqual(["--ignore-scripts"]);
    expect(p.preBuild).toMatch(/export npm_config_nodedir=\/nix\/store\/\S+-nodejs-20\.19\.0-source\n/);
    expect(p.preBuild).toContain("/nix/store/00000000000000000000000000000000-nodejs-20.19.0/lib/node_modules/npm/");
    expect(p.preBuild).toMatch(/npm rebuild better-sqlite3\n/);
    expect(p.preBuild).not.toContain("nodejs-22");
    for (const name of Object.keys(p.nativeAddons))
      expect(p.installCheckPhase).toContain(`the native addon ${name} does not load`);
    expect(p.installCheckPhase).toContain(
      "cd $out/lib/node_modules/hermes-kit && /nix/store/00000000000000000000000000000000-nodejs-20.19.0/bin/node -e",
    );
  });

  it("each addon's install check loads the addon (run here against this checkout's node_modules)", () => {
    for (const [name, check] of Object.entries(packageAttrs().nativeAddons)) {
      const r = spawnSync(process.execPath, ["-e", check], { cwd: ROOT, encoding: "utf8" });
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      // And it fails where the addon is missing: the check really loads something.
      const bare = spawnSync(process.execPath, ["-e", check], { cwd: scratch.dir("no-modules"), encoding: "utf8" });
      expect(bare.status, name).not.toBe(0);
    }
  });
});

describe.skipIf(noNix)("flake.lock and the flake's outputs", () => {
  it("flake.lock is version 7 and pins exactly flake.nix's inputs", () => {
    const lock = JSON.parse(readFileSync(join(ROOT, "flake.lock"), "utf8")) as {
      version: number;
      root: string;
      nodes: Record<
        string,
        { inputs?: Record<string, string>; locked?: Record<string, unknown>; original?: Record<string, unknown> }
      >;
    };
    expect(lock.version).toBe(7);
    const inputs = evalJson<Record<string, { url: string }>>(`(import ${join(ROOT, "flake.nix")}).inputs`);
    const rootInputs = lock.nodes[lock.root]!.inputs!;
    expect(Object.keys(rootInputs).sort()).toEqual(Object.keys(inputs).sort());
    for (const [name, { url }] of Object.entries(inputs)) {
      const node = lock.nodes[rootInputs[name]!]!;
      const m = /^github:([^/]+)\/([^/]+)\/(.+)$/.exec(url);
      expect(m, url).not.toBeNull();
      expect(node.original).toEqual({ type: "github", owner: m![1], repo: m![2], ref: m![3] });
      expect(node.locked).toMatchObject({ type: "github", owner: m![1], repo: m![2] });
      expect(node.locked!.rev).toMatch(/^[0-9a-f]{40}$/);
      expect(node.locked!.narHash).toMatch(/^sha256-[A-Za-z0-9+/]{43}=$/);
      expect(typeof node.locked!.lastModified).toBe("number");
    }
  });

  it.skipIf(!libDir)(
    "the flake exports homeModules (what home-manager's flake-parts module reads) beside homeManagerModules",
    () => {
      const out = evalJson<Record<string, string[]>>(`
      let
        flake = import ${join(ROOT, "flake.nix")};
        self = flake.outputs { inherit self; nixpkgs = { lib = ${importLib()}; }; };
      in {
        homeModules = builtins.attrNames self.homeModules;
        homeManagerModules = builtins.attrNames self.homeManagerModules;
        nixosModules = builtins.attrNames self.nixosModules;
        lib = builtins.attrNames self.lib;
      }`);
      expect(out.homeModules).toEqual(["default", "hermes-agent"]);
      expect(out.homeManagerModules).toEqual(out.homeModules);
      expect(out.nixosModules).toEqual(["default", "hermes-agent"]);
      expect(out.lib).toContain("mkDeploySpec");
      expect(existsSync(join(ROOT, "flake.lock"))).toBe(true);
    },
  );
});

withLib("Nix package: the Python plugin bridge and the interpreter `hermes` defaults to", () => {
  const PY = "/nix/store/00000000000000000000000000000000-python3-3.13.2";

  it("`hermes` defaults HERMES_PYTHON to the package's `python`; the install check imports the bridge with it", () => {
    const p = packageAttrs();
    expect(p.python).toBe("python3-3.13.2");
    // --set-default: the modules' HERMES_PYTHON (service environment, CLI wrapper) and the user's win.
    expect(p.postInstall.trim()).toBe(`wrapProgram $out/bin/hermes --set-default HERMES_PYTHON ${PY}/bin/python3`);
    expect(p.installCheckPhase).toContain(
      "test -f $out/lib/node_modules/hermes-kit/python/hermes_kit_bridge/__main__.py",
    );
    expect(p.installCheckPhase).toContain(`PYTHONPATH=$out/lib/node_modules/hermes-kit/python ${PY}/bin/python3 -c '`);
    expect(p.installCheckPhase).toContain("the Python bridge does not import");
  });

  it("the install check's Python imports this checkout's bridge, and fails where the bridge is missing", () => {
    const { bridgeCheck } = packageAttrs();
    const probe = spawnSync("python3", ["-c", "import sys; print(sys.version_info >= (3, 10))"], { encoding: "utf8" });
    if (probe.error || probe.stdout.trim() !== "True") {
      console.warn("python3 3.10+ is missing: the bridge check is not run here");
      return;
    }
    const env = (pythonPath: string) => ({ ...process.env, PYTHONPATH: pythonPath, PYTHONDONTWRITEBYTECODE: "1" });
    const ok = spawnSync("python3", ["-c", bridgeCheck], { env: env(join(ROOT, "python")), encoding: "utf8" });
    expect(ok.status, ok.stderr).toBe(0);
    const bare = spawnSync("python3", ["-c", bridgeCheck], { env: env(scratch.dir("no-bridge")), encoding: "utf8" });
    expect(bare.status).not.toBe(0);
    expect(bare.stderr).toContain("No module named 'hermes_kit_bridge'");
  });
});
