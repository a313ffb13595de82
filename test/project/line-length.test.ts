/**
 * No line over 120 characters (issue 14). Biome formats to 120 columns but never breaks string literals,
 * template literals, regular expressions or comments, so this test keeps the rule for those too: long
 * strings are `+` concatenations of pieces, long regexes `new RegExp(String.raw`...` + ...)`, long comments
 * several lines.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/cli.js";

const MAX = 120;

/** Tracked project sources: src/, test/ (without fixture data and compile samples), bench/, scripts/, root configs. */
function sources(): string[] {
  const out = execFileSync("git", ["ls-files", "-z", "--", "src", "test", "bench", "scripts", "*.ts", "*.mjs"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return out
    .split("\0")
    .filter((f) => /\.(ts|mjs)$/.test(f))
    .filter((f) => /^(src|test|bench|scripts)\//.test(f) || !f.includes("/"))
    .filter((f) => !(f.startsWith("test/fixtures/") && !/^test\/fixtures\/[^/]+\.test\.ts$/.test(f)))
    .filter((f) => !f.startsWith("test/compile/samples/"));
}

describe("line length", () => {
  it(`no line of a tracked source file is over ${MAX} characters`, () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(100);
    const long: string[] = [];
    for (const file of files) {
      const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
      lines.forEach((line, i) => {
        // Characters, not UTF-16 units or bytes: box-drawing rules and arrows count as one.
        const n = [...line].length;
        if (n > MAX) long.push(`${file}:${i + 1} (${n} chars)`);
      });
    }
    expect(long).toEqual([]);
  });
});
