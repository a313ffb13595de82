#!/usr/bin/env node
// Compile benchmark (see bench/README.md). Builds synthetic homes with N user plugins, then
// measures, in this one process:
//   - cold compile for N = 1, 100, 1000 (fresh copy of the home each repetition, no integrity cache);
//   - a no-op recompile of the 1000-plugin home, as a ratio to its cold compile;
//   - `verifyLock` over the 1000-plugin lock, as a ratio to the `sha256sum` binary hashing the
//     same files;
//   - the spawned CLI, `hermes lock verify` and `--full`, on the 1000-plugin home and on 50 plugins
//     with a 4 MiB file each, against spawned `sha256sum` over the same files: process rows
//     (bench/lib/process-pairs.mjs: interleaved pairs, CPU from wait4), judged on the (19)
//     thresholds.
// Every row is emitted as a BENCH_ROW (bench/lib/rows.mjs); the in-process rows carry no goal (the
// issue's compile rows are cli.bench's spawned `hermes compile`). Reports medians and ratios; never
// fails on time. Exits non-zero only when a compile or a verify misbehaves (refuses, a "no-op"
// writes something, drift on an untouched home), since then the numbers would mean nothing.
import { spawn } from "node:child_process";
import { promises as fsp } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "../dist/compile/compile.js";
import { verifyLock } from "../dist/compile/verify.js";
import { homePaths } from "../dist/core/paths.js";
import { closeMeter, processPairs, spread } from "./lib/process-pairs.mjs";
import { formatTable, processRow, ratio, rowCollector, valueRow } from "./lib/rows.mjs";
import { freshCopy, makeTemplateHome } from "./lib/synthetic-home.mjs";

const SIZES = [1, 100, 1000];
const REPS = { cold: { 1: 7, 100: 7, 1000: 5 }, noop: 7, verify: 7 };
const CLI_PAIRS = 9;
const FLOOR = fileURLToPath(new URL("./lib/floor.mjs", import.meta.url));
const TARGET_CLI_VERIFY = 2.5; // hermes lock verify (and --full), 1000 small plugins: x sha256sum CPU
const TARGET_CLI_FULL_BIG = 1.25; // hermes lock verify --full, 50 plugins of 4 MiB: x sha256sum CPU
const BIG = { n: 50, bytes: 4 * 1024 * 1024 };
const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

// ---------------------------------------------------------------------------------------------
// Measurement

const ms = (t0, t1) => Number(t1 - t0) / 1e6;

/** Wall time and CPU time, each { median, min, max }, of `timed` samples. */
function stats(samples) {
  const cpu = samples.map((s) => s.cpu).filter((c) => c !== undefined);
  return { wall: spread(samples.map((s) => s.ms)), cpu: cpu.length ? spread(cpu) : undefined };
}

const { rows, add } = rowCollector();

/** An in-process row without a goal: wall ms, with the CPU median in the note. */
const infoRow = (name, st, { peerName, peer, note } = {}) =>
  valueRow({
    name,
    peerName,
    unit: "ms",
    metric: "wall",
    kit: st.wall,
    peer: peer?.wall,
    note: [st.cpu && `CPU ${st.cpu.median.toFixed(1)} ms`, note].filter(Boolean).join("; ") || undefined,
  });

/** Wall time (hrtime) and process CPU time (user + system, all threads) of one call. */
async function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const value = await fn();
  const wall = ms(t0, process.hrtime.bigint());
  const c = process.cpuUsage(c0);
  return { value, ms: wall, cpu: (c.user + c.system) / 1000 };
}

class BenchError extends Error {}
/** A compile misbehaved: stop (the temp folder is still removed) and exit non-zero. */
function fail(msg) {
  throw new BenchError(msg);
}

