import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram, configureTree, prepareCommand } from "../../src/cli/program.js";
import { ROOT, runAll, runCli } from "../support/cli.js";
import { Scratch } from "../support/home.js";

/**
 * `hermes --version` answers before commander loads, and the subcommands of `plugins`, `config`
 * and `hooks` are declared only when the command line names them (issue 19). What the CLI prints
 * must not depend on that: each command's help from the spawned CLI (which declared only what its
 * command line names) equals the help of the whole tree declared at once in this process.
 */

let s: Scratch;
let home: string;

beforeAll(() => {
  s = new Scratch();
  home = s.dir("home");
});
afterAll(() => s.cleanup());

const run = (args: string[]) => runCli(args, { home, env: { HERMES_BUNDLED_PLUGINS: s.dir("bundled") } });

/** Every command of a tree with its path of names, root first. */
function walk(cmd: Command, path: string[] = []): Array<{ path: string[]; cmd: Command }> {
  return [{ path, cmd }, ...cmd.commands.flatMap((c) => walk(c, [...path, c.name()]))];
}

describe.concurrent("lazily declared commands print what the whole tree prints", () => {
  it("every command's --help equals the help of the fully declared tree", async () => {
    const program = buildProgram();
    await prepareCommand(program, ["help"]); // `help` may name any command: everything is declared
    const all = walk(program);
    // The plugins, config and hooks subtrees are in it (the walk is not just the root and the leaves).
    expect(all.map((c) => c.path.join(" "))).toEqual(
      expect.arrayContaining(["plugins list", "plugins pack install", "config get", "hooks list"]),
    );
    /** What `--help` writes: the help text and the text added after it (`serve`), wrapped as for a pipe. */
    const helpOf = (cmd: Command): string => {
      let text = "";
      cmd.configureHelp({ helpWidth: 80 }).configureOutput({ writeOut: (t) => void (text += t) });
      cmd.outputHelp();
      return text;
    };
    const rs = await runAll(
      all.map(
        ({ path }) =>
          () =>
            run([...path, "--help"]),
      ),
    );
    all.forEach(({ path, cmd }, i) => {
      expect(rs[i]!.code, path.join(" ")).toBe(0);
      expect(rs[i]!.stdout, path.join(" ")).toBe(helpOf(cmd));
    });
  });

  it("help <group> and completion see the subcommands declared on demand", async () => {
    const [viaHelp, viaFlag, bash] = await runAll([
      () => run(["help", "plugins"]),
      () => run(["plugins", "--help"]),
      () => run(["completion", "bash"]),
    ]);
    expect(viaHelp!.code).toBe(0);
    expect(viaHelp!.stdout).toBe(viaFlag!.stdout);
    expect(viaHelp!.stdout).toMatch(/^\s+list\|ls \[options\]/m);
    expect(bash!.code).toBe(0);
    expect(bash!.stdout).toContain("'plugins pack') echo 'show install export' ;;");
    expect(bash!.stdout).toContain("'hooks') echo 'list' ;;");
  });

  it("a parse that reaches an undeclared group declares it first (commander's preSubcommand hook)", async () => {
    const program = buildProgram(); // no prepareCommand: nothing behind hooks is declared yet
    configureTree(program);
    let printed = "";
    program.commands.find((c) => c.name() === "hooks")!.configureOutput({ writeOut: (t) => void (printed += t) });
    await expect(program.parseAsync(["node", "hermes", "hooks", "--help"])).rejects.toMatchObject({
      code: "commander.helpDisplayed",
    });
    expect(printed).toMatch(/^Usage: hermes hooks \[options\] \[command\]/);
    expect(printed).toMatch(/^\s+list \[options\]/m);
  });

  it("--version and -V print what commander prints for the version option", async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
    // `--verbose --version` goes through commander (the early answer takes only a lone --version or -V).
    const rs = await runAll([() => run(["--version"]), () => run(["-V"]), () => run(["--verbose", "--version"])]);
    for (const r of rs) {
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
      expect(r.stderr).toBe("");
    }
  });
});
