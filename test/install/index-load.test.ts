/**
 * Index load order: fresh cache → remote → stale cache → seed,
 * against a real HTTP server on 127.0.0.1. Every non-remote, non-fresh answer must say so.
 */
import { existsSync, mkdtempSync, readFileSync, utimesSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { homePaths, type HomePaths } from "../../src/core/paths.js";
import {
  cacheFileOf,
  INDEX_TTL_MS,
  loadIndex,
  SEED_INDEX,
  type LoadIndexOptions,
} from "../../src/install/index/load.js";
import { hasShared, SHARED_FIXTURES } from "../shared-dir.js";
import { cleanupTemp, tempDir } from "../support/home.js";

const SHARED = hasShared("test/install/index-load.test.ts: the seed compared with the published index fixture");

const GOOD = {
  schema_version: 1,
  generated_at: "2030-01-01T00:00:00Z",
  plugins: [{ name: "remote-one", repo: "acme/remote-one", description: "from the server", tags: ["x"] }],
};

let server: Server;
let base = "";
const hits: string[] = [];
let scratch = "";
/** path → handler */
const routes = new Map<string, (res: import("node:http").ServerResponse) => void>();

beforeAll(async () => {
  scratch = tempDir("hermes-index-");
  server = createServer((req, res) => {
    hits.push(req.url ?? "");
    const h = routes.get(req.url ?? "");
    if (h) return h(res);
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("nope");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  routes.set("/good.json", (res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(GOOD));
  });
  routes.set("/moved", (res) => {
    res.writeHead(302, { Location: "/good.json" });
    res.end();
  });
  routes.set("/wrong-shape.json", (res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ plugins: "all of them" }));
  });
  routes.set("/not-json", (res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end("<html>captive portal</html>");
  });
  routes.set("/huge.json", (res) => {
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(6 * 1024 * 1024) });
    res.end(Buffer.alloc(6 * 1024 * 1024, 0x20));
  });
  routes.set("/huge-chunked.json", (res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let n = 0;
    const push = () => {
      if (res.destroyed) return;
      if (n++ >= 7) return res.end("[]");
      res.write(chunk, () => setImmediate(push));
    };
    push();
  });
  routes.set("/hang", () => undefined);
  routes.set("/mixed.json", (res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(
      JSON.stringify([
        { name: "ok-one", repo: "a/ok-one" },
        { name: "bad-repo", repo: "no-slash-here" },
        { repo: "x/y" },
        "not an object",
        { name: "ok-two", repo: "a/ok-two" },
      ]),
    );
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  cleanupTemp();
});

function home(url: string): { paths: HomePaths; config: Record<string, unknown> } {
  const h = mkdtempSync(join(scratch, "home-"));
  return { paths: homePaths(h), config: { plugins: { index_url: url } } };
}

async function load(h: { paths: HomePaths; config: Record<string, unknown> }, opts: LoadIndexOptions = {}) {
  const warnings: string[] = [];
  const r = await loadIndex(h.paths, h.config, { warn: (l) => warnings.push(l), ...opts });
  return { ...r, printed: warnings };
}

function writeCache(paths: HomePaths, doc: unknown, ageMs: number): void {
  mkdirSync(paths.cache, { recursive: true });
  const f = cacheFileOf(paths);
  writeFileSync(f, JSON.stringify(doc));
  const t = (Date.now() - ageMs) / 1000;
  utimesSync(f, t, t);
}

const CACHED = [{ name: "cached-one", repo: "acme/cached-one" }];

