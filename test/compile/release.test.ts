/**
 * Releasing a home (an empty spec applied where a deployment declared settings) hands back
 * exactly what the deployment owned: its leaves go, and so do the mappings only they filled,
 * while the user's own keys and comments stay.
 */
import { readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { parse } from "yaml";
import { runCli } from "../support/cli.js";
import { Scratch, writePlugin } from "../support/home.js";

const scratch = new Scratch("hermes-release-");
afterAll(() => scratch.cleanup());

it("an empty spec leaves no empty mappings behind and keeps the user's keys", async () => {
  const src = scratch.dir("src");
  const bundled = scratch.dir("bundled");
  const home = join(scratch.dir("h"), "home");
  writePlugin(join(src, "alpha"), 'name: alpha\nversion: "1.0"\n');
  const spec = join(src, "spec.json");
  const empty = join(src, "empty.json");
  writeFileSync(
    spec,
    JSON.stringify({
      version: 1,
      plugins: [{ path: join(src, "alpha"), settings: { units: "metric", nested: { a: 1 } } }],
      settings: { model: { default: "x/y" }, agent: { max_turns: 3 }, terminal: { timeout: 9 } },
    }),
  );
  writeFileSync(empty, JSON.stringify({ version: 1, plugins: [], npmPackages: [], settings: {}, listPolicy: "union" }));
  const run = (args: string[]) => runCli(["--home", home, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } });
  expect((await run(["compile", "--spec", spec, "--managed", "nixos"])).code).toBe(0);
  // The user's own key beside a deployment-owned one, and a comment.
  const config = join(home, "config.yaml");
  writeFileSync(
    config,
    readFileSync(config, "utf8").replace("terminal:\n", "terminal:\n  # mine\n  output_limit: 100\n"),
  );
  appendFileSync(config, "display:\n  compact: true\n");
  const r = await run(["compile", "--spec", empty]);
  expect(r.code, r.stderr).toBe(0);
  const text = readFileSync(config, "utf8");
  expect(text).not.toMatch(/\{\}/);
  // The first compile made the home, whose new config.yaml got the current version.
  expect(parse(text)).toEqual({
    plugins: { enabled: [] },
    terminal: { output_limit: 100 },
    _config_version: 21,
    display: { compact: true },
  });
  expect(text).toContain("# mine");
});
