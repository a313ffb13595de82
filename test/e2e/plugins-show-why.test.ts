import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch, writePlugin, writeText } from "../support/home.js";

interface Explanation {
  key: string;
  name: string;
  aliases: string[];
  source: string;
  origin: string;
  version?: string;
  path: string;
  state: string;
  action: string;
  reason: string;
  load_position?: number;
  requires: string[];
  shadowed_by?: { key: string; source: string; path: string; reason: string };
  shadows: { source: string; path: string; reason: string }[];
  diagnostics: { code: string }[];
}

let s: Scratch;
let bundled: string;
let home: string;

beforeAll(() => {
  s = new Scratch();
  bundled = bundledWithHelloWorld(s);
  home = s.dir("home");
  const p = join(home, "plugins");
  writePlugin(
    join(p, "image_gen", "openai"),
    "name: openai-image\nversion: 2.0.0\ndescription: |\n  Image generation.\n  Second line.\nauthor: " +
      "someone\nprovides_tools: [make_image]\n",
  );
  writePlugin(join(p, "alpha"), "name: alpha\nversion: 0.1.0\nrequires_plugins: [zeta]\n");
  writePlugin(join(p, "zeta"), "name: zeta\nversion: 0.2.0\n");
  writePlugin(join(p, "off"), "name: off\n");
  writePlugin(join(p, "idle"), "name: idle\n");
  writeText(
    join(home, "config.yaml"),
    "plugins:\n  enabled:\n    - alpha\n    - zeta\n    - openai-image\n    - off\n  disabled:\n    - off\n",
  );
});
afterAll(() => s.cleanup());

const run = (args: string[], h = home) => runCli(args, { home: h, env: { HERMES_BUNDLED_PLUGINS: bundled } });
const why = async (name: string, h = home) => {
  const r = await run(["plugins", "why", name, "--json"], h);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Explanation;
};

