#!/usr/bin/env node
// Runs every bench/*.bench.mjs in sequence, each in its own Node process, after making sure dist/
// is built from the current src/. Benchmarks print ratios against a peer measured in the same run;
// nothing here asserts on time. `npm run bench -- compile` runs only the files whose name contains
// "compile".
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const entry = join(root, "dist", "cli", "main.js");

/** Newest mtime of any file under `dir` (0 when it does not exist). */
function newestMtime(dir) {
  let newest = 0;
  let newestFile = "";
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const m = statSync(p).mtimeMs;
        if (m > newest) [newest, newestFile] = [m, p];
      }
    }
  };
  if (existsSync(dir)) walk(dir);
  return { newest, newestFile };
}

function ensureBuilt() {
  const { newest, newestFile } = newestMtime(join(root, "src"));
  const built = existsSync(entry) ? statSync(entry).mtimeMs : 0;
  if (built && built >= newest) return;
  const why = built ? `${relative(root, newestFile)} is newer than dist/cli/main.js` : "dist/cli/main.js is missing";
  console.log(`bench: building dist/ (${why})`);
  const run = (cmd, args) => {
    const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
    if (r.error) throw r.error;
    if (r.status !== 0) {
      console.error(`bench: \`${cmd} ${args.join(" ")}\` failed (exit ${r.status}); not benchmarking a broken build`);
      process.exit(1);
    }
  };
  run("npx", ["tsc", "-p", "tsconfig.json"]);
  run(process.execPath, [join("scripts", "postbuild.mjs")]);
}

ensureBuilt();

const filters = process.argv.slice(2);
const files = readdirSync(benchDir)
  .filter((f) => f.endsWith(".bench.mjs"))
  .filter((f) => !filters.length || filters.some((s) => f.includes(s)))
  .sort();
if (!files.length) {
  console.error(`bench: no bench/*.bench.mjs file${filters.length ? ` matches ${filters.join(", ")}` : ""}`);
  process.exit(1);
}

let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const r = spawnSync(process.execPath, [join(benchDir, f)], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    failed++;
    console.error(`bench: ${f} exited with ${r.status ?? r.signal}`);
  }
}
process.exit(failed ? 1 : 0);
