/**
 * `hermes config get|set|unset` through the built CLI: comments and order kept byte for byte, YAML-typed values,
 * schema and typo refusals that write nothing, secrets kept out of config.yaml, a managed home's deployment keys,
 * the home-wide edit lock under two concurrent writers, and `plugins search` following `plugins.index_url`.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

const s = new Scratch("hermes-e2e-config-keys-");
afterAll(() => s.cleanup());

const ORIGINAL = [
  "# my hermes config",
  "model:",
  "  default: gpt-4o  # the model I pay for",
  "",
  "# plugins, by hand",
  "plugins:",
  "  enabled: [alpha]  # only this",
  "agent:",
  "  max_turns: 20",
  "",
].join("\n");

function home(text = ORIGINAL): { home: string; file: string; cli: (...a: string[]) => ReturnType<typeof runCli> } {
  const h = s.dir("home");
  const file = writeText(join(h, "config.yaml"), text);
  return { home: h, file, cli: (...a: string[]) => runCli(["--home", h, "config", ...a]) };
}

const read = (file: string) => readFileSync(file, "utf8");

describe("hermes config get", () => {
  it("prints strings bare, mappings as YAML, --json as JSON; secrets masked", async () => {
    const t = home(
      `${ORIGINAL}mcp_servers:\n  gh:\n    url: https://x.example/mcp\n    headers:\n      Authorization: hunter2\n`,
    );
    const g = await t.cli("get", "model.default");
    expect([g.code, g.stdout]).toEqual([0, "gpt-4o\n"]);
    expect((await t.cli("get", "agent")).stdout).toBe("max_turns: 20\n");
    const j = await t.cli("get", "plugins", "--json");
    expect(JSON.parse(j.stdout)).toEqual({ enabled: ["alpha"] });
    expect(JSON.parse((await t.cli("get", "agent.max_turns", "--json")).stdout)).toBe(20);
    const sec = await t.cli("get", "mcp_servers.gh", "--json");
    expect(JSON.parse(sec.stdout)).toEqual({ url: "https://x.example/mcp", headers: { Authorization: "***" } });
    expect(sec.stdout).not.toContain("hunter2");
  });

  it("a key that is not set exits 1 naming the default; a typo names the nearest key", async () => {
    const t = home();
    const miss = await t.cli("get", "agent.api_max_retries");
    expect(miss.code).toBe(1);
    expect(miss.stdout).toBe("");
    expect(miss.stderr).toContain("E_CONFIG_KEY_NOT_SET: agent.api_max_retries is not set");
    expect(miss.stderr).toContain("(default: 3)");
    const typo = await t.cli("get", "modle.default");
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain("E_CONFIG_KEY_UNKNOWN");
    expect(typo.stderr).toContain("did you mean 'model'?");
    const bad = await t.cli("get", "model..default");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("E_CONFIG_KEY_INVALID");
    expect(bad.stderr + typo.stderr + miss.stderr).not.toMatch(STACK_RE);
  });
});

describe("hermes config set / unset", () => {
  it("set: typed values, new intermediate mappings, comments and order kept byte for byte", async () => {
    const t = home();
    expect((await t.cli("set", "agent.max_turns", "7")).code).toBe(0);
    expect((await t.cli("set", "model.stream", "false")).code).toBe(0);
    expect((await t.cli("set", "plugins.entries.alpha.settings", "{retry: 3, tags: [a, b]}")).code).toBe(0);
    expect((await t.cli("set", "model.base_url", "http://127.0.0.1:9/v1")).code).toBe(0);
    expect((await t.cli("set", "agent.system_prompt", "42", "--string")).code).toBe(0);
    const text = read(t.file);
    // Every line the edits did not touch is still there, in order, with its comment.
    const kept = ORIGINAL.split("\n").filter((l) => l !== "  max_turns: 20");
    const lines = text.split("\n");
    let at = 0;
    for (const l of kept) at = lines.indexOf(l, at) + 1 || expect.fail(`line lost or moved: ${JSON.stringify(l)}`);
    expect(text.startsWith("# my hermes config\nmodel:\n  default: gpt-4o  # the model I pay for\n")).toBe(true);
    const all = JSON.parse((await t.cli("get", "model", "--json")).stdout);
    expect(all).toEqual({ default: "gpt-4o", stream: false, base_url: "http://127.0.0.1:9/v1" });
    expect(JSON.parse((await t.cli("get", "agent", "--json")).stdout)).toEqual({ max_turns: 7, system_prompt: "42" });
    const settings = await t.cli("get", "plugins.entries.alpha.settings", "--json");
    expect(JSON.parse(settings.stdout)).toEqual({ retry: 3, tags: ["a", "b"] });
  });

  it("unset removes the key and the mappings it leaves empty; the rest stays as written", async () => {
    const t = home(
      ORIGINAL.replace("  default: gpt-4o  # the model I pay for\n", "$&  stream: false\n").replace(
        "  enabled: [alpha]  # only this\n",
        "$&  entries:\n    alpha:\n      settings:\n        retry: 3\n",
      ),
    );
    const un = await t.cli("unset", "plugins.entries.alpha.settings");
    expect([un.code, un.stdout]).toEqual([
      0,
      "✓ plugins.entries.alpha.settings removed. Takes effect on next session.\n",
    ]);
    expect(read(t.file)).not.toContain("entries");
    expect(read(t.file)).toContain("  enabled: [alpha]  # only this\n");
    expect((await t.cli("unset", "model.stream")).code).toBe(0);
    expect(read(t.file)).toBe(ORIGINAL);
    const again = await t.cli("unset", "model.stream");
    expect([again.code, again.stdout]).toEqual([0, "model.stream is not set; nothing changed.\n"]);
    const same = await t.cli("set", "agent.max_turns", "20", "--json");
    expect(JSON.parse(same.stdout)).toMatchObject({ key: "agent.max_turns", value: 20, changed: false });
  });

  it("refuses a typo'd key, a schema-invalid value, a secret and a non-mapping parent; nothing written", async () => {
    const t = home();
    const cases: Array<[string[], string, string]> = [
      [["set", "agent.max_turn", "5"], "E_CONFIG_KEY_UNKNOWN", "did you mean 'agent.max_turns'?"],
      [["set", "plugins.enabeld", "[x]"], "E_CONFIG_KEY_UNKNOWN", "did you mean 'plugins.enabled'?"],
      [["set", "modle.default", "x"], "E_CONFIG_KEY_UNKNOWN", "did you mean 'model'?"],
      [["set", "agent.max_turns", "0"], "E_CONFIG_VALUE_INVALID", "agent.max_turns: must be >= 1 (got 0)"],
      [["set", "agent.max_turns", "many"], "E_CONFIG_VALUE_INVALID", 'must be integer (got string "many")'],
      [["set", "plugins.index_url", "[a"], "E_CONFIG_VALUE_INVALID", "is not a YAML value"],
      [["set", "mcp_servers.gh", "{cmd: npx}"], "E_CONFIG_VALUE_INVALID", "unknown field 'cmd'"],
      [["set", "model.api_key", "sk-abcdefghijklmnop"], "E_CONFIG_SECRET_VALUE", "model.api_key would hold a secret"],
      [["set", "model.default.name", "x"], "E_CONFIG_KEY_UNKNOWN", "model.default is string, not a mapping"],
      [["set", "plugins.enabled.0", "x"], "E_CONFIG_KEY_UNKNOWN", "plugins.enabled is array or null, not a mapping"],
      [["unset", "agent.max_turn"], "E_CONFIG_KEY_UNKNOWN", "did you mean 'agent.max_turns'?"],
    ];
    for (const [args, code, text] of cases) {
      const r = await t.cli(...args);
      expect(r.code, `${args.join(" ")}\n${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(code);
      expect(r.stderr).toContain(text);
      expect(r.stderr).not.toMatch(STACK_RE);
      expect(read(t.file)).toBe(ORIGINAL);
    }
    // A ${VAR} reference to a secret is what belongs in config.yaml.
    const ref = await t.cli(
      "set",
      "mcp_servers.gh",
      "{url: 'https://x.example/mcp', headers: {Authorization: 'Bearer ${GH}'}}",
    );
    expect(ref.code, ref.stderr).toBe(0);
    expect(read(t.file)).toContain("Authorization: Bearer ${GH}");
  });

  it("two concurrent sets of different keys both land", async () => {
    const t = home();
    const [a, b] = await Promise.all([
      t.cli("set", "agent.retry_backoff_ms", "250"),
      t.cli("set", "plugins.index_url", "https://index.example/i.json"),
    ]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    expect(JSON.parse((await t.cli("get", "agent.retry_backoff_ms", "--json")).stdout)).toBe(250);
    expect((await t.cli("get", "plugins.index_url")).stdout).toBe("https://index.example/i.json\n");
    expect(read(t.file).startsWith(ORIGINAL.slice(0, -"agent:\n  max_turns: 20\n".length))).toBe(true);
  });

  it("a managed home refuses the deployment's keys, naming the owner; the lock follows edits", async () => {
    const root = s.dir("managed");
    const h = join(root, "home");
    writePlugin(join(root, "store", "beta"), "name: beta\nversion: '1'\n");
    writeText(join(h, "config.yaml"), "# mine\nagent:\n  max_turns: 20\n");
    const spec = writeText(
      join(root, "spec.yaml"),
      `plugins:\n  - path: ${root}/store/beta\nsettings:\n  model:\n    default: llama\n`,
    );
    const env = { HERMES_BUNDLED_PLUGINS: s.dir("bundled") };
    const cli = (...a: string[]) => runCli(["--home", h, ...a], { env });
    expect((await cli("compile", "--spec", spec, "--managed", "nixos")).code).toBe(0);
    const before = read(join(h, "config.yaml"));
    for (const args of [
      ["set", "model.default", "gpt-4o"],
      ["set", "model", "{provider: openai}"],
      ["unset", "model"],
      ["set", "plugins.enabled", "[]"],
    ]) {
      const r = await cli("config", ...args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toContain("E_CONFIG_MANAGED_KEY");
      expect(r.stderr).toMatch(/(model\.default|plugins\.enabled)( item 'beta')? is set by the nixos deployment/);
      expect(read(join(h, "config.yaml"))).toBe(before);
    }
    const gen = JSON.parse(readFileSync(join(h, "hermes.lock.json"), "utf8")) as { plugins: unknown[] };
    expect(gen.plugins.length).toBeGreaterThan(0);
    // A key the deployment does not own stays writable, and the lock is recompiled with it.
    const ok = await cli("config", "set", "model.provider", "openai", "--json");
    expect(ok.code, ok.stderr).toBe(0);
    const r = JSON.parse(ok.stdout) as { changed: boolean; generation: number | null };
    expect(r.changed).toBe(true);
    expect(typeof r.generation).toBe("number");
    expect((await cli("config", "get", "model.default")).stdout).toBe("llama\n");
    expect((await cli("lock", "verify")).code).toBe(0);
  });
});

describe("hermes config set plugins.index_url, then plugins search", () => {
  let server: Server;
  let base = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url !== "/index.json") return res.writeHead(404).end();
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ schema_version: 1, plugins: [{ name: "tele-stats", repo: "acme/tele-stats" }] }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it("search reads the index the set named", async () => {
    const t = home();
    expect((await t.cli("set", "plugins.index_url", `${base}/index.json`)).code).toBe(0);
    const r = await runCli(["--home", t.home, "plugins", "search", "tele", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).results.map((x: { name: string }) => x.name)).toEqual(["tele-stats"]);
  });
});
