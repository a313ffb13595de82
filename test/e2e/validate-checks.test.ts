import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, STACK_RE, type Diag } from "../support/cli.js";
import { Scratch, writePlugin, writeText } from "../support/home.js";

let s: Scratch;
let root: string;
let home: string;
const dir = (name: string) => join(root, name);

beforeAll(() => {
  s = new Scratch();
  root = s.dir("plugins");
  writePlugin(
    dir("hooktypo"),
    "name: hooktypo\nmanifest_version: 2\nhooks:\n  - pre_tool_call\n  - post_tool_cal\nprovides_hooks: " +
      "[on_turn_start]\n",
  );
  writePlugin(dir("far-fields"), "name: far-fields\nmanifest_version: 2\nprovides: [x]\nprovider: y\nconfig: {}\n");
  writePlugin(dir("near-field"), "name: near-field\nmanifest_version: 2\ndescripton: typo\nprofile_clone: true\n");
  writeText(join(root, "configs", "typo.yaml"), "modle: gpt-4o\ndisplay:\n  compact: true\ntoolsets: [web]\n");
  writeText(
    join(root, "configs", "provider.yaml"),
    "model:\n  provider: openai-compat\n  base_url: http://127.0.0.1:1/v1\n",
  );
  writeText(join(root, "configs", "far-provider.yaml"), "model:\n  provider: anthropic\n");
  writeText(join(root, "configs", "clean.yaml"), "model:\n  provider: custom\nplugins:\n  enabled: []\n");
  writeText(join(root, "configs", "manifest-like.yaml"), "name: weather\nversion: 1.0.0\nhooks: [pre_tool_call]\n");
  // A home with a version-1 manifest carrying unknown fields, as the original's own plugins do.
  home = s.dir("home");
  writePlugin(join(home, "plugins", "memo"), "name: memo\nversion: 1.0.0\nprofile_clone: true\nweird_extra: 1\n");
  writePlugin(
    join(home, "plugins", "memo2"),
    "name: memo2\nmanifest_version: 2\nprofile_clone: true\nweird_extra: 1\n",
  );
  writeText(join(home, "config.yaml"), "plugins:\n  enabled: [memo, memo2]\n");
});
afterAll(() => s.cleanup());

const pv = (d: string, ...extra: string[]) => runCli(["plugins", "validate", d, ...extra]);
const cv = (name: string, ...extra: string[]) => runCli(["config", "validate", join(root, "configs", name), ...extra]);

