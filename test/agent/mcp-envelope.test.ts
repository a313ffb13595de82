import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { mcpToolName, parseMcpServers, rawFromCallResult } from "../../src/agent/mcp/index.js";
import { validateSchema } from "../../src/core/schema.js";
import { hasShared, SHARED_FIXTURES as FIXTURES } from "../shared-dir.js";
import {
  buildMcpEnvelope,
  mcpAllowed,
  normalizeMcpTimeout,
  readMcpAllowlist,
  truncateMcpText,
} from "../../src/runtime/mcp-call.js";

const SHARED = hasShared("test/agent/mcp-envelope.test.ts: the real Hermes config of the shared fixtures");

/** The pure parts of MCP: timeout rule, envelope, truncation, allowlist reading, config parsing. */

describe("call_mcp timeout rule (Number(), unparseable → 30, clamp 1–600)", () => {
  it.each([
    [undefined, 30],
    [null, 30],
    ["", 30],
    ["  ", 30],
    ["soon", 30],
    [{}, 30],
    [NaN, 30],
    [30, 30],
    ["5", 5],
    [" 7.5 ", 7.5],
    [0.2, 1],
    [0, 1],
    [-5, 1],
    [601, 600],
    [1e9, 600],
    [Infinity, 600],
    [-Infinity, 1],
    ["Infinity", 600],
    [true, 1],
  ])("%j → %d", (input, expected) => {
    expect(normalizeMcpTimeout(input)).toBe(expected);
  });
});

describe("envelope", () => {
  it("object with error → ok:false (error wins over result)", () => {
    expect(buildMcpEnvelope('{"error":"boom"}')).toEqual({ ok: false, error: "boom" });
    expect(buildMcpEnvelope('{"error":"boom","result":1}')).toEqual({ ok: false, error: "boom" });
    expect(buildMcpEnvelope('{"error":{"code":3}}')).toEqual({ ok: false, error: '{"code":3}' });
  });

  it("object with result → ok:true, plus structuredContent when present", () => {
    expect(buildMcpEnvelope('{"result":"hi"}')).toEqual({ ok: true, result: "hi" });
    expect(buildMcpEnvelope('{"result":null}')).toEqual({ ok: true, result: null });
    expect(buildMcpEnvelope('{"result":"t","structuredContent":{"a":1}}')).toEqual({
      ok: true,
      result: "t",
      structuredContent: { a: 1 },
    });
  });

  it("anything else → ok:true with the parsed value, or the raw text", () => {
    expect(buildMcpEnvelope("[1,2]")).toEqual({ ok: true, result: [1, 2] });
    expect(buildMcpEnvelope('{"other":1}')).toEqual({ ok: true, result: { other: 1 } });
    expect(buildMcpEnvelope("42")).toEqual({ ok: true, result: 42 });
    expect(buildMcpEnvelope("null")).toEqual({ ok: true, result: "null" });
    expect(buildMcpEnvelope("plain text")).toEqual({ ok: true, result: "plain text" });
  });

  it("a raw non-string: null → '', else its string form", () => {
    expect(buildMcpEnvelope(null)).toEqual({ ok: true, result: "" });
    expect(buildMcpEnvelope(undefined)).toEqual({ ok: true, result: "" });
    expect(buildMcpEnvelope(7)).toEqual({ ok: true, result: 7 });
    expect(buildMcpEnvelope({ result: "obj" })).toEqual({ ok: true, result: "obj" });
  });

  it("past 65536 characters: cut, '… [truncated]' appended, truncated: true", () => {
    const raw = JSON.stringify({ result: "y".repeat(70000) });
    const env = buildMcpEnvelope(raw) as { ok: true; result: string; truncated: true };
    expect(env).toMatchObject({ ok: true, truncated: true });
    expect(env.result).toBe(`${raw.slice(0, 65536)}… [truncated]`);
    // Exactly at the limit: nothing is cut.
    const exact = "z".repeat(65536);
    expect(buildMcpEnvelope(exact)).toEqual({ ok: true, result: exact });
    // A short JSON error that is cut stays parseable only if it is not cut: here the cut text is not JSON.
    expect(buildMcpEnvelope(JSON.stringify({ error: "e".repeat(70000) }))).toMatchObject({ ok: true, truncated: true });
  });

  it("truncation counts code points and never splits a surrogate pair", () => {
    const s = "😀".repeat(65537);
    const { text, truncated } = truncateMcpText(s);
    expect(truncated).toBe(true);
    expect([...text.replace("… [truncated]", "")].length).toBe(65536);
    expect(text.endsWith("😀… [truncated]")).toBe(true);
    expect(truncateMcpText("😀".repeat(65536))).toEqual({ text: "😀".repeat(65536), truncated: false });
  });
});

