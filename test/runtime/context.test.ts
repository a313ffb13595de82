/**
 * The ctx API's gates: the
 * register_tool override gate, identity-conditional restore in the ledger, approval transport
 * validation, and plugin-relative get_config / set_config.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type PluginContext, PluginToolOverrideError } from "../../src/runtime/context.js";
import { SlotMap } from "../../src/runtime/ledger.js";
import type { Runtime } from "../../src/runtime/runtime.js";
import { plugin, start } from "./helpers.js";
import { cleanupTemp } from "../support/home.js";

afterEach(() => cleanupTemp());

const g = globalThis as Record<string, unknown>;

/** A built-in tool named `name` answering "real", as the agent registers its own before plugins load. */
function builtin(rt: { registerBuiltinTool: Runtime["registerBuiltinTool"] }, name: string): void {
  rt.registerBuiltinTool({
    name,
    toolset: "core",
    schema: {},
    handler: () => "real",
    requires_env: [],
    description: "",
    emoji: "",
  });
}

describe("register_tool override gate", () => {
  it(
    "a non-bundled plugin without the tools.override grant cannot override: PluginToolOverrideError fails and " +
      "rolls back the plugin",
    async () => {
      const { rt, logs } = await start(
        [
          plugin(
            "greedy",
            `ctx.register_hook("post_tool_call", () => {}); ctx.register_tool({ name: "terminal", handler: () ` +
              `=> "hijacked", override: true });`,
            {
              declared: ["tools.override"],
            },
          ),
        ],
        { load: false },
      );
      builtin(rt, "terminal");
      await rt.loadAll();
      const msg =
        "Plugin 'greedy' cannot override built-in tool 'terminal'. Grant the tools.override capability (hermes " +
        "plugins enable greedy --grant tools.override) to allow this plugin to replace tools.";
      expect(rt.status.get("greedy")).toMatchObject({ state: "failed", error: msg });
      expect(rt.tools.get("terminal")!.owner).toBe("builtin");
      expect(rt.hooks.names()).toEqual([]);
      expect(
        logs
          .warnings()
          .filter((r) => r.plugin === "greedy")
          .map((r) => r.msg),
      ).toEqual([`Failed to load plugin 'greedy': ${msg}`]);
    },
  );

  it("the error is a PluginToolOverrideError the plugin could catch", async () => {
    await start([
      plugin(
        "careful",
        `try { ctx.register_tool({ name: "x", handler: () => 1, override: true }); } catch (e) { ` +
          "globalThis.__err = e; }",
      ),
    ]);
    expect(g.__err).toBeInstanceOf(PluginToolOverrideError);
  });

  it("the tools.override grant recorded in the lock allows the override; unload restores the built-in", async () => {
    const { rt } = await start(
      [
        plugin("granted", `ctx.register_tool({ name: "terminal", handler: () => "wrapped", override: true });`, {
          granted: ["tools.override"],
        }),
      ],
      {
        load: false,
      },
    );
    builtin(rt, "terminal");
    await rt.loadAll();
    expect(await rt.tools.dispatch("terminal", {})).toBe("wrapped");
    rt.unload("granted");
    expect(await rt.tools.dispatch("terminal", {})).toBe("real");
  });

  it(
    "ctx.manifest is the plugin.yaml on disk: parsed on first read when it is the compiled one, at load when " +
      "it changed",
    async () => {
      const code =
        `globalThis.__manifests = [...(globalThis.__manifests ?? []), ctx.manifest.name + "@" + ` +
        `ctx.manifest.version + ":" + ctx.manifest.kind + ":" + ctx.manifest.description];`;
      const g = globalThis as { __manifests?: string[] };
      g.__manifests = [];
      const { rt } = await start(
        [
          plugin("same", code, { manifest: "description: as compiled\n" }),
          plugin("edited", code, { manifest: "description: as compiled\n" }),
        ],
        { load: false },
      );
      // A version bump after compile: same capabilities, so nothing is refused; ctx sees the new file.
      writeFileSync(
        join(rt.lock.plugins[1]!.target, "plugin.yaml"),
        'name: edited\nversion: "2"\ndescription: edited after compile\n',
      );
      await rt.loadAll();
      expect(g.__manifests).toEqual(["same@1:standalone:as compiled", "edited@2:standalone:edited after compile"]);
      expect(rt.status.get("same")!.state).toBe("loaded");
    },
  );

  it("a grant does not count when the manifest now declares a different set than was consented to", async () => {
    const { rt } = await start(
      [
        plugin("drifted", `ctx.register_tool({ name: "t", handler: () => 1, override: true });`, {
          granted: ["tools.override"],
        }),
      ],
      { load: false },
    );
    // The manifest on disk now declares one more capability than the lock's consent hash covers.
    writeFileSync(
      join(rt.lock.plugins[0]!.target, "plugin.yaml"),
      'name: drifted\nversion: "1"\ncapabilities: [tools.override, llm.model_override]\n',
    );
    await rt.loadAll();
    expect(rt.status.get("drifted")!.state).toBe("failed");
  });

  it(
    "bundled plugins are trusted: has_capability('tools.override') is true and the override succeeds without a " +
      "grant",
    async () => {
      const { rt } = await start(
        [
          plugin(
            "core-tools",
            `globalThis.__bundledCap = ctx.has_capability("tools.override"); ctx.register_tool({ name: ` +
              `"read_file", handler: () => "bundled", override: true });`,
            {
              source: "bundled",
            },
          ),
        ],
        { load: false },
      );
      builtin(rt, "read_file");
      await rt.loadAll();
      expect(g.__bundledCap).toBe(true);
      expect(rt.tools.get("read_file")!.owner).toBe("core-tools");
    },
  );

  it(
    "shadowing an existing tool without override returns " + "null, warns, does not throw, and the plugin loads",
    async () => {
      const { rt, logs } = await start([
        plugin("owner", `ctx.register_tool({ name: "search", handler: () => "owner's" });`),
        plugin(
          "shadow",
          `globalThis.__shadow = ctx.register_tool({ name: "search", handler: () => "shadow's" }); ` +
            `ctx.register_tool({ name: "fresh", handler: () => "f" });`,
        ),
      ]);
      expect(g.__shadow).toBeNull();
      expect(rt.status.get("shadow")!.state).toBe("loaded");
      expect(await rt.tools.dispatch("search", {})).toBe("owner's");
      expect(rt.tools.get("fresh")!.owner).toBe("shadow");
      expect(
        logs
          .warnings()
          .filter((r) => r.plugin === "shadow")
          .map((r) => r.msg),
      ).toEqual(["tried to shadow tool search (owned by owner) without override=true; not registered"]);
    },
  );

  it(
    "the positional signature of the original works too (name, toolset, schema, handler, check_fn, " +
      "requires_env, is_async, description, emoji)",
    async () => {
      const { rt } = await start([
        plugin(
          "positional",
          `ctx.register_tool("pos", "mytools", { name: "pos", description: "d" }, () => "p", () => true, ` +
            `["HK_TEST_NEVER_SET"], false, "desc", "🔧");`,
        ),
      ]);
      expect(rt.tools.get("pos")).toMatchObject({
        toolset: "mytools",
        description: "desc",
        emoji: "🔧",
        requires_env: ["HK_TEST_NEVER_SET"],
      });
      expect(rt.tools.available("pos", {})).toBe(false);
      expect(rt.tools.available("pos", { HK_TEST_NEVER_SET: "1" })).toBe(true);
    },
  );
});

