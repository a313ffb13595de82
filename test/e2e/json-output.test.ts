import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hermes, newHome, pluginFiles, Repo, type Ctx } from "../install/helpers.js";
import { runCli } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch, writePlugin, writeText } from "../support/home.js";

let s: Scratch;
let ctx: Ctx;
let repo: Repo;

beforeAll(() => {
  s = new Scratch("hermes-json-");
  ctx = { s, bundled: bundledWithHelloWorld(s) };
  repo = new Repo(s.dir("repos"), "acme/weather", pluginFiles("weather", "requires_env: [WEATHER_KEY]\n"));
});
afterAll(() => s.cleanup());

/** Every key of a JSON document that is not snake_case (maps keyed by user data aside: none here). */
function camelKeys(v: unknown, at = "$"): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => camelKeys(x, `${at}[${i}]`));
  if (v && typeof v === "object")
    return Object.entries(v).flatMap(([k, x]) => [
      ...(/[A-Z]/.test(k) ? [`${at}.${k}`] : []),
      ...camelKeys(x, `${at}.${k}`),
    ]);
  return [];
}

describe("machine output: --json with snake_case keys", () => {
  it("install, update and remove print their result as JSON on stdout; progress goes to stderr", async () => {
    const h = newHome(s, "iur", "plugins:\n  enabled: []\n");
    const i = await hermes(ctx, h, ["install", repo.url, "--json"]);
    expect(i.code, i.stderr).toBe(0);
    const inst = JSON.parse(i.stdout) as Record<string, unknown>;
    expect(inst).toMatchObject({
      name: "weather",
      key: "weather",
      revision: repo.head(),
      pinned: false,
      enabled: false,
      missing_env: ["WEATHER_KEY"],
    });
    expect(typeof inst.generation).toBe("number");
    expect(camelKeys(inst)).toEqual([]);
    expect(i.stderr).toMatch(/Cloning|Installing|installed/i);

    repo.commit({ "index.js": "export function register() {}\n// v2\n" }, "v2");
    const u = await hermes(ctx, h, ["update", "weather", "--json"]);
    expect(u.code, u.stderr).toBe(0);
    const upd = JSON.parse(u.stdout) as Record<string, unknown>;
    expect(upd).toMatchObject({ key: "weather", revision: repo.head(), up_to_date: false, local_changes: "none" });
    expect(camelKeys(upd)).toEqual([]);

    const x = await hermes(ctx, h, ["pack", "export", "--json"]);
    expect(x.code, x.stderr).toBe(0);
    const exported = JSON.parse(x.stdout) as { pack: { plugins: Array<{ ref: string }> }; warnings: string[] };
    expect(exported.pack.plugins.map((p) => p.ref)).toEqual([repo.head()]);
    expect(camelKeys(exported)).toEqual([]);

    const r = await hermes(ctx, h, ["remove", "weather", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const rem = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(rem).toMatchObject({ name: "weather", key: "weather" });
    expect(camelKeys(rem)).toEqual([]);
  });

  it(
    "compile, lock verify, why and show use snake_case keys only (load_order, inputs_hash, lock_changed, " +
      "manifest_changed, real_path, load_position, manifest_file)",
    async () => {
      const home = s.dir("home-keys");
      const bundled = s.dir("bundled-keys");
      writePlugin(join(home, "plugins", "memo"), "name: memo\nversion: 1.0.0\n");
      writePlugin(join(bundled, "core-backend"), "name: core-backend\nkind: backend\n");
      writeText(join(home, "config.yaml"), "plugins:\n  enabled: [memo]\n");
      const env = { HERMES_BUNDLED_PLUGINS: bundled };
      const dry = await runCli(["compile", "--dry-run", "--json"], { home, env });
      const plan = JSON.parse(dry.stdout) as Record<string, unknown>;
      expect(plan).toMatchObject({ load_order: ["core-backend", "memo"], lock_changed: true });
      expect(plan.inputs_hash).toMatch(/^sha256:/);
      expect(camelKeys(plan)).toEqual([]);
      expect((await runCli(["compile"], { home, env })).code).toBe(0);
      writeText(join(home, "plugins", "memo", "plugin.yaml"), "name: memo\nversion: 1.0.1\n");
      const [verify, why, whyBundled, show] = await Promise.all([
        runCli(["lock", "verify", "--json"], { home, env }),
        runCli(["plugins", "why", "memo", "--json"], { home, env }),
        runCli(["plugins", "why", "core-backend", "--json"], { home, env }),
        runCli(["plugins", "show", "memo", "--json"], { home, env }),
      ]);
      const drift = JSON.parse(verify.stdout) as Record<string, unknown>;
      expect(JSON.stringify(drift)).toContain('"manifest_changed":true');
      expect(camelKeys(drift)).toEqual([]);
      const w = JSON.parse(whyBundled.stdout) as Record<string, unknown>;
      expect(w).toMatchObject({
        real_path: join(bundled, "core-backend"),
        load_position: 1,
        capabilities: { consent_current: expect.any(Boolean) },
      });
      for (const r of [why, whyBundled, show]) expect(camelKeys(JSON.parse(r.stdout))).toEqual([]);
      expect(JSON.parse(show.stdout)).toMatchObject({ manifest_file: join(home, "plugins", "memo", "plugin.yaml") });
      expect(readFileSync(join(home, "config.yaml"), "utf8")).toContain("memo");
    },
  );

  it(
    "demo --json: one JSON document on stdout (the turn's result), the timeline and what plugins print on " + "stderr",
    async () => {
      const r = await runCli(["demo", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const d = JSON.parse(r.stdout) as { completed: boolean; kept: boolean; tool_calls: Array<{ tool_name: string }> };
      expect(d).toMatchObject({ completed: true, kept: false, exit_reason: "completed" });
      expect(d.tool_calls.map((t) => t.tool_name)).toEqual(["terminal", "hello_world"]);
      expect(camelKeys(d)).toEqual([]);
      expect(r.stderr).toContain("llm_execution elapsed_ms=");
    },
  );

  it(
    "GitHub annotations name files relative to the working directory when under it (absolute otherwise); scan " +
      "takes --json",
    async () => {
      const root = s.dir("ann");
      writePlugin(join(root, "p"), "name: p\nhooks: [post_tool_cal]\n");
      const [inside, outside, scanJson, scanFormat] = await Promise.all([
        runCli(["plugins", "validate", "p", "--format", "github"], { cwd: root }),
        runCli(["plugins", "validate", join(root, "p"), "--format", "github"]),
        runCli(["plugins", "scan", join(root, "p"), "--json"]),
        runCli(["plugins", "scan", join(root, "p"), "--format", "json"]),
      ]);
      expect(inside.stdout).toMatch(/^::warning file=p\/plugin\.yaml,line=2,col=9,title=W_MANIFEST_UNKNOWN_HOOK::/m);
      expect(outside.stdout).toContain(`::warning file=${join(root, "p", "plugin.yaml")},line=2`);
      expect(scanJson.code).toBe(0);
      expect(JSON.parse(scanJson.stdout)).toEqual(JSON.parse(scanFormat.stdout));
    },
  );
});
