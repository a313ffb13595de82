/**
 * Without a terminal, install, enable and update never wait for input: every run below has stdin
 * closed or an open pipe that is never written to, and a plugin that would prompt for everything
 * on a terminal (enable, capabilities, secrets, a caution scan verdict).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunOptions } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch } from "../support/home.js";
import { hermes, newHome, pluginFiles, Repo, type Ctx, type Home } from "./helpers.js";

let s: Scratch;
let ctx: Ctx;
let repos: string;
let promptsAll: Repo;
let cautious: Repo;

const MANIFEST = "capabilities: [tools.override]\nrequires_env:\n  - name: NOTTY_SECRET\n    secret: true\n";

beforeAll(() => {
  s = new Scratch("hermes-notty-");
  repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s) };
  promptsAll = new Repo(repos, "acme/asks", pluginFiles("asks", MANIFEST));
  cautious = new Repo(repos, "acme/cautious", { ...pluginFiles("cautious"), "setup.sh": "#!/bin/sh\nls ~/.ssh/\n" });
});
afterAll(() => s?.cleanup());

const inputs: Array<[string, RunOptions["input"]]> = [
  ["stdin closed", undefined],
  ["stdin an open pipe that never writes", { keepOpen: true }],
];

const cfg = (h: Home) =>
  (parse(readFileSync(join(h.home, "config.yaml"), "utf8")) ?? {}) as {
    plugins: { enabled?: string[]; entries?: Record<string, unknown> };
  };

describe.concurrent.each(inputs)("no TTY (%s)", { timeout: 300_000 }, (_label, input) => {
  const run = (h: Home, args: string[]) => hermes(ctx, h, args, { input, timeoutMs: 150_000 });

  it("install: not enabled, nothing granted, env listed, no prompt", async () => {
    const h = newHome(s, "install");
    const r = await run(h, ["install", promptsAll.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Plugin installed but not enabled.");
    expect(r.stdout).toContain("capabilities NOT granted (fail closed)");
    expect(r.stdout).toContain("NOTTY_SECRET");
    expect(r.stdout).not.toMatch(/\[y\/N\]/);
    // A brand-new home: nothing grandfathered, nothing enabled.
    expect(cfg(h).plugins?.enabled).toBeUndefined();
    expect(cfg(h).plugins?.entries).toBeUndefined();
  });

  it("install of a 'caution' plugin is refused (nobody to ask), not left waiting", async () => {
    const h = newHome(s, "caution");
    const r = await run(h, ["install", cautious.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_INSTALL_SCAN_CAUTION");
    expect(r.stderr).toContain("ssh_dir_access");
    const forced = await run(h, ["install", cautious.url, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
  });

  it("enable and update: pending consent is printed, never asked", async () => {
    const h = newHome(s, "enable-update");
    expect((await run(h, ["install", promptsAll.url])).code).toBe(0);
    const e = await run(h, ["enable", "asks"]);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).toContain("capabilities NOT granted");
    expect(cfg(h).plugins.enabled).toEqual(["asks"]);
    const u = await run(h, ["update", "asks"]);
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout).toContain("already up to date");
  });
});
