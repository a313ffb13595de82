import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, statSync, chmodSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch, writePlugin, writeText } from "../support/home.js";

/** Secrets never leave through output: provider errors, logs, the compile plan; generation files are no more readable
 * than config.yaml. */
const scratch = new Scratch("hermes-e2e-secrets-");
const KEY = "sk-live-Q7r2Xv9LmN4pT8sW3yZ6aB1c";
let server: Server;
let base = "";

beforeAll(async () => {
  // A provider that echoes the request's Authorization header in its error body, as some do.
  server = createServer((req, res) => {
    const auth = req.headers.authorization ?? "";
    res.writeHead(401, { "Content-Type": "application/json" });
    res.end(
      JSON.stringify({
        error: {
          message: `Incorrect API key provided. Header was: Authorization: ${auth}`,
          type: "invalid_request_error",
          api_key: KEY,
        },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
});

afterAll(() => {
  server?.close();
  scratch.cleanup();
});

function setup() {
  const root = scratch.dir("case");
  const home = join(root, "home");
  const bundled = join(root, "bundled");
  mkdirSync(bundled, { recursive: true });
  const store = join(root, "store");
  writePlugin(join(store, "alpha"), "name: alpha\nversion: '1'\n");
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: []\n");
  const spec = writeText(
    join(root, "spec.yaml"),
    `plugins:\n  - path: ${store}/alpha\nsettings:\n  model:\n    default: llama\n  plugins:\n    ` +
      `entries:\n      alpha:\n        api_key: ${KEY}\n        region: eu\n`,
  );
  return { root, home, spec, env: { HERMES_BUNDLED_PLUGINS: bundled } };
}

/** The built CLI under `umask 077`, as a careful user's shell runs it. */
function runUnderUmask(args: string[], env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", 'umask 077; exec "$0" "$@"', process.execPath, CLI, ...args], {
      env: { ...process.env, ...env, NO_COLOR: "1" },
      stdio: "ignore",
    });
    child.on("error", reject);
    child.on("close", resolve);
  });
}

describe("secrets in output", () => {
  it("a provider error body that echoes the key is redacted on stderr, in logs and in --json", async () => {
    const t = setup();
    for (const extra of [[], ["--json"]]) {
      const r = await runCli(
        [
          "--home",
          t.home,
          "chat",
          "--provider",
          "openai-compatible",
          "--base-url",
          base,
          "--model",
          "m",
          "--no-stream",
          "--query",
          "hi",
          ...extra,
        ],
        {
          env: { ...t.env, OPENAI_API_KEY: KEY, HERMES_LOG_LEVEL: "debug" },
        },
      );
      expect(r.code).toBe(1);
      expect(`${r.stdout}${r.stderr}`).toContain("Incorrect API key provided");
      expect(`${r.stdout}${r.stderr}`).not.toContain("Q7r2Xv9LmN4pT8sW3yZ6aB1c");
    }
  });

  it("compile --spec never prints a secret-named setting's value in its plan (text or --json)", async () => {
    const t = setup();
    for (const extra of [[], ["--json"]]) {
      const r = await runCli(["--home", t.home, "compile", "--spec", t.spec, "--dry-run", ...extra], { env: t.env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("api_key");
      expect(r.stdout).toContain("eu");
      expect(r.stdout).not.toContain("Q7r2Xv9LmN4pT8sW3yZ6aB1c");
    }
  });

  it("generation files take config.yaml's mode (0600 stays 0600); new files honour umask 077", async () => {
    const t = setup();
    chmodSync(join(t.home, "config.yaml"), 0o600);
    const r = await runCli(["--home", t.home, "compile", "--spec", t.spec], { env: t.env });
    expect(r.code, r.stderr).toBe(0);
    const gens = join(t.home, "generations");
    for (const n of readdirSync(gens).filter((d) => /^\d+$/.test(d))) {
      for (const f of ["overlay.json", "hermes.lock.json", "files.json", "meta.json"]) {
        expect((statSync(join(gens, n, f)).mode & 0o777).toString(8), `${n}/${f}`).toBe("600");
      }
    }

    const fresh = join(scratch.dir("fresh"), "home");
    mkdirSync(fresh);
    expect(
      await runUnderUmask(["--home", fresh, "plugins", "enable", "hello-world"], {
        HERMES_BUNDLED_PLUGINS: bundledWithHelloWorld(scratch),
      }),
    ).toBe(0);
    const made = [
      join(fresh, "config.yaml"),
      ...readdirSync(join(fresh, "generations"))
        .filter((d) => /^\d+$/.test(d))
        .map((n) => join(fresh, "generations", n, "overlay.json")),
    ];
    expect(made.length).toBeGreaterThan(0);
    for (const f of made) expect((statSync(f).mode & 0o777).toString(8), f).toBe("600");
  });
});
