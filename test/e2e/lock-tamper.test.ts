import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical-json.js";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

/**
 * A lock edited by anything but `hermes compile` is detected: by `hermes lock verify` (one precise
 * message per state) and at every runtime start, whose grants and load set are re-derived from
 * config.yaml and the deployment rather than read from the lock alone.
 */
const scratch = new Scratch("hermes-e2e-lock-tamper-");
afterAll(() => scratch.cleanup());

type Json = Record<string, unknown>;
interface LockPluginJson {
  key: string;
  version: string;
  path: string;
  target: string;
  integrity: string;
  state: string;
  action: string;
  reason: string;
  load_position: number | null;
  capabilities: { granted: string[] };
}
interface LockJson extends Json {
  load_order: string[];
  plugins: LockPluginJson[];
}

/** A plugin whose register() records whether it holds tools.override, into `<dir>/<name>.ran`. */
function spyPlugin(dir: string, name: string, out: string, extra = ""): void {
  writePlugin(dir, { manifest: `name: ${name}\nversion: '1'\ncapabilities: [tools.override]\n${extra}`, entry: false });
  writeFileSync(
    join(dir, "index.js"),
    `import { writeFileSync } from "node:fs";\nexport function register(ctx) { ` +
      `writeFileSync(${JSON.stringify(join(out, `${name}.ran`))}, ` +
      `String(ctx.has_capability("tools.override"))); }\n`,
  );
}

function setup() {
  const root = scratch.dir("case");
  const home = join(root, "home");
  const out = join(root, "out");
  const bundled = join(root, "bundled");
  mkdirSync(out, { recursive: true });
  mkdirSync(bundled, { recursive: true });
  spyPlugin(join(home, "plugins", "spy"), "spy", out);
  spyPlugin(join(home, "plugins", "off"), "off", out);
  spyPlugin(join(root, "evil"), "evil", out);
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: [spy]\n  disabled: [off]\n");
  const cli = (...args: string[]) => runCli(["--home", home, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } });
  const lockFile = join(home, "generations", "current", "hermes.lock.json");
  const readLock = () => JSON.parse(readFileSync(lockFile, "utf8")) as LockJson;
  /** Edit the lock through its link and re-seal it, as an attacker who read the source would. */
  const editLock = (f: (l: LockJson) => void, reseal = true) => {
    const l = readLock();
    f(l);
    // Re-sealed only where the lock carries a seal (a lock without one needs none to be accepted).
    if (reseal && "checksum" in l) {
      const { checksum: _c, ...body } = l;
      l.checksum = `sha256:${createHash("sha256").update(canonicalJson(body)).digest("hex")}`;
    }
    writeFileSync(lockFile, JSON.stringify(l, null, 2));
  };
  const ran = (name: string) =>
    existsSync(join(out, `${name}.ran`)) ? readFileSync(join(out, `${name}.ran`), "utf8") : undefined;
  const reset = () => rmSync(out, { recursive: true, force: true }) ?? mkdirSync(out, { recursive: true });
  return { root, home, out, cli, lockFile, readLock, editLock, ran, reset };
}

describe("hermes lock verify: each state has one precise message", () => {
  it(
    "a version edited in place (the link replaced by a regular file, as sed -i does) is tampering, not 'no " + "drift'",
    async () => {
      const t = setup();
      expect((await t.cli("compile")).code).toBe(0);
      const link = join(t.home, "hermes.lock.json");
      writeFileSync(`${link}.tmp`, readFileSync(link, "utf8").replace('"version": "1"', '"version": "9"'));
      rmSync(link);
      writeFileSync(link, readFileSync(`${link}.tmp`));
      const r = await t.cli("lock", "verify");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_LOCK_TAMPERED");
      expect(r.stderr).toContain("regular file");
      expect(r.stdout).not.toContain("no drift");
      expect(r.stdout).toContain("the lock itself was changed since it was compiled");
    },
  );

  it(
    "an edit through the link (version, zeroed integrity) is reported as an edited lock, not as a changed " + "plugin",
    async () => {
      const t = setup();
      expect((await t.cli("compile")).code).toBe(0);
      t.editLock((l) => (l.plugins.find((p) => p.key === "spy")!.version = "9"), false);
      const v = await t.cli("lock", "verify");
      expect(v.code).toBe(1);
      expect(v.stderr).toMatch(/E_LOCK_TAMPERED .*checksum does not match/);
      expect((await t.cli("compile")).code).toBe(0);
      t.editLock((l) => (l.plugins.find((p) => p.key === "spy")!.integrity = `sha256-tree:${"0".repeat(64)}`), false);
      const z = await t.cli("lock", "verify", "--json");
      expect(z.code).toBe(1);
      const report = JSON.parse(z.stdout) as {
        state: string;
        plugins: unknown[];
        diagnostics: Array<{ code: string }>;
      };
      expect(report.state).toBe("tampered");
      expect(report.plugins).toEqual([]);
      expect(report.diagnostics.map((d) => d.code)).toEqual(["E_LOCK_TAMPERED"]);
    },
  );

  it(
    "a missing home, a home never compiled and a broken " + "lock: one message each, E_LOCK_INVALID printed once",
    async () => {
      const t = setup();
      const gone = await runCli(["--home", join(t.root, "nope"), "lock", "verify"]);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain("E_LOCK_MISSING");
      expect(gone.stderr).toContain("does not exist");
      expect(gone.stdout).not.toContain("drift");
      expect(gone.stderr).not.toContain("E_LOCK_INVALID");
      expect(gone.stderr).not.toMatch(STACK_RE);
      const fresh = await t.cli("lock", "verify");
      expect(fresh.code).toBe(1);
      expect(fresh.stderr).toMatch(/E_LOCK_MISSING .*never compiled/);
      expect(fresh.stdout).toContain("no lock to verify");
      expect((await t.cli("compile")).code).toBe(0);
      writeFileSync(t.lockFile, "{ not json");
      const bad = await t.cli("lock", "verify");
      expect(bad.code).toBe(1);
      expect(bad.stderr.match(/E_LOCK_INVALID/g)).toHaveLength(1);
      expect(bad.stdout).not.toContain("drift");
    },
  );
});

