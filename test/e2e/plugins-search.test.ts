/**
 * `hermes plugins search` and bare-name installs through the built CLI, against a real HTTP
 * index server on 127.0.0.1: output shapes, loud fallbacks, bad payloads and
 * unreachable URLs that install nothing.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedPort } from "../install/helpers.js";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch } from "../support/home.js";

let s: Scratch;
let server: Server;
let base = "";
let hits = 0;

const INDEX = {
  schema_version: 1,
  plugins: [
    {
      name: "hermes-telegram-business",
      repo: "acme/telegram",
      description: "Telegram business bot",
      author: "Acme",
      tags: ["telegram", "messaging"],
      capabilities: ["platform"],
      ref: "a".repeat(40),
    },
    {
      name: "media-studio",
      repo: "acme/media",
      description: "Generative media workspace",
      author: "Acme",
      tags: ["image-gen", "dashboard"],
      capabilities: ["tools", "dashboard"],
    },
    {
      name: "tele-stats",
      repo: "acme/tele-stats",
      description: "Statistics",
      author: "Other",
      tags: ["stats"],
      capabilities: ["tools"],
    },
    { name: "broken entry", repo: "not a repo" },
  ],
};

beforeAll(async () => {
  s = new Scratch("hermes-search-");
  server = createServer((req, res) => {
    hits++;
    if (req.url === "/index.json") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(JSON.stringify(INDEX));
    }
    if (req.url === "/wrong-shape.json") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(JSON.stringify({ plugins: { "media-studio": {} } }));
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  s?.cleanup();
});

function home(url: string): string {
  const h = s.dir("home");
  writeFileSync(join(h, "config.yaml"), `plugins:\n  index_url: ${url}\n`);
  return h;
}

const search = (h: string, ...args: string[]) => runCli(["plugins", "search", ...args], { home: h });

describe("hermes plugins search", () => {
  it("--json: {source, query, results, note}; the answer is cached; dropped entries are named on stderr", async () => {
    const h = home(`${base}/index.json`);
    const r = await search(h, "tele", "--json");
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.source).toBe("remote");
    expect(j.query).toBe("tele");
    expect(j.note).toMatch(/^Indexed ≠ audited/);
    expect(j.results.map((x: { name: string }) => x.name)).toEqual(["tele-stats", "hermes-telegram-business"]);
    expect(Object.keys(j.results[1])).toEqual(["name", "description", "author", "tags", "repo", "ref", "capabilities"]);
    expect(r.stderr).toContain("W_INDEX_ENTRY_DROPPED");
    expect(r.stderr).toContain("'broken entry'");
    expect(existsSync(join(h, "cache", "plugin_index.json"))).toBe(true);
    const before = hits;
    const again = await search(h, "media", "--json");
    expect(JSON.parse(again.stdout).source).toBe("cache");
    expect(hits).toBe(before);
    const refreshed = await search(h, "media", "--json", "--refresh");
    expect(JSON.parse(refreshed.stdout).source).toBe("remote");
    expect(hits).toBe(before + 1);
  });

  it("table output, capability filter, browse, and no results (exit 0)", async () => {
    const h = home(`${base}/index.json`);
    const r = await search(h, "telgram");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("Community plugins (1 match)");
    expect(r.stdout).toMatch(/Name\s+Description\s+Author\s+Tags/);
    expect(r.stdout).toMatch(/hermes-telegram-business\s+Telegram business bot\s+Acme\s+telegram, messaging/);
    expect(r.stdout).toContain("Index source: remote. Install: hermes plugins install <name>");
    expect(r.stdout).toContain(
      "Indexed ≠ audited: inclusion in the index is a metadata review only, not a code audit.",
    );
    const caps = await search(h, "", "--capability", "TOOLS", "--json");
    expect(JSON.parse(caps.stdout).results.map((x: { name: string }) => x.name)).toEqual([
      "media-studio",
      "tele-stats",
    ]);
    const browse = await search(h);
    expect(browse.stdout.split("\n")[0]).toBe("Community plugins (3 matches)");
    const none = await search(h, "zzzqqq");
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe("No plugins matched 'zzzqqq' (index source: cache)");
  });

  it("a payload of the wrong shape: the offline seed copy, said loudly on stderr and in the footer", async () => {
    const h = home(`${base}/wrong-shape.json`);
    const r = await search(h, "media");
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`WARNING: the community plugin index could not be fetched \(plugin index ` +
          String.raw`.*wrong-shape\.json: 'plugins' must be a list\) and there is no cached copy; using the ` +
          String.raw`OFFLINE SEED COPY`,
      ),
    );
    expect(r.stdout).toContain("hermes-media-studio");
    expect(r.stdout).toContain("Index source: seed (offline seed copy).");
    expect(existsSync(join(h, "cache", "plugin_index.json"))).toBe(false);
    const j = JSON.parse((await search(h, "media", "--json")).stdout);
    expect(j.source).toBe("seed");
    expect(j.stale).toBe(true);
    expect(j.warnings[0]).toContain("OFFLINE SEED COPY");
  });

  it("an unreachable index with a stale cache: the cache, with its age", async () => {
    const h = home(`http://127.0.0.1:${await closedPort()}/index.json`);
    mkdirSync(join(h, "cache"));
    const f = join(h, "cache", "plugin_index.json");
    writeFileSync(f, JSON.stringify(INDEX));
    const t = Date.now() / 1000 - 2 * 86400 - 3 * 3600;
    utimesSync(f, t, t);
    const r = await search(h, "media");
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/WARNING: .*ECONNREFUSED.*using the STALE cached copy from 2 d 3 h ago/);
    expect(r.stdout).toContain("Index source: cache (stale cache).");
  });
});

describe("bare-name install through the index", () => {
  it("an unreachable index URL and a name the seed does not have: clear messages, nothing installed", async () => {
    const h = home(`http://127.0.0.1:${await closedPort()}/index.json`);
    const r = await runCli(["plugins", "install", "no-such-plugin"], { home: h });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("ECONNREFUSED");
    expect(r.stderr).toContain("OFFLINE SEED COPY");
    expect(r.stderr).toContain("E_INSTALL_INDEX_NOT_FOUND");
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(
      existsSync(join(h, "plugins")) ? readdirSync(join(h, "plugins")).filter((n) => !n.startsWith(".")) : [],
    ).toEqual([]);
  });

  it("a near miss is suggested, never installed", async () => {
    const h = home(`${base}/index.json`);
    const r = await runCli(["plugins", "install", "telegram"], { home: h });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_INSTALL_INDEX_NOT_FOUND");
    expect(r.stderr).toMatch(/closest names:\n\s+hermes-telegram-business\s+→ acme\/telegram/);
    expect(existsSync(join(h, "plugins", "hermes-telegram-business"))).toBe(false);
  });

  it("a wrong-shape payload: the install says where names came from and installs nothing unknown", async () => {
    const h = home(`${base}/wrong-shape.json`);
    const r = await runCli(["plugins", "install", "media-studio"], { home: h });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("'plugins' must be a list");
    expect(r.stderr).toMatch(/not found in the community index \(seed\)/);
    expect(r.stderr).toContain("hermes-media-studio");
    expect(readFileSync(join(h, "config.yaml"), "utf8")).toBe(`plugins:\n  index_url: ${base}/wrong-shape.json\n`);
  });
});
