import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { satisfiesHermes } from "../../src/manifest/requires-hermes.js";
import { runCli } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

let s: Scratch;
let home: string;
let bundled: string;
const marker = (name: string) => join(home, `${name}.imported`);

// Each plugin leaves a file when its code is imported: the proof of whether the runtime loaded it.
function plugin(name: string, requires: string) {
  writePlugin(join(home, "plugins", name), `name: ${name}\nversion: 1.0.0\nrequires_hermes: "${requires}"\n`);
  writeText(
    join(home, "plugins", name, "index.js"),
    `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker(name))}, "x");\nexport ` +
      "function register() {}\n",
  );
}

beforeAll(() => {
  s = new Scratch();
  home = s.dir("home");
  bundled = s.dir("bundled");
  plugin("future", ">=99.0");
  plugin("window", ">=0.20, <0.21");
  plugin("fits", ">=0.10.0");
  plugin("vague", "whenever");
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: [future, window, fits, vague]\n");
});
afterAll(() => s.cleanup());

const env = () => ({ HERMES_BUNDLED_PLUGINS: bundled });

describe("requires_hermes", () => {
  it("the original's rules: clauses ANDed, bare version means >=, v and suffixes dropped, unparseable passes", () => {
    expect(satisfiesHermes(">=0.21", "0.21.4")).toBe(true);
    expect(satisfiesHermes("0.22", "0.21.4")).toBe(false);
    expect(satisfiesHermes(">=0.20,<0.21", "0.21.4")).toBe(false);
    expect(satisfiesHermes("==v0.21.4-rc1", "0.21.4")).toBe(true);
    expect(satisfiesHermes("!=0.21.4", "0.21.4")).toBe(false);
    expect(satisfiesHermes("whenever", "0.21.4")).toBe(true);
  });

  it(
    "an unmet requirement keeps the plugin out of the lock's load order and the runtime never imports it; why " +
      "and validate say so",
    async () => {
      const c = await runCli(["compile"], { home, env: env() });
      expect(c.code, c.stderr).toBe(0);
      expect(c.stderr).toContain("W_PLUGIN_REQUIRES_HERMES");
      const lock = JSON.parse(readFileSync(join(home, "hermes.lock.json"), "utf8")) as {
        plugins: Array<{ key: string; action: string; reason: string }>;
      };
      const byKey = Object.fromEntries(lock.plugins.map((p) => [p.key, p]));
      expect(byKey.future).toMatchObject({
        action: "skip",
        reason: "requires hermes >=99.0, running 0.21.4 (the Hermes plugin API hermes-kit implements)",
      });
      expect(byKey.window).toMatchObject({ action: "skip" });
      expect(byKey.fits!.action).toBe("load");
      expect(byKey.vague!.action).toBe("load");

      const chain = await runCli(["plugins", "chain"], { home, env: env() });
      expect(chain.code, chain.stderr).toBe(0);
      expect(existsSync(marker("fits"))).toBe(true);
      expect(existsSync(marker("vague"))).toBe(true);
      expect(existsSync(marker("future"))).toBe(false);
      expect(existsSync(marker("window"))).toBe(false);

      const [why, whyJson, fitsWhy, validate] = await Promise.all([
        runCli(["plugins", "why", "future"], { home, env: env() }),
        runCli(["plugins", "why", "future", "--json"], { home, env: env() }),
        runCli(["plugins", "why", "fits"], { home, env: env() }),
        runCli(["plugins", "validate", join(home, "plugins", "future")]),
      ]);
      expect(why.stdout).toContain("why:       requires hermes >=99.0, running 0.21.4");
      expect(why.stdout).toContain("hermes:    requires >=99.0; running 0.21.4 (not met: not loaded)");
      expect(JSON.parse(whyJson.stdout)).toMatchObject({
        requires_hermes: { spec: ">=99.0", running: "0.21.4", met: false },
      });
      expect(fitsWhy.stdout).toContain("hermes:    requires >=0.10.0; running 0.21.4\n");
      expect(validate.stderr).toMatch(
        /warning W_PLUGIN_REQUIRES_HERMES .*plugin\.yaml:3:18 requires_hermes: requires hermes >=99.0/,
      );
    },
  );
});
