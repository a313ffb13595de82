import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compile } from "../../src/compile/compile.js";
import { cleanupTemp, tempDir } from "../support/home.js";

afterAll(cleanupTemp);

function makeHome(home: string, names: string[]) {
  mkdirSync(join(home, "plugins"), { recursive: true });
  for (const n of names) {
    const d = join(home, "plugins", n);
    mkdirSync(join(d, "lib"), { recursive: true });
    // Files inside each plugin are created in the given order too.
    const files: Array<[string, string]> = [
      [
        "plugin.yaml",
        `name: ${n}\nversion: "1"\nrequires_plugins: [${n === "p0" ? "" : "p0"}]\nhooks: [post_tool_call]\n`,
      ],
      ["index.js", `export function register(ctx) {}\n`],
      ["lib/a.js", `export const a = "${n}";\n`],
      ["lib/b.js", `export const b = 2;\n`],
    ];
    for (const [f, body] of names[0] === "p0" ? files : [...files].reverse()) writeFileSync(join(d, f), body);
  }
  writeFileSync(join(home, "config.yaml"), `plugins:\n  enabled: [${[...names].sort().join(", ")}]\n`);
}

const env = (root: string) => ({ HERMES_BUNDLED_PLUGINS: join(root, "bundled"), PATH: process.env.PATH });

describe("compile determinism", () => {
  it("same inputs created in different orders give identical lock bytes", async () => {
    const root = tempDir("hk-det-");
    mkdirSync(join(root, "bundled"));
    const home = join(root, "home");
    const names = Array.from({ length: 40 }, (_, i) => `p${i}`);
    makeHome(home, names);
    const first = await compile({ home, env: env(root) });
    const bytes = readFileSync(join(home, "hermes.lock.json"), "utf8");
    expect(bytes).toBe(first.plan.lockText);
    rmSync(home, { recursive: true });
    makeHome(home, [...names].reverse());
    await compile({ home, env: env(root) });
    expect(readFileSync(join(home, "hermes.lock.json"), "utf8")).toBe(bytes);
    const lock = JSON.parse(bytes) as { load_order: string[]; chains: { hooks: Record<string, string[]> } };
    expect(lock.load_order[0]).toBe("p0");
    expect(lock.chains.hooks.post_tool_call).toEqual(lock.load_order);
  });

  it("a no-op compile writes nothing", async () => {
    const root = tempDir("hk-noop-");
    mkdirSync(join(root, "bundled"));
    const home = join(root, "home");
    makeHome(home, ["p0", "p1", "p2"]);
    // Files written within a clock step of a compile are not vouched for by its no-op record (quick-check.ts).
    await new Promise((r) => setTimeout(r, 100));
    const first = await compile({ home, env: env(root) });
    expect(first.applied).toBe(true);
    const snap = () => {
      const out: Record<string, number> = {};
      const walk = (d: string) => {
        for (const e of readdirSync(d, { withFileTypes: true })) {
          const p = join(d, e.name);
          out[p] = statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? -1;
          if (e.isDirectory()) walk(p);
        }
      };
      walk(home);
      return out;
    };
    const before = snap();
    await new Promise((r) => setTimeout(r, 20));
    const again = await compile({ home, env: env(root) });
    expect(again.applied).toBe(false);
    expect(again.plan.changed).toBe(false);
    expect(again.generation).toBe(first.generation);
    expect(snap()).toEqual(before);
  });

  it("a changed plugin file is a new generation; the lock names what changed", async () => {
    const root = tempDir("hk-change-");
    mkdirSync(join(root, "bundled"));
    const home = join(root, "home");
    makeHome(home, ["p0", "p1"]);
    const first = await compile({ home, env: env(root) });
    writeFileSync(join(home, "plugins", "p1", "lib", "a.js"), "export const a = 'edited';\n");
    const second = await compile({ home, env: env(root) });
    expect(second.applied).toBe(true);
    expect(second.generation).toBe((first.generation ?? 0) + 1);
    expect(second.plan.pluginChanges).toEqual([{ op: "change", key: "p1", details: ["files changed"] }]);
  });
});
