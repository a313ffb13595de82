/**
 * services.hermes-agent.extraPythonPackages (issue 20): the Python packages of Python plugins, through nixpkgs'
 * real lib.evalModules (nix/tests/eval-modules.nix and its typed NixOS / home-manager stubs). The option and its
 * default; HERMES_PYTHON in the NixOS unit, the home-manager unit and launchd agent, the activation and the CLI the
 * modules install; the evaluation errors for packages that would not be importable. Then the Python environment
 * the module renders is built (the harness's stub Python builds for real, running this host's python3) and the
 * built CLI runs a Python plugin importing a package that only that environment holds, with the HERMES_PYTHON the
 * service gets.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { CLI, ROOT, runCli } from "../support/cli.js";
import { writeText } from "../support/home.js";
import { evalModuleFile, moduleHarness, nixRun, nixTestFile } from "./helpers.js";

const { scratch, userHome, libDir, suite } = nixTestFile(
  "test/nix/python-packages.test.ts",
  "module evaluation",
  "hermes-nix-python-",
);

/** The host's python3 (3.10+), which the stub environments run; empty when there is none. */
function hostPython(): string {
  try {
    const out = execFileSync(
      "python3",
      ["-c", "import sys; print(sys.executable); print(sys.version_info >= (3, 10))"],
      {
        encoding: "utf8",
      },
    ).split("\n");
    return out[1] === "True" ? out[0]! : "";
  } catch {
    return "";
  }
}

interface PythonReport {
  env: { path: string; name: string; drvPath: string; packages: string[] } | null;
  pythonEnvironment: Record<string, string>;
  cli: { name: string; path: string; postBuild: string | null };
}
interface Report {
  failedAssertions: string[];
  python: PythonReport;
  activation: { text: string } | null;
  systemPackages?: string[];
  packages?: string[];
  service?: {
    environment?: Record<string, string>;
    Service?: { Environment?: string[] };
  } | null;
  launchd?: { config: { EnvironmentVariables: Record<string, string> } } | null;
}
interface OptionRow {
  name: string;
  type: string;
  default: string | null;
  description: string;
}

const python = hostPython();

/** Evaluate the harness (with the host's python3 for the stub environments); the JSON, or the error text. */
function evaluate(name: string, configurations: string, args = ""): { code: number; out: string } {
  const hp = `hostPython = ${JSON.stringify(python || "/usr/bin/python3")};`;
  const r = evalModuleFile(
    join(scratch.dir(name), "eval.nix"),
    moduleHarness(libDir!, configurations, hp + args),
    userHome,
  );
  return { code: r.code, out: r.code === 0 ? r.stdout : r.stderr.replace(/\s+/g, " ") };
}

/** Nix text of a configuration named `name` whose services.hermes-agent is `{ enable = true; <body> }`. */
function cfg(name: string, kind: "nixos" | "home-manager", body: string, extra = ""): string {
  return (
    `${name} = { kind = "${kind}"; ${extra} config = { config, pkgs, ... }: let kitPy = ` +
    `config.services.hermes-agent.package.python.pkgs; in { services.hermes-agent = { enable = true; ${body} }; }; };`
  );
}

const ENV_PYTHON = /^\/nix\/store\/[0-9a-z]{32}-python3-3\.12\.9-env\/bin\/python3$/;

