import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { devNull } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { agentHome, fakeOpenAI, type ChatJson } from "./agent-helpers.js";

/**
 * Issue 20: a Python plugin's pip_dependencies and requirements.txt are installed by real pip into a
 * per-plugin virtual environment at install/enable/compile time. No network: the wheels are built here
 * and pip reads them from a find-links folder with the index off.
 */
const scratch = new Scratch("hermes-e2e-pyenv-");
afterAll(() => scratch.cleanup());

let skip = "";
let wheels = "";
beforeAll(() => {
  const probe = join(scratch.dir("probe"), "venv");
  try {
    execFileSync("python3", ["-c", "import sys; assert sys.version_info >= (3, 10)"]);
    execFileSync("python3", ["-m", "venv", "--without-pip", "--system-site-packages", probe], { stdio: "pipe" });
    execFileSync(join(probe, "bin", "python"), ["-m", "pip", "--version"], { stdio: "pipe" });
  } catch (e) {
    skip = `python3 (3.10+) with venv and pip is unavailable (${(e as Error).message.split("\n")[0]})`;
    console.log(`Python environment tests skipped: ${skip}`);
    return;
  }
  wheels = scratch.dir("wheels");
  wheel("hkgreet", "1.0", "def greet(who):\n    return f'Hi {who} from hkgreet'\n");
  wheel("hkshout", "1.0", "def shout(s):\n    return s.upper()\n");
});

/** A pure-Python wheel written by hand: the module, METADATA, WHEEL and a RECORD with real hashes. */
function wheel(name: string, version: string, init: string): void {
  const script = `
import base64, hashlib, sys, zipfile
name, version, init, out = sys.argv[1:5]
info = f"{name}-{version}.dist-info"
files = {
    f"{name}/__init__.py": init,
    f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: hand\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
def digest(text):
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
record = [f"{p},sha256={digest(t)},{len(t.encode())}" for p, t in files.items()] + [f"{info}/RECORD,,"]
files[f"{info}/RECORD"] = "\\n".join(record) + "\\n"
with zipfile.ZipFile(f"{out}/{name}-{version}-py3-none-any.whl", "w") as z:
    for p, t in files.items():
        z.writestr(p, t)
`;
  execFileSync("python3", ["-c", script, name, version, init, wheels]);
}

/** A plugin in the original's style whose tool imports the packages its environment holds. */
function pyPlugin(dir: string, o: { name: string; tool: string; pip?: string[]; requirements?: string; body: string }) {
  const pip = o.pip ? `pip_dependencies: [${o.pip.map((p) => JSON.stringify(p)).join(", ")}]\n` : "";
  writeText(join(dir, "plugin.yaml"), `name: ${o.name}\nversion: "1.0"\n${pip}`);
  if (o.requirements !== undefined) writeText(join(dir, "requirements.txt"), o.requirements);
  writeText(
    join(dir, "__init__.py"),
    `import json\n\n\ndef register(ctx):
    schema = {"name": "${o.tool}", "description": "t", "parameters": {"type": "object", "properties": {}}}

    def handle(params, **kwargs):
${o.body}

    ctx.register_tool(name="${o.tool}", toolset="${o.name}", schema=schema, handler=handle)
`,
  );
}

const GREETER = {
  name: "greeter",
  tool: "greet",
  pip: ["hkgreet"],
  requirements: "hkshout==1.0\n",
  body: "        import hkgreet, hkshout\n        return json.dumps({'text': hkshout.shout(hkgreet.greet('Ada'))})",
};

function pipEnv(bundled: string): Record<string, string> {
  // The machine's pip configuration (indexes, constraints) stays out: only the wheels built here count.
  return { HERMES_BUNDLED_PLUGINS: bundled, PIP_CONFIG_FILE: devNull, PIP_NO_INDEX: "1", PIP_FIND_LINKS: wheels };
}