/** Every regular file under the plugin folders the lock loads: what verifyLock hashes. */
async function lockedFiles(home) {
  const lock = JSON.parse(await fsp.readFile(join(home, "hermes.lock.json"), "utf8"));
  const out = [];
  const walk = async (dir) => {
    for (const e of (await fsp.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  for (const p of lock.plugins) if (p.action !== "skip") await walk(await fsp.realpath(p.path));
  return out;
}

/** The peer: the real sha256sum over the given files, in argument batches (ARG_MAX), one after another. */
async function sha256sumAll(files, batch = 2000) {
  let lines = 0;
  for (let i = 0; i < files.length; i += batch) {
    lines += await new Promise((resolve, reject) => {
      const child = spawn("sha256sum", ["--", ...files.slice(i, i + batch)], { stdio: ["ignore", "pipe", "inherit"] });
      let n = 0;
      child.stdout.on("data", (b) => {
        for (const c of b) if (c === 10) n++;
      });
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve(n) : reject(new Error(`sha256sum exited ${code}`))));
    });
  }
  return lines;
}

/**
 * `hermes lock verify <flags>` spawned as a user runs it against `sha256sum` over the same files
 * (through `xargs`, which the meter charges with the sha256sum it waits for), in interleaved
 * pairs; one process row per case, judged on the median per-pair CPU ratio.
 */
async function cliVerifyRows(home, env, files, cases) {
  const list = join(home, "..", `${home.split("/").at(-1)}-files.txt`);
  await fsp.writeFile(list, files.map((f) => `${f}\0`).join(""));
  const hashedAll = (r) => {
    const lines = r.stdout.split("\n").filter(Boolean).length;
    if (lines !== files.length) fail(`sha256sum printed ${lines} lines for ${files.length} files`);
  };
  const peer = { argv: ["xargs", "-0", "-a", list, "sha256sum", "--"], env, check: hashedAll };
  for (const c of cases) {
    const kit = { argv: [process.execPath, CLI, "--home", home, "lock", "verify", ...c.flags], env };
    const result = await processPairs({ kit, peer, pairs: CLI_PAIRS });
    add(processRow({ name: c.name, peerName: `sha256sum, ${files.length} files`, result, target: ratio(c.target) }));
  }
  // Floors (no goal): a Node process that only stats, or only reads and hashes, the same files.
  for (const [mode, what] of [
    ["stat", "lstat of each file"],
    ["hash", "read + sha256 of each file"],
  ]) {
    const floor = { argv: [process.execPath, FLOOR, mode, list], env };
    const result = await processPairs({ kit: floor, peer, pairs: CLI_PAIRS });
    add(
      processRow({
        name: `floor: node doing only the ${what}, ${files.length} files`,
        peerName: `sha256sum, ${files.length} files`,
        result,
      }),
    );
  }
}

// ---------------------------------------------------------------------------------------------

const root = await fsp.mkdtemp(join(tmpdir(), "hermes-bench-compile-"));
const bundled = join(root, "bundled-empty");
await fsp.mkdir(bundled);
const envFor = (home) => {
  const env = { ...process.env, HERMES_HOME: home, HERMES_BUNDLED_PLUGINS: bundled, HERMES_LOG_LEVEL: "silent" };
  delete env.HERMES_ENABLE_PROJECT_PLUGINS;
  return env;
};
const run = (home) => compile({ home, env: envFor(home), cwd: root });

let rssAfter1000;
let maxRssAfter1000;
try {
  const templates = {};
  const gen = await timed(async () => {
    for (const n of SIZES) templates[n] = await makeTemplateHome(root, n);
  });
  console.log(`homes generated in ${gen.ms.toFixed(0)} ms under ${root}`);

  // Warm-up: module loading and the lazy schema compiles (manifest, config, lock) happen once per
  // process; keep them out. The no-op and the verify are what first read a lock.
  const warmHome = await freshCopy(root, templates[1]);
  const warm = await timed(() => run(warmHome));
  const warmNoop = await timed(() => run(warmHome));
  await verifyLock(homePaths(warmHome));
  console.log(
    `warm-up (N=1, not counted): first compile ${warm.ms.toFixed(1)} ms, first no-op ${warmNoop.ms.toFixed(1)} ms`,
  );
  await fsp.rm(warmHome, { recursive: true, force: true });

  const cold = {};
  let home1000;
  for (const n of SIZES) {
    const samples = [];
    for (let r = 0; r < REPS.cold[n]; r++) {
      const home = await freshCopy(root, templates[n]);
      const t = await timed(() => run(home));
      const { plan, applied } = t.value;
      if (!applied || plan.lock.plugins.length !== n || plan.lock.load_order.length !== n) {
        fail(
          `cold compile of N=${n} did not load ${n} plugins (applied=${applied}, ` +
            `loaded=${plan.lock.load_order.length})`,
        );
      }
      samples.push(t);
      if (n === 1000 && r === REPS.cold[n] - 1) home1000 = home;
      else await fsp.rm(home, { recursive: true, force: true });
    }
    const st = stats(samples);
    cold[n] = st.wall.median;
    const scale = n === 1 ? undefined : `${(cold[n] / cold[1]).toFixed(1)}× N=1`;
    add(infoRow(`compile() in-process, cold, N=${n}`, st, { note: scale }));
  }
  rssAfter1000 = process.memoryUsage().rss;
  maxRssAfter1000 = process.resourceUsage().maxRSS * 1024;

  // Sanity: the dependency edges made the order differ from plain key order.
  const lock = JSON.parse(await fsp.readFile(join(home1000, "hermes.lock.json"), "utf8"));
  const sorted = [...lock.load_order].sort();
  const moved = lock.load_order.filter((k, i) => sorted[i] !== k).length;
  console.log(`N=1000 load order: ${moved} of ${lock.load_order.length} plugins away from key order`);

  // No-op recompile: the home compiled above, nothing changed.
  const noop = [];
  for (let r = 0; r < REPS.noop; r++) {
    const t = await timed(() => run(home1000));
    if (t.value.applied)
      fail(`no-op recompile #${r + 1} applied changes: ${JSON.stringify(t.value.plan.pluginChanges.slice(0, 3))}`);
    noop.push(t);
  }
  const noopSt = stats(noop);
  add(
    infoRow("compile() in-process, no-op, N=1000", noopSt, {
      note: `${((noopSt.wall.median / cold[1000]) * 100).toFixed(1)}% of cold`,
    }),
  );

  // Lock verify vs sha256sum over the same files, interleaved so both see the same cache state.
  const paths = homePaths(home1000);
  const files = await lockedFiles(home1000);
  const verify = [];
  const peer = [];
  let peerSkipped;
  for (let r = 0; r < REPS.verify; r++) {
    const v = await timed(() => verifyLock(paths));
    if (!v.value.ok) fail(`verifyLock reported drift on an untouched home: ${v.value.diagnostics[0]?.message}`);
    verify.push(v);
    if (peerSkipped) continue;
    let s;
    try {
      s = await timed(() => sha256sumAll(files));
    } catch (e) {
      peerSkipped = e.message; // no sha256sum on this system: report verify without its peer
      continue;
    }
    if (s.value !== files.length) fail(`sha256sum printed ${s.value} lines for ${files.length} files`);
    peer.push({ ms: s.ms }); // its CPU time is the child's; not measured here
  }
  add(
    infoRow("verifyLock() in-process, N=1000", stats(verify), {
      peerName: peer.length ? `sha256sum, ${files.length} files (wall)` : undefined,
      peer: peer.length ? stats(peer) : undefined,
      note: peerSkipped && `sha256sum skipped: ${peerSkipped}`,
    }),
  );

  // The spawned CLI against spawned sha256sum: process start and imports count, as for a user.
  await cliVerifyRows(home1000, envFor(home1000), files, [
    { name: "hermes lock verify, 1000 plugins", flags: [], target: TARGET_CLI_VERIFY },
    { name: "hermes lock verify --full, 1000 plugins", flags: ["--full"], target: TARGET_CLI_VERIFY },
  ]);
  const bigHome = await freshCopy(root, await makeTemplateHome(root, BIG.n, { blobBytes: BIG.bytes }));
  if (!(await run(bigHome)).applied) fail(`the ${BIG.n}-plugin home with large files did not compile`);
  await cliVerifyRows(bigHome, envFor(bigHome), await lockedFiles(bigHome), [
    { name: `hermes lock verify --full, ${BIG.n} plugins × 4 MiB`, flags: ["--full"], target: TARGET_CLI_FULL_BIG },
  ]);
} catch (e) {
  if (!(e instanceof BenchError)) throw e;
  console.error(`compile.bench: ${e.message}`);
  process.exitCode = 1;
} finally {
  closeMeter();
  await fsp.rm(root, { recursive: true, force: true });
}
if (process.exitCode) process.exit();

// ---------------------------------------------------------------------------------------------
// Report

console.log("\ncompile benchmark (medians; process rows: ratio = median of per-pair kit ÷ peer CPU)\n");
console.log(formatTable(rows));
console.log();
const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
console.log(
  `RSS after the N=1000 cold compiles: ${mb(rssAfter1000)} (peak RSS of the process so far: ${mb(maxRssAfter1000)})`,
);
console.log(`node ${process.version}, ${process.platform}/${process.arch}, temp homes under ${tmpdir()}`);
