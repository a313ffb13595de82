import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";
import { fakeOpenAI, type FakeServer } from "./agent-helpers.js";

/**
 * Issue 17: model-provider plugins (`plugins/model-providers/<name>/`, `ctx.register_provider(profile)`) go
 * through the lock, resolve `--provider NAME` and `model.provider` to a real chat-completions client with the
 * profile's base URL, headers and key variable, and a user folder overrides the bundled one of the same name.
 * `plugins list` / `plugins why` say which provider plugin is active and which key selects it.
 */
const scratch = new Scratch("hermes-e2e-model-providers-");
afterAll(() => scratch.cleanup());

/** A model-provider plugin folder registering `profile` (JSON) from its index.js. */
function providerPlugin(dir: string, name: string, profile: Record<string, unknown>): void {
  writePlugin(dir, `name: ${name}\nversion: "1.0"\nkind: model-provider\n`);
  writeText(
    join(dir, "index.js"),
    `export function register(ctx) {\n  ctx.register_provider(${JSON.stringify(profile)});\n}\n`,
  );
}

/** A home with an explicit empty allow-list (no migration) and extra config lines. */
function home(root: string, yaml = ""): string {
  const h = join(root, "home");
  writeText(join(h, "config.yaml"), `plugins:\n  enabled: []\nagent:\n  retry_backoff_ms: 10\n${yaml}`);
  return h;
}

function emptyBundled(root: string): string {
  const b = join(root, "bundled-empty");
  mkdirSync(b, { recursive: true });
  return b;
}