async function chatTool(home: string, env: Record<string, string>, tool: string) {
  const server = await fakeOpenAI([{ tools: [{ name: tool, arguments: "{}" }] }, { say: "done" }]);
  try {
    const r = await runCli(["--home", home, "chat", "--base-url", server.url, "--model", "m", "-q", "go", "--json"], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    return { out: JSON.parse(r.stdout) as ChatJson, stderr: r.stderr };
  } finally {
    await server.close();
  }
}

const stampOf = (home: string, key: string) => join(home, "python-envs", key, "hermes-env.json");

// Several real pip runs per test: in CI they share two cores with the kill matrices, hence the long timeout.
const PIP_TESTS = { timeout: 240_000 };
describe.runIf(process.platform !== "win32")(
  "Python plugin environments (pip_dependencies, requirements.txt)",
  PIP_TESTS,
  () => {
    it("install builds the environment; a tool imports it in hermes chat; later compiles run no pip", async () => {
      if (skip) return;
      const root = scratch.dir("install");
      const h = agentHome(root);
      const env = pipEnv(h.bundled);
      const src = join(root, "src", "greeter");
      pyPlugin(src, GREETER);
      const inst = await runCli(["--home", h.home, "plugins", "install", src, "--enable"], { env });
      expect(inst.code, inst.stderr).toBe(0);
      expect(inst.stderr).toContain("python env greeter: installing hkgreet, -r ");
      expect(inst.stderr).toContain("python env greeter: ready");
      const venv = join(h.home, "python-envs", "greeter");
      const why = await runCli(["--home", h.home, "plugins", "why", "greeter"], { env });
      expect(why.stdout).toContain(`environment: ${venv}`);
      // Nothing was written into the plugin folder (it is hashed into the lock).
      expect(existsSync(join(h.home, "plugins", "greeter", "lib"))).toBe(false);

      const chat = await chatTool(h.home, env, "greet");
      expect(chat.out.tool_calls[0]).toMatchObject({ tool_name: "greet", status: "success" });
      expect(JSON.parse(chat.out.tool_calls[0]!.result)).toEqual({ text: "HI ADA FROM HKGREET" });

      // A no-op compile reads the record and stops: pip does not run, the stamp is not rewritten.
      const stamp = statSync(stampOf(h.home, "greeter")).mtimeMs;
      const target = readlinkSync(venv);
      const again = await runCli(["--home", h.home, "compile"], { env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toContain("python env");
      // A changed plugin with the same requirements reuses its environment (the stamp's hash matches).
      writeText(
        join(h.home, "plugins", "greeter", "__init__.py"),
        `${readFileSync(join(h.home, "plugins", "greeter", "__init__.py"), "utf8")}# edited\n`,
      );
      for (const args of [["compile"], ["compile", "--full-hash"]]) {
        const r = await runCli(["--home", h.home, ...args], { env });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).not.toContain("installing");
      }
      expect(statSync(stampOf(h.home, "greeter")).mtimeMs).toBe(stamp);
      expect(readlinkSync(venv)).toBe(target);
    });

    it("a missing package is named; the lock is written; the plugin fails at load; the old env stays", async () => {
      if (skip) return;
      const root = scratch.dir("missing");
      const h = agentHome(root, { enabled: ["greeter"] });
      const env = pipEnv(h.bundled);
      pyPlugin(join(h.home, "plugins", "greeter"), GREETER);
      const needy = {
        name: "needy",
        tool: "need",
        pip: ["hkgreet", "hknothere>=2"],
        body: "        import hknothere\n        return json.dumps({'v': hknothere.VALUE})",
      };
      pyPlugin(join(h.home, "plugins", "needy"), needy);
      const first = await runCli(["--home", h.home, "compile"], { env });
      expect(first.code, first.stderr).toBe(0);
      const en = await runCli(["--home", h.home, "plugins", "enable", "needy"], { env });
      expect(en.code, en.stderr).toBe(0);
      expect(en.stderr).toContain("E_PYENV_PACKAGE_NOT_FOUND");
      expect(en.stderr).toContain("pip found no distribution of 'hknothere' (hknothere>=2), which plugin needy needs");
      expect(en.stderr).toContain("PIP_FIND_LINKS");
      expect(en.stderr).not.toMatch(STACK_RE);
      const lock = JSON.parse(readFileSync(join(h.home, "hermes.lock.json"), "utf8")) as { load_order: string[] };
      expect(lock.load_order).toContain("needy");
      const why = await runCli(["--home", h.home, "plugins", "why", "needy"], { env });
      expect(why.stdout).toMatch(/environment: not built — pip found no distribution of 'hknothere'/);

      const chat = await chatTool(h.home, env, "greet");
      expect(chat.out.tool_calls[0]).toMatchObject({ tool_name: "greet", status: "success" });
      expect(chat.stderr).toContain("Failed to load plugin 'needy': pip found no distribution of 'hknothere'");
      const lastRun = await runCli(["--home", h.home, "plugins", "why", "needy"], { env });
      expect(lastRun.stdout).toContain("last run:  failed — pip found no distribution of 'hknothere'");

      // A failed rebuild leaves the environment that was there.
      const venv = join(h.home, "python-envs", "greeter");
      const before = readlinkSync(venv);
      pyPlugin(join(h.home, "plugins", "greeter"), { ...GREETER, pip: ["hkgreet", "hknothere"] });
      const broke = await runCli(["--home", h.home, "compile"], { env });
      expect(broke.code, broke.stderr).toBe(0);
      expect(broke.stderr).toContain("which plugin greeter needs");
      expect(readlinkSync(venv)).toBe(before);
      expect(existsSync(join(venv, "hermes-requirements.txt"))).toBe(true);
      expect(readFileSync(join(venv, "hermes-requirements.txt"), "utf8")).not.toContain("hknothere");

      // The wheel arrives: the next compile builds both, and the plugin loads.
      wheel("hknothere", "2.0", "VALUE = 42\n");
      const fixed = await runCli(["--home", h.home, "compile"], { env });
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(fixed.stderr).toContain("python env needy: ready");
      expect(fixed.stderr).toContain("python env greeter: ready");
      // The environment greeter had before is removed once the new one is in place.
      expect(readdirSync(join(h.home, "python-envs", ".store")).sort()).toEqual(
        [readlinkSync(venv), readlinkSync(join(h.home, "python-envs", "needy"))].map((l) => basename(l)).sort(),
      );
      const works = await chatTool(h.home, env, "need");
      expect(works.out.tool_calls[0]).toMatchObject({ tool_name: "need", status: "success" });
      expect(JSON.parse(works.out.tool_calls[0]!.result)).toEqual({ v: 42 });
    });
  },
);
