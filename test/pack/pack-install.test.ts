/**
 * `hermes plugins pack install|export` and bundles, end to end: real git repositories made here
 * (bare repos on disk, `owner/repo` mapped to them with git's insteadOf), the built CLI, and a
 * pseudo-terminal (util-linux `script`) where a person must answer.
 */
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBundle } from "../../src/pack/bundle/bundle.js";
import { STACK_RE } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch } from "../support/home.js";
import {
  closedPort,
  ENTRY,
  githubToLocal,
  hermes,
  hermesTty,
  metadata,
  newHome,
  pluginFiles,
  Repo,
  type Ctx,
  type Home,
} from "../install/helpers.js";

let s: Scratch;
let ctx: Ctx;
let repos: string;
let demo: Repo;
let mono: Repo;
let caps: Repo;
let noIndex = "";

const MISSING_SHA = "abcdef0123456789abcdef0123456789abcdef01";

beforeAll(async () => {
  s = new Scratch("hermes-pack-");
  repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s), env: githubToLocal(repos) };
  noIndex = `http://127.0.0.1:${await closedPort()}/index.json`;
  demo = new Repo(repos, "acme/demo", {
    ...pluginFiles("demo", "description: the demo plugin\n"),
    "settings.yaml.example": "level: 1\n",
    "bin/run": "#!/bin/sh\necho run\n",
  });
  const { chmodSync } = await import("node:fs");
  chmodSync(join(demo.work, "bin/run"), 0o755);
  symlinkSync("index.js", join(demo.work, "alias.js"));
  demo.commit({ "index.js": `${ENTRY}// v2\n` }, "v2 with an executable and a link");
  mono = new Repo(repos, "acme/mono", {
    "README.md": "mono\n",
    ...pluginFiles("alpha", "description: first of the monorepo\n", "plugins/alpha/"),
    ...pluginFiles("beta", "", "plugins/beta/"),
  });
  caps = new Repo(repos, "acme/caps", pluginFiles("capper", "capabilities: [tools.override]\n"));
});

afterAll(() => s?.cleanup());

const config = (extra = "") => `plugins:\n  index_url: ${noIndex}\n${extra}`;
const cfg = (h: Home) =>
  (parse(readFileSync(join(h.home, "config.yaml"), "utf8")) ?? {}) as {
    plugins: { enabled?: string[]; entries?: Record<string, Record<string, unknown>> };
  };
type LockPlugin = Record<string, unknown> & {
  key: string;
  git: { pinned: boolean; revision: string; source: string } | null;
};
const lockPlugins = (h: Home): LockPlugin[] =>
  (JSON.parse(readFileSync(join(h.home, "hermes.lock.json"), "utf8")) as { plugins: LockPlugin[] }).plugins
    .filter((p) => p.source === "user")
    .map((p) => JSON.parse(JSON.stringify(p).split(h.home).join("$HOME")) as LockPlugin);
const sha256 = (f: string) => createHash("sha256").update(readFileSync(f)).digest("hex");

function writePack(name: string, text: string): string {
  const f = join(s.root, name);
  writeFileSync(f, text);
  return f;
}

const CONFIRM: [RegExp, string] = [/Install \d+ plugins? from pack '[^']+'\? \[y\/N\]/, "y"];

