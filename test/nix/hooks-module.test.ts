/**
 * Issue 18: shell hooks and gateway event hooks in the NixOS module, through nixpkgs' real
 * `lib.evalModules` (nix/tests/eval-modules.nix): `services.hermes-agent.hooks` renders into the
 * spec's settings, `eventHooks` into the spec's event hook folders, and the rendered spec compiles
 * into a home whose lock holds the event hook and whose config.yaml runs the shell hook.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT, runCli } from "../support/cli.js";
import { writeText } from "../support/home.js";
import { nixRun, nixTestFile } from "./helpers.js";

const HARNESS = join(ROOT, "nix", "tests", "eval-modules.nix");
const { scratch, userHome, libDir, suite } = nixTestFile(
  "test/nix/hooks-module.test.ts",
  "module evaluation",
  "hermes-nix-hooks-",
);

interface Report {
  specs: Array<{ name: string; spec: Record<string, unknown>; specPath: string }>;
}

function evalReports(configurations: string): Record<string, Report> {
  const file = writeText(
    join(scratch.dir("eval"), "configs.nix"),
    `import ${HARNESS} { lib = import ${libDir}; configurations = ${configurations}; }`,
  );
  const r = nixRun("nix-instantiate", ["--eval", "--strict", "--json", "--read-write-mode", file], userHome);
  if (r.code !== 0) throw new Error(`nix-instantiate failed:\n${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, Report>;
}

suite("hooks and eventHooks of the NixOS module", () => {
  it("render into the spec, and the spec compiles into the lock and config.yaml", async () => {
    const src = scratch.dir("src");
    writeText(join(src, "audit", "HOOK.yaml"), "name: audit\ndescription: audit log\nevents: [agent:end]\n");
    writeText(join(src, "audit", "handler.js"), "export function handle() {}\n");
    const reports = evalReports(
      `{ pkgs, drv }: { with-hooks = { kind = "nixos"; config.services.hermes-agent = {
        enable = true;
        hooks.pre_tool_call = [
          { matcher = "terminal"; command = "/bin/true"; timeout = 5; }
          { command = "/bin/false"; }
        ];
        eventHooks = [ ${src}/audit ];
        profiles.work.hooks.post_tool_call = [ { command = "/bin/true"; } ];
      }; }; }`,
    );
    const [main, work] = reports["with-hooks"]!.specs;
    expect(main!.spec.settings).toEqual({
      hooks: { pre_tool_call: [{ matcher: "terminal", command: "/bin/true", timeout: 5 }, { command: "/bin/false" }] },
    });
    const eventHooks = main!.spec.eventHooks as string[];
    expect(eventHooks).toHaveLength(1);
    expect(eventHooks[0]).toMatch(/^\/nix\/store\/[0-9a-z]{32}-audit$/);
    expect(work!.spec.settings).toEqual({ hooks: { post_tool_call: [{ command: "/bin/true" }] } });
    expect(work!.spec.eventHooks).toBeUndefined();

    const home = join(scratch.dir("run"), "hermes");
    const c = await runCli(["--home", home, "compile", "--spec", main!.specPath, "--managed", "nixos"]);
    expect(c.code, c.stderr).toBe(0);
    const lock = JSON.parse(readFileSync(join(home, "hermes.lock.json"), "utf8")) as {
      event_hooks: Array<{ name: string; source: string; path: string }>;
    };
    expect(lock.event_hooks).toMatchObject([{ name: "audit", source: "spec", path: eventHooks[0] }]);
    const list = await runCli(["--home", home, "hooks", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const l = JSON.parse(list.stdout) as { shell: Array<{ owner: string }>; event: Array<{ state: string }> };
    expect(l.shell.map((s) => s.owner)).toEqual(["shell:0", "shell:1"]);
    expect(l.event).toMatchObject([{ state: "locked" }]);
    const chain = await runCli(["--home", home, "plugins", "chain", "pre_tool_call", "--json"]);
    expect(chain.code, chain.stderr + chain.stdout).toBe(0);
    expect((JSON.parse(chain.stdout) as { hooks: Record<string, string[]> }).hooks.pre_tool_call).toEqual([
      "shell:0",
      "shell:1",
    ]);
  });
});
