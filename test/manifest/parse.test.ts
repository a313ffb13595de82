/**
 * plugin.yaml parsing, on text and on real plugin folders.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { parseManifestText, SUPPORTED_MANIFEST_VERSION, type ManifestParse } from "../../src/manifest/parse.js";
import { candidateFromFolder } from "../../src/discovery/scan.js";
import { writePlugin } from "../discovery/helpers.js";
import { cleanupTemp, tempDir } from "../support/home.js";

afterEach(cleanupTemp);

const FILE = "/plugins/demo/plugin.yaml";

function parse(text: string, dirName = "demo"): ManifestParse {
  return parseManifestText(text, FILE, dirName);
}

function manifestOf(text: string, dirName = "demo") {
  const r = parse(text, dirName);
  expect(r.manifest, JSON.stringify(r.diagnostics)).toBeDefined();
  return r.manifest!;
}

function codes(r: ManifestParse): string[] {
  return r.diagnostics.map((d) => d.code);
}

describe("name and scalar fields", () => {
  it("name defaults to the folder name (on a real folder)", async () => {
    const root = tempDir();
    const dir = await writePlugin(root, "my-folder", { manifest: { version: "1.0.0" } });
    const cand = await candidateFromFolder(dir, "user");
    expect(cand?.manifest?.name).toBe("my-folder");
    expect(cand?.key).toBe("my-folder");
  });

  it("an explicit name wins over the folder name", () => {
    expect(manifestOf("name: real-name\n", "folder").name).toBe("real-name");
  });

  it("version is stringified", () => {
    expect(manifestOf("version: 2\n").version).toBe("2");
    expect(manifestOf("version: 1.2.3\n").version).toBe("1.2.3");
    expect(manifestOf("version: '0.3.0-alpha'\n").version).toBe("0.3.0-alpha");
    expect(manifestOf("name: x\n").version).toBe("");
  });

  it("author mapping becomes its non-empty name, email, url joined with ', '", () => {
    expect(manifestOf("author: {name: Jane Doe, email: jane@example.com, url: 'https://j.example'}\n").author).toBe(
      "Jane Doe, jane@example.com, https://j.example",
    );
    expect(manifestOf("author: {name: Jane, email: '', url: 'https://j.example'}\n").author).toBe(
      "Jane, https://j.example",
    );
    expect(manifestOf("author: NousResearch\n").author).toBe("NousResearch");
    expect(manifestOf("author: null\n").author).toBe("");
  });

  it("`required: true` is parsed; anything else is false", () => {
    expect(manifestOf("required: true\n").required).toBe(true);
    expect(manifestOf("required: false\n").required).toBe(false);
    expect(manifestOf("name: x\n").required).toBe(false);
  });

  it("`main` relative inside the folder is kept", () => {
    expect(manifestOf("main: lib/entry.js\n").main).toBe("lib/entry.js");
  });
});

describe("requires_env", () => {
  it("accepts bare strings", () => {
    expect(manifestOf("requires_env: [OPENAI_API_KEY, OTHER]\n").requires_env).toEqual([
      { name: "OPENAI_API_KEY" },
      { name: "OTHER" },
    ]);
  });

  it("accepts {name, description, url, secret} items", () => {
    const m = manifestOf(
      "requires_env:\n  - name: TOKEN\n    description: the bot token\n    url: https://t.me/BotFather\n    " +
        "secret: true\n  - name: PLAIN\n",
    );
    expect(m.requires_env).toEqual([
      { name: "TOKEN", description: "the bot token", url: "https://t.me/BotFather", secret: true },
      { name: "PLAIN", description: undefined, url: undefined, secret: false },
    ]);
  });

  it("accepts the mapping form NAME → description or NAME → {…}", () => {
    const r = parse("requires_env:\n  FOO: the foo\n  BAR: {secret: true}\n");
    expect(r.manifest!.requires_env).toEqual([
      { name: "FOO", description: "the foo" },
      { name: "BAR", secret: true },
    ]);
    // It still loads: the schema mismatch is only a warning.
    expect(r.diagnostics.every((d) => d.severity === "warning")).toBe(true);
  });
});

describe("kind", () => {
  it("is lowercased and trimmed", () => {
    const r = parse("kind: '  BACKEND '\n");
    expect(r.manifest!.kind).toBe("backend");
    expect(r.manifest!.kindDeclared).toBe(true);
    expect(r.diagnostics).toEqual([]);
    expect(manifestOf("kind: Model-Provider\n").kind).toBe("model-provider");
  });

  it("defaults to standalone when absent", () => {
    const m = manifestOf("name: x\n");
    expect(m.kind).toBe("standalone");
    expect(m.kindDeclared).toBe(false);
  });

  it("an unknown kind becomes standalone with a warning", () => {
    const r = parse("name: a\nkind: Weird\n");
    expect(r.manifest!.kind).toBe("standalone");
    const kindDiags = r.diagnostics.filter((d) => d.path === "kind");
    expect(kindDiags.length).toBeGreaterThan(0);
    expect(kindDiags.every((d) => d.severity === "warning" && d.line === 2 && d.col === 7)).toBe(true);
  });

  it("the unknown-kind warning is one readable sentence saying it is treated as standalone", () => {
    // The original warns "unknown kind … treating as 'standalone'".
    const r = parse("name: a\nkind: Weird\n");
    const kindDiags = r.diagnostics.filter((d) => d.path === "kind");
    expect(kindDiags).toHaveLength(1);
    expect(kindDiags[0]!.message).toContain("Weird");
    expect(kindDiags[0]!.message).toContain("standalone");
    expect(kindDiags[0]!.message).not.toContain("[sS]");
  });

  it("absent kind is inferred from the entry: register_memory_provider / MemoryProvider → exclusive", async () => {
    const root = tempDir();
    const a = await writePlugin(root, "mem-a", {
      entrySource: "export function register(ctx) { ctx.register_memory_provider(x); }\n",
    });
    const b = await writePlugin(root, "mem-b", {
      entrySource: "class Mine extends MemoryProvider {}\nexport function register() {}\n",
    });
    expect((await candidateFromFolder(a, "user"))?.manifest?.kind).toBe("exclusive");
    expect((await candidateFromFolder(b, "user"))?.manifest?.kind).toBe("exclusive");
  });

  it(
    "absent kind: register_provider together with " +
      "ProviderProfile → model-provider; either alone → " +
      "standalone",
    async () => {
      const root = tempDir();
      const both = await writePlugin(root, "prov", {
        entrySource: "const p = new ProviderProfile();\nexport function register(ctx) { ctx.register_provider(p); }\n",
      });
      const one = await writePlugin(root, "half", {
        entrySource: "export function register(ctx) { ctx.register_provider(p); }\n",
      });
      expect((await candidateFromFolder(both, "user"))?.manifest?.kind).toBe("model-provider");
      expect((await candidateFromFolder(one, "user"))?.manifest?.kind).toBe("standalone");
    },
  );

  it("the marker scan reads __init__.py of a python plugin", async () => {
    const root = tempDir();
    const py = await writePlugin(root, "pymem", {
      entry: "__init__.py",
      entrySource: "from x import MemoryProvider\n",
    });
    const c = await candidateFromFolder(py, "user");
    expect(c?.entry).toBe("__init__.py");
    expect(c?.manifest?.kind).toBe("exclusive");
  });

  it("a declared kind is never overridden by markers, and markers past 8192 chars are not seen", async () => {
    const root = tempDir();
    const declared = await writePlugin(root, "decl", {
      manifest: { kind: "standalone" },
      entrySource: "// register_memory_provider\n",
    });
    const late = await writePlugin(root, "late", { entrySource: `${"/".repeat(8200)}\n// register_memory_provider\n` });
    expect((await candidateFromFolder(declared, "user"))?.manifest?.kind).toBe("standalone");
    expect((await candidateFromFolder(late, "user"))?.manifest?.kind).toBe("standalone");
  });
});

describe("manifest_version", () => {
  it("absent → 1", () => {
    expect(manifestOf("name: x\n").manifest_version).toBe(1);
  });

  it("non-integer → 1 with a warning, still parses", () => {
    for (const text of ["manifest_version: abc\n", "manifest_version: 1.5\n"]) {
      const r = parse(text);
      expect(r.manifest!.manifest_version).toBe(1);
      expect(r.diagnostics.filter((d) => d.path === "manifest_version").map((d) => d.severity)).toEqual(["warning"]);
    }
  });

  it("newer than supported → W_MANIFEST_VERSION_NEWER, still parses", () => {
    expect(SUPPORTED_MANIFEST_VERSION).toBe(2);
    const r = parse("name: x\nmanifest_version: 3\n");
    expect(r.manifest!.manifest_version).toBe(3);
    const w = r.diagnostics.find((d) => d.code === "W_MANIFEST_VERSION_NEWER");
    expect(w).toMatchObject({ severity: "warning", line: 2, col: 19 });
    expect(w!.message).toContain("3");
    expect(parse("manifest_version: 2\n").diagnostics).toEqual([]);
  });
});

describe("requires_plugins", () => {
  it("strings become {id, version_range: null}; mappings keep id and a stringified range; junk is skipped", () => {
    const r = parse(
      "requires_plugins:\n  - alpha\n  - {id: beta, version_range: '>=1.2'}\n  - {id: gamma, version_range: " +
        "2}\n  - 5\n  - {x: 1}\n",
    );
    expect(r.manifest!.requires_plugins).toEqual([
      { id: "alpha", version_range: null },
      { id: "beta", version_range: ">=1.2" },
      { id: "gamma", version_range: "2" },
    ]);
    expect(r.diagnostics.length).toBeGreaterThan(0);
    expect(r.diagnostics.every((d) => d.severity === "warning")).toBe(true);
  });

  it("a non-list value is ignored", () => {
    expect(manifestOf("requires_plugins: alpha\n").requires_plugins).toEqual([]);
  });
});

describe("capabilities", () => {
  it("keeps known ids once, in order, and drops unknown ids with a warning", () => {
    const r = parse("capabilities: [tools.override, bogus.cap, tools.override, llm.model_override]\n");
    expect(r.manifest!.capabilities).toEqual(["tools.override", "llm.model_override"]);
    const w = r.diagnostics.filter((d) => d.message.includes("bogus.cap"));
    expect(w.length).toBeGreaterThan(0);
    expect(w.every((d) => d.severity === "warning")).toBe(true);
  });

  it("an unknown capability is reported once, at the item's path and line", () => {
    const r = parse("name: x\ncapabilities:\n  - tools.override\n  - bogus.cap\n");
    const w = r.diagnostics.filter((d) => d.message.includes("bogus.cap"));
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ path: "capabilities[1]", line: 4, col: 5 });
  });
});

describe("config_schema", () => {
  it("a mapping is copied; non-mapping entries are skipped", () => {
    const m = manifestOf("config_schema:\n  depth: {type: int, default: 2}\n  bad: 5\n");
    expect(m.config_schema).toEqual({ depth: { type: "int", default: 2 } });
  });

  it(
    "a type outside the known list warns that its type check " + "is skipped; known aliases match case-insensitively",
    () => {
      const r = parse("config_schema:\n  a: {type: weird}\n  b: {type: STR}\n  c: {type: Dict}\n");
      expect(Object.keys(r.manifest!.config_schema)).toEqual(["a", "b", "c"]);
      const w = r.diagnostics.filter((d) => d.path?.startsWith("config_schema"));
      expect(w).toHaveLength(1);
      expect(w[0]).toMatchObject({ severity: "warning", path: "config_schema.a.type", line: 2 });
      expect(w[0]!.message).toContain("weird");
    },
  );

  it("a non-mapping value is ignored with a warning", () => {
    const r = parse("config_schema: [1, 2]\n");
    expect(r.manifest!.config_schema).toEqual({});
    expect(r.diagnostics.map((d) => [d.severity, d.path])).toEqual([["warning", "config_schema"]]);
  });
});

describe("other fields", () => {
  it("api_version: an integer is kept; a non-integer becomes null with a warning", () => {
    expect(manifestOf("api_version: 2\n").api_version).toBe(2);
    expect(manifestOf("name: x\n").api_version).toBeNull();
    const r = parse("api_version: x\n");
    expect(r.manifest!.api_version).toBeNull();
    expect(r.diagnostics.map((d) => [d.severity, d.path])).toEqual([["warning", "api_version"]]);
  });

  it("tags: a list with items stringified; anything else → [] with a warning", () => {
    expect(manifestOf("tags: [a, 1]\n").tags).toEqual(["a", "1"]);
    const r = parse("tags: x\n");
    expect(r.manifest!.tags).toEqual([]);
    expect(r.diagnostics.map((d) => [d.severity, d.path])).toEqual([["warning", "tags"]]);
  });

  it("license and homepage are strings, '' when absent or null; requires_hermes is trimmed", () => {
    const m = manifestOf("license: MIT\nhomepage: null\nrequires_hermes: ' >=1.0, <2 '\n");
    expect([m.license, m.homepage, m.requires_hermes]).toEqual(["MIT", "", ">=1.0, <2"]);
    expect(manifestOf("name: x\n").license).toBe("");
  });

  it("emits, listens, provides_tools, provides_hooks are kept as lists", () => {
    const m = manifestOf(
      "emits: [done]\nlistens: ['other:done']\nprovides_tools: [t1]\nprovides_hooks: [pre_tool_call]\n",
    );
    expect([m.emits, m.listens, m.provides_tools, m.provides_hooks]).toEqual([
      ["done"],
      ["other:done"],
      ["t1"],
      ["pre_tool_call"],
    ]);
  });

  it("python_dependencies keeps non-empty trimmed strings only (anything else warns and is skipped)", () => {
    const r = parse("python_dependencies: [' requests ', '', 5, {x: 1}]\n");
    expect(r.manifest!.python_dependencies).toEqual(["requests"]);
    expect(r.diagnostics.filter((d) => d.path?.startsWith("python_dependencies")).length).toBe(3);
  });

  it("pip_dependencies follows the same rules, apart from python_dependencies", () => {
    const r = parse("pip_dependencies: [' httpx>=0.27 ', '', 5]\npython_dependencies: [requests]\n");
    expect(r.manifest!.pip_dependencies).toEqual(["httpx>=0.27"]);
    expect(r.manifest!.python_dependencies).toEqual(["requests"]);
    expect(r.diagnostics.filter((d) => d.path?.startsWith("pip_dependencies")).length).toBe(2);
  });
});

describe("file-level rules", () => {
  it("tolerates a UTF-8 BOM", () => {
    const r = parse("\uFEFFname: bommy\nversion: '1.0'\n");
    expect(r.diagnostics).toEqual([]);
    expect(r.manifest!.name).toBe("bommy");
    expect(r.manifest!.version).toBe("1.0");
  });

  it("an empty file is {} with name = folder", () => {
    const r = parse("", "empty-dir");
    expect(r.diagnostics).toEqual([]);
    expect(r.manifest).toMatchObject({
      name: "empty-dir",
      kind: "standalone",
      version: "",
      manifest_version: 1,
      requires_plugins: [],
    });
  });

  it("a comment-only file is also {}", () => {
    expect(manifestOf("# nothing yet\n", "c").name).toBe("c");
  });

  it("a list or scalar document → E_MANIFEST_NOT_MAPPING, no manifest", () => {
    for (const text of ["- a\n- b\n", "hello\n"]) {
      const r = parse(text);
      expect(r.manifest).toBeUndefined();
      expect(r.diagnostics).toMatchObject([
        { code: "E_MANIFEST_NOT_MAPPING", severity: "error", file: FILE, line: 1, col: 1 },
      ]);
    }
  });

  it("malformed YAML → E_YAML_PARSE with line and column, no manifest", () => {
    const r = parse("name: ok\ndescription: fine\ntags: [a, b\n");
    expect(r.manifest).toBeUndefined();
    const e = r.diagnostics.find((d) => d.code === "E_YAML_PARSE");
    expect(e).toBeDefined();
    expect(e!.file).toBe(FILE);
    expect(e!.severity).toBe("error");
    expect(e!.line).toBeGreaterThanOrEqual(3);
    expect(e!.col).toBeGreaterThanOrEqual(1);
  });

  it("malformed YAML position is exact for a bad mapping line", () => {
    const r = parse("name: a\n  b: : c\n");
    expect(r.diagnostics[0]).toMatchObject({ code: "E_YAML_PARSE", line: 1, col: 7 });
  });

  it("duplicate keys are a parse error", () => {
    const r = parse("name: a\nname: b\n");
    expect(r.manifest).toBeUndefined();
    expect(codes(r)).toContain("E_YAML_PARSE");
  });

  it("records the sha256 of the bytes", () => {
    expect(parse("name: a\n").sha256).toBe(createHash("sha256").update("name: a\n").digest("hex"));
    expect(parse("name: a\n").sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(parse("name: a\n").sha256).not.toBe(parse("name: b\n").sha256);
  });
});

describe("unknown fields", () => {
  it(
    "manifest_version 2: warn with W_SCHEMA_UNKNOWN_FIELD naming the field and its position; the plugin still " +
      "parses",
    () => {
      const r = parse("name: a\nmanifest_version: 2\nfavourite_colour: blue\n");
      expect(r.manifest!.name).toBe("a");
      expect(r.diagnostics).toMatchObject([
        { code: "W_SCHEMA_UNKNOWN_FIELD", severity: "warning", path: "favourite_colour", line: 3, col: 1 },
      ]);
      expect(r.diagnostics[0]!.message).toContain("favourite_colour");
    },
  );

  it(
    "version 1 (no manifest_version): unknown fields are no problem, only kept for `plugins validate`; " +
      "profile_clone not even there",
    () => {
      const r = parse("name: a\nfavourite_colour: blue\nprofile_clone: true\n");
      expect(r.diagnostics).toEqual([]);
      expect(r.ignoredFields).toMatchObject([
        { code: "W_SCHEMA_UNKNOWN_FIELD", path: "favourite_colour", line: 2, col: 1 },
      ]);
    },
  );

  it("a near miss gets a 'did you mean' suggestion (descripton → description)", () => {
    const r = parse("name: a\nmanifest_version: 2\ndescripton: hi\n");
    const w = r.diagnostics.find((d) => d.code === "W_SCHEMA_UNKNOWN_FIELD");
    expect(w?.message).toContain("descripton");
    expect(w?.message).toContain("did you mean 'description'");
  });
});

describe("main path escape", () => {
  it.each([["/abs/entry.js"], ["../x.js"], ["lib/../../x.js"], ["C:/x.js"]])(
    "main: %s → E_MANIFEST_PATH_ESCAPE",
    (main) => {
      const r = parse(`name: a\nmain: ${JSON.stringify(main)}\n`);
      const e = r.diagnostics.find((d) => d.code === "E_MANIFEST_PATH_ESCAPE");
      expect(e).toMatchObject({ severity: "error", path: "main", line: 2, col: 7 });
      expect(e!.message).toContain(main);
      expect(r.manifest?.main).toBeUndefined();
    },
  );

  it("an escaping main makes the folder invalid in discovery", async () => {
    const root = tempDir();
    const dir = await writePlugin(root, "esc", { manifest: { main: "../outside.js" } });
    const c = await candidateFromFolder(dir, "user");
    expect(c?.status).toBe("invalid");
    expect(c?.diagnostics.map((d) => d.code)).toContain("E_MANIFEST_PATH_ESCAPE");
    expect(c?.manifestFile).toBe(join(dir, "plugin.yaml"));
  });
});
