// Process-level measurement for the benchmarks: run a command as a new process and read what the
// kernel charged it (user + system CPU of the child and of the children it waited for, peak RSS)
// from wait4's rusage, plus its wall time; and run a kit command and its peer as interleaved pairs.
//
// The meter is bench/lib/wait4.py, started once: rusage comes in microseconds, and the meter's own
// CPU is never counted. Without python3 it falls back to GNU `/usr/bin/time` (CPU at 10 ms
// resolution; the output says so). Nothing here asserts on time.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const METER = fileURLToPath(new URL("./wait4.py", import.meta.url));
let scratchDir;
/** The folder of the runs' output files, made on first use and removed by closeMeter or at exit. */
function scratch() {
  if (scratchDir) return scratchDir;
  const dir = mkdtempSync(join(tmpdir(), "hermes-bench-proc-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  scratchDir = dir;
  return dir;
}

/** Median of numbers (mean of the middle two for an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** { median, min, max } of numbers. */
export function spread(xs) {
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
}

class Wait4Meter {
  constructor() {
    this.child = spawn("python3", [METER], { stdio: ["pipe", "pipe", "inherit"] });
    this.hold(false);
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
    this.resolution = "1 µs (wait4 rusage)";
  }
  /** Keep the event loop alive only while a run is pending: an idle meter must not keep the bench open. */
  hold(on) {
    for (const h of [this.child, this.child.stdin, this.child.stdout]) on ? h.ref() : h.unref();
  }
  async run(argv, { env, cwd, out, err }) {
    this.hold(true);
    this.child.stdin.write(`${JSON.stringify({ argv, env, cwd, out, err })}\n`);
    const { value, done } = await this.lines.next();
    this.hold(false);
    if (done) throw new Error("bench: the process meter (bench/lib/wait4.py) stopped");
    const r = JSON.parse(value);
    if (r.error) throw new Error(`bench: ${r.error}`);
    return { status: r.status, cpuMs: (r.user_us + r.sys_us) / 1000, wallMs: r.wall_ns / 1e6, rssKiB: r.maxrss_kib };
  }
  close() {
    this.child.stdin.end();
  }
}

class GnuTimeMeter {
  constructor() {
    this.resolution = "10 ms (GNU time; python3 missing)";
  }
  async run(argv, { env, cwd, out, err }) {
    const report = join(scratch(), "time.txt");
    const t0 = process.hrtime.bigint();
    const r = spawnSync("/usr/bin/time", ["-f", "%x %U %S %M", "-o", report, ...argv], {
      env,
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 1 << 30,
    });
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
    writeFileSync(out, r.stdout);
    writeFileSync(err, r.stderr);
    const last = readFileSync(report, "utf8").trim().split("\n").at(-1).split(" ");
    const [code, user, sys, rss] = last.map(Number);
    return { status: code, cpuMs: (user + sys) * 1000, wallMs, rssKiB: rss };
  }
  close() {}
}

let meter;
function getMeter() {
  if (meter) return meter;
  const py = spawnSync("python3", ["-c", "import os; os.posix_spawn; os.wait4"], { stdio: "ignore" });
  if (py.status === 0) meter = new Wait4Meter();
  else if (existsSync("/usr/bin/time")) meter = new GnuTimeMeter();
  else throw new Error("bench: process rows need python3 or GNU /usr/bin/time to read a child's CPU time");
  return meter;
}

/** How precise the CPU numbers of process rows are on this machine. */
export function meterResolution() {
  return getMeter().resolution;
}

/** Stop the meter process (otherwise it ends when this process exits). */
export function closeMeter() {
  meter?.close();
  meter = undefined;
  if (scratchDir) rmSync(scratchDir, { recursive: true, force: true });
  scratchDir = undefined;
}

/**
 * @typedef {{ status: number, cpuMs: number, wallMs: number, rssKiB: number, stdout: string, stderr: string }} Run
 * @typedef {{ argv: string[], env?: NodeJS.ProcessEnv, cwd?: string, status?: number, check?: (r: Run) => void }} Cmd
 * @typedef {{ median: number, min: number, max: number }} Spread
 * @typedef {{ n: number, cpu: Spread, wall: Spread, rssKiB: { median: number, max: number } }} Side
 * @typedef {{ kit: Side, peer: Side | null, cpuRatio?: number, wallRatio?: number, meter?: string }} PairsResult
 */

let runs = 0;
/**
 * Run `cmd` once as a new process (stdin /dev/null, stdout and stderr to files) and measure it:
 * { status, cpuMs, wallMs, rssKiB, stdout, stderr }. `cmd` is { argv, env?, cwd? }.
 * @param {Cmd} cmd
 * @returns {Promise<Run>}
 */
export async function measureProcess(cmd) {
  const n = ++runs;
  const out = join(scratch(), `out-${n}`);
  const err = join(scratch(), `err-${n}`);
  const env = cmd.env ?? process.env;
  const r = await getMeter().run(cmd.argv, { env, cwd: cmd.cwd ?? process.cwd(), out, err });
  const read = (f) => (existsSync(f) ? readFileSync(f, "utf8") : "");
  const result = { ...r, stdout: read(out), stderr: read(err) };
  rmSync(out, { force: true });
  rmSync(err, { force: true });
  return result;
}

/** Run a command and insist on its exit status (a misbehaving command makes the numbers meaningless). */
async function measureChecked(cmd, label) {
  const r = await measureProcess(cmd);
  const want = cmd.status ?? 0;
  if (r.status !== want)
    throw new Error(
      `bench: ${label} (${cmd.argv.join(" ").slice(0, 200)}) exited ${r.status}, expected ${want}\n` +
        `stderr: ${r.stderr.slice(-2000) || "(empty)"}\nstdout: ${r.stdout.slice(-1000) || "(empty)"}`,
    );
  cmd.check?.(r);
  return r;
}

/** Summary of one side's samples: CPU and wall { median, min, max }, peak RSS { median, max }. */
function summarize(samples) {
  const rss = samples.map((s) => s.rssKiB);
  return {
    n: samples.length,
    cpu: spread(samples.map((s) => s.cpuMs)),
    wall: spread(samples.map((s) => s.wallMs)),
    rssKiB: { median: median(rss), max: Math.max(...rss) },
  };
}

/**
 * Interleaved pairs: `warmup` untimed runs of each side, then `pairs` pairs with the order
 * alternating (kit first, then peer first, …), so drift in machine load hits both sides alike.
 * Ratios are the median of the per-pair ratios (kit ÷ peer), for CPU and for wall time.
 * `kit` and `peer` are { argv, env?, cwd?, status? (expected exit, default 0), check?(result) }.
 * `before(side)` runs untimed before every run (e.g. a fresh copy of a home).
 * @param {{ kit: Cmd, peer?: Cmd, pairs: number, warmup?: number, before?: (side: string) => unknown }} opts
 * @returns {Promise<PairsResult & { samples: { kit: Run[], peer: Run[] } }>}
 */
export async function processPairs({ kit, peer, pairs, warmup = 1, before }) {
  const run = async (side, cmd) => {
    if (before) await before(side);
    return measureChecked(cmd, side);
  };
  for (let i = 0; i < warmup; i++) {
    await run("kit", kit);
    if (peer) await run("peer", peer);
  }
  const k = [];
  const p = [];
  for (let i = 0; i < pairs; i++) {
    if (!peer) k.push(await run("kit", kit));
    else if (i % 2 === 0) {
      k.push(await run("kit", kit));
      p.push(await run("peer", peer));
    } else {
      p.push(await run("peer", peer));
      k.push(await run("kit", kit));
    }
  }
  const result = {
    kit: summarize(k),
    peer: peer ? summarize(p) : null,
    samples: { kit: k, peer: p },
    meter: getMeter().resolution,
  };
  if (peer) {
    result.cpuRatio = median(k.map((s, i) => s.cpuMs / p[i].cpuMs));
    result.wallRatio = median(k.map((s, i) => s.wallMs / p[i].wallMs));
  }
  return result;
}