describe.concurrent("plugins validate checks what compile checks", () => {
  it(
    "an unknown hook name is a warning at its line with the nearest valid name; a far one gets none; --strict " +
      "exits 1",
    async () => {
      const [t, strict, j] = await Promise.all([
        pv(dir("hooktypo")),
        pv(dir("hooktypo"), "--strict"),
        pv(dir("hooktypo"), "--json"),
      ]);
      expect(t.code).toBe(0);
      expect(t.stdout).toBe("hooktypo: ok (2 warning(s))\n");
      expect(t.stderr).toContain(
        `warning W_MANIFEST_UNKNOWN_HOOK ${join(dir("hooktypo"), "plugin.yaml")}:5:5 hooks[1]: unknown hook ` +
          "'post_tool_cal' in hooks; did you mean 'post_tool_call'?",
      );
      expect(t.stderr).toContain("unknown hook 'on_turn_start' in provides_hooks (see docs/hooks.md)");
      expect(t.stderr).not.toContain("on_stream_start");
      expect(strict.code).toBe(1);
      expect(strict.stdout).toBe("");
      expect(strict.stderr).toContain("2 warning(s) (--strict)");
      expect(j.code).toBe(0);
      expect((JSON.parse(j.stdout) as Diag[]).map((d) => d.code)).toEqual([
        "W_MANIFEST_UNKNOWN_HOOK",
        "W_MANIFEST_UNKNOWN_HOOK",
      ]);
    },
  );

  it(
    "did-you-mean only above the similarity threshold: provides, provider, config get no suggestion; " +
      "descripton does; profile_clone is no problem",
    async () => {
      const [far, near] = await Promise.all([pv(dir("far-fields"), "--json"), pv(dir("near-field"), "--json")]);
      const farDs = JSON.parse(far.stdout) as Diag[];
      expect(farDs.map((d) => d.path).sort()).toEqual(["config", "provider", "provides"]);
      for (const d of farDs) expect(d.message).not.toContain("did you mean");
      const nearDs = JSON.parse(near.stdout) as Diag[];
      expect(nearDs).toHaveLength(1);
      expect(nearDs[0]!.message).toBe("unknown field 'descripton'; did you mean 'description'?");
    },
  );

  it(
    "a version-1 manifest's unknown fields are not manifest problems (debug log only); a version-2 manifest's " +
      "are, profile_clone aside",
    async () => {
      const [v1, v2, dbg] = await Promise.all([
        runCli(["plugins", "why", "memo", "--json"], { home }),
        runCli(["plugins", "why", "memo2", "--json"], { home }),
        runCli(["plugins", "why", "memo"], { home, env: { HERMES_LOG_LEVEL: "debug" } }),
      ]);
      expect(v1.code).toBe(0);
      expect((JSON.parse(v1.stdout) as { diagnostics: Diag[] }).diagnostics).toEqual([]);
      const d2 = (JSON.parse(v2.stdout) as { diagnostics: Diag[] }).diagnostics;
      expect(d2.map((d) => d.path)).toEqual(["weird_extra"]);
      expect(dbg.stderr).toMatch(/unknown manifest field\(s\) ignored: profile_clone, weird_extra/);
    },
  );
});

describe.concurrent("config validate checks what compile checks, and more", () => {
  it(
    "a top-level typo names the nearest key; keys the " + "original reads are not warned about; --strict exits 1",
    async () => {
      const [t, strict] = await Promise.all([cv("typo.yaml"), cv("typo.yaml", "--strict")]);
      expect(t.code).toBe(0);
      expect(t.stderr).toContain(
        `warning W_CONFIG_UNKNOWN_KEY ${join(root, "configs", "typo.yaml")}:1:1 modle: unknown top-level key ` +
          "'modle'; did you mean 'model'?",
      );
      expect(t.stderr).not.toMatch(/display|toolsets/);
      expect(t.stdout).toMatch(/: ok \(1 warning\(s\)\)\n$/);
      expect(strict.code).toBe(1);
      expect(strict.stderr).toContain("1 warning(s) (--strict)");
    },
  );

  it("model.provider must be one the agent has (nearest named); custom and openai are accepted", async () => {
    const [near, far, clean] = await Promise.all([
      cv("provider.yaml", "--json"),
      cv("far-provider.yaml", "--format", "json"),
      cv("clean.yaml", "--strict"),
    ]);
    expect(JSON.parse(near.stdout)).toEqual([
      expect.objectContaining({
        code: "W_CONFIG_UNKNOWN_PROVIDER",
        line: 2,
        col: 13,
        message: expect.stringContaining("did you mean 'openai-compatible'?"),
      }),
    ]);
    const f = JSON.parse(far.stdout) as Diag[];
    expect(f.map((d) => d.code)).toEqual(["W_CONFIG_UNKNOWN_PROVIDER"]);
    expect(f[0]!.message).not.toContain("did you mean");
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/clean\.yaml: ok\n$/);
  });

  it("a plugin.yaml given as config is refused with the command that checks it", async () => {
    const [byName, byShape] = await Promise.all([
      runCli(["config", "validate", join(dir("hooktypo"), "plugin.yaml")]),
      cv("manifest-like.yaml"),
    ]);
    for (const r of [byName, byShape]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("E_CONFIG_IS_MANIFEST");
      expect(r.stderr).toContain("hermes plugins validate <dir>");
      expect(r.stderr).not.toMatch(STACK_RE);
    }
  });
});
