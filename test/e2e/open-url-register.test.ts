/**
 * `hermes open-url --register|--unregister`: the freedesktop desktop entry that makes the CLI the
 * handler of hermes:// links, checked by the files it writes and by what a stand-in `xdg-mime` on
 * PATH was asked to do.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";

const s = new Scratch("hermes-open-url-");
afterAll(() => s.cleanup());

function xdg(name: string, withXdgMime: boolean) {
  const root = s.dir(name);
  const bin = join(root, "bin");
  const log = join(root, "xdg-mime.log");
  if (withXdgMime) {
    writeText(join(bin, "xdg-mime"), `#!/bin/sh\necho "$@" >> '${log}'\n`);
    chmodSync(join(bin, "xdg-mime"), 0o755);
  }
  const env = {
    XDG_DATA_HOME: join(root, "data"),
    XDG_CONFIG_HOME: join(root, "config"),
    PATH: withXdgMime ? bin : join(root, "empty"),
  };
  const desktop = join(env.XDG_DATA_HOME, "applications", "hermes-open-url.desktop");
  const run = (args: string[]) => runCli(["open-url", ...args], { home: join(root, "home"), env });
  return { root, env, log, desktop, run };
}

describe("hermes open-url --register / --unregister", { timeout: 60_000 }, () => {
  it("writes the entry under $XDG_DATA_HOME/applications and makes it the default with xdg-mime", async () => {
    const x = xdg("reg", true);
    const r = await x.run(["--register"]);
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(x.desktop, "utf8");
    expect(text).toMatch(/^\[Desktop Entry\]\n/);
    expect(text).toContain("MimeType=x-scheme-handler/hermes;x-scheme-handler/hermes-dev;\n");
    expect(text).toContain(`Exec=${process.execPath} ${CLI} open-url %u\n`);
    expect(text).toContain("Terminal=true\n");
    expect(readFileSync(x.log, "utf8")).toBe(
      "default hermes-open-url.desktop x-scheme-handler/hermes\n" +
        "default hermes-open-url.desktop x-scheme-handler/hermes-dev\n",
    );
    expect(r.stdout).toContain(x.desktop);

    // What xdg-mime recorded, beside another application's default that must survive the removal.
    const list = join(x.env.XDG_CONFIG_HOME, "mimeapps.list");
    writeText(
      list,
      "[Default Applications]\ntext/html=firefox.desktop\nx-scheme-handler/hermes=hermes-open-url.desktop\n" +
        "x-scheme-handler/hermes-dev=hermes-open-url.desktop\n",
    );
    const u = await x.run(["--unregister"]);
    expect(u.code, u.stderr).toBe(0);
    expect(existsSync(x.desktop)).toBe(false);
    expect(readFileSync(list, "utf8")).toBe("[Default Applications]\ntext/html=firefox.desktop\n");
    const again = await x.run(["--unregister"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("No hermes:// handler was registered");
  });

  it("without xdg-mime the entry is still written and the output says to pick the default by hand", async () => {
    const x = xdg("noxdg", false);
    const r = await x.run(["--register"]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(x.desktop)).toBe(true);
    expect(r.stdout).toContain("xdg-mime not found");
  });

  it("a url together with --register is a usage error; nothing is written", async () => {
    const x = xdg("usage", true);
    const r = await x.run(["--register", "hermes://plugin/install?repo=a/b"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("E_USAGE");
    expect(existsSync(x.desktop)).toBe(false);
    expect(existsSync(x.log)).toBe(false);
  });
});
