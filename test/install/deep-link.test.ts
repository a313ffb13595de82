/**
 * hermes:// install links (issue 18): `hermes open-url <link>` and `hermes plugins install <link>`.
 * Real bare repositories stand in for GitHub (https://github.com/ is redirected to them with
 * url.<base>.insteadOf), confirmations are typed on a pseudo-terminal, and without a terminal the
 * link is refused with the command to run instead.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDeepLink } from "../../src/install/deep-link.js";
import { hasScript, STACK_RE, type RunResult } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch } from "../support/home.js";
import {
  githubToLocal,
  hermes,
  cliTty,
  hermesTty,
  metadata,
  newHome,
  pluginFiles,
  Repo,
  stagingLeftovers,
  type Ctx,
  type Home,
} from "./helpers.js";

let s: Scratch;
let ctx: Ctx;
let agent: Repo;

const DESKTOP_JS = "export default { id: 'panel', register() {} }\n";

beforeAll(() => {
  s = new Scratch("hermes-deeplink-");
  const repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s), env: githubToLocal(repos) };
  agent = new Repo(repos, "acme/linked", pluginFiles("linked"));
  new Repo(repos, "acme/both", { ...pluginFiles("unified"), "desktop/plugin.js": DESKTOP_JS });
  new Repo(repos, "acme/desk", { "plugin.js": DESKTOP_JS, "README.md": "a desktop plugin\n" });
});
afterAll(() => s?.cleanup());

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const cfg = (h: Home) =>
  (parse(readFileSync(join(h.home, "config.yaml"), "utf8")) ?? {}) as {
    plugins?: { enabled?: string[] };
    mcp_servers?: Record<string, unknown>;
  };
const installed = (h: Home) => (existsSync(h.plugins) ? readdirSync(h.plugins).filter((n) => !n.startsWith(".")) : []);

/** `hermes open-url <link>` on a pseudo-terminal, answering each prompt once it appears. */
const openUrlTty = (h: Home, link: string, answers: Array<[RegExp, string]>) =>
  cliTty(ctx, h, ["open-url", link], answers);

const CLONE_Q = /to look at what it holds\? \[y\/N\] /;
const INSTALL_Q = /Install the agent plugin '[^']+' from [^ ]+\? \[y\/N\] /;

describe("parseDeepLink", () => {
  it("reads the plugin forms, the legacy hosts and hermes-dev://", () => {
    expect(parseDeepLink("hermes://plugin/install?repo=acme/x")).toEqual({
      kind: "plugin",
      scheme: "hermes:",
      owner: "acme",
      repo: "x",
      enable: false,
      force: false,
    });
    expect(parseDeepLink("hermes://plugin-agent/install?repo=a/b.git&enable=1&force=1")).toMatchObject({
      repo: "b",
      enable: true,
      force: true,
    });
    expect(parseDeepLink("hermes-dev://plugin-desktop/install?repo=a/b&enable=0")).toMatchObject({
      scheme: "hermes-dev:",
      enable: false,
    });
    expect(parseDeepLink(`hermes://mcp/install?name=docs&config=${b64({ url: "https://m.example/mcp" })}`)).toEqual({
      kind: "mcp",
      scheme: "hermes:",
      name: "docs",
      config: { url: "https://m.example/mcp" },
    });
  });

  it.each([
    ["https://github.com/acme/x", /not a hermes:\/\/ or hermes-dev:\/\/ link/],
    ["other://plugin/install?repo=a/b", /scheme 'other:'/],
    ["hermes://plugin/install?repo=a/b&ref=abc", /unknown parameter 'ref'/],
    ["hermes://plugin/install?repo=a/b&repo=c/d", /more than once/],
    ["hermes://plugin/install?repo=a/b&enable=yes", /must be 1 or 0/],
    ["hermes://plugin/install", /no repo parameter/],
    ["hermes://plugin/install?repo=a/b/c", /is not owner\/repo/],
    ["hermes://plugin/install?repo=../etc", /is not owner\/repo/],
    ["hermes://plugin/install?repo=-u/x", /is not owner\/repo/],
    ["hermes://plugin/install?repo=file:///tmp/evil", /names a transport or URL/],
    ["hermes://plugin/install?repo=ext::sh%20-c%20touch%20%2Ftmp%2Fpwn", /names a transport or URL/],
    ["hermes://plugin/install?repo=https://evil.example/a/b", /names a transport or URL/],
    ["hermes://plugin/uninstall?repo=a/b", /unknown link/],
    ["hermes://skills/install?repo=a/b", /unknown link/],
    ["hermes://plugin/install?repo=a/b#frag", /no user, port or #fragment/],
    ["hermes://mcp/install?name=x", /no config parameter/],
    ["hermes://mcp/install?name=-x&config=e30", /MCP server name/],
    ["hermes://mcp/install?name=x&config=!!", /not base64/],
    [`hermes://mcp/install?name=x&config=${b64([1])}`, /JSON object/],
    [`hermes://mcp/install?name=x&config=${b64({ url: "file:///etc/passwd" })}`, /http:\/\/ or https:\/\//],
    [`hermes://mcp/install?name=x&config=${b64({ args: ["a"] })}`, /url or a string command/],
    [`hermes://mcp/install?name=x&config=${b64({ command: "a".repeat(40_000) })}`, /at most 32768/],
  ])("refuses %s", (link, why) => {
    let err: unknown;
    try {
      parseDeepLink(link);
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string }).code).toBe("E_DEEPLINK_INVALID");
    expect((err as Error).message).toMatch(why);
  });
});