describe.concurrent("pack install", { timeout: 240_000 }, () => {
  it("refuses without a terminal (no --yes): nothing installed, config untouched", async () => {
    const h = newHome(s, "notty", config());
    const before = readFileSync(join(h.home, "config.yaml"), "utf8");
    const f = writePack("one.yaml", `name: one\nplugins:\n  - repo: acme/demo\n    ref: ${demo.head()}\n`);
    const r = await hermes(ctx, h, ["pack", "install", f]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("Plugin"); // the review is shown
    expect(r.stderr).toContain("E_PACK_NOT_INTERACTIVE");
    expect(r.stderr).toContain("nothing was installed");
    // The refusal gives the commands that do work without a terminal, one per entry, pinned.
    expect(r.stderr).toContain(
      `To install without a terminal, run per entry:\n  hermes plugins install acme/demo --ref ${demo.head()}`,
    );
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(existsSync(h.plugins) ? readdirSync(h.plugins) : []).toEqual([]);
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toBe(before);
    expect((await hermes(ctx, h, ["pack", "install", f, "--yes"])).code).toBe(2);
  });

  it("a declined confirmation installs nothing", async () => {
    const h = newHome(s, "declined", config());
    const f = writePack("decline.yaml", `name: decline\nplugins:\n  - repo: acme/demo\n    ref: ${demo.head()}\n`);
    const r = await hermesTty(ctx, h, ["pack", "install", f], [[CONFIRM[0], "n"]]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("E_PACK_ABORTED");
    expect(r.stdout).toContain("Aborted — nothing installed.");
    expect(existsSync(join(h.plugins, "demo"))).toBe(false);
  });

  it(
    "one confirmation; each plugin installed independently at its pin; a failing entry exits 1 and the others " +
      "stay; seeds fill only",
    async () => {
      const h = newHome(s, "mixed", config("  entries:\n    demo:\n      color: green   # mine\n"));
      const f = writePack(
        "mixed.yaml",
        [
          "name: mixed",
          "plugins:",
          "  - repo: acme/demo",
          `    ref: ${demo.head()}`,
          "  - repo: acme/missing",
          `    ref: ${MISSING_SHA}`,
          "  - repo: acme/mono",
          "    subdir: plugins/alpha",
          `    ref: ${mono.head()}`,
          "  - name: telegram",
          `    ref: ${MISSING_SHA}`,
          "config:",
          "  demo:",
          "    color: red",
          "    size: 3",
          "  alpha:",
          "    mode: fast",
          "skills: [research/web-digest]",
          "",
        ].join("\n"),
      );
      const r = await hermesTty(ctx, h, ["pack", "install", f], [CONFIRM]);
      expect(r.code, r.stdout).toBe(1);
      const out = r.stdout;
      expect(out.match(/\[y\/N\]/g)).toHaveLength(1);
      expect(out).toContain("Pack lists skills (NOT auto-installed yet): research/web-digest");
      expect(out).toContain(`Installing acme/demo @ ${demo.head().slice(0, 12)}...`);
      expect(out).toContain("✓ acme/demo installed as demo.");
      expect(out).toContain("✓ acme/mono/plugins/alpha installed as alpha.");
      expect(out).toMatch(/✗ acme\/missing: git clone of https:\/\/github\.com\/acme\/missing\.git failed/);
      expect(out).toContain(
        "✗ telegram: not found in the community index (seed); closest names: hermes-telegram-business",
      );
      expect(out).toContain("Pack 'mixed': 2 installed, 2 failed.");
      expect(out).toContain("E_PACK_INSTALL_FAILED");
      expect(out).toContain("the 2 installed stay installed");
      // Pinned installs, exactly as `install --ref` records them.
      expect(metadata(h)).toEqual({
        alpha: { pinned: true, revision: mono.head(), source: "https://github.com/acme/mono.git#plugins/alpha" },
        demo: { pinned: true, revision: demo.head(), source: "https://github.com/acme/demo.git" },
      });
      // Enabled (the confirmation is the consent to enable), seeds fill only, comments kept.
      const c = cfg(h);
      expect(c.plugins.enabled).toEqual(["demo", "alpha"]);
      expect(c.plugins.entries!.demo).toEqual({ color: "green", size: 3 });
      expect(c.plugins.entries!.alpha).toEqual({ mode: "fast" });
      expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toContain("color: green   # mine");
      expect(out).toContain("plugins.entries.demo.color already set — keeping your value.");
      expect(out).toContain("Seeded plugins.entries.demo from the pack: size.");
      // The lock follows.
      expect(lockPlugins(h).map((p) => [p.key, p.state, p.git?.pinned])).toEqual([
        ["alpha", "enabled", true],
        ["demo", "enabled", true],
      ]);
    },
  );

  it("capability consent is asked per plugin, never in bulk", async () => {
    const h = newHome(s, "consent", config());
    const f = writePack(
      "caps.yaml",
      `name: caps\nplugins:\n  - repo: acme/caps\n    ref: ${caps.head()}\n  - repo: acme/demo\n    ` +
        `ref: ${demo.head()}\n`,
    );
    const r = await hermesTty(ctx, h, ["pack", "install", f], [CONFIRM, [/Grant these capabilities\? \[y\/N\]/, "y"]]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout.match(/Grant these capabilities\?/g)).toHaveLength(1);
    expect(r.stdout).toContain("Plugin capper requests the following capabilities:");
    expect(r.stdout).toContain("Pack 'caps': 2 installed, 0 failed.");
    const e = cfg(h).plugins.entries!.capper!;
    expect(e.granted_capabilities).toEqual(["tools.override"]);
    expect((e.capabilities_consent as { granted_via: string }).granted_via).toBe("interactive");
  });

  it("a pack cannot carry grants: a reserved seed is refused before anything is installed", async () => {
    const h = newHome(s, "grants", config());
    const f = writePack(
      "grants.yaml",
      `name: g\nplugins:\n  - repo: acme/caps\n    ref: ${caps.head()}\nconfig:\n  capper:\n    ` +
        "granted_capabilities: [tools.override]\n",
    );
    const r = await hermesTty(ctx, h, ["pack", "install", f], [CONFIRM]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("E_PACK_SEED_RESERVED");
    expect(existsSync(join(h.plugins, "capper"))).toBe(false);
  });
});

describe("pack export and bundles", { timeout: 300_000 }, () => {
  let a: Home;
  let clean: Home;
  let packText = "";

  beforeAll(async () => {
    // Home A: demo pinned, alpha unpinned (subdirectory install), a local plugin, a Nix-style
    // link, and config with secrets at several depths and a recorded grant.
    a = newHome(s, "export-a", config());
    expect((await hermes(ctx, a, ["install", "acme/demo", "--ref", demo.head(), "--enable"])).code).toBe(0);
    expect((await hermes(ctx, a, ["install", "acme/mono/plugins/alpha", "--enable"])).code).toBe(0);
    mkdirSync(join(a.plugins, "handmade"), { recursive: true });
    writeFileSync(join(a.plugins, "handmade", "plugin.yaml"), "name: handmade\n");
    writeFileSync(join(a.plugins, "handmade", "index.js"), ENTRY);
    const store = s.dir("store-linked");
    writeFileSync(join(store, "plugin.yaml"), "name: linked\n");
    writeFileSync(join(store, "index.js"), ENTRY);
    symlinkSync(store, join(a.plugins, "nix-managed-linked"));
    const text = readFileSync(join(a.home, "config.yaml"), "utf8");
    // The entries go under `plugins:` (the new config.yaml ends with its `_config_version` stamp).
    writeFileSync(
      join(a.home, "config.yaml"),
      text.replace(
        /^plugins:\n/m,
        "plugins:\n  entries:\n    demo:\n      color: blue\n      api_key: sk-live-123\n      nested:\n        " +
          "db_password: hunter2\n        keep: 1\n        profiles:\n          - name: x\n            " +
          "clientSecret: s\n      granted_capabilities: [tools.override]\n      allow_tool_override: true\n      " +
          "max_tokens: 100\n      author: me\n",
      ),
    );
    // A clean home: the same two plugins, seeds without secrets (for byte-identical round trips).
    clean = newHome(s, "export-clean", config());
    expect((await hermes(ctx, clean, ["install", "acme/demo", "--ref", demo.head(), "--enable"])).code).toBe(0);
    expect((await hermes(ctx, clean, ["install", "acme/mono/plugins/alpha", "--enable"])).code).toBe(0);
    writeFileSync(
      join(clean.home, "config.yaml"),
      readFileSync(join(clean.home, "config.yaml"), "utf8").replace(
        /^plugins:\n/m,
        "plugins:\n  entries:\n    demo:\n      color: blue\n",
      ),
    );
  });

  it(
    "YAML on stdout, warnings on stderr and as comments; local and Nix plugins listed as comments; secrets " +
      "stripped at any depth",
    async () => {
      const r = await hermes(ctx, a, ["pack", "export"]);
      expect(r.code, r.stderr).toBe(0);
      packText = r.stdout;
      const lines = r.stdout.split("\n");
      const comments = lines.filter((l) => l.startsWith("# WARNING (not exported): "));
      expect(comments.join("\n")).toContain("handmade: no Git provenance");
      expect(comments.join("\n")).toContain("linked: managed by the deployment (nix-managed-linked link)");
      expect(comments.join("\n")).toContain("demo: config key 'api_key' looks like a secret");
      expect(comments.join("\n")).toContain("demo: config key 'nested.db_password' looks like a secret");
      expect(comments.join("\n")).toContain("demo: config key 'nested.profiles[0].clientSecret' looks like a secret");
      for (const c of comments) expect(r.stderr).toContain(`Warning: ${c.slice("# WARNING (not exported): ".length)}`);
      expect(r.stdout).not.toMatch(/sk-live|hunter2|clientSecret: s|granted_capabilities|allow_tool_override/);
      const doc = parse(r.stdout);
      expect(doc).toEqual({
        name: "my-hermes-pack",
        description: "Exported by `hermes plugins pack export`.",
        version: "1.0.0",
        plugins: [
          { name: "alpha", repo: "acme/mono", subdir: "plugins/alpha", ref: mono.head() },
          { name: "demo", repo: "acme/demo", ref: demo.head() },
        ],
        config: {
          demo: { color: "blue", nested: { keep: 1, profiles: [{ name: "x" }] }, max_tokens: 100, author: "me" },
        },
      });
      // Same state, same bytes.
      const again = await hermes(ctx, a, ["pack", "export"]);
      expect(again.stdout).toBe(r.stdout);
    },
  );

  it("--enabled-only and --name; nothing to export is a clear error", async () => {
    const h = newHome(s, "export-opts", config());
    expect((await hermes(ctx, h, ["install", "acme/demo", "--no-enable"])).code).toBe(0);
    const none = await hermes(ctx, h, ["pack", "export", "--enabled-only"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("E_PACK_EXPORT_EMPTY");
    const all = await hermes(ctx, h, ["pack", "export", "--name", "team-pack"]);
    expect(all.code).toBe(0);
    expect(parse(all.stdout)).toMatchObject({
      name: "team-pack",
      plugins: [{ name: "demo", repo: "acme/demo", ref: demo.head() }],
    });
    const empty = newHome(s, "export-empty", config());
    const e = await hermes(ctx, empty, ["pack", "export"]);
    expect(e.code).toBe(1);
    expect(e.stderr).toContain("E_PACK_EXPORT_EMPTY");
    expect(e.stdout).toBe("");
  });

  it("export → pack install reproduces the lock (the export pins what was unpinned)", async () => {
    const f = writePack("exported.yaml", packText || (await hermes(ctx, a, ["pack", "export"])).stdout);
    const b = newHome(s, "import-b", config());
    const r = await hermesTty(ctx, b, ["pack", "install", f], [CONFIRM]);
    expect(r.code, r.stdout).toBe(0);
    const la = lockPlugins(a).filter((p) => p.key === "alpha" || p.key === "demo");
    const lb = lockPlugins(b);
    expect(lb.map((p) => p.key)).toEqual(["alpha", "demo"]);
    expect(lb.every((p) => p.git?.pinned === true)).toBe(true);
    const unpin = (p: LockPlugin) => ({ ...p, git: p.git && { ...p.git, pinned: null } });
    expect(lb.map(unpin)).toEqual(la.map(unpin));
    // Seeds arrived sanitized.
    expect(cfg(b).plugins.entries!.demo).toEqual({
      color: "blue",
      nested: { keep: 1, profiles: [{ name: "x" }] },
      max_tokens: 100,
      author: "me",
    });
  });

  it(
    "bundles: two exports are byte-identical; an offline install reproduces the lock; its re-export is " +
      "byte-identical again",
    async () => {
      const b1 = join(s.root, "b1.tar.gz");
      const b2 = join(s.root, "b2.tar.gz");
      const r1 = await hermes(ctx, clean, ["pack", "export", "--bundle", b1]);
      expect(r1.code, r1.stderr).toBe(0);
      expect((await hermes(ctx, clean, ["pack", "export", "--bundle", b2])).code).toBe(0);
      expect(sha256(b1)).toBe(sha256(b2));
      expect(r1.stdout).toContain(`sha256 ${sha256(b1)}`);
      // The manifest records revision, tree and integrity per plugin.
      const v = await readBundle(b1);
      expect(v.plugins.map((p) => [p.meta.name, p.meta.revision])).toEqual([
        ["alpha", mono.head()],
        ["demo", demo.head()],
      ]);
      for (const p of v.plugins) expect(p.meta.integrity).toMatch(/^sha256-tree:[0-9a-f]{64}$/);

      // Offline: the repositories are gone while the bundle is shown and installed.
      const heads = { demo: demo.head(), mono: mono.head() };
      const away = `${repos}.away`;
      renameSync(repos, away);
      try {
        const c = newHome(s, "bundle-c", config());
        const show = await hermes(ctx, c, ["pack", "show", b1]);
        expect(show.code, show.stderr).toBe(0);
        expect(show.stdout).toMatch(/alpha\s+acme\/mono\/plugins\/alpha \(bundled, tree [0-9a-f]{12} verified\)/);
        expect(readdirSync(c.home)).toEqual(["config.yaml"]);
        const notty = await hermes(ctx, c, ["pack", "install", b1]);
        expect(notty.code).toBe(1);
        expect(notty.stderr).toContain("E_PACK_NOT_INTERACTIVE");
        const r = await hermesTty(ctx, c, ["pack", "install", b1], [CONFIRM]);
        expect(r.code, r.stdout).toBe(0);
        expect(r.stdout).toContain("Security scan:");
        expect(metadata(c)).toEqual({
          alpha: { pinned: true, revision: heads.mono, source: "https://github.com/acme/mono.git#plugins/alpha" },
          demo: { pinned: true, revision: heads.demo, source: "https://github.com/acme/demo.git" },
        });
        const unpin = (p: LockPlugin) => ({ ...p, git: p.git && { ...p.git, pinned: null } });
        expect(lockPlugins(c).map(unpin)).toEqual(lockPlugins(clean).map(unpin));
        expect(cfg(c).plugins.entries!.demo).toEqual({ color: "blue" });
        // The installed checkouts carry the revision: exporting again gives the same bytes.
        const b3 = join(s.root, "b3.tar.gz");
        const re = await hermes(ctx, c, ["pack", "export", "--bundle", b3]);
        expect(re.code, re.stderr).toBe(0);
        expect(sha256(b3)).toBe(sha256(b1));
      } finally {
        renameSync(away, repos);
      }
    },
  );

  it("a bundle with one byte changed, or truncated, is refused and nothing is installed", async () => {
    const b1 = join(s.root, "t1.tar.gz");
    expect((await hermes(ctx, clean, ["pack", "export", "--bundle", b1])).code).toBe(0);
    const bytes = readFileSync(b1);
    for (const [name, data] of [
      [
        "flipped.tar.gz",
        (() => {
          const t = Buffer.from(bytes);
          const mid = Math.floor(t.length / 2);
          t.writeUInt8(t.readUInt8(mid) ^ 0x20, mid);
          return t;
        })(),
      ],
      ["truncated.tar.gz", bytes.subarray(0, bytes.length - 100)],
    ] as const) {
      const f = join(s.root, name);
      writeFileSync(f, data);
      const h = newHome(s, `tamper-${name}`, config());
      const r = await hermesTty(ctx, h, ["pack", "install", f], [CONFIRM]);
      expect(r.code, name).toBe(1);
      expect(r.stdout, name).toContain("E_BUNDLE_CORRUPT");
      expect(r.stdout).toContain("nothing was installed");
      expect(r.stdout).not.toContain("[y/N]");
      expect(existsSync(h.plugins) ? readdirSync(h.plugins).filter((n) => !n.startsWith(".")) : []).toEqual([]);
      const show = await hermes(ctx, h, ["pack", "show", f]);
      expect(show.code).toBe(1);
      expect(show.stderr).toContain("E_BUNDLE_CORRUPT");
    }
  });

  it("a bundled plugin whose folder exists is refused without --force, replaced with it", async () => {
    const b1 = join(s.root, "force.tar.gz");
    expect((await hermes(ctx, clean, ["pack", "export", "--bundle", b1])).code).toBe(0);
    const h = newHome(s, "force", config());
    cpSync(join(clean.plugins, "demo"), join(h.plugins, "demo"), { recursive: true });
    const r = await hermesTty(ctx, h, ["pack", "install", b1], [CONFIRM]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("✗ demo: plugin 'demo' already exists");
    expect(r.stdout).toContain("Pack 'my-hermes-pack': 1 installed, 1 failed.");
    const f = await hermesTty(ctx, h, ["pack", "install", b1, "--force"], [CONFIRM]);
    expect(f.code, f.stdout).toBe(0);
    expect(metadata(h)!.demo!.pinned).toBe(true);
  });
});
