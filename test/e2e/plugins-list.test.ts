import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { bundledWithHelloWorld, link, Scratch, writePlugin, writeText } from "../support/home.js";

const KEYS = ["key", "name", "status", "version", "source", "origin", "kind", "path", "loads", "reason"] as const;

interface Row {
  key: string;
  name: string;
  status: string;
  version: string;
  source: string;
  origin: string;
  kind: string | null;
  path: string;
  loads: boolean;
  reason: string;
  problems?: number;
}

const plain = (status: string, source: string, version: string, key: string) =>
  `${status.padEnd(12)}${source.padEnd(8)}${version.padEnd(8)}${key}`;

let s: Scratch;
let bundled: string;
let emptyBundled: string;
let home: string;
let ext: string;

beforeAll(() => {
  s = new Scratch();
  bundled = bundledWithHelloWorld(s);
  emptyBundled = s.dir("empty-bundled");
  home = s.dir("home");
  ext = s.dir("ext");
  const p = join(home, "plugins");
  writePlugin(join(p, "flat"), "name: flat\nversion: 0.1.0\ndescription: a flat plugin\n");
  writePlugin(join(p, "image_gen", "openai"), "name: openai-image\nversion: 2.0.0\ndescription: image generation\n");
  writePlugin(join(ext, "linked"), "name: linked\nversion: 1.1.1\n");
  link(join(ext, "linked"), join(p, "linked"));
  link(join(ext, "missing-target"), join(p, "ghost"));
  writePlugin(join(p, "pyplug"), { manifest: "name: pyplug\nversion: '0.3'\n", python: true });
  writePlugin(join(p, "broken"), "name: broken\nversion: [1\n  description: x\n");
  // An explicit allow-list, so the one-time migration has nothing to do.
  writeText(join(home, "config.yaml"), "plugins:\n  enabled:\n    - flat\n    - linked\n    - pyplug\n");
});

afterAll(() => s.cleanup());

const env = () => ({ HERMES_BUNDLED_PLUGINS: bundled });

