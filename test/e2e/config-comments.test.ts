import { lstatSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { bundledWithHelloWorld, link, Scratch, writePlugin, writeText } from "../support/home.js";

let s: Scratch;
let bundled: string;

beforeAll(() => {
  s = new Scratch();
  bundled = bundledWithHelloWorld(s);
});
afterAll(() => s.cleanup());

/** The line that makes a test's config current (v21), so the first command does not migrate it. */
const CURRENT = /^_config_version: 21\r?\n/;

/** A home with plugins and `config`: current unless `older` (no `_config_version`: the first command migrates it). */
function makeHome(name: string, config: string, opts: { older?: boolean } = {}): string {
  const h = s.dir(name);
  writePlugin(join(h, "plugins", "flat"), "name: flat\n");
  writePlugin(join(h, "plugins", "pyish"), "name: pyish\n");
  writePlugin(join(h, "plugins", "broken"), "name: broken\n");
  writePlugin(join(h, "plugins", "image_gen", "openai"), "name: openai-image\n");
  writePlugin(join(h, "plugins", "tts", "openai"), "name: openai-tts\n");
  const eol = config.includes("\r\n") ? "\r\n" : "\n";
  writeText(join(h, "config.yaml"), opts.older ? config : `_config_version: 21${eol}${config}`);
  return h;
}

async function hermes(h: string, ...args: string[]) {
  const r = await runCli(args, { home: h, env: { HERMES_BUNDLED_PLUGINS: bundled } });
  expect(r.code, `hermes ${args.join(" ")}\n${r.stderr}`).toBe(0);
  return r;
}

/** The config text after the version line of a current test config (see makeHome). */
const read = (h: string) => readFileSync(join(h, "config.yaml"), "utf8").replace(CURRENT, "");

/**
 * The text with the `plugins.enabled` / `plugins.disabled` list regions removed: the key line and
 * the list items under it. Everything else must survive an edit byte for byte.
 */
function withoutPluginLists(text: string): string {
  const lines = text.split(/(?<=\n)/);
  const out: string[] = [];
  let inPlugins = false;
  let listIndent = -1;
  for (const line of lines) {
    const indent = line.length - line.trimStart().length;
    const body = line.trim();
    if (listIndent >= 0) {
      if (body.startsWith("- ") && indent >= listIndent) continue;
      listIndent = -1;
    }
    if (/^plugins:/.test(line)) inPlugins = true;
    else if (/^\S/.test(line) && !line.startsWith("#")) inPlugins = false;
    const m = inPlugins ? /^(\s+)(enabled|disabled):/.exec(line) : null;
    if (m) {
      listIndent = m[1]!.length;
      continue;
    }
    out.push(line);
  }
  return out.join("");
}

const ORIGINAL = `# Hermes config — hand written, keep my comments!
# second header line

model:   # odd spacing after key
  default:    "gpt-4o"     # the usual
  fallbacks: [ a,   b ]   # flow with odd spacing
  temperature: 0.70

# ---- plugins ----
plugins:
  # what loads
  enabled:
    - flat        # first one
    - pyish       # second one
  # between enabled and disabled
  disabled:
    - broken   # do not load
  entries:
    flat:
      settings: {depth: 2}   # inline map
  hook_callback_timeout: 30   # seconds

# trailing section comment
terminal:
    backend:   local   # four-space indent
    env:
      - "A=1"
      -   B=2
    anchors: &anc
      x: 1
    again: *anc
# final comment without newline at end`;

describe.concurrent("config.yaml edits keep comments and formatting byte for byte", () => {
  it("enable/disable of several plugins changes only the list items", async () => {
    const h = makeHome("rich", ORIGINAL);
    const steps: Array<[string, string]> = [
      ["enable", "hello-world"],
      ["enable", "openai-image"],
      ["disable", "flat"],
      ["enable", "broken"],
      ["disable", "tts/openai"],
      ["enable", "flat"],
    ];
    for (const [verb, name] of steps) {
      await hermes(h, "plugins", verb, name);
      // after every single step, all bytes outside the two lists are untouched
      expect(withoutPluginLists(read(h))).toBe(withoutPluginLists(ORIGINAL));
    }
    expect(read(h)).toBe(`# Hermes config — hand written, keep my comments!
# second header line

model:   # odd spacing after key
  default:    "gpt-4o"     # the usual
  fallbacks: [ a,   b ]   # flow with odd spacing
  temperature: 0.70

# ---- plugins ----
plugins:
  # what loads
  enabled:
    - pyish       # second one
    - hello-world
    - image_gen/openai
    - broken
    - flat
  # between enabled and disabled
  disabled:
    - tts/openai
  entries:
    flat:
      settings: {depth: 2}   # inline map
  hook_callback_timeout: 30   # seconds

# trailing section comment
terminal:
    backend:   local   # four-space indent
    env:
      - "A=1"
      -   B=2
    anchors: &anc
      x: 1
    again: *anc
# final comment without newline at end`);
    // a no-op keeps every byte
    const before = read(h);
    await hermes(h, "plugins", "enable", "flat");
    expect(read(h)).toBe(before);
  }, 120_000);

  it("flow lists are edited in place, keeping the comment after them", async () => {
    const original = "# head\nplugins:\n  enabled: [flat]  # flow\n  disabled: []\nother:\n  x: 1 # c\n";
    const h = makeHome("flow", original);
    await hermes(h, "plugins", "enable", "hello-world");
    expect(read(h)).toBe(
      "# head\nplugins:\n  enabled: [flat, hello-world]  # flow\n  disabled: []\nother:\n  x: 1 # c\n",
    );
    await hermes(h, "plugins", "disable", "flat");
    await hermes(h, "plugins", "disable", "hello-world");
    expect(parse(read(h))).toEqual({ plugins: { enabled: [], disabled: ["flat", "hello-world"] }, other: { x: 1 } });
    expect(withoutPluginLists(read(h))).toBe(withoutPluginLists(original));
    expect(read(h)).toContain("  enabled: []  # flow\n");
  });

  it("an older config without a plugins section keeps all of its lines; the migration only adds", async () => {
    const original = "# head\nmodel: x   # c\n\n# tail comment\n";
    const h = makeHome("no-plugins", original, { older: true });
    await hermes(h, "plugins", "enable", "hello-world");
    const after = read(h);
    // the migration grandfathers the installed flat plugins and stamps the version, then hello-world is appended
    const added = "plugins:\n  enabled:\n    - broken\n    - flat\n    - pyish\n    - hello-world\n";
    expect(after.replace(added, "").replace("_config_version: 21\n", "")).toBe(original);
    expect(parse(after)).toMatchObject({ _config_version: 21 });
    expect((parse(after) as { plugins: { enabled: string[] } }).plugins.enabled).toEqual([
      "broken",
      "flat",
      "pyish",
      "hello-world",
    ]);
  });

  it("a list with a comment after its last item keeps the comment", async () => {
    const original = "plugins:\n  enabled:\n    - flat\n    # more to come\n  disabled:\n    - broken\n\n# end\n";
    const h = makeHome("trailing-comment", original);
    await hermes(h, "plugins", "enable", "hello-world");
    expect(read(h)).toBe(
      "plugins:\n  enabled:\n    - flat\n    - hello-world\n    # more to come\n  disabled:\n    - broken\n\n# end\n",
    );
  });

  it("a symlinked (older) config.yaml is written through and stays a symlink", async () => {
    const h = makeHome("symlinked", "");
    const real = writeText(
      join(s.dir("dotfiles"), "hermes.yaml"),
      "# managed in my dotfiles\nplugins:\n  enabled: []\n",
    );
    const cfg = join(h, "config.yaml");
    rmSync(cfg);
    link(real, cfg);
    await hermes(h, "plugins", "enable", "flat");
    expect(lstatSync(cfg).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toBe("# managed in my dotfiles\nplugins:\n  enabled:\n    - flat\n");
  });

  it("a CRLF config keeps CRLF line endings on every line", async () => {
    const original = "# head\r\nplugins:\r\n  enabled:\r\n    - flat # c\r\n  disabled: []\r\nother: 1 # c\r\n";
    const h = makeHome("crlf", original);
    await hermes(h, "plugins", "enable", "hello-world");
    await hermes(h, "plugins", "disable", "flat");
    const after = read(h);
    expect(parse(after)).toEqual({ plugins: { enabled: ["hello-world"], disabled: ["flat"] }, other: 1 });
    // no bare LF introduced into a file that uses CRLF
    expect(after.replace(/\r\n/g, "")).not.toContain("\n");
    expect(after).toBe(
      "# head\r\nplugins:\r\n  enabled:\r\n    - hello-world\r\n  disabled:\r\n    - flat\r\nother: 1 # c\r\n",
    );
  });
});