describe("ledger: identity-conditional restore", () => {
  const A = plugin("a-tools", `ctx.register_tool({ name: "fetch", handler: () => "A" });`);
  const B = plugin("b-tools", `ctx.register_tool({ name: "fetch", handler: () => "B", override: true });`, {
    granted: ["tools.override"],
  });

  it("B displaces A's tool; unloading A does not clobber B", async () => {
    const { rt } = await start([A, B]);
    expect(await rt.tools.dispatch("fetch", {})).toBe("B");
    rt.unload("a-tools");
    expect(await rt.tools.dispatch("fetch", {})).toBe("B");
  });

  it("unloading B restores A's tool", async () => {
    const { rt } = await start([A, B]);
    rt.unload("b-tools");
    expect(await rt.tools.dispatch("fetch", {})).toBe("A");
  });

  it("after A was unloaded, unloading B does not resurrect A's tool", async () => {
    const { rt } = await start([A, B]);
    rt.unload("a-tools");
    rt.unload("b-tools");
    expect(rt.tools.get("fetch")).toBeUndefined();
  });

  it("SlotMap leases nest and release in any order", () => {
    const m = new SlotMap<string>();
    const r1 = m.lease("k", "one");
    const r2 = m.lease("k", "two");
    const r3 = m.lease("k", "three");
    r2();
    expect(m.get("k")).toBe("three");
    r3();
    expect(m.get("k")).toBe("one");
    r3(); // idempotent
    r1();
    expect(m.has("k")).toBe(false);
  });

  it("handles are idempotent and report active", async () => {
    const { rt } = await start([plugin("h", `globalThis.__handle = ctx.register_hook("post_tool_call", () => {});`)]);
    const h = g.__handle as { active: boolean; dispose(): void; kind: string; key: string; plugin_key: string };
    expect(h).toMatchObject({ kind: "hook", key: "post_tool_call", plugin_key: "h", active: true });
    h.dispose();
    h.dispose();
    expect(h.active).toBe(false);
    expect(rt.hooks.has("post_tool_call")).toBe(false);
  });
});

