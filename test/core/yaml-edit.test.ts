import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { applyYamlEdits } from "../../src/core/yaml-edit.js";

const commented = `# Hermes config — hand written
model:
  default: gpt-4o   # the usual

plugins:
  # what loads
  enabled:
    - alpha   # first one
    - beta
  disabled: [gamma]
  entries:
    alpha:
      settings: {depth: 2}

# trailing comment
other: 1
`;

describe("applyYamlEdits", () => {
  it("appends to a block list keeping every other byte", () => {
    const out = applyYamlEdits(commented, [{ op: "append", path: ["plugins", "enabled"], value: "delta" }]);
    expect(out).toBe(commented.replace("    - beta\n", "    - beta\n    - delta\n"));
  });

  it("removes from a block list keeping comments of other items", () => {
    const out = applyYamlEdits(commented, [{ op: "remove", path: ["plugins", "enabled"], match: (v) => v === "beta" }]);
    expect(out).toBe(commented.replace("    - beta\n", ""));
  });

  it("edits a flow list in place", () => {
    const out = applyYamlEdits(commented, [{ op: "append", path: ["plugins", "disabled"], value: "beta" }]);
    expect(out).toBe(commented.replace("[gamma]", "[gamma, beta]"));
  });

  it("creates missing keys at the right indentation", () => {
    const out = applyYamlEdits(commented, [
      { op: "set", path: ["plugins", "entries", "beta", "granted_capabilities"], value: ["tools.override"] },
    ]);
    expect(parse(out).plugins.entries.beta.granted_capabilities).toEqual(["tools.override"]);
    expect(out.startsWith(commented.slice(0, commented.indexOf("# trailing")).trimEnd().slice(0, 100))).toBe(true);
    expect(out).toContain("# trailing comment\nother: 1\n");
    expect(out).toContain("    - alpha   # first one\n");
  });

  it("removing the last item leaves an empty list", () => {
    const text = "plugins:\n  enabled:\n    - a\n  x: 1\n";
    const out = applyYamlEdits(text, [{ op: "remove", path: ["plugins", "enabled"], match: () => true }]);
    expect(parse(out)).toEqual({ plugins: { enabled: [], x: 1 } });
    expect(out).toContain("  x: 1\n");
  });

  it("adds a section to an empty or comment-only file", () => {
    expect(parse(applyYamlEdits("", [{ op: "append", path: ["plugins", "enabled"], value: "a" }]))).toEqual({
      plugins: { enabled: ["a"] },
    });
    const out = applyYamlEdits("# only a comment\n", [{ op: "set", path: ["plugins", "enabled"], value: ["a"] }]);
    expect(out.startsWith("# only a comment\n")).toBe(true);
    expect(parse(out)).toEqual({ plugins: { enabled: ["a"] } });
  });

  it("replaces a scalar with a mapping and deletes keys", () => {
    const out = applyYamlEdits("plugins: nope\nkeep: true\n", [
      { op: "set", path: ["plugins", "enabled"], value: ["a"] },
    ]);
    expect(parse(out)).toEqual({ plugins: { enabled: ["a"] }, keep: true });
    const del = applyYamlEdits(commented, [{ op: "delete", path: ["plugins", "entries", "alpha"] }]);
    expect(parse(del).plugins.entries).toEqual({});
    expect(del).toContain("# trailing comment");
  });

  it("handles a file without trailing newline", () => {
    const out = applyYamlEdits("plugins:\n  enabled:\n    - a", [
      { op: "append", path: ["plugins", "enabled"], value: "b" },
    ]);
    expect(parse(out)).toEqual({ plugins: { enabled: ["a", "b"] } });
  });

  it("sets a scalar in place", () => {
    const out = applyYamlEdits(commented, [{ op: "set", path: ["model", "default"], value: "llama" }]);
    expect(out).toBe(commented.replace("gpt-4o", "llama"));
  });
});
