/**
 * `hermes plugins pack show` through the built CLI: every pack of the shared fixtures (test/shared-dir.ts)
 * renders (dry run, exit 0), broken variants made here fail naming the entry, and remote packs
 * are https-only (a real TLS server on 127.0.0.1 with a throw-away certificate), size-capped and
 * time-limited.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttps, type Server as HttpsServer } from "node:https";
import { createServer as createHttp, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAll, runCli, STACK_RE } from "../support/cli.js";
import { Scratch } from "../support/home.js";
import { hasShared, SHARED_FIXTURES } from "../shared-dir.js";
import { closedPort } from "../install/helpers.js";

let s: Scratch;
let home = "";
let https: HttpsServer | undefined;
let httpsBase = "";
let certFile = "";
let http: Server;
let httpBase = "";

const PACKS = join(SHARED_FIXTURES, "packs");
const SHARED = hasShared("test/pack/pack-show.test.ts: the packs of the shared fixtures");
const SHA = "0123456789abcdef0123456789abcdef01234567";

const opensslAvailable = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

beforeAll(async () => {
  s = new Scratch("hermes-pack-show-");
  home = s.dir("home");
  // Names resolve against the shipped seed copy: the index URL is a closed port.
  writeFileSync(
    join(home, "config.yaml"),
    `plugins:\n  index_url: http://127.0.0.1:${await closedPort()}/index.json\n`,
  );
  const routes: Record<string, (res: import("node:http").ServerResponse) => void> = {
    "/pack.yaml": (res) => {
      res.writeHead(200, { "Content-Type": "application/yaml" });
      res.end(`name: remote-pack\nplugins:\n  - repo: acme/remote\n    ref: ${SHA}\n`);
    },
    "/moved.yaml": (res) => {
      res.writeHead(301, { Location: "/pack.yaml" });
      res.end();
    },
    "/big.yaml": (res) => {
      res.writeHead(200, { "Content-Type": "application/yaml" });
      res.end(`name: big\n# ${"x".repeat(1024 * 1024 + 10)}\nplugins:\n  - repo: a/b\n    ref: ${SHA}\n`);
    },
    "/hang.yaml": () => undefined,
  };
  const handler = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    const r = routes[req.url ?? ""];
    if (r) return r(res);
    res.writeHead(404);
    res.end("not found");
  };
  if (opensslAvailable) {
    const dir = s.dir("tls");
    certFile = join(dir, "cert.pem");
    const keyFile = join(dir, "key.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        keyFile,
        "-out",
        certFile,
        "-days",
        "2",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      {
        stdio: "ignore",
      },
    );
    https = createHttps({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, handler);
    await new Promise<void>((r) => https!.listen(0, "127.0.0.1", r));
    httpsBase = `https://127.0.0.1:${(https.address() as { port: number }).port}`;
  }
  http = createHttp(handler);
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  httpBase = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
});

afterAll(async () => {
  https?.closeAllConnections();
  http?.closeAllConnections();
  await Promise.all([new Promise((r) => (https ? https.close(r) : r(undefined))), new Promise((r) => http.close(r))]);
  s?.cleanup();
});

const show = (src: string, env: Record<string, string> = {}) =>
  runCli(["plugins", "pack", "show", src], { home, env: { HERMES_BUNDLED_PLUGINS: s.dir("b"), ...env } });

function writePack(name: string, text: string): string {
  const f = join(s.root, name);
  writeFileSync(f, text);
  return f;
}

describe.skipIf(!SHARED)("pack show: every shared fixture pack", () => {
  const files = !SHARED
    ? []
    : readdirSync(PACKS)
        .filter((f) => !f.startsWith("."))
        .sort();

  it("renders the review of each one, as a dry run", async () => {
    expect(files.length).toBeGreaterThan(5);
    const results = await runAll(files.map((f) => () => show(join(PACKS, f))));
    results.forEach((r, i) => {
      const f = files[i]!;
      const text = readFileSync(join(PACKS, f), "utf8");
      expect(r.code, `${f}\n${r.stderr}`).toBe(0);
      expect(r.stderr).not.toMatch(STACK_RE);
      const name = /^name:\s*(\S+)/m.exec(text)![1]!;
      expect(r.stdout.split("\n")[0], f).toContain(name);
      expect(r.stdout).toContain("Plugin");
      expect(r.stdout).toContain("Pinned ref");
      expect(r.stdout).toMatch(/a pack never bulk-grants/);
      expect(r.stdout).toContain("Dry run only.");
      // Every pinned ref of the file appears (first 12 hex).
      for (const m of text.matchAll(/ref:\s*"?([0-9a-f]{40})"?/g)) expect(r.stdout, f).toContain(m[1]!.slice(0, 12));
    });
  });

  it(
    "the docs example resolves its bare name exactly through " + "the (seed) index and shows its index capabilities",
    async () => {
      const r = await show(join(PACKS, "NousResearch__hermes-agent__docs_plugins.md__excerpt_pack-example.yaml"));
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        /hermes-telegram-business\s+NousResearch\/hermes-telegram-business\s+e905f3bc5eea\s+platform/,
      );
      expect(r.stdout).toMatch(
        new RegExp(
          String.raw`owner\/approval-relay\/plugins\/relay\s+owner\/approval-relay\/plugins\/relay\s+` +
            String.raw`8f3c2d1a9b4e\s+\(shown at install\)`,
        ),
      );
      expect(r.stdout).toContain('hermes-media-studio.default_model = "flux-3"');
      expect(r.stderr).toContain("OFFLINE SEED COPY");
    },
  );

  it("monorepo entries show repo and subdirectory; seeds and skills are listed", async () => {
    const r = await show(join(PACKS, "Awenforever__hermes-wechat-enhance__hermes-pack.yaml"));
    expect(r.stdout).toContain('hermes-email-watchdog.notification_policy = "actionable"');
    const iris = await show(join(PACKS, "adamotte__iris-dashboard__hermes-pack.yaml"));
    expect(iris.stdout).toContain("adamotte/iris-dashboard/plugins/iris-webhooks");
    const f = writePack(
      "skills.yaml",
      `name: with-skills\nplugins:\n  - repo: a/b\n    ref: ${SHA}\nskills: [research/web-digest, " ", 42]\n`,
    );
    const sk = await show(f);
    expect(sk.stdout).toContain("Pack lists skills (NOT auto-installed yet): research/web-digest, 42");
  });
});

describe("pack show: broken packs fail naming the entry", () => {
  const base = SHARED ? readFileSync(join(PACKS, "Awenforever__hermes-wechat-enhance__hermes-pack.yaml"), "utf8") : "";

  it.skipIf(!SHARED)("a tag ref", async () => {
    const r = await show(
      writePack("tag.yaml", base.replace("ref: aaf6126fccb767e42096832e5ed2e8712010f44f", "ref: v1.2.0")),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`E_PACK_REF_NOT_SHA .*tag\.yaml:9:10 plugins\[1\]\.ref: pack plugin entry ` +
          String.raw`'Awenforever\/hermes-alive' has ref "v1\.2\.0"`,
      ),
    );
    expect(r.stdout).toBe("");
  });

  it.skipIf(!SHARED)("a branch ref and a short SHA, all reported at once", async () => {
    const text = base
      .replace("ref: aaf6126fccb767e42096832e5ed2e8712010f44f", "ref: main")
      .replace("ref: c5edbdbda75ff5156ad030a9157c1da5df152201", "ref: c5edbdb");
    const r = await show(writePack("two.yaml", text));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("(2 problems)");
    expect(r.stderr).toContain("'Awenforever/hermes-alive'");
    expect(r.stderr).toContain("'Awenforever/hermes-email-watchdog'");
  });

  it("an entry without repo or name", async () => {
    const r = await show(
      writePack(
        "norepo.yaml",
        `name: x\nplugins:\n  - repo: a/b\n    ref: ${SHA}\n  - ref: ${SHA}\n    subdir: plugins/y\n`,
      ),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/E_PACK_INVALID .*norepo\.yaml:5:5 plugins\[1\]: pack plugin entry #2/);
  });

  it("a missing ref names the entry", async () => {
    const r = await show(writePack("noref.yaml", `name: x\nplugins:\n  - repo: acme/no-ref\n`));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("'acme/no-ref'");
  });

  it.skipIf(!SHARED)("a secret-shaped seed key at any depth, and a reserved key", async () => {
    const text = `${base}\n`.replace(
      "  hermes-alive:\n    enabled: false\n",
      "  hermes-alive:\n    enabled: false\n    settings:\n      - apiKey: xyz\n",
    );
    const r = await show(writePack("secret.yaml", text));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`E_PACK_SEED_SECRET .*secret\.yaml:\d+:\d+ .*pack config for plugin 'hermes-alive' sets ` +
          String.raw`secret-shaped key 'settings\[0\]\.apiKey'`,
      ),
    );
    expect(r.stdout).not.toContain("xyz");
    const r2 = await show(
      writePack(
        "reserved.yaml",
        base.replace("    capture_messages: true\n", "    capture_messages: true\n    allow_tool_override: true\n"),
      ),
    );
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain("E_PACK_SEED_RESERVED");
    expect(r2.stderr).toContain("'allow_tool_override'");
  });

  it("not YAML, not a mapping, no plugins", async () => {
    for (const [n, text, re] of [
      ["bad.yaml", "name: [unclosed\n", /E_YAML_PARSE/],
      ["list.yaml", "- a\n- b\n", /E_PACK_INVALID .*must be a YAML mapping/],
      ["empty.yaml", "name: x\nplugins: []\n", /E_PACK_INVALID/],
    ] as const) {
      const r = await show(writePack(n, text));
      expect(r.code, n).toBe(1);
      expect(r.stderr, n).toMatch(re);
      expect(r.stderr).not.toMatch(STACK_RE);
    }
  });

  it("an unknown or ambiguous bare name is reported per entry, exit 0 (dry run)", async () => {
    const r = await show(
      writePack(
        "unknown.yaml",
        `name: x\nplugins:\n  - name: telegram\n    ref: ${SHA}\n  - repo: a/b\n    ref: ${SHA}\n`,
      ),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /telegram\s+unresolved: not found in the community index \(seed\); closest names: hermes-telegram-business/,
    );
    expect(r.stdout).toContain("1 entry could not be resolved — install would skip it and exit non-zero.");
  });

  it.skipIf(!SHARED)("--json gives the resolution per entry", async () => {
    const r = await runCli(
      [
        "plugins",
        "pack",
        "show",
        join(PACKS, "NousResearch__hermes-agent__docs_plugins.md__excerpt_pack-example.yaml"),
        "--json",
      ],
      { home },
    );
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.entries.map((e: { identifier: string }) => e.identifier)).toEqual([
      "NousResearch/hermes-telegram-business",
      "owner/approval-relay/plugins/relay",
    ]);
    expect(j.index_source).toBe("seed");
  });
});

describe("pack sources", () => {
  it("a missing file, and a file over 1 MiB", async () => {
    const r = await show(join(s.root, "nope.yaml"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_PACK_NOT_FOUND");
    const big = writePack("big.yaml", `name: big\n# ${"x".repeat(1024 * 1024)}\nplugins: []\n`);
    const b = await show(big);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain("E_PACK_TOO_LARGE");
  });

  it("http://, file:// and ftp:// URLs are refused without a request", async () => {
    for (const u of [`${httpBase}/pack.yaml`, "file:///etc/hostname", "ftp://127.0.0.1/pack.yaml"]) {
      const r = await show(u);
      expect(r.code, u).toBe(1);
      expect(r.stderr, u).toContain("E_PACK_URL_SCHEME");
      expect(r.stderr).toContain("pack URLs must use https://");
    }
  });

  it.skipIf(!opensslAvailable)(
    "https:// packs are fetched (redirects followed), capped at 1 MiB, time-limited",
    async () => {
      const env = { NODE_EXTRA_CA_CERTS: certFile };
      const ok = await show(`${httpsBase}/pack.yaml`, env);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain("remote-pack");
      expect(ok.stdout).toContain("acme/remote");
      const moved = await show(`${httpsBase}/moved.yaml`, env);
      expect(moved.code).toBe(0);
      const big = await show(`${httpsBase}/big.yaml`, env);
      expect(big.code).toBe(1);
      expect(big.stderr).toContain("E_PACK_TOO_LARGE");
      const missing = await show(`${httpsBase}/missing.yaml`, env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/E_PACK_FETCH_FAILED: could not fetch pack from .*: HTTP 404/);
      const t0 = Date.now();
      const hang = await show(`${httpsBase}/hang.yaml`, { ...env, HERMES_PACK_TIMEOUT_MS: "500" });
      expect(hang.code).toBe(1);
      expect(hang.stderr).toMatch(/E_PACK_FETCH_FAILED.*no answer within 0\.5 s/);
      expect(Date.now() - t0).toBeLessThan(15_000);
      // Without trusting the test certificate, TLS verification fails (never skipped).
      const untrusted = await show(`${httpsBase}/pack.yaml`);
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toContain("E_PACK_FETCH_FAILED");
    },
  );

  it.skipIf(!SHARED)("show never writes anything to the home", async () => {
    const h = s.dir("untouched");
    const r = await runCli(["plugins", "pack", "show", join(PACKS, "metDaisy__hermes-plugins__hermes-pack.yaml")], {
      home: h,
    });
    expect(r.code).toBe(0);
    expect(readdirSync(h)).toEqual([]);
    expect(existsSync(join(h, "plugins"))).toBe(false);
  });
});
