#!/usr/bin/env node
// Runs every bench/*.bench.mjs in sequence, each in its own Node process, after making sure dist/
// is built from the current src/. Benchmarks print ratios against a peer measured in the same run;
// nothing here asserts on time. `npm run bench -- compile` runs only the files whose name contains
// "compile". Rows the files print as `BENCH_ROW <json>` (bench/lib/rows.mjs) are collected into one
// summary with PASS/MISS; `--report FILE.md` also writes it as markdown plus FILE.svg (the chart).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { cpus, loadavg, release, type } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { writeReport } from "./lib/report.mjs";
import { formatTable, parseRow } from "./lib/rows.mjs";

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

/** `[filters…] [--report FILE.md]` → { filters, report }. */
function parseArgs(argv) {
  const filters = [];
  let report;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--report") {
      report = argv[++i];
      if (!report) usage("--report needs a file name, e.g. --report bench-report.md");
    } else if (a.startsWith("--report=")) report = a.slice("--report=".length);
    else if (a.startsWith("-")) usage(`unknown option ${a}`);
    else filters.push(a);
  }
  return { filters, report: report && resolve(report) };
}

function usage(msg) {
  console.error(`bench: ${msg}\nusage: npm run bench -- [name-filter…] [--report FILE.md]`);
  process.exit(2);
}

/** Run one bench file; its BENCH_ROW lines go to `rows`, every other line to our stdout. */
function runFile(f, rows) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(benchDir, f)], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    createInterface({ input: child.stdout }).on("line", (line) => {
      const row = parseRow(line);
      if (row) rows.push({ ...row, file: f });
      else console.log(line);
    });
    child.on("close", (code, signal) => done(code === 0 ? undefined : `${f} exited with ${code ?? signal}`));
  });
}

const { filters, report } = parseArgs(process.argv.slice(2));
ensureBuilt();

const files = readdirSync(benchDir)
  .filter((f) => f.endsWith(".bench.mjs"))
  .filter((f) => !filters.length || filters.some((s) => f.includes(s)))
  .sort();
if (!files.length) {
  console.error(`bench: no bench/*.bench.mjs file${filters.length ? ` matches ${filters.join(", ")}` : ""}`);
  process.exit(1);
}

const loadStart = loadavg()
  .map((x) => x.toFixed(2))
  .join(" ");
const rows = [];
const failures = [];
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const failure = await runFile(f, rows);
  if (failure) {
    failures.push(failure);
    console.error(`bench: ${failure}`);
  }
}

const silent = files.filter((f) => !rows.some((r) => r.file === f));
console.log("\n=== summary ===");
if (rows.length) console.log(formatTable(rows));
const count = (r) => rows.filter((x) => x.result === r).length;
console.log(
  `\n${count("PASS")} PASS, ${count("MISS")} MISS, ${rows.length - count("PASS") - count("MISS")} without a goal`,
);
if (silent.length) console.log(`no BENCH_ROW rows from: ${silent.join(", ")} (see their own tables above)`);
if (report) {
  const meta = {
    date: new Date().toISOString().slice(0, 16).replace("T", " "),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? "?",
    os: `${type()} ${release()}`,
    loadStart,
    loadEnd: loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
    files,
  };
  const svg = writeReport(report, rows, { meta, failures });
  console.log(`report: ${relative(process.cwd(), report)} and ${relative(process.cwd(), svg)}`);
}
// MISS is a measurement, not a failure: the exit code says only whether a bench file misbehaved.
process.exit(failures.length ? 1 : 0);