describe("provider kinds hermes-kit does not build", () => {
  it("a web search or browser provider is ignored with W_PROVIDER_NOT_BUILT; the plugin loads", async () => {
    const { rt, logs } = await start([
      plugin(
        "webby",
        `globalThis.__web = ctx.register_web_search_provider({ name: "ddg", search: () => [] }); ` +
          `globalThis.__browser = ctx.register_browser_provider({ name: "pw" });`,
      ),
    ]);
    expect([g.__web, g.__browser]).toEqual([null, null]);
    expect(rt.status.get("webby")!.state).toBe("loaded");
    expect(
      logs
        .warnings()
        .filter((r) => r.code === "W_PROVIDER_NOT_BUILT")
        .map((r) => r.msg),
    ).toEqual([
      "Plugin 'webby' registered a web search provider; hermes-kit has no web search tool, so the registration " +
        "is ignored",
      "Plugin 'webby' registered a browser provider; hermes-kit has no browser tool, so the registration is ignored",
    ]);
  });
});

describe("register_approval_transport validation", () => {
  async function attempt(body: string, key = "t") {
    g.__atErr = undefined;
    const { rt } = await start([plugin(key, `try { ${body} } catch (e) { globalThis.__atErr = e; }`)]);
    return { rt, err: g.__atErr as Error | undefined };
  }

  it("'builtin' is reserved (after trim + lowercase)", async () => {
    const { err } = await attempt(`ctx.register_approval_transport("  BuiltIn ", () => {});`);
    expect(err?.message).toBe("approval transport name 'builtin' is reserved");
  });

  it("the name must match ^[a-z0-9][a-z0-9_-]{0,63}$", async () => {
    for (const bad of ["-lead", "has space", "a".repeat(65), "dots.bad", ""]) {
      const { err } = await attempt(`ctx.register_approval_transport(${JSON.stringify(bad)}, () => {});`);
      expect(err?.message, bad).toMatch(/^approval transport name '.*' must match \^\[a-z0-9\]\[a-z0-9_-\]\{0,63\}\$$/);
    }
  });

  it("present must be a function (TypeError)", async () => {
    const { err } = await attempt(`ctx.register_approval_transport("pager", "not a fn");`);
    expect(err).toBeInstanceOf(TypeError);
  });

  it(
    "a duplicate name names the owner; the stored entry is {name, present, plugin_id, profile_home}; unload " +
      "removes it",
    async () => {
      const { rt, home } = await start([
        plugin("first", `ctx.register_approval_transport(" Pager ", () => "first");`),
        plugin(
          "second",
          `try { ctx.register_approval_transport("pager", () => "second"); } catch (e) { globalThis.__dup = ` +
            "e.message; }",
        ),
      ]);
      expect(g.__dup).toBe("approval transport 'pager' is already registered by 'first'");
      expect(rt.approvalTransports.get("pager")).toMatchObject({
        name: "pager",
        plugin_id: "first",
        profile_home: home,
      });
      rt.unload("first");
      expect(rt.approvalTransports.get("pager")).toBeUndefined();
    },
  );

  it("uncaught, a validation error fails that plugin's load", async () => {
    const { rt } = await start([plugin("bad", `ctx.register_approval_transport("builtin", () => {});`)]);
    expect(rt.status.get("bad")).toMatchObject({
      state: "failed",
      error: "approval transport name 'builtin' is reserved",
    });
  });
});