describe("index load order", () => {
  it(
    "remote answer: used, reported as remote, cached verbatim; the next load within 24 h uses the cache " +
      "without a request",
    async () => {
      const h = home(`${base}/good.json`);
      const r1 = await load(h);
      expect(r1.source).toBe("remote");
      expect(r1.entries.map((e) => e.name)).toEqual(["remote-one"]);
      expect(r1.printed).toEqual([]);
      expect(readFileSync(cacheFileOf(h.paths), "utf8")).toBe(JSON.stringify(GOOD));
      const before = hits.length;
      const r2 = await load(h);
      expect(r2.source).toBe("cache");
      expect(r2.stale).toBe(false);
      expect(r2.printed).toEqual([]);
      expect(hits.length).toBe(before);
    },
  );

  it("a cache older than 24 h (by mtime) is refreshed from the remote", async () => {
    const h = home(`${base}/good.json`);
    writeCache(h.paths, CACHED, INDEX_TTL_MS + 60_000);
    const r = await load(h);
    expect(r.source).toBe("remote");
    expect(r.entries[0]!.name).toBe("remote-one");
  });

  it("--refresh skips a fresh cache", async () => {
    const h = home(`${base}/good.json`);
    writeCache(h.paths, CACHED, 60_000);
    expect((await load(h)).entries[0]!.name).toBe("cached-one");
    const r = await load(h, { refresh: true });
    expect(r.source).toBe("remote");
  });

  it("redirects are followed", async () => {
    const r = await load(home(`${base}/moved`));
    expect(r.source).toBe("remote");
  });

  it(
    "a payload of the wrong shape is a failed source, never " + "cached: stale cache used, LOUDLY, with its age",
    async () => {
      const h = home(`${base}/wrong-shape.json`);
      writeCache(h.paths, CACHED, 3 * 86_400_000 + 2 * 3_600_000);
      const r = await load(h);
      expect(r.source).toBe("cache");
      expect(r.stale).toBe(true);
      expect(r.entries[0]!.name).toBe("cached-one");
      expect(r.printed).toHaveLength(1);
      expect(r.printed[0]).toMatch(
        new RegExp(
          String.raw`^WARNING: the community plugin index could not be fetched \(plugin index ` +
            String.raw`.*wrong-shape\.json: 'plugins' must be a list\); using the STALE cached copy from 3 d 2 ` +
            String.raw`h ago`,
        ),
      );
      expect(r.diagnostics.map((d) => d.code)).toContain("W_INDEX_STALE");
      expect(JSON.parse(readFileSync(cacheFileOf(h.paths), "utf8"))).toEqual(CACHED);
    },
  );

  it("--refresh that fails falls back to the (fresh) cache and says so", async () => {
    const h = home(`${base}/not-json`);
    writeCache(h.paths, CACHED, 5 * 60_000);
    const r = await load(h, { refresh: true });
    expect(r.source).toBe("cache");
    expect(r.stale).toBe(false);
    expect(r.printed[0]).toMatch(/not valid JSON.*using the cached copy from 5 min ago/);
  });

  it("no cache and a failing remote: the offline seed copy, LOUDLY", async () => {
    const h = home(`${base}/wrong-shape.json`);
    const r = await load(h);
    expect(r.source).toBe("seed");
    expect(r.stale).toBe(true);
    expect(r.printed[0]).toMatch(
      /^WARNING: .*OFFLINE SEED COPY shipped with hermes-kit \(6 plugins, generated 2026-08-12T00:00:00Z\)/,
    );
    expect(existsSync(cacheFileOf(h.paths))).toBe(false);
  });

  it.skipIf(!SHARED)("the seed is the newest NousResearch seed index, as published", () => {
    const fixture = readFileSync(
      join(SHARED_FIXTURES, "index", "NousResearch__hermes-agent__hermes_cli_data_plugin_index.json@015d866e.json"),
      "utf8",
    );
    expect(readFileSync(SEED_INDEX, "utf8")).toBe(fixture);
  });

  it("an unreachable URL (closed port) names the connection failure", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const r = await load(home(`http://127.0.0.1:${port}/index.json`));
    expect(r.source).toBe("seed");
    expect(r.printed[0]).toContain("ECONNREFUSED");
  });

  it("non-2xx answers fail", async () => {
    const r = await load(home(`${base}/missing.json`));
    expect(r.source).toBe("seed");
    expect(r.printed[0]).toContain("HTTP 404");
  });

  it("payloads over 5 MiB are refused, with or without Content-Length", async () => {
    for (const path of ["/huge.json", "/huge-chunked.json"]) {
      const h = home(`${base}${path}`);
      const r = await load(h);
      expect(r.source, path).toBe("seed");
      expect(r.printed[0], path).toMatch(/over the 5 MiB limit/);
      expect(existsSync(cacheFileOf(h.paths))).toBe(false);
    }
  });

  it("a server that never answers times out (HERMES_INDEX_TIMEOUT_MS)", async () => {
    const t0 = Date.now();
    const r = await load(home(`${base}/hang`), { env: { ...process.env, HERMES_INDEX_TIMEOUT_MS: "300" } });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.source).toBe("seed");
    expect(r.printed[0]).toMatch(/no answer within 0\.3 s/);
  });

  it("offline never touches the network", async () => {
    const before = hits.length;
    const r = await load(home(`${base}/good.json`), { offline: true });
    expect(hits.length).toBe(before);
    expect(r.source).toBe("seed");
  });

  it("invalid entries are dropped with a warning naming each; the rest load", async () => {
    const r = await load(home(`${base}/mixed.json`));
    expect(r.source).toBe("remote");
    expect(r.entries.map((e) => e.name)).toEqual(["ok-one", "ok-two"]);
    const dropped = r.printed.filter((l) => l.includes("W_INDEX_ENTRY_DROPPED"));
    expect(dropped).toHaveLength(3);
    expect(dropped[0]).toContain("'bad-repo'");
    expect(dropped[1]).toContain("#3");
    expect(dropped[2]).toContain("#4");
  });
});