suite("Nix modules: extraPythonPackages gives Python plugins their packages through HERMES_PYTHON", () => {
  let reports: Record<string, Report> = {};

  beforeAll(() => {
    const two = "extraPythonPackages = [ kitPy.requests kitPy.pyyaml ];";
    const own = 'service.environment.HERMES_PYTHON = "/opt/py/bin/python3";';
    const r = evaluate(
      "reports",
      `{ pkgs, drv }: {
        ${cfg("nixos-none", "nixos", "addToSystemPackages = true;")}
        ${cfg("nixos-py", "nixos", `addToSystemPackages = true; ${two}`)}
        ${cfg("nixos-own", "nixos", `extraPythonPackages = [ kitPy.requests ]; ${own}`)}
        ${cfg("hm-none", "home-manager", "")}
        ${cfg("hm-py", "home-manager", "extraPythonPackages = [ kitPy.requests ];")}
        ${cfg("hm-darwin-py", "home-manager", "extraPythonPackages = [ kitPy.requests ];", "darwin = true;")}
        ${cfg("hm-probe", "home-manager", "extraPythonPackages = [ kitPy.hermes-nix-probe ];")}
      }`,
    );
    if (r.code !== 0) throw new Error(`nix-instantiate failed:\n${r.out}`);
    reports = JSON.parse(r.out) as Record<string, Report>;
  });

  it("the option is declared on NixOS and home-manager, a list of packages defaulting to [ ], not per profile", () => {
    // The harness without configurations prints the option rows nix/README.md's table is made of.
    const file = join(scratch.dir("options"), "options.nix");
    writeText(file, `import ${join(ROOT, "nix", "tests", "eval-modules.nix")} { lib = import ${libDir}; }`);
    const r = nixRun("nix-instantiate", ["--eval", "--strict", "--json", "--read-write-mode", file], userHome);
    expect(r.code, r.stderr).toBe(0);
    const options = (JSON.parse(r.stdout) as { options: Record<string, OptionRow[]> }).options;
    for (const kind of ["nixos", "home-manager"]) {
      const rows = options[kind]!;
      const row = rows.find((o) => o.name === "services.hermes-agent.extraPythonPackages");
      expect(row, kind).toMatchObject({ type: "list of package", default: "[ ]" });
      expect(row!.description).toContain("HERMES_PYTHON");
      // The interpreter is chosen per process, not per home: profiles have no option of their own.
      expect(
        rows.some((o) => /profiles\.<name>\.extraPythonPackages/.test(o.name)),
        kind,
      ).toBe(false);
    }
    const readme = readFileSync(join(ROOT, "nix", "README.md"), "utf8");
    expect(readme).toMatch(/^\| `extraPythonPackages` \| list of package \| `\[ \]` \|/m);
  });

  it("unset: no environment, and the service, the activation and the installed CLI are the package's own", () => {
    for (const name of ["nixos-none", "hm-none"]) {
      const r = reports[name]!;
      expect(r.failedAssertions, name).toEqual([]);
      expect(r.python.env, name).toBeNull();
      expect(r.python.pythonEnvironment, name).toEqual({});
      expect(r.python.cli.name, name).toBe("hermes-kit-0.1.0");
      expect(r.activation!.text, name).not.toContain("HERMES_PYTHON");
    }
    expect(reports["nixos-none"]!.service!.environment).not.toHaveProperty("HERMES_PYTHON");
    expect(reports["nixos-none"]!.systemPackages).toEqual(["hermes-kit-0.1.0"]);
    expect(reports["hm-none"]!.service!.Service!.Environment!.join(" ")).not.toContain("HERMES_PYTHON");
    expect(reports["hm-none"]!.packages).toEqual(["hermes-kit-0.1.0"]);
  });

  it("NixOS: the unit's HERMES_PYTHON is bin/python3 of the package's Python with exactly those packages", () => {
    const r = reports["nixos-py"]!;
    expect(r.failedAssertions).toEqual([]);
    // The package's `python` (3.12.9 here), not nixpkgs' default python3 (3.13.2 in the harness).
    expect(r.python.env).toMatchObject({
      name: "python3-3.12.9-env",
      packages: ["python3.12-requests-2.32.3", "python3.12-pyyaml-6.0.2"],
    });
    expect(r.python.env!.drvPath).toMatch(/^\/nix\/store\/[0-9a-z]{32}-python3-3\.12\.9-env\.drv$/);
    const interpreter = `${r.python.env!.path}/bin/python3`;
    expect(interpreter).toMatch(ENV_PYTHON);
    expect(r.service!.environment).toMatchObject({ HERMES_PYTHON: interpreter, HERMES_MANAGED: "nixos" });
    // The activation's `hermes compile` (which builds pip_dependencies environments) uses the same interpreter.
    expect(r.activation!.text).toContain(`\nexport HERMES_PYTHON=${interpreter}\nexec `);
    // addToSystemPackages installs the CLI wrapped to default to it (a user's own HERMES_PYTHON still wins).
    expect(r.systemPackages).toEqual(["hermes-kit-with-python-packages"]);
    expect(r.python.cli.postBuild).toMatch(
      new RegExp(
        "^rm \\$out/bin/hermes\\nmakeWrapper /nix/store/[0-9a-z]{32}-hermes-kit-0\\.1\\.0/bin/hermes " +
          "\\$out/bin/hermes " +
          `--set-default HERMES_PYTHON ${interpreter.replace(/\./g, "\\.")}\\n$`,
      ),
    );
  });

  it("NixOS: service.environment.HERMES_PYTHON, stated by the user, wins over the environment", () => {
    const r = reports["nixos-own"]!;
    expect(r.python.env).not.toBeNull();
    expect(r.service!.environment!.HERMES_PYTHON).toBe("/opt/py/bin/python3");
  });

  it("home-manager: the systemd user unit, the launchd agent and home.packages get the same interpreter", () => {
    const linux = reports["hm-py"]!;
    expect(linux.failedAssertions).toEqual([]);
    const interpreter = `${linux.python.env!.path}/bin/python3`;
    expect(interpreter).toMatch(ENV_PYTHON);
    expect(linux.service!.Service!.Environment).toContain(`HERMES_PYTHON=${interpreter}`);
    expect(linux.packages).toEqual(["hermes-kit-with-python-packages"]);
    expect(linux.activation!.text).toContain(`export HERMES_PYTHON=${interpreter}\n`);
    const mac = reports["hm-darwin-py"]!;
    expect(mac.launchd!.config.EnvironmentVariables.HERMES_PYTHON).toMatch(ENV_PYTHON);
  });

  it("a package of another Python, or no Python package at all, fails evaluation naming it", () => {
    const r = evaluate(
      "bad",
      `{ pkgs, drv }: {
        bad = { kind = "nixos"; strict = true; config = { pkgs, ... }: {
          services.hermes-agent = { enable = true; extraPythonPackages = [ pkgs.python3.pkgs.requests pkgs.ripgrep ]; };
        }; };
      }`,
    );
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(
      "services.hermes-agent.extraPythonPackages.[0] (python3.13-requests-2.32.3) is built for Python 3.13, but " +
        "the kit's Python is 3.12: take it from config.services.hermes-agent.package.python.pkgs.",
    );
    expect(r.out).toContain(
      "services.hermes-agent.extraPythonPackages.[1] (ripgrep-14.1) is not a Python package (it has no pythonModule)",
    );
  });

  it.skipIf(!python)(
    "the rendered environment, built, gives a Python plugin its package under the service's HERMES_PYTHON",
    async () => {
      expect(existsSync(CLI), "npm run build first").toBe(true);
      const r = reports["hm-probe"]!;
      const built = nixRun("nix-store", ["--realise", r.python.env!.drvPath], userHome);
      expect(built.code, built.stderr).toBe(0);
      expect(built.stdout.trim()).toBe(r.python.env!.path);
      const interpreter = r.service!.Service!.Environment!.find((e) => e.startsWith("HERMES_PYTHON="))!.slice(14);
      expect(interpreter).toBe(`${r.python.env!.path}/bin/python3`);

      const home = join(scratch.dir("run"), "home");
      writeText(join(home, "plugins", "nixprobe", "plugin.yaml"), 'name: nixprobe\nversion: "1.0"\n');
      writeText(
        join(home, "plugins", "nixprobe", "__init__.py"),
        "import hermes_nix_probe\n\n\ndef register(ctx):\n" +
          "    ctx.register_cli_command('nixprobe', 'which package answered', lambda p: p.add_argument('word'),\n" +
          "                             lambda args: f'{args.word} from {hermes_nix_probe.NAME}')\n",
      );
      const env = { HERMES_PYTHON: undefined };
      const en = await runCli(["--home", home, "plugins", "enable", "nixprobe"], { env });
      expect(en.code, en.stderr).toBe(0);

      const withEnv = await runCli(["--home", home, "nixprobe", "hi"], { env: { HERMES_PYTHON: interpreter } });
      expect(withEnv.code, withEnv.stderr).toBe(0);
      expect(withEnv.stdout.trim()).toBe("hi from python3.12-hermes-nix-probe-1.0");
      const why = await runCli(["--home", home, "plugins", "why", "nixprobe"], { env: { HERMES_PYTHON: interpreter } });
      expect(why.stdout).toContain(`(${interpreter})`);

      // The same plugin under the plain python3: the package is not there, so the plugin does not load.
      const without = await runCli(["--home", home, "nixprobe", "hi"], { env });
      expect(without.code).not.toBe(0);
      expect(without.stderr).toContain("No module named 'hermes_nix_probe'");
    },
  );
});