describe("allowlist", () => {
  it("reads a list, stringifies items, treats anything else as empty", () => {
    expect(readMcpAllowlist({ mcp_allowlist: ["a", 7, true] })).toEqual(["a", "7", "true"]);
    expect(readMcpAllowlist({ mcp_allowlist: "a" })).toEqual([]);
    expect(readMcpAllowlist({ mcp_allowlist: null })).toEqual([]);
    expect(readMcpAllowlist({})).toEqual([]);
    const hostile = Object.defineProperty({}, "mcp_allowlist", {
      get() {
        throw new Error("unreadable");
      },
    });
    expect(readMcpAllowlist(hostile)).toEqual([]);
  });

  it("matches exactly: no wildcard, no case folding, no trimming", () => {
    expect(mcpAllowed(["github"], "github")).toBe(true);
    expect(mcpAllowed(["*"], "github")).toBe(false);
    expect(mcpAllowed(["GitHub"], "github")).toBe(false);
    expect(mcpAllowed([" github"], "github")).toBe(false);
    expect(mcpAllowed(["7"], "7")).toBe(true);
  });
});

describe("raw result of the native handler", () => {
  it("joins text content, marks non-text content, maps isError and structuredContent", () => {
    expect(
      rawFromCallResult({
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      }),
    ).toBe('{"result":"a\\nb"}');
    expect(
      JSON.parse(rawFromCallResult({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] })),
    ).toEqual({ result: "[image: image/png, 4 base64 chars]" });
    expect(
      JSON.parse(rawFromCallResult({ content: [{ type: "resource", resource: { uri: "file:///x", text: "body" } }] })),
    ).toEqual({ result: "body" });
    expect(JSON.parse(rawFromCallResult({ isError: true, content: [{ type: "text", text: "bad" }] }))).toEqual({
      error: "bad",
    });
    expect(JSON.parse(rawFromCallResult({ isError: true, content: [] })).error).toMatch(/without a message/);
    expect(JSON.parse(rawFromCallResult({ content: [], structuredContent: { n: 1 } }))).toEqual({
      result: "",
      structuredContent: { n: 1 },
    });
    expect(JSON.parse(rawFromCallResult({ toolResult: { legacy: true } }))).toEqual({ result: { legacy: true } });
  });
});

