#!/usr/bin/env node
// CLI benchmark (issue 19, see bench/README.md): every row spawns the built CLI as a user would
// (`node dist/cli/main.js …`) and its peer as new processes, in interleaved pairs, and reports the
// CPU (user + system from wait4) and wall time of each side, median and spread. Thresholds are the
// issue's table. Exits non-zero only when a command misbehaves (a wrong exit status or output, or a
// no-op compile that writes), since then the numbers would mean nothing; never on time.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { closeMeter, measureProcess, meterResolution, processPairs } from "./lib/process-pairs.mjs";
import { below, formatTable, processRow, ratio, rowCollector } from "./lib/rows.mjs";
import { makeTemplateHome, pkey } from "./lib/synthetic-home.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(root, "dist", "cli", "main.js");
const FLOOR = join(root, "bench", "lib", "floor.mjs");
const PAIRS = { quick: 13, list: 9, noop: 7, cold: 5, chain: 11 };

const scratch = mkdtempSync(join(tmpdir(), "hermes-bench-cli-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));
const bundled = join(scratch, "bundled"); // no bundled plugins: the homes hold exactly N plugins
const userHome = join(scratch, "user"); // HOME of every spawned process: never the real ~/.hermes
mkdirSync(bundled);
mkdirSync(userHome);

/** The environment of a spawned command: no HERMES_* from the shell, no colour, the bench's HOME. */
function env(home) {
  const e = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("HERMES_")) e[k] = v;
  return { ...e, NO_COLOR: "1", HOME: userHome, HERMES_BUNDLED_PLUGINS: bundled, ...(home && { HERMES_HOME: home }) };
}
const hermes = (home, args, extra = {}) => ({ argv: [process.execPath, CLI, ...args], env: env(home), ...extra });
const nodeE0 = { argv: [process.execPath, "-e", "0"], env: env() };

const { rows, add } = rowCollector();
const started = Date.now();
const step = (what) => console.log(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${what}…`);

/** Compile a home once through the CLI (untimed setup); fail loudly when it refuses. */
async function compileHome(home) {
  const r = await measureProcess(hermes(home, ["compile"]));
  if (r.status !== 0) throw new Error(`bench: setup compile of ${home} exited ${r.status}\n${r.stderr}`);
}

const expect = (what, ok) => (r) => {
  if (!ok(r)) throw new Error(`bench: ${what}; stdout starts: ${r.stdout.slice(0, 300)}`);
};

// ---- homes (untimed) ----
step("setup: synthetic homes of 100 and 1000 plugins, compiled");
const home100 = await makeTemplateHome(scratch, 100);
await compileHome(home100);
const home1000 = await makeTemplateHome(scratch, 1000);
const sourceEntries = readdirSync(home1000); // plugins/ and config.yaml: what a cold compile starts from
const configBytes = readFileSync(join(home1000, "config.yaml"));
await compileHome(home1000);
const lockOf = (home) => join(home, "hermes.lock.json");

// ---- start-up commands vs `node -e 0` ----
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
for (const [name, args, check] of [
  ["hermes --version", ["--version"], expect("--version printed no version", (r) => r.stdout.trim() === version)],
  ["hermes --help", ["--help"], expect("--help printed no usage", (r) => r.stdout.startsWith("Usage: hermes"))],
]) {
  step(name);
  const result = await processPairs({ kit: hermes(undefined, args, { check }), peer: nodeE0, pairs: PAIRS.quick });
  add(processRow({ name, peerName: "node -e 0", result, target: ratio(1.5) }));
}

// ---- plugins list on the 100-plugin home ----
const listed = (r) => r.stdout.split("\n").filter((l) => /\bp0\d{3}\b/.test(l)).length >= 100;
const listedJson = (r) => JSON.parse(r.stdout).length === 100;
for (const [name, args, check] of [
  ["hermes plugins list, 100 plugins", ["plugins", "list"], expect("list lost plugins", listed)],
  ["hermes plugins list --json, 100 plugins", ["plugins", "list", "--json"], expect("--json lost plugins", listedJson)],
]) {
  step(name);
  const result = await processPairs({ kit: hermes(home100, args, { check }), peer: nodeE0, pairs: PAIRS.list });
  add(processRow({ name, peerName: "node -e 0", result, target: ratio(2.5) }));
}

// ---- no-op compile and compile --check on the compiled 1000-plugin home ----
const lockBefore = readFileSync(lockOf(home1000));
const lockMtime = statSync(lockOf(home1000)).mtimeMs;
for (const [name, args] of [
  ["no-op hermes compile, 1000 plugins", ["compile"]],
  ["hermes compile --check, 1000 plugins", ["compile", "--check"]],
]) {
  step(name);
  const result = await processPairs({ kit: hermes(home1000, args), peer: nodeE0, pairs: PAIRS.noop });
  add(processRow({ name, peerName: "node -e 0", result, target: ratio(2) }));
}
// Floor (no goal): a Node process that only stats what the no-op check stats (the quick record's paths).
{
  const record = JSON.parse(readFileSync(join(home1000, "cache", "quick-check.json"), "utf8"));
  const paths = [];
  for (const entry of Object.values(record.entries))
    for (const [dir, rec] of Object.entries(entry.tree)) {
      paths.push(dir);
      for (let i = 1; i < rec.length; i += 5) paths.push(join(dir, rec[i]));
    }
  const list = join(scratch, "noop-paths.txt");
  writeFileSync(list, paths.map((p) => `${p}\0`).join(""));
  step("floor: node stat'ing what a no-op compile checks");
  const floor = { argv: [process.execPath, FLOOR, "stat", list], env: env() };
  const result = await processPairs({ kit: floor, peer: nodeE0, pairs: PAIRS.noop });
  add(
    processRow({
      name: `floor: node doing only the ${paths.length} lstats of a no-op check`,
      peerName: "node -e 0",
      result,
    }),
  );
}
if (!readFileSync(lockOf(home1000)).equals(lockBefore) || statSync(lockOf(home1000)).mtimeMs !== lockMtime)
  throw new Error("bench: a no-op `hermes compile` rewrote hermes.lock.json");

// ---- cold compile of 1000 plugins: the compile's outputs removed before every run ----
// A compile writes only next to plugins/ (hermes.lock.json, cache/, generations/), so removing what
// it wrote gives the same home as a fresh copy, without copying 5000 files per run on a slow disk.
step("cold hermes compile, 1000 plugins");
{
  const kit = hermes(home1000, ["compile"], {
    check: expect("cold compile wrote no lock", () => existsSync(lockOf(home1000))),
  });
  const result = await processPairs({
    kit,
    pairs: PAIRS.cold,
    warmup: 0, // the setup compile already read every file once
    before: () => {
      for (const e of readdirSync(home1000))
        if (!sourceEntries.includes(e)) rmSync(join(home1000, e), { recursive: true, force: true });
      if (!readFileSync(join(home1000, "config.yaml")).equals(configBytes))
        throw new Error("bench: compile rewrote config.yaml; a cold run would not start from the same home");
    },
  });
  add(processRow({ name: "cold hermes compile, 1000 plugins", result, target: below(1000, "wall"), rss: true }));
}

// ---- start 100: `hermes plugins chain` vs a node script importing only the 100 plugin modules ----
step("hermes plugins chain, 100 plugins");
{
  const files = Array.from({ length: 100 }, (_, i) => join(home100, "plugins", pkey(i + 1), "index.js"));
  const peerScript = join(scratch, "import-100.mjs");
  writeFileSync(peerScript, `await Promise.all(${JSON.stringify(files)}.map((f) => import(f)));\n`);
  const chained = expect("chain did not load the 100 plugins", (r) => r.stdout.includes(`${pkey(100)}`));
  const result = await processPairs({
    kit: hermes(home100, ["plugins", "chain"], { check: chained }),
    peer: { argv: [process.execPath, peerScript], env: env() },
    pairs: PAIRS.chain,
  });
  add(
    processRow({
      name: "hermes plugins chain, 100 plugins (start 100)",
      peerName: "node importing the 100 plugin modules",
      result,
      target: ratio(1.1),
      rss: true,
    }),
  );
}
step("done; removing the temporary homes");
const resolution = meterResolution();
closeMeter();

console.log("\nCLI benchmark (medians of interleaved pairs; ratio = median of per-pair kit ÷ peer CPU)\n");
console.log(formatTable(rows));
console.log(
  `\nCPU = user + system of the child and its children (resolution ${resolution}); node ${process.version}, ` +
    `${cpus().length} × ${cpus()[0]?.model.trim()}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
);