async function withServer(fn: (s: FakeServer) => Promise<void>): Promise<void> {
  const s = await fakeOpenAI([{ say: "from the plugin provider" }]);
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

describe("a user model-provider plugin", () => {
  it("--provider NAME reaches the profile's endpoint with its headers, its key variable and its first model", () =>
    withServer(async (server) => {
      const root = scratch.dir("flag");
      const h = home(root);
      providerPlugin(join(h, "plugins", "model-providers", "acme"), "acme", {
        name: "acme",
        display_name: "Acme Inference",
        base_url: server.url,
        env_vars: ["ACME_API_KEY"],
        default_headers: { "X-Acme-Client": "hermes-kit-test" },
        fallback_models: ["acme-large", "acme-small"],
      });
      const env = { HERMES_BUNDLED_PLUGINS: emptyBundled(root) };
      const ok = await runCli(["--home", h, "chat", "--provider", "acme", "-q", "hi"], {
        env: { ...env, ACME_API_KEY: "sk-acme-1" },
        cwd: root,
      });
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toBe("from the plugin provider\n");
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]!.model).toBe("acme-large");
      expect(server.headers[0]!["x-acme-client"]).toBe("hermes-kit-test");
      expect(server.headers[0]!.authorization).toBe("Bearer sk-acme-1");
      // --model wins over the profile's first model; the key is read when the call is made.
      const other = await runCli(["--home", h, "chat", "--provider", "ACME", "--model", "acme-small", "-q", "hi"], {
        env: { ...env, ACME_API_KEY: "sk-acme-2" },
        cwd: root,
      });
      expect(other.code, other.stderr).toBe(0);
      expect(server.requests[1]!.model).toBe("acme-small");
      expect(server.headers[1]!.authorization).toBe("Bearer sk-acme-2");
      // No key: the call fails naming the variable, and nothing reaches the server.
      const noKey = await runCli(["--home", h, "chat", "--provider", "acme", "-q", "hi"], { env, cwd: root });
      expect(noKey.code).toBe(1);
      expect(noKey.stderr).toContain("E_PROVIDER_NO_KEY: provider 'acme' needs an API key: set ACME_API_KEY");
      expect(noKey.stderr).not.toMatch(STACK_RE);
      expect(server.requests).toHaveLength(2);
      // A typo names the nearest provider, the plugin's among them.
      const typo = await runCli(["--home", h, "chat", "--provider", "acm", "-q", "hi"], { env, cwd: root });
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain(
        "unknown provider 'acm'; did you mean 'acme'? (available: openai-compatible, scripted, acme (Acme Inference))",
      );
      expect(typo.stderr).not.toMatch(STACK_RE);
    }));

  it("model.provider selects it without flags; model.default and model.api_key_env apply to it", () =>
    withServer(async (server) => {
      const root = scratch.dir("config");
      const h = home(root, "model:\n  provider: acme\n  default: cfg-model\n  api_key_env: MY_ACME\n");
      providerPlugin(join(h, "plugins", "model-providers", "acme"), "acme", {
        name: "acme",
        base_url: server.url,
        env_vars: ["ACME_API_KEY"],
        default_headers: { "X-Acme-Client": "cfg" },
      });
      const r = await runCli(["--home", h, "chat", "-q", "hi"], {
        env: { HERMES_BUNDLED_PLUGINS: emptyBundled(root), MY_ACME: "sk-from-config-var", ACME_API_KEY: "unused" },
        cwd: root,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("from the plugin provider\n");
      expect(server.requests[0]!.model).toBe("cfg-model");
      expect(server.headers[0]!["x-acme-client"]).toBe("cfg");
      expect(server.headers[0]!.authorization).toBe("Bearer sk-from-config-var");
      // config validate knows the plugin's name, and suggests it for a typo.
      const good = await runCli(["--home", h, "config", "validate", "--strict"], {
        env: { HERMES_BUNDLED_PLUGINS: emptyBundled(root) },
      });
      expect(good.code, good.stderr).toBe(0);
      const typo = writeText(join(root, "typo.yaml"), "model:\n  provider: acmee\n");
      const bad = await runCli(["--home", h, "config", "validate", typo, "--json"], {
        env: { HERMES_BUNDLED_PLUGINS: emptyBundled(root) },
      });
      expect(JSON.parse(bad.stdout)).toEqual([
        expect.objectContaining({
          code: "W_CONFIG_UNKNOWN_PROVIDER",
          message: expect.stringContaining("did you mean 'acme'?"),
        }),
      ]);
    }));

  it("an api_mode the kit does not implement, or a field it would not use, is refused at registration", async () => {
    const root = scratch.dir("refused");
    const h = home(root);
    providerPlugin(join(h, "plugins", "model-providers", "conv"), "conv", {
      name: "conv",
      api_mode: "bedrock_converse",
      base_url: "https://bedrock.example/v1",
    });
    providerPlugin(join(h, "plugins", "model-providers", "temp"), "temp", {
      name: "temp",
      base_url: "https://temp.example/v1",
      fixed_temperature: 0,
    });
    const env = { HERMES_BUNDLED_PLUGINS: emptyBundled(root) };
    const r = await runCli(["--home", h, "chat", "--provider", "conv", "-q", "hi"], { env, cwd: root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "register_provider: api_mode 'bedrock_converse' is not implemented by hermes-kit (only chat_completions",
    );
    expect(r.stderr).toContain("unknown provider 'conv'");
    expect(r.stderr).not.toMatch(STACK_RE);
    const why = await runCli(["--home", h, "plugins", "why", "temp"], { env });
    expect(why.stdout).toMatch(
      /last run: {2}failed — register_provider: fixed_temperature: not supported by hermes-kit/,
    );
  });
});

describe("the bundled openrouter profile and a user folder of the same name", () => {
  it("the bundled profile loads on its own; a user folder model-providers/openrouter replaces it", async () => {
    const bundledServer = await fakeOpenAI([{ say: "bundled answered" }]);
    const userServer = await fakeOpenAI([{ say: "user answered" }]);
    try {
      const root = scratch.dir("override");
      const bundled = join(root, "bundled");
      cpSync(join(ROOT, "plugins", "model-providers"), join(bundled, "model-providers"), { recursive: true });
      const h = home(root, "model:\n  provider: openrouter\n");
      // The profile's last env_vars entry, OPENROUTER_BASE_URL, replaces its base URL.
      const env = {
        HERMES_BUNDLED_PLUGINS: bundled,
        OPENROUTER_API_KEY: "sk-or-test",
        OPENROUTER_BASE_URL: bundledServer.url,
      };
      const first = await runCli(["--home", h, "chat", "-q", "hi"], { env, cwd: root });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toBe("bundled answered\n");
      expect(bundledServer.requests[0]!.model).toBe("openai/gpt-4o-mini");
      expect(bundledServer.headers[0]!["x-title"]).toBe("hermes-kit");
      expect(bundledServer.headers[0]!.authorization).toBe("Bearer sk-or-test");
      providerPlugin(join(h, "plugins", "model-providers", "openrouter"), "openrouter", {
        name: "openrouter",
        base_url: userServer.url,
        env_vars: ["OPENROUTER_API_KEY"],
        default_headers: { "X-From": "user-folder" },
        fallback_models: ["user/model"],
      });
      const second = await runCli(["--home", h, "chat", "-q", "hi"], { env, cwd: root });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toBe("user answered\n");
      expect(userServer.headers[0]!["x-from"]).toBe("user-folder");
      expect(userServer.requests[0]!.model).toBe("user/model");
      expect(bundledServer.requests).toHaveLength(1);
      const why = await runCli(["--home", h, "plugins", "why", "model-providers/openrouter", "--json"], { env });
      const x = JSON.parse(why.stdout) as { source: string; shadows: Array<{ source: string }> };
      expect(x.source).toBe("user");
      expect(x.shadows.map((s) => s.source)).toEqual(["bundled"]);
    } finally {
      await bundledServer.close();
      await userServer.close();
    }
  });
});

describe("plugins list and plugins why show the active provider plugin of every kind", () => {
  it("names the selecting key of each provider plugin and marks the selected, loading one active", async () => {
    const root = scratch.dir("list");
    const bundled = join(root, "bundled");
    writePlugin(join(bundled, "image_gen", "pixels"), "name: pixels\nversion: '1'\nkind: backend\n");
    writePlugin(join(bundled, "image_gen", "canvas"), "name: canvas\nversion: '1'\nkind: backend\n");
    const h = home(root, "model:\n  provider: acme\nimage_gen:\n  provider: pixels\nmemory:\n  provider: notes\n");
    providerPlugin(join(h, "plugins", "model-providers", "acme"), "acme", { name: "acme", base_url: "http://x/v1" });
    providerPlugin(join(h, "plugins", "model-providers", "zeta"), "zeta", { name: "zeta", base_url: "http://z/v1" });
    writePlugin(join(h, "plugins", "memory", "notes"), "name: notes\nversion: '1'\nkind: exclusive\n");
    writePlugin(join(h, "plugins", "memory", "other"), "name: other\nversion: '1'\nkind: exclusive\n");
    writePlugin(join(h, "plugins", "flat"), "name: flat\nversion: '1'\n");
    const env = { HERMES_BUNDLED_PLUGINS: bundled };
    const [j, t, why, whyNot] = await Promise.all([
      runCli(["--home", h, "plugins", "list", "--json"], { env }),
      runCli(["--home", h, "plugins", "list"], { env }),
      runCli(["--home", h, "plugins", "why", "acme"], { env }),
      runCli(["--home", h, "plugins", "why", "zeta", "--json"], { env }),
    ]);
    expect(j.code, j.stderr).toBe(0);
    const rows = JSON.parse(j.stdout) as Array<{ key: string; provider: unknown }>;
    const by = Object.fromEntries(rows.map((r) => [r.key, r.provider]));
    expect(by).toEqual({
      flat: null,
      "image_gen/canvas": { kind: "image_gen", select: "image_gen.provider", selected: "pixels", active: false },
      "image_gen/pixels": { kind: "image_gen", select: "image_gen.provider", selected: "pixels", active: true },
      "memory/notes": { kind: "memory", select: "memory.provider", selected: "notes", active: true },
      "memory/other": { kind: "memory", select: "memory.provider", selected: "notes", active: false },
      "model-providers/acme": { kind: "model", select: "model.provider", selected: "acme", active: true },
      "model-providers/zeta": { kind: "model", select: "model.provider", selected: "acme", active: false },
    });
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/^Provider plugin\s+Selected by\s+Active$/m);
    expect(t.stdout).toMatch(/^model-providers\/acme\s+model\.provider \(or --provider\)\s+active$/m);
    expect(t.stdout).toMatch(
      /^model-providers\/zeta\s+model\.provider \(or --provider\)\s+not active \(model\.provider is 'acme'\)$/m,
    );
    expect(t.stdout).toMatch(/^memory\/notes\s+memory\.provider\s+active$/m);
    expect(t.stdout).toMatch(
      /^image_gen\/canvas\s+image_gen\.provider\s+not active \(image_gen\.provider is 'pixels'\)$/m,
    );
    expect(t.stdout).not.toMatch(/^flat\s+\S+\.provider/m);
    expect(why.code, why.stderr).toBe(0);
    expect(why.stdout).toMatch(/^ {2}provider: {2}model, selected by model\.provider \(or --provider\): active$/m);
    expect(JSON.parse(whyNot.stdout).provider).toEqual({
      kind: "model",
      select: "model.provider",
      selected: "acme",
      active: false,
    });
  });
});