describe("mcp_servers config", () => {
  const parse = (servers: unknown, env: NodeJS.ProcessEnv = {}) =>
    parseMcpServers({ mcp_servers: servers }, { baseDir: "/home/h", env, file: "config.yaml" });

  it("parses stdio and HTTP servers with defaults, ${VAR} interpolation and cwd relative to the home", () => {
    const r = parse(
      {
        fs: { command: "npx", args: ["-y", "server", 3], env: { TOKEN: "${TOK}", N: 1 }, cwd: "work" },
        "kb.rag": {
          url: "https://kb.example/mcp",
          headers: { Authorization: "Bearer ${TOK}" },
          timeout: 30,
          tools: { exclude: ["drop"] },
        },
      },
      { TOK: "t0k" },
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.servers).toEqual([
      {
        name: "fs",
        transport: "stdio",
        command: "npx",
        args: ["-y", "server", "3"],
        env: { TOKEN: "t0k", N: "1" },
        cwd: "/home/h/work",
        timeout: 120,
        connect_timeout: 60,
        enabled: true,
        include: undefined,
        exclude: [],
      },
      {
        name: "kb.rag",
        transport: "http",
        url: "https://kb.example/mcp",
        headers: { Authorization: "Bearer t0k" },
        timeout: 30,
        connect_timeout: 60,
        enabled: true,
        include: undefined,
        exclude: ["drop"],
      },
    ]);
    expect(mcpToolName("kb.rag", "search-docs")).toBe("mcp_kb_rag_search_docs");
  });

  it("skips invalid servers with E_MCP_CONFIG_INVALID naming the path, clamps with a warning", () => {
    const r = parse({
      both: { command: "x", url: "http://a" },
      neither: { args: [] },
      badurl: { url: "ftp://x" },
      badargs: { command: "x", args: "a b" },
      "bad name": { command: "x" },
      notmap: "npx server",
      slow: { command: "x", timeout: 5000, tmeout: 1 },
      neg: { command: "x", timeout: -1 },
      unset: { command: "x", env: { A: "${NOPE}" } },
      "kb-rag": { command: "x" },
      kb_rag: { command: "y" },
    });
    expect(r.servers.map((s) => s.name)).toEqual(["slow", "unset", "kb-rag"]);
    expect(r.servers[0]!.timeout).toBe(600);
    expect(r.servers[1]).toMatchObject({ env: { A: "" } });
    const errs = r.diagnostics.filter((d) => d.code === "E_MCP_CONFIG_INVALID").map((d) => d.path);
    expect(errs).toEqual([
      "mcp_servers.both",
      "mcp_servers.neither",
      "mcp_servers.badurl.url",
      "mcp_servers.badargs.args",
      "mcp_servers.bad name",
      "mcp_servers.notmap",
      "mcp_servers.neg.timeout",
      "mcp_servers.kb_rag",
    ]);
    const warns = r.diagnostics.filter((d) => d.code === "W_MCP_CONFIG_ADJUSTED").map((d) => [d.path, d.severity]);
    expect(warns).toEqual([
      ["mcp_servers.slow.tmeout", "warning"],
      ["mcp_servers.slow.timeout", "warning"],
      ["mcp_servers.unset.env.A", "warning"],
    ]);
    expect(parse("nope").diagnostics[0]).toMatchObject({ code: "E_MCP_CONFIG_INVALID", path: "mcp_servers" });
    expect(parse(undefined)).toEqual({ servers: [], diagnostics: [] });
  });

  it.skipIf(!SHARED)("reads the mcp_servers of a real Hermes config (shared fixture) without errors", () => {
    const file = join(FIXTURES, "configs", "HermeTeam__hermes-sdlc-agents__profiles_hermes-builder_config.yaml");
    const doc = parseYaml(readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(validateSchema("config", { mcp_servers: doc.mcp_servers })).toEqual([]);
    const env = {
      GIT_PROVIDER_MCP_URL: "https://git.example/mcp",
      GIT_PROVIDER_MCP_TOKEN: "tok",
      CONTEXT7_DEFAULT_MINIMUM_TOKENS: "1000",
      MDB_MCP_CONNECTION_STRING: "mongodb://db",
      POSTGRES_MCP_CONNECTION_STRING: "postgres://db",
    };
    const r = parseMcpServers(doc, { baseDir: "/h", env });
    expect(r.diagnostics).toEqual([]);
    const byName = Object.fromEntries(r.servers.map((s) => [s.name, s]));
    expect(byName.repository).toMatchObject({
      transport: "http",
      url: "https://git.example/mcp",
      timeout: 180,
      connect_timeout: 20,
      headers: { Authorization: "Bearer tok" },
    });
    expect(byName.repository!.include).toContain("create_pull_request");
    expect(byName["ddg-search"]).toMatchObject({
      transport: "stdio",
      command: "uvx",
      include: ["search", "fetch_content"],
    });
    expect(byName.playwright).toMatchObject({ enabled: false });
    // Without the variables the HTTP server is skipped and the unset names are reported.
    const bare = parseMcpServers(doc, { baseDir: "/h", env: {} });
    expect(bare.servers.map((s) => s.name)).not.toContain("repository");
    expect(bare.diagnostics.map((d) => d.code)).toEqual(
      expect.arrayContaining(["W_MCP_CONFIG_ADJUSTED", "E_MCP_CONFIG_INVALID"]),
    );
    // The original's keys hermes-kit does not act on are reported when they ask for something.
    const asks = parse({
      s: { url: "https://x/mcp", ssl_verify: false, sampling: { enabled: true }, tools: { resources: true } },
    });
    expect(asks.servers).toHaveLength(1);
    expect(asks.diagnostics.map((d) => d.path)).toEqual([
      "mcp_servers.s.ssl_verify",
      "mcp_servers.s.sampling.enabled",
      "mcp_servers.s.tools.resources",
    ]);
  });

  it("the config schema describes mcp_servers (one of command or url; unknown fields warn)", () => {
    expect(
      validateSchema("config", {
        mcp_servers: { a: { command: "node", args: ["s.js"], env: { K: "v" }, timeout: 5, enabled: false } },
      }),
    ).toEqual([]);
    expect(
      validateSchema("config", {
        mcp_servers: { b: { url: "http://127.0.0.1:9/mcp", headers: { A: "b" }, tools: { include: ["x"] } } },
      }),
    ).toEqual([]);
    expect(
      validateSchema("config", { mcp_servers: { c: { command: "x", url: "http://a" } } }).map((d) => d.code),
    ).toContain("E_SCHEMA_INVALID");
    expect(validateSchema("config", { mcp_servers: { d: {} } }).map((d) => d.message)).toContain(
      "missing required field 'command' or 'url'",
    );
    const typo = validateSchema("config", { mcp_servers: { e: { command: "x", tmeout: 3 } } });
    expect(typo).toEqual([
      expect.objectContaining({
        code: "W_SCHEMA_UNKNOWN_FIELD",
        path: "mcp_servers.e.tmeout",
        message: expect.stringContaining("did you mean 'timeout'"),
      }),
    ]);
  });
});
