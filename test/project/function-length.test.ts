/**
 * No function in src/ is longer than 80 lines (issue 14), counted from its first line to its closing brace as
 * Biome formats it. Long steps are extracted into named functions rather than squeezed onto fewer lines.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/cli.js";

const MAX = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

function isFunctionLike(n: ts.Node): n is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(n) ||
    ts.isMethodDeclaration(n) ||
    ts.isArrowFunction(n) ||
    ts.isFunctionExpression(n) ||
    ts.isConstructorDeclaration(n) ||
    ts.isGetAccessorDeclaration(n) ||
    ts.isSetAccessorDeclaration(n)
  );
}

/** A function's own name, or the variable or property it is assigned to. */
function nameOf(n: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(n)) return "constructor";
  if (n.name) return n.name.getText(sf);
  const p = n.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p)) return p.name.getText(sf);
  return "<anonymous>";
}

describe("function length", () => {
  it(`no function in src/ spans more than ${MAX} lines`, () => {
    const files = sourceFiles(join(ROOT, "src"));
    expect(files.length).toBeGreaterThan(50);
    const long: string[] = [];
    for (const file of files) {
      const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (isFunctionLike(n) && n.body) {
          const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
          const lines = sf.getLineAndCharacterOfPosition(n.end).line - first + 1;
          if (lines > MAX) long.push(`${relative(ROOT, file)}:${first + 1} ${nameOf(n, sf)} (${lines} lines)`);
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
    expect(long).toEqual([]);
  });
});
