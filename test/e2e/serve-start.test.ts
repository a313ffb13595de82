/**
 * hermes serve starts through the same lock-driven runtime start as chat: a managed home whose lock is
 * stale is refused with the command that fixes it (nothing listens); an unmanaged home is recompiled,
 * saying why, and the line it prints names the new generation.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, spawnCli, STACK_RE } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { type EchoModel, echoModel, serve, writeServeConfig } from "./serve-helpers.js";

const scratch = new Scratch("hk-serve-start-");
let model: EchoModel;

beforeAll(async () => {
  model = await echoModel();
});
afterAll(async () => {
  await model.close();
  scratch.cleanup();
});

function homeWithPlugin(name: string): string {
  const home = scratch.dir(name);
  writeServeConfig(home, model.url, "plugins:\n  enabled: [zeta]\n");
  writeText(join(home, "plugins", "zeta", "plugin.yaml"), "name: zeta\nversion: 1.0.0\n");
  writeText(join(home, "plugins", "zeta", "index.js"), "export function register(ctx) {}\n");
  return home;
}

describe("hermes serve start-up", () => {
  it("a managed home with a stale lock is refused with the deployment's command; nothing listens", async () => {
    const home = homeWithPlugin("managed");
    const spec = writeText(join(scratch.root, "spec.yaml"), "plugins: []\n");
    expect((await runCli(["--home", home, "compile", "--spec", spec, "--managed", "nixos"])).code).toBe(0);
    writeText(join(home, "plugins", "zeta", "index.js"), "export function register(ctx) { /* edited */ }\n");
    const p = spawnCli(["--home", home, "serve", "--port", "0"]);
    const done = await p.done;
    expect(done.code).toBe(1);
    expect(p.stderr()).toContain("E_COMPILE_STALE");
    expect(p.stderr()).toContain(`hermes compile --spec ${spec} --managed nixos`);
    expect(p.stderr()).not.toContain("listening on");
    expect(p.stderr()).not.toMatch(STACK_RE);
  });

  it("an unmanaged home is recompiled with a warning naming the plugin, then serves the new generation", async () => {
    const home = homeWithPlugin("unmanaged");
    expect((await runCli(["--home", home, "compile"])).code).toBe(0);
    writeText(join(home, "plugins", "zeta", "index.js"), "export function register(ctx) { /* edited */ }\n");
    const s = await serve(home);
    try {
      const err = s.proc.stderr();
      expect(err).toContain("~ zeta (files changed); recompiling");
      // zeta, and the bundled model-provider profile (those load at every start).
      expect(err).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ · generation 2 · 2 plugin\(s\) loaded/);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it("a SIGTERM sent the moment the listening line arrives stops gracefully (exit 0), every time", async () => {
    const home = homeWithPlugin("instant-stop");
    expect((await runCli(["--home", home, "compile"])).code).toBe(0);
    // Several cycles, each start recompiling (zeta edited), as in the test above: the signal lands in whatever
    // the process does right after the line.
    for (let i = 0; i < 6; i++) {
      writeText(join(home, "plugins", "zeta", "index.js"), `export function register(ctx) { /* edit ${i} */ }\n`);
      const p = spawnCli(["--home", home, "serve", "--port", "0"]);
      p.child.stderr?.on("data", () => {
        if (p.stderr().includes("listening on") && p.child.signalCode === null) p.child.kill("SIGTERM");
      });
      const done = await p.done;
      expect({ cycle: i, ...done, stderr: p.stderr() }).toMatchObject({ cycle: i, code: 0, signal: null });
      expect(p.stderr()).toContain("hermes serve: SIGTERM: stopping");
    }
  });
});