describe("without a terminal", { timeout: 120_000 }, () => {
  it("a plugin link is refused with the command to run; nothing is cloned or written", async () => {
    const h = newHome(s, "notty");
    const r = await hermes(ctx, h, ["install", "hermes://plugin/install?repo=acme/linked&enable=1"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_DEEPLINK_NOT_INTERACTIVE");
    expect(r.stderr).toContain("hermes plugins install acme/linked --enable");
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(existsSync(h.plugins)).toBe(false);
    expect(existsSync(join(h.home, "config.yaml"))).toBe(false);
  });

  it("an MCP link is refused with the settings to add by hand; config.yaml is not touched", async () => {
    const h = newHome(s, "notty-mcp", "# mine\nmodel:\n  default: x\n");
    const link = `hermes://mcp/install?name=docs&config=${b64({ url: "https://m.example/mcp" })}`;
    const r = await ttylessOpen(h, link);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_DEEPLINK_NOT_INTERACTIVE");
    expect(r.stderr).toContain("mcp_servers:\n  docs:\n    url: https://m.example/mcp");
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toBe("# mine\nmodel:\n  default: x\n");
  });

  it("a bad link is a usage error with its code, never a stack trace", async () => {
    const h = newHome(s, "bad");
    for (const link of [
      "hermes://plugin/install?repo=acme/linked&unknown=1",
      "hermes://plugin/install?repo=ext::sh",
      "gopher://plugin/install?repo=a/b",
    ]) {
      const r = await ttylessOpen(h, link);
      expect(r.code, link).toBe(2);
      expect(r.stderr).toContain("E_DEEPLINK_INVALID");
      expect(r.stderr).not.toMatch(STACK_RE);
    }
    const usage = await ttylessOpen(h);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("E_USAGE");
    expect(existsSync(h.plugins)).toBe(false);
  });
});

async function ttylessOpen(h: Home, link?: string): Promise<RunResult> {
  const { runCli } = await import("../support/cli.js");
  return runCli(["open-url", ...(link ? [link] : [])], {
    home: h.home,
    env: { HERMES_BUNDLED_PLUGINS: ctx.bundled, ...ctx.env },
    timeoutMs: 60_000,
  });
}

describe.skipIf(!hasScript)("on a terminal", { timeout: 300_000 }, () => {
  it("confirm, shallow look, confirm, then the normal install; enable=1 enables; force=1 replaces", async () => {
    const h = newHome(s, "tty-install");
    const link = "hermes://plugin/install?repo=acme/linked&enable=1";
    const r = await openUrlTty(h, link, [
      [CLONE_Q, "y"],
      [INSTALL_Q, "y"],
    ]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain("Repository: acme/linked");
    expect(r.stdout).toContain("Before you install");
    expect(r.stdout).toContain("https://github.com/acme/linked");
    expect(r.stdout).toContain("Agent plugin: 'linked'");
    // The normal install path: what `plugins install acme/linked` records (branch head, not pinned).
    expect(metadata(h)?.linked).toEqual({
      source: "https://github.com/acme/linked.git",
      revision: agent.head(),
      pinned: false,
    });
    expect(cfg(h).plugins?.enabled).toEqual(["linked"]);
    expect(stagingLeftovers(h)).toEqual([]);

    const again = await openUrlTty(h, link, [
      [CLONE_Q, "y"],
      [INSTALL_Q, "y"],
    ]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("E_INSTALL_EXISTS");
    const forced = await openUrlTty(h, `${link}&force=1`, [
      [CLONE_Q, "y"],
      [INSTALL_Q, "y"],
    ]);
    expect(forced.code, forced.stdout).toBe(0);
    expect(forced.stdout).toContain("replace an existing install");
    expect(installed(h)).toEqual(["linked"]);
  });

  it("a no at either confirmation installs nothing; the first no clones nothing", async () => {
    const h = newHome(s, "tty-no");
    const first = await openUrlTty(h, "hermes://plugin/install?repo=acme/linked", [[CLONE_Q, "n"]]);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain("E_DEEPLINK_ABORTED");
    expect(first.stdout).not.toContain("Cloning");
    expect(installed(h)).toEqual([]);
    const second = await openUrlTty(h, "hermes://plugin/install?repo=acme/linked", [
      [CLONE_Q, "y"],
      [INSTALL_Q, "n"],
    ]);
    expect(second.code).toBe(1);
    expect(second.stdout).toContain("Agent plugin: 'linked'");
    expect(second.stdout).toContain("E_DEEPLINK_ABORTED");
    expect(installed(h)).toEqual([]);
    expect(metadata(h)).toBeUndefined();
    expect(stagingLeftovers(h)).toEqual([]);
  });

  it("plugins install <legacy link>: agent + desktop repo: installs the agent part", async () => {
    const h = newHome(s, "tty-both");
    const r = await hermesTty(
      ctx,
      h,
      ["install", "hermes://plugin-agent/install?repo=acme/both"],
      [
        [CLONE_Q, "y"],
        [INSTALL_Q, "y"],
        [/Enable 'unified' now\? \[y\/N\] /, "n"],
      ],
    );
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain("Desktop plugin: desktop/plugin.js");
    expect(r.stdout).toContain("Hermes desktop app");
    expect(r.stdout).toContain("Plugin installed but not enabled.");
    expect(installed(h)).toEqual(["unified"]);
    expect(cfg(h).plugins?.enabled).toBeUndefined();
  });

  it("a desktop-only repository (hermes-dev://plugin-desktop) is refused after the look", async () => {
    const h = newHome(s, "tty-desk");
    const r = await openUrlTty(h, "hermes-dev://plugin-desktop/install?repo=acme/desk", [[CLONE_Q, "y"]]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("Desktop plugin: plugin.js");
    expect(r.stdout).toContain("E_DEEPLINK_NO_AGENT_PLUGIN");
    expect(installed(h)).toEqual([]);
    expect(stagingLeftovers(h)).toEqual([]);
  });

  it("an MCP link shows the settings, warns about a command, adds them with comments kept", async () => {
    const text = "# my settings\nmodel:\n  default: m # the model\n";
    const h = newHome(s, "tty-mcp", text);
    const server = { command: "node", args: ["server.js"], env: { TOKEN: "${DOCS_TOKEN}" } };
    const link = `hermes://mcp/install?name=docs&config=${b64(server)}`;
    const no = await openUrlTty(h, link, [[/Add MCP server 'docs' to .*\? \[y\/N\] /, "n"]]);
    expect(no.code).toBe(1);
    expect(no.stdout).toContain("E_DEEPLINK_ABORTED");
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toBe(text);

    const yes = await openUrlTty(h, link, [[/Add MCP server 'docs' to .*\? \[y\/N\] /, "y"]]);
    expect(yes.code, yes.stdout).toBe(0);
    expect(yes.stdout).toContain("runs a local command");
    expect(yes.stdout).toContain("command: node");
    const after = readFileSync(join(h.home, "config.yaml"), "utf8");
    expect(after).toContain("# my settings");
    expect(after).toContain("default: m # the model");
    expect(cfg(h).mcp_servers).toEqual({ docs: server });

    const other = `hermes://mcp/add?name=docs&config=${b64({ url: "https://evil.example/mcp" })}`;
    const again = await openUrlTty(h, other, [[/\[y\/N\] /, "y"]]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("E_DEEPLINK_MCP_EXISTS");
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toBe(after);
  });

  it("an MCP link with settings hermes-kit would ignore or skip is refused before any question", async () => {
    const h = newHome(s, "tty-mcp-bad");
    writeFileSync(join(h.home, "config.yaml"), "");
    const link = `hermes://mcp/install?name=x&config=${b64({ url: "https://m.example/mcp", bogus: 1 })}`;
    const r = await openUrlTty(h, link, []);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("E_DEEPLINK_MCP_INVALID");
    expect(r.stdout).toContain("bogus");
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toBe("");
  });
});