describe.concurrent("hermes plugins show", () => {
  it("shows key, source, path and status of a category plugin found by its manifest name", async () => {
    const r = await run(["plugins", "show", "openai-image"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("openai-image v2.0.0");
    expect(r.stdout).toContain("Image generation.\nSecond line.\n");
    expect(r.stdout).toMatch(/^Status:\s+enabled$/m);
    expect(r.stdout).toMatch(/^Source:\s+user \(local\)$/m);
    expect(r.stdout).toMatch(/^Key:\s+image_gen\/openai$/m);
    expect(r.stdout).toContain(`Path:         ${join(home, "plugins", "image_gen", "openai")}\n`);
    expect(r.stdout).toMatch(/^Author:\s+someone$/m);
    expect(r.stdout).toMatch(/^Tools:\s+make_image$/m);
    // `info` is an alias, the leaf name resolves too
    const info = await run(["plugins", "info", "openai"]);
    expect(info.stdout).toBe(r.stdout);
  });

  it("--json includes the list row (status, reason, loads), the manifest and the manifest file", async () => {
    const r = await run(["plugins", "show", "image_gen/openai", "--json"]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(j).toMatchObject({
      key: "image_gen/openai",
      name: "openai-image",
      status: "enabled",
      source: "user",
      origin: "local",
      path: join(home, "plugins", "image_gen", "openai"),
      loads: true,
      reason: "enabled in config",
      manifest_file: join(home, "plugins", "image_gen", "openai", "plugin.yaml"),
      diagnostics: [],
    });
    expect((j.manifest as { provides_tools: string[] }).provides_tools).toEqual(["make_image"]);
  });

  it("shows a bundled plugin's state", async () => {
    const r = await run(["plugins", "show", "hello-world"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Status:\s+not enabled$/m);
    expect(r.stdout).toMatch(/^Source:\s+bundled$/m);
    expect(r.stdout).toContain(`Path:         ${join(bundled, "hello-world")}\n`);
  });

  it("not found: exit 1 with E_PLUGIN_NOT_FOUND (text and --json)", async () => {
    const [t, j] = await Promise.all([run(["plugins", "show", "alpah"]), run(["plugins", "show", "alpah", "--json"])]);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain("E_PLUGIN_NOT_FOUND");
    expect(t.stderr).toContain("did you mean 'alpha'");
    expect(t.stderr).not.toMatch(STACK_RE);
    expect(j.code).toBe(1);
    expect((JSON.parse(j.stdout) as { error: { code: string } }).error.code).toBe("E_PLUGIN_NOT_FOUND");
  });
});

describe.concurrent("hermes plugins why", () => {
  it("text: key, version, verdict, reason, state, source, path, aliases, order", async () => {
    const r = await run(["plugins", "why", "openai-image"]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("image_gen/openai v2.0.0: loads");
    expect(r.stdout).toMatch(/^ {2}why:\s+enabled in config$/m);
    expect(r.stdout).toMatch(/^ {2}state:\s+enabled$/m);
    expect(r.stdout).toMatch(/^ {2}source:\s+user \(local\)$/m);
    expect(r.stdout).toContain(`  path:      ${join(home, "plugins", "image_gen", "openai")}\n`);
    expect(r.stdout).toMatch(/^ {2}aliases:\s+openai-image$/m);
    expect(r.stdout).toMatch(/^ {2}order:\s+#1 in load order$/m);
  });

  it("--json: aliases, state, action, reason and load position (requires_plugins beats key order)", async () => {
    const [img, alpha, zeta] = await Promise.all([why("image_gen/openai"), why("alpha"), why("zeta")]);
    expect(img).toMatchObject({
      key: "image_gen/openai",
      name: "openai-image",
      aliases: ["openai-image"],
      state: "enabled",
      action: "load",
      reason: "enabled in config",
      load_position: 1,
      source: "user",
    });
    // alpha requires zeta: zeta loads first although 'alpha' sorts first
    expect(zeta.load_position).toBe(2);
    expect(alpha).toMatchObject({ load_position: 3, requires: ["zeta"], aliases: [] });
    const t = await run(["plugins", "why", "alpha"]);
    expect(t.stdout).toMatch(/^ {2}requires:\s+zeta$/m);
    expect(t.stdout).toMatch(/^ {2}order:\s+#3 in load order$/m);
  });

  it("explains a disabled and a not-enabled plugin (no load position)", async () => {
    const [off, idle] = await Promise.all([why("off"), why("idle")]);
    expect(off).toMatchObject({ state: "disabled", action: "skip", reason: "disabled via config (plugins.disabled)" });
    expect(off.load_position).toBeUndefined();
    expect(idle).toMatchObject({ state: "not-enabled", action: "skip" });
    expect(idle.reason).toContain("hermes plugins enable idle");
    expect(idle.load_position).toBeUndefined();
    const t = await run(["plugins", "why", "idle"]);
    expect(t.stdout.split("\n")[0]).toBe("idle: does not load");
    expect(t.stdout).toMatch(/^ {2}state:\s+not enabled$/m);
  });

  it("a user plugin in a folder named like a bundled one shadows it, and says so", async () => {
    const h = s.dir("shadow");
    writePlugin(join(h, "plugins", "hello-world"), "name: hello-world\nversion: '9.9'\n");
    writeText(join(h, "config.yaml"), "plugins:\n  enabled: [hello-world]\n");
    const [x, t, l] = await Promise.all([
      why("hello-world", h),
      run(["plugins", "why", "hello-world"], h),
      run(["plugins", "list", "--plain"], h),
    ]);
    expect(x).toMatchObject({
      key: "hello-world",
      source: "user",
      version: "9.9",
      path: join(h, "plugins", "hello-world"),
      action: "load",
    });
    expect(x.shadows).toEqual([{ source: "bundled", path: join(bundled, "hello-world"), reason: "shadowed" }]);
    expect(t.stdout).toContain(`  shadows:   bundled plugin at ${join(bundled, "hello-world")}\n`);
    // one row only: the winner
    expect(l.stdout).toBe(`${"enabled".padEnd(12)}${"user".padEnd(8)}${"9.9".padEnd(8)}hello-world\n`);
  });

  it("an impostor (bundled key from a differently named folder) is ignored and reported", async () => {
    const h = s.dir("impostor");
    writePlugin(join(h, "plugins", "fake-hello"), "name: hello-world\nversion: '6.6'\n");
    writeText(join(h, "config.yaml"), "plugins:\n  enabled: []\n");
    const [x, t, l] = await Promise.all([
      why("hello-world", h),
      run(["plugins", "why", "hello-world"], h),
      run(["plugins", "list", "--plain"], h),
    ]);
    expect(x).toMatchObject({
      key: "hello-world",
      source: "bundled",
      version: "1.0",
      path: join(bundled, "hello-world"),
    });
    expect(x.shadows).toEqual([{ source: "user", path: join(h, "plugins", "fake-hello"), reason: "impostor" }]);
    expect(t.stdout).toContain(`  shadows:   user plugin at ${join(h, "plugins", "fake-hello")} (impostor, ignored)\n`);
    expect(l.stdout).toBe(`${"not enabled".padEnd(12)}${"bundled".padEnd(8)}${"1.0".padEnd(8)}hello-world\n`);
  });

  it("the one-time migration does not enable a bundled plugin because an impostor uses its name", async () => {
    const h = s.dir("impostor-migrate");
    writePlugin(join(h, "plugins", "fake-hello"), "name: hello-world\nversion: '6.6'\n");
    // an older config (no _config_version): the v21 migration runs; bundled plugins are never grandfathered
    writeText(join(h, "config.yaml"), "# before v21\n");
    const r = await run(["plugins", "list", "--json"], h);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as { key: string; status: string; source: string }[];
    expect(rows).toEqual([expect.objectContaining({ key: "hello-world", source: "bundled", status: "not enabled" })]);
  });

  it("not found: exit 1 with E_PLUGIN_NOT_FOUND (text and --json)", async () => {
    const [t, j] = await Promise.all([
      run(["plugins", "why", "zeta2"]),
      run(["plugins", "why", "nothing-like-this", "--json"]),
    ]);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain("E_PLUGIN_NOT_FOUND");
    expect(t.stderr).toContain("did you mean 'zeta'");
    expect(t.stderr).not.toMatch(STACK_RE);
    expect(j.code).toBe(1);
    expect((JSON.parse(j.stdout) as { error: { code: string } }).error.code).toBe("E_PLUGIN_NOT_FOUND");
  });
});