describe.concurrent("hermes plugins list", () => {
  it("lists the shipped hello-world as 'not enabled' for a brand-new home, without creating the home", async () => {
    const fresh = s.dir("fresh", { create: false });
    const r = await runCli(["plugins", "list"], { home: fresh });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Key\s+Status\s+Version\s+Source\s+Description$/m);
    expect(r.stdout).toMatch(/^hello-world\s+not enabled\s+1\.0\s+bundled\s+A minimal example plugin/m);
    expect(existsSync(fresh)).toBe(false);
  });

  it("--plain: status padded to 12, source to 8, version to 8, then the key; sorted by key", async () => {
    const r = await runCli(["plugins", "list", "--plain"], { home, env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        plain("not enabled", "user", "", "broken"),
        plain("enabled", "user", "0.1.0", "flat"),
        plain("not enabled", "user", "", "ghost"),
        plain("not enabled", "bundled", "1.0", "hello-world"),
        plain("not enabled", "user", "2.0.0", "image_gen/openai"),
        plain("enabled", "user", "1.1.1", "linked"),
        plain("enabled", "user", "0.3", "pyplug"),
        "",
      ].join("\n"),
    );
  });

  it("--json: a parseable array with key/name/status/version/source/origin/kind/path/loads/reason", async () => {
    const r = await runCli(["plugins", "list", "--json"], { home, env: env() });
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Row[];
    expect(Array.isArray(rows)).toBe(true);
    expect(rows.map((x) => x.key)).toEqual([
      "broken",
      "flat",
      "ghost",
      "hello-world",
      "image_gen/openai",
      "linked",
      "pyplug",
    ]);
    for (const row of rows) for (const k of KEYS) expect(row, `${row.key} lacks ${k}`).toHaveProperty(k);
    const by = Object.fromEntries(rows.map((x) => [x.key, x]));
    expect(by["hello-world"]).toMatchObject({
      name: "hello-world",
      status: "not enabled",
      version: "1.0",
      source: "bundled",
      origin: "bundled",
      kind: "standalone",
      path: join(bundled, "hello-world"),
      loads: false,
    });
    expect(by["hello-world"]!.reason).toContain("hermes plugins enable hello-world");
    expect(by.flat).toMatchObject({
      status: "enabled",
      source: "user",
      origin: "local",
      loads: true,
      reason: "enabled in config",
      version: "0.1.0",
    });
    // category plugin: key cat/dir, manifest name kept as name
    expect(by["image_gen/openai"]).toMatchObject({
      name: "openai-image",
      status: "not enabled",
      path: join(home, "plugins", "image_gen", "openai"),
    });
    // a symlinked plugin folder loads, listed at the link's path
    expect(by.linked).toMatchObject({
      status: "enabled",
      loads: true,
      version: "1.1.1",
      path: join(home, "plugins", "linked"),
    });
    // python plugin of the original: loads through the Python bridge
    expect(by.pyplug).toMatchObject({ status: "enabled", loads: true, reason: "enabled in config" });
    // dangling link: listed, cannot load, and the reason names the missing target
    expect(by.ghost!.loads).toBe(false);
    expect(by.ghost!.reason).toContain(join(ext, "missing-target"));
    expect(by.ghost!.problems).toBeGreaterThan(0);
    // malformed plugin.yaml: listed with a problem, cannot load
    expect(by.broken!.loads).toBe(false);
    expect(by.broken!.reason).toMatch(/^invalid manifest/);
    expect(by.broken!.problems).toBeGreaterThan(0);
  });

  it("table marks broken plugins with '!' and still lists every other plugin, exit 0", async () => {
    const r = await runCli(["plugins", "list"], { home, env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(r.stdout).toMatch(/^broken !\s+not enabled/m);
    expect(r.stdout).toMatch(/^ghost !\s+not enabled/m);
    expect(r.stdout).toMatch(/^pyplug\s+enabled\s+0\.3/m);
    expect(r.stdout).toMatch(/^flat\s+enabled\s+0\.1\.0\s+local\s+a flat plugin$/m);
    expect(r.stdout).toMatch(/^linked\s+enabled\s+1\.1\.1/m);
    expect(r.stdout).toMatch(/^image_gen\/openai\s+not enabled\s+2\.0\.0\s+local\s+image generation$/m);
    expect(r.stdout).toMatch(/^hello-world\s+not enabled\s+1\.0\s+bundled/m);
    expect(r.stdout).not.toMatch(/^(flat|linked|hello-world|image_gen\/openai|pyplug) !/m);
    expect(r.stdout).toMatch(/2 plugin\(s\) cannot load: hermes plugins why broken/);
  });

  it("--enabled keeps only enabled plugins (plain and json)", async () => {
    const [p, j] = await Promise.all([
      runCli(["plugins", "list", "--enabled", "--plain"], { home, env: env() }),
      runCli(["plugins", "list", "--enabled", "--json"], { home, env: env() }),
    ]);
    expect(p.code).toBe(0);
    expect(
      p.stdout
        .trim()
        .split("\n")
        .map((l) => l.slice(28)),
    ).toEqual(["flat", "linked", "pyplug"]);
    expect(
      p.stdout
        .split("\n")
        .filter(Boolean)
        .every((l) => l.startsWith("enabled ")),
    ).toBe(true);
    expect((JSON.parse(j.stdout) as Row[]).map((x) => x.key)).toEqual(["flat", "linked", "pyplug"]);
  });

  it("--user and --no-bundled leave the bundled plugins out", async () => {
    const [u, nb] = await Promise.all([
      runCli(["plugins", "list", "--user", "--json"], { home, env: env() }),
      runCli(["plugins", "list", "--no-bundled", "--json"], { home, env: env() }),
    ]);
    for (const r of [u, nb]) {
      expect(r.code).toBe(0);
      const rows = JSON.parse(r.stdout) as Row[];
      expect(rows.some((x) => x.source === "bundled")).toBe(false);
      expect(rows.map((x) => x.key)).toEqual(["broken", "flat", "ghost", "image_gen/openai", "linked", "pyplug"]);
    }
  });

  it("prints 'No plugins installed.' for an empty home with no bundled plugins", async () => {
    const empty = s.dir("empty-home");
    const r = await runCli(["plugins", "list"], { home: empty, env: { HERMES_BUNDLED_PLUGINS: emptyBundled } });
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("No plugins installed.");
    const j = await runCli(["plugins", "list", "--json"], {
      home: empty,
      env: { HERMES_BUNDLED_PLUGINS: emptyBundled },
    });
    expect(JSON.parse(j.stdout)).toEqual([]);
  });

  it("prints 'No plugins installed.' with --user when only bundled plugins exist", async () => {
    const empty = s.dir("only-bundled");
    const r = await runCli(["plugins", "list", "--user"], { home: empty, env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^No plugins installed\.$/m);
  });

  it("a dangling symlink is explained by `why`, naming the missing target", async () => {
    const r = await runCli(["plugins", "why", "ghost"], { home, env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ghost: does not load$/m);
    expect(r.stdout).toContain(
      `broken symlink: ${join(home, "plugins", "ghost")} → ${join(ext, "missing-target")} (target missing)`,
    );
    expect(r.stdout).toContain("E_DISCOVERY_DANGLING_LINK");
  });

  it("a python plugin is explained by `why` with its entry and the interpreter the bridge uses", async () => {
    const r = await runCli(["plugins", "why", "pyplug"], {
      home,
      env: { ...env(), HERMES_PYTHON: "/nonexistent/python3" },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\s+entry:\s+__init__\.py$/m);
    expect(r.stdout).toMatch(
      /^\s+python:\s+cannot run: no '\/nonexistent\/python3' on PATH \(install Python 3\.10\+ or set HERMES_PYTHON\)/m,
    );
  });

  it("a malformed plugin.yaml is explained by `why` with file:line:col", async () => {
    const r = await runCli(["plugins", "why", "broken"], { home, env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`E_YAML_PARSE ${join(home, "plugins", "broken", "plugin.yaml")}:`);
    expect(r.stdout).toMatch(/plugin\.yaml:\d+:\d+/);
  });

  it(
    "a config.yaml that does not parse fails the list (no " + "enable state is known), table and --json alike",
    async () => {
      const h = s.dir("bad-config");
      writeText(join(h, "config.yaml"), "plugins:\n  enabled: [flat\n");
      const [t, j] = await Promise.all([
        runCli(["plugins", "list"], { home: h, env: env() }),
        runCli(["plugins", "list", "--json"], { home: h, env: env() }),
      ]);
      expect(t.code).toBe(1);
      expect(t.stderr).toContain("E_YAML_PARSE");
      expect(t.stderr).not.toMatch(STACK_RE);
      expect(j.code).toBe(1);
      expect((JSON.parse(j.stdout) as { error: { code: string } }).error.code).toBe("E_YAML_PARSE");
      expect(readFileSync(join(h, "config.yaml"), "utf8")).toBe("plugins:\n  enabled: [flat\n");
    },
  );

  it("--plain keeps the key separated from a version longer than its 8-character column", async () => {
    const h = s.dir("long-version");
    writePlugin(join(h, "plugins", "longver"), "name: longver\nversion: 1.0.0-beta.10\n");
    writeText(join(h, "config.yaml"), "plugins:\n  enabled: []\n");
    const r = await runCli(["plugins", "list", "--plain", "--user"], { home: h, env: env() });
    expect(r.code).toBe(0);
    // A script reading `--plain` must be able to split the last field off.
    expect(r.stdout.trim()).toMatch(/^not enabled\s+user\s+1\.0\.0-beta\.10\s+longver$/);
  });

  it(
    "the one-time migration grandfathers installed user " + "plugins (flat and symlinked), never bundled ones",
    async () => {
      const h = s.dir("migrate");
      // A config written before v21 (no _config_version): the migration's case. A new home has none (config-version).
      const older = "# from an older hermes\nmodel:\n  default: gpt-4o\n";
      writeText(join(h, "config.yaml"), older);
      writePlugin(join(h, "plugins", "mine"), "name: mine\n");
      writePlugin(join(h, "plugins", "cat", "deep"), "name: deep\n");
      mkdirSync(join(s.root, "lnk"), { recursive: true });
      writePlugin(join(s.root, "lnk", "viaLink"), "name: via-link\n");
      link(join(s.root, "lnk", "viaLink"), join(h, "plugins", "via-link"));
      const r = await runCli(["plugins", "list", "--json"], { home: h, env: env() });
      expect(r.code).toBe(0);
      const by = Object.fromEntries((JSON.parse(r.stdout) as Row[]).map((x) => [x.key, x.status]));
      expect(by).toEqual({
        "cat/deep": "not enabled",
        "hello-world": "not enabled",
        mine: "enabled",
        "via-link": "enabled",
      });
      // A read-only command shows the migrated state and writes nothing; the first editing command migrates and says
      // so.
      expect(readFileSync(join(h, "config.yaml"), "utf8")).toBe(older);
      const c = await runCli(["compile"], { home: h, env: env() });
      expect(c.stderr).toContain("Grandfathered 2 installed user plugin(s) into plugins.enabled: mine, via-link");
    },
  );
});
