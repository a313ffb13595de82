import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli, type RunResult } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

/**
 * Each command loads only what it runs (issue 19): the command table is declared without the code
 * behind it, and heavy dependencies load where they are used. A recorder preloaded with `--import`
 * lists every module the spawned CLI loaded: ES modules as the loader resolves them, CommonJS ones
 * from require.cache at exit (a package's own requires never pass the ESM loader).
 */

const HOOKS = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.HK_MODULE_LOG, r.url + "\\n");
  return r;
}
`;

const RECORDER = (hooks: string) => `import { register, createRequire } from "node:module";
import { appendFileSync } from "node:fs";
register(${JSON.stringify(hooks)});
const cache = createRequire(import.meta.url).cache;
process.on("exit", () => appendFileSync(process.env.HK_MODULE_LOG, Object.keys(cache).join("\\n") + "\\n"));
`;

/** Packages and their entry files that only the commands needing them may load. */
const HEAVY = {
  execa: /\/node_modules\/execa\//,
  "simple-git": /\/node_modules\/simple-git\//,
  tar: /\/node_modules\/tar\//,
  fastify: /\/node_modules\/fastify\//,
  "better-sqlite3": /\/node_modules\/better-sqlite3\//,
  pino: /\/node_modules\/pino\//,
  // The precompiled validators need only ajv/dist/runtime/*; these are its schema compiler.
  "the Ajv compiler": /\/node_modules\/ajv\/dist\/(2020|ajv|core|compile\/)/,
} as const;

type Heavy = keyof typeof HEAVY;

let s: Scratch;
let home: string;
let compiled: string;
let recorder: string;
let n = 0;

beforeAll(() => {
  s = new Scratch();
  home = s.dir("home");
  const hooks = writeText(join(s.root, "hooks.mjs"), HOOKS);
  recorder = writeText(join(s.root, "recorder.mjs"), RECORDER(pathToFileURL(hooks).href));
  writePlugin(join(home, "plugins", "memo"), "name: memo\nversion: 1.0.0\ndescription: a note\n");
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: [memo]\n");
  compiled = s.dir("compiled");
  writePlugin(join(compiled, "plugins", "memo"), "name: memo\nversion: 1.0.0\ndescription: a note\n");
  writeText(join(compiled, "config.yaml"), "plugins:\n  enabled: [memo]\n");
});
afterAll(() => s.cleanup());

/** Run the CLI with the recorder; the modules it loaded, as paths relative to the repository where they are in it. */
async function loaded(
  args: string[],
  o: { env?: Record<string, string>; home?: string; preload?: string } = {},
): Promise<{ run: RunResult; modules: string[] }> {
  const log = join(s.root, `modules-${++n}.log`);
  writeText(log, "");
  const imports = [recorder, ...(o.preload ? [o.preload] : [])].map((f) => `--import=${pathToFileURL(f).href}`);
  const run = await runCli(args, {
    home: o.home ?? home,
    env: { ...o.env, HK_MODULE_LOG: log, NODE_OPTIONS: imports.join(" ") },
  });
  const modules = readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((m) => (m.startsWith("file:") ? new URL(m).pathname : m))
    .map((m) => (m.startsWith(ROOT) ? `/${m.slice(ROOT.length)}` : m));
  return { run, modules: [...new Set(modules)] };
}

function heavyIn(modules: readonly string[]): Heavy[] {
  return (Object.keys(HEAVY) as Heavy[]).filter((k) => modules.some((m) => HEAVY[k].test(m)));
}

/** The folders of dist/ a command loaded code from (cli, core, app, …). */
function distFolders(modules: readonly string[]): string[] {
  return [...new Set(modules.flatMap((m) => /^\/dist\/([^/]+)\//.exec(m)?.[1] ?? []))].sort();
}

describe.concurrent("what each command loads", () => {
  it("--version and -V load neither commander nor any command module", async () => {
    for (const args of [["--version"], ["-V"]]) {
      const { run, modules } = await loaded(args);
      expect(run.code, args.join(" ")).toBe(0);
      expect(
        modules.filter((m) => m.startsWith("/dist/") || m.includes("/node_modules/")).sort(),
        args.join(" "),
      ).toEqual(["/dist/cli/main.js", "/dist/core/kit-version.js"]);
    }
  });

  it("--help declares the plugins, config and hooks subcommands only when the command line names them", async () => {
    const groups = (modules: readonly string[]) =>
      modules.filter((m) => /^\/dist\/cli\/commands\/(plugins|config|hooks)\.js$/.test(m)).sort();
    const help = await loaded(["--help"]);
    expect(help.run.code).toBe(0);
    expect(groups(help.modules)).toEqual([]);
    // What the commands print with (errors, paths, output) loads when an action runs, not to declare it.
    expect(help.modules.filter((m) => /^\/dist\/(core\/(errors|paths)|cli\/output)\.js$/.test(m))).toEqual([]);
    expect(groups((await loaded(["compile", "--help"])).modules)).toEqual([]);
    expect(groups((await loaded(["plugins", "--help"])).modules)).toEqual(["/dist/cli/commands/plugins.js"]);
    expect(groups((await loaded(["--home", "x", "config", "get", "--help"])).modules)).toEqual([
      "/dist/cli/commands/config.js",
    ]);
  });

  it("--help alone prints the build's text without commander: what `hermes help` prints, byte for byte", async () => {
    const viaCommander = await loaded(["help"]);
    expect(viaCommander.modules).toContain("/node_modules/commander/lib/command.js");
    for (const args of [["--help"], ["-h"]]) {
      const { run, modules } = await loaded(args);
      expect(run.code, args.join(" ")).toBe(0);
      expect(run.stdout, args.join(" ")).toBe(viaCommander.run.stdout);
      expect(modules.filter((m) => m.startsWith("/dist/") || m.includes("/node_modules/")).sort()).toEqual([
        "/dist/cli/main.js",
        "/dist/core/kit-version.js",
      ]);
    }
    // A terminal of another width: commander lays the help out for it (the build's text is for 80 columns).
    const tty = writeText(
      join(s.root, "tty-120.mjs"),
      'Object.defineProperty(process.stdout, "isTTY", { value: true });\nprocess.stdout.columns = 120;\n',
    );
    const wide = await loaded(["--help"], { preload: tty });
    expect(wide.run.code).toBe(0);
    expect(wide.modules).toContain("/node_modules/commander/lib/command.js");
    expect(wide.run.stdout).toBe((await loaded(["help"], { preload: tty })).run.stdout);
    expect(wide.run.stdout).not.toBe(viaCommander.run.stdout);
    expect(Math.max(...wide.run.stdout.split("\n").map((l) => l.length))).toBeGreaterThan(80);
  });

  it("--help of a command loads the command table and nothing behind it", async () => {
    for (const args of [["help"], ["plugins", "--help"], ["compile", "--help"]]) {
      const { run, modules } = await loaded(args);
      expect(run.code, args.join(" ")).toBe(0);
      // The recorder sees ES modules (ours) and CommonJS ones (commander's files).
      expect(modules).toContain("/dist/cli/main.js");
      expect(modules).toContain("/node_modules/commander/lib/command.js");
      expect(heavyIn(modules), args.join(" ")).toEqual([]);
      expect(distFolders(modules), args.join(" ")).toEqual(["cli", "core"]);
      expect(
        modules.filter((m) => m.includes("/node_modules/yaml/")),
        args.join(" "),
      ).toEqual([]);
    }
  });

  it("plugins list validates with the precompiled validators; loads no server, store, git, tar or agent", async () => {
    const { run, modules } = await loaded(["plugins", "list", "--json"]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as Array<{ key: string }>).map((p) => p.key)).toContain("memo");
    expect(modules).toContain("/dist/core/schema-validators/plugin-manifest.schema.json.cjs");
    // pino loads only when something logs.
    expect(heavyIn(modules).filter((h) => h !== "pino")).toEqual([]);
    for (const folder of ["agent", "gateway", "install/scan", "pack", "runtime/runtime.js", "compile"])
      expect(modules.filter((m) => m.startsWith(`/dist/${folder}`))).toEqual([]);
  });

  it("without the precompiled validators the recorder sees the Ajv compiler (the check above can fail)", async () => {
    const { run, modules } = await loaded(["plugins", "list", "--json"], { env: { HERMES_SCHEMA_PRECOMPILED: "0" } });
    expect(run.code).toBe(0);
    expect(heavyIn(modules).filter((h) => h !== "pino")).toEqual(["the Ajv compiler"]);
  });

  it("on a compiled home, plugins list and a no-op compile load no YAML parser (the parse caches answer)", async () => {
    const h = s.dir("cached");
    // An escape in a double-quoted string is outside the subset core/yaml-subset.ts reads: only yaml parses it.
    const memo = (v: string) => `name: memo\nversion: ${v}\ndescription: "a \\"note\\""\n`;
    writePlugin(join(h, "plugins", "memo"), memo("1.0.0"));
    writeText(join(h, "config.yaml"), "plugins:\n  enabled: [memo]\n");
    expect((await runCli(["compile"], { home: h })).code).toBe(0);
    const yaml = (modules: readonly string[]) => modules.filter((m) => m.includes("/node_modules/yaml/"));
    for (const args of [["plugins", "list", "--json"], ["compile"], ["compile", "--check"]]) {
      const { run, modules } = await loaded(args, { home: h });
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      expect(yaml(modules), args.join(" ")).toEqual([]);
      expect(heavyIn(modules), args.join(" ")).not.toContain("the Ajv compiler");
    }
    // The control: an edited manifest is parsed again, and the recorder sees the parser load.
    writePlugin(join(h, "plugins", "memo"), memo("1.0.1"));
    const edited = await loaded(["plugins", "list", "--json"], { home: h });
    expect(edited.run.code).toBe(0);
    expect(yaml(edited.modules)).not.toEqual([]);
  });

  it("a start on a compiled home (plugins chain) loads no YAML parser, compiler, Python bridge or pino", async () => {
    const h = s.dir("start");
    const log = (level: string) => `export function register(ctx) {
  ctx.log.${level}("memo says hello");
  ctx.log.child({ part: "x" }).debug("not shown");
  ctx.register_hook("post_tool_call", () => undefined);
}
`;
    writePlugin(join(h, "plugins", "memo"), "name: memo\nversion: 1.0.0\nhooks: [post_tool_call]\n");
    writeText(join(h, "plugins", "memo", "index.js"), log("info"));
    writeText(join(h, "config.yaml"), "plugins:\n  enabled: [memo]\n");
    expect((await runCli(["compile"], { home: h })).code).toBe(0);
    const quiet = await loaded(["plugins", "chain"], { home: h });
    expect(quiet.run.code, quiet.run.stderr).toBe(0);
    expect(quiet.run.stdout).toContain("post_tool_call: memo");
    expect(quiet.modules.filter((m) => m.includes("/node_modules/yaml/"))).toEqual([]);
    expect(heavyIn(quiet.modules)).toEqual([]);
    for (const folder of ["compile/compile.js", "compile/gather.js", "compile/plan.js", "runtime/python/"])
      expect(quiet.modules.filter((m) => m.startsWith(`/dist/${folder}`))).toEqual([]);
    expect(quiet.run.stderr).not.toContain("memo says hello");
    // The control: a line at an enabled level loads pino and is written with the plugin's key.
    writeText(join(h, "plugins", "memo", "index.js"), log("warn"));
    const loud = await loaded(["plugins", "chain"], { home: h, env: { HERMES_LOG_LEVEL: "info" } });
    expect(loud.run.code, loud.run.stderr).toBe(0);
    expect(heavyIn(loud.modules)).toEqual(["pino"]);
    expect(loud.run.stderr).toMatch(/"plugin":"memo".*"msg":"memo says hello"/);
    expect(loud.run.stderr).not.toContain("not shown");
  });

  it("compile and compile --check load no server, store, git, tar or agent", async () => {
    for (const args of [["compile"], ["compile", "--check"]]) {
      const { run, modules } = await loaded(args, { home: compiled });
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      expect(
        heavyIn(modules).filter((h) => h !== "pino"),
        args.join(" "),
      ).toEqual([]);
      for (const folder of ["agent", "gateway", "install/scan", "pack", "runtime"])
        expect(
          modules.filter((m) => m.startsWith(`/dist/${folder}`)),
          args.join(" "),
        ).toEqual([]);
    }
  });
});