describe("get_config / set_config", () => {
  const CONFIG = `plugins:
  entries:
    cfg:
      settings:
        endpoint: https://example.test
        retry:
          policy: exponential
        nothing: null
      config:
        legacy_only: old
        endpoint: shadowed-by-settings
    other:
      settings:
        secret: theirs
`;
  const BAD_KEY =
    "Expected a plugin-relative config key such as 'endpoint' or 'retry.policy'; global, cross-plugin, and " +
    "traversal paths are forbidden";

  async function cfg(config = CONFIG) {
    const { rt, home } = await start([plugin("cfg", `globalThis.__cfg = ctx;`)], { config });
    return { rt, home, ctx: g.__cfg as PluginContext };
  }

  it(
    "reads plugin-relative settings, dotted paths, null values (not the default), the legacy `config` " +
      "fallback, then the default",
    async () => {
      const { ctx } = await cfg();
      expect(ctx.get_config("endpoint")).toBe("https://example.test");
      expect(ctx.get_config("retry.policy")).toBe("exponential");
      expect(ctx.get_config("retry")).toEqual({ policy: "exponential" });
      expect(ctx.get_config("nothing", "dflt")).toBeNull();
      expect(ctx.get_config("legacy_only")).toBe("old");
      expect(ctx.get_config("missing", 42)).toBe(42);
      expect(ctx.get_config("missing")).toBeNull();
      expect(ctx.get_config("secret", "none")).toBe("none"); // another plugin's settings are not reachable
    },
  );

  it("refuses reserved roots, traversal and malformed keys with the exact message", async () => {
    const { ctx } = await cfg();
    for (const bad of [
      "model",
      "Plugins.entries.other.settings.secret",
      "security.x",
      "SETTINGS",
      "../other",
      "a/b",
      "a\\b",
      "a..b",
      ".a",
      "a.",
      "",
      "-lead",
      "x".repeat(129),
      7,
    ])
      expect(() => ctx.get_config(bad as string), String(bad)).toThrow(BAD_KEY);
    expect(ctx.get_config("models")).toBeNull(); // only the exact root is reserved
  });

  it("an entry that is missing or not a mapping gives the default", async () => {
    const { ctx } = await cfg("plugins:\n  entries:\n    cfg: just a string\n");
    expect(ctx.get_config("endpoint", "d")).toBe("d");
  });

  it(
    "set_config writes plugins.entries.<key>.settings.<path>, keeps comments, and refuses bad keys before " +
      "touching the file",
    async () => {
      const { ctx, home } = await cfg(`# keep me\n${CONFIG}`);
      await ctx.set_config("retry.max", 5);
      const text = readFileSync(join(home, "config.yaml"), "utf8");
      expect(text.startsWith("# keep me\n")).toBe(true);
      expect(ctx.get_config("retry.max")).toBe(5);
      expect(ctx.get_config("retry.policy")).toBe("exponential");
      await expect(ctx.set_config("plugins.enabled", ["evil"])).rejects.toThrow(BAD_KEY);
      expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(text);
    },
  );
});

describe("legacy capability keys open their gates (grant OR legacy key)", () => {
  it("plugins.entries.<key>.allow_tool_override: true alone lets a plugin override a built-in tool", async () => {
    const { rt } = await start(
      [plugin("legacy", `ctx.register_tool({ name: "terminal", handler: () => "mine", override: true });`)],
      { load: false, config: "plugins:\n  entries:\n    legacy:\n      allow_tool_override: true\n" },
    );
    builtin(rt, "terminal");
    await rt.loadAll();
    expect(rt.status.get("legacy")?.state).toBe("loaded");
    expect(rt.tools.get("terminal")!.owner).toBe("legacy");
  });

  it("a nested legacy key counts only at its path: a top-level allow_model_override is not llm's", async () => {
    const { rt } = await start([plugin("nested", `globalThis.__caps = [ctx.has_capability("llm.model_override")];`)], {
      config: "plugins:\n  entries:\n    nested:\n      allow_model_override: true\n",
    });
    expect(rt.status.get("nested")?.state).toBe("loaded");
    expect(g.__caps).toEqual([false]);
  });
});
