import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../support/cli.js";
import { Scratch } from "../support/home.js";

let s: Scratch;
beforeAll(() => {
  s = new Scratch("hermes-packaging-");
});
afterAll(() => s.cleanup());

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  license: string;
  exports: Record<string, { types: string }>;
};

describe("the npm package", () => {
  it("ships a LICENSE (MIT), the plugin types, and no source maps (src/ is not shipped)", () => {
    const r = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    expect(files).toContain("LICENSE");
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(files.some((f) => f.startsWith("src/"))).toBe(false);
    expect(files).not.toContain("dist/.test-build-stamp");
    expect(files).toContain("dist/plugin.d.ts");
    expect(files).toContain("dist/runtime/context.d.ts");
    expect(pkg.license).toBe("MIT");
    const license = readFileSync(join(ROOT, "LICENSE"), "utf8");
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} hermes-kit authors\n/);
    expect(pkg.exports["./plugin"]!.types).toBe("./dist/plugin.d.ts");
  });

  it("a TypeScript plugin type-checks against `hermes-kit/plugin`, and a wrong call does not", {
    timeout: 60_000,
  }, () => {
    const proj = s.dir("ts-plugin");
    mkdirSync(join(proj, "node_modules"), { recursive: true });
    symlinkSync(ROOT, join(proj, "node_modules", "hermes-kit"));
    writeFileSync(join(proj, "package.json"), JSON.stringify({ name: "p", type: "module" }));
    writeFileSync(
      join(proj, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
      }),
    );
    const good = `import type { PluginContext, RegisterFunction, HookName } from "hermes-kit/plugin";
const hook: HookName = "post_tool_call";
export const register: RegisterFunction = (ctx: PluginContext) => {
  ctx.register_tool({ name: "echo", handler: (args) => String(args.text ?? "") });
  ctx.register_hook(hook, () => undefined);
};
`;
    writeFileSync(join(proj, "index.ts"), good);
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const ok = spawnSync(process.execPath, [tsc, "-p", proj], { encoding: "utf8" });
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    writeFileSync(
      join(proj, "index.ts"),
      `${good}const wrong: HookName = "post_tool_cal";\nexport function bad(ctx: PluginContext) { ` +
        "ctx.register_tool(42); }\n",
    );
    const bad = spawnSync(process.execPath, [tsc, "-p", proj], { encoding: "utf8" });
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toMatch(/"post_tool_cal"/);
    expect(bad.stdout).toMatch(
      new RegExp(
        String.raw`index\.ts\(8,\d+\): error TS2345: Argument of type .number. is not assignable to ` +
          String.raw`parameter of type .ToolSpecInput.`,
      ),
    );
  });
});

describe("hermes completion", () => {
  it("bash: completes subcommands at any depth and the options of the command being typed", async () => {
    const r = await runCli(["completion", "bash"]);
    expect(r.code).toBe(0);
    const file = join(s.root, "hermes.bash");
    writeFileSync(file, r.stdout);
    const complete = (words: string[]) => {
      const script =
        `source ${JSON.stringify(file)}; COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(" ")}); ` +
        `COMP_CWORD=${words.length - 1}; _hermes; echo "\${COMPREPLY[*]}"`;
      return spawnSync("bash", ["-c", script], { encoding: "utf8" }).stdout.trim();
    };
    expect(complete(["hermes", "pl"])).toBe("plugins");
    expect(complete(["hermes", "plugins", "pa"])).toBe("pack");
    expect(complete(["hermes", "--home", "/h", "plugins", "pack", "ex"])).toBe("export");
    expect(complete(["hermes", "plugins", "validate", "--st"])).toBe("--strict");
    expect(complete(["hermes", "compile", "--verb"])).toBe("--verbose");
    expect(complete(["hermes", "comp"]).split(" ").sort()).toEqual(["compile", "completion"]);
  });

  it("zsh and fish scripts name the same commands; an unknown shell is a usage error", async () => {
    const [z, f, bad] = await Promise.all([
      runCli(["completion", "zsh"]),
      runCli(["completion", "fish"]),
      runCli(["completion", "tcsh"]),
    ]);
    expect(z.code).toBe(0);
    expect(z.stdout).toContain("bashcompinit");
    expect(z.stdout).toContain("'plugins pack') echo 'show install export' ;;");
    expect(f.code).toBe(0);
    expect(f.stdout).toContain(`complete -c hermes -n '__hermes_at "plugins pack"' -a 'install'`);
    expect(f.stdout).toContain(
      `complete -c hermes -n '__hermes_at "plugins validate"' -l strict -d 'warnings fail too (exit 1), for CI'`,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are bash, zsh, fish");
  });
});