describe("the runtime never trusts an edited lock", () => {
  it("a grant added to the lock (checksum re-computed) is not given: recompiled in an unmanaged home", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    t.editLock((l) => l.plugins.find((p) => p.key === "spy")!.capabilities.granted.push("tools.override"));
    const r = await t.cli("plugins", "chain");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("differs from what its inputs compile to");
    expect(t.ran("spy")).toBe("false");
    expect(t.readLock().plugins.find((p) => p.key === "spy")!.capabilities.granted).toEqual([]);
    // Even a start that trusts the lock (--verify off) re-derives grants from config.yaml.
    t.reset();
    t.editLock((l) => l.plugins.find((p) => p.key === "spy")!.capabilities.granted.push("tools.override"));
    const off = await t.cli("plugins", "chain", "--verify", "off");
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).toContain("the lock grants tools.override but config.yaml and the deployment do not");
    expect(t.ran("spy")).toBe("false");
  });

  it("install metadata changed since the compile is a stale lock (recompiled), not an edited one", async () => {
    const t = setup();
    const meta = join(t.home, "plugins", ".install-metadata.json");
    const record = (rev: string) =>
      writeFileSync(
        meta,
        `${JSON.stringify(
          { spy: { pinned: false, revision: rev.repeat(40), source: "https://example.com/acme/spy.git" } },
          null,
          2,
        )}` + "\n",
      );
    record("a");
    expect((await t.cli("compile")).code).toBe(0);
    record("b");
    const r = await t.cli("plugins", "chain");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("differs from what its inputs compile to");
    expect(t.readLock().plugins.find((p) => p.key === "spy")).toMatchObject({ git: { revision: "b".repeat(40) } });
  });

  it("a lock edited without re-sealing is refused at --verify off too", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    t.editLock((l) => l.plugins.find((p) => p.key === "spy")!.capabilities.granted.push("tools.override"), false);
    const r = await t.cli("plugins", "chain", "--verify", "off");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("checksum does not match");
    expect(t.ran("spy")).toBe("false");
  });

  it("a disabled plugin added to the load order does not run", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    const edit = (l: LockJson) => {
      const p = l.plugins.find((x) => x.key === "off")!;
      Object.assign(p, { state: "enabled", action: "load", reason: "enabled", load_position: 1 });
      l.load_order.push("off");
    };
    t.editLock(edit);
    expect((await t.cli("plugins", "chain")).code).toBe(0);
    expect(t.ran("off")).toBeUndefined();
    t.editLock(edit);
    const off = await t.cli("plugins", "chain", "--verify", "off");
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).toContain("config.yaml disables it");
    expect(t.ran("off")).toBeUndefined();
    expect(t.ran("spy")).toBe("false");
  });

  it(
    "in a managed home, a plugin path pointed elsewhere is refused with the deployment's command, and nothing " +
      "runs",
    async () => {
      const t = setup();
      spyPlugin(join(t.root, "store", "guard"), "guard", t.out);
      const spec = writeText(join(t.root, "spec.yaml"), `plugins:\n  - path: ${join(t.root, "store", "guard")}\n`);
      const c = await t.cli("compile", "--spec", spec, "--managed", "nixos");
      expect(c.code, c.stderr).toBe(0);
      t.reset();
      t.editLock((l) => Object.assign(l.plugins.find((p) => p.key === "guard")!, { target: join(t.root, "evil") }));
      const r = await t.cli("plugins", "chain");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_LOCK_TAMPERED");
      expect(r.stderr).toContain(`hermes compile --spec ${spec} --managed nixos`);
      expect(r.stderr).not.toMatch(STACK_RE);
      expect(t.ran("evil")).toBeUndefined();
      expect(t.ran("guard")).toBeUndefined();
      expect(lstatSync(join(t.home, "hermes.lock.json")).isSymbolicLink()).toBe(true);
    },
  );
});

describe("a lock compiled for another hook catalog (checksum intact) never runs as it is", () => {
  it("unmanaged: recompiled with a warning naming both catalogs", async () => {
    const t = setup();
    expect((await t.cli("compile")).code).toBe(0);
    t.editLock((l) => void (l.hook_catalog = "hermes.hooks.v0"));
    const r = await t.cli("plugins", "chain");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /compiled for hook catalog hermes\.hooks\.v0; this hermes-kit runs hermes\.hooks\.v1; recompiling/,
    );
    expect(t.readLock().hook_catalog).toBe("hermes.hooks.v1");
  });

  it("managed: refused with E_LOCK_CATALOG and the command that compiles it again", async () => {
    const t = setup();
    expect((await t.cli("compile", "--managed", "nixos")).code).toBe(0);
    t.editLock((l) => void (l.hook_catalog = "hermes.hooks.v0"));
    const r = await t.cli("plugins", "chain");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_LOCK_CATALOG");
    expect(r.stderr).toContain("hermes.hooks.v0");
    expect(r.stderr).toContain("nixos activation");
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(t.ran("spy")).toBeUndefined();
  });
});
