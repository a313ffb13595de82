// Runtime benchmark (issues 4, 19): prints ratios against peers measured in the same run.
// - execution middleware chain vs koa-compose, per layer, for 1, 10 and 100 async layers
// - hook dispatch with 10 sync and 10 async callbacks vs hookable's callHook
// - the no-middleware fast path vs a direct call
// - runtime startup for 1, 100 and 500 plugins vs a plain `node` importing the same modules
// In-process rows interleave the kit and the peer in the same process (many rounds, CPU time).
// Every row is emitted as a BENCH_ROW (bench/lib/rows.mjs). Thresholds are the (19) only:
// chain per layer <= 1.0x koa-compose; async hook dispatch <= 1.0x hookable. The other rows carry
// no goal (the start-up row is cli.bench's `hermes plugins chain`, with its own peer).
// Nothing here asserts on time.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import compose from "koa-compose";
import { createHooks } from "hookable";
import { pino } from "pino";
import { spread } from "./lib/process-pairs.mjs";
import { formatTable, ratio, rowCollector, valueRow } from "./lib/rows.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const { MiddlewareEngine } = await import(join(root, "dist/runtime/middleware.js"));
const { HookBus } = await import(join(root, "dist/runtime/hooks.js"));
const { FailureReporter } = await import(join(root, "dist/runtime/reporter.js"));
const { compile } = await import(join(root, "dist/compile/compile.js"));

const log = pino({ level: "silent" });

async function timeLoop(fn, iterations) {
  for (let i = 0; i < Math.min(2000, iterations); i++) await fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / iterations; // ns per op
}

/** Wall ns per call: { median, min, max } over `reps` loops. */
async function median(fn, iterations, reps = 5) {
  const xs = [];
  for (let r = 0; r < reps; r++) xs.push(await timeLoop(fn, iterations));
  return spread(xs);
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** CPU time (ns) per call of `fn` over `n` calls, each awaited before the next. */
async function cpuPerCall(fn, n) {
  const c0 = cpuNow();
  for (let i = 0; i < n; i++) await fn();
  return ((cpuNow() - c0) * 1000) / n;
}

/**
 * The kit and the peer interleaved in this process: `rounds` pairs of n-call blocks, the order
 * alternating (ABBA), after 3 untimed pairs. CPU ns per call (÷ per) of each side as
 * { median, min, max }, and the ratio as the median of the per-pair ratios (as for process rows).
 */
async function interleaved(ours, peer, n, per = 1, rounds = 31) {
  for (let i = 0; i < 3; i++) {
    await cpuPerCall(ours, n);
    await cpuPerCall(peer, n);
  }
  const xs = [];
  const ys = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      ys.push((await cpuPerCall(peer, n)) / per);
      xs.push((await cpuPerCall(ours, n)) / per);
    } else {
      xs.push((await cpuPerCall(ours, n)) / per);
      ys.push((await cpuPerCall(peer, n)) / per);
    }
  }
  const pairRatios = xs.map((x, i) => x / ys[i]);
  return { ours: spread(xs), peer: spread(ys), ratio: spread(pairRatios).median };
}

const { rows, add } = rowCollector();

// ---- execution middleware vs koa-compose (CPU time, interleaved) ----
for (const layers of [1, 10, 100]) {
  const engine = new MiddlewareEngine(new FailureReporter(log));
  const koa = [];
  for (let i = 0; i < layers; i++) {
    engine.add({
      kind: "tool_execution",
      owner: `p${i}`,
      required: false,
      cb: async ({ args, next_call }) => next_call(args),
    });
    koa.push(async (_ctx, next) => next());
  }
  const fn = compose(koa);
  const n = layers === 100 ? 300 : layers === 10 ? 3000 : 20000;
  const m = await interleaved(
    () => engine.runExecution("tool_execution", { a: 1 }, async () => "ok"),
    () => fn({ a: 1 }, async () => "ok"),
    n,
    layers,
  );
  add(
    valueRow({
      name: `execution middleware, ${layers} async layer(s), per layer`,
      peerName: "koa-compose",
      unit: "ns",
      metric: "cpu",
      kit: m.ours,
      peer: m.peer,
      ratioValue: m.ratio,
      target: ratio(1.0),
    }),
  );
}

// ---- hook dispatch vs hookable (CPU time, interleaved) ----
for (const kind of ["sync", "async"]) {
  const bus = new HookBus(new FailureReporter(log));
  const hooks = createHooks();
  for (let i = 0; i < 10; i++) {
    // post_tool_call is bounded: an async callback is watched against hook_callback_timeout.
    const cb = kind === "async" ? async () => undefined : () => undefined;
    bus.add("post_tool_call", cb, `p${i}`);
    hooks.hook("post_tool_call", cb);
  }
  const payload = { tool_name: "x", args: {} };
  const m = await interleaved(
    () => bus.invoke("post_tool_call", payload),
    () => hooks.callHook("post_tool_call", payload),
    kind === "async" ? 2000 : 5000,
  );
  add(
    valueRow({
      name: `hook dispatch, 10 ${kind} callbacks`,
      peerName: "hookable callHook",
      unit: "ns",
      metric: "cpu",
      kit: m.ours,
      peer: m.peer,
      ratioValue: m.ratio,
      // The goal is for async callbacks; the sync row shows the same path without promises.
      target: kind === "async" ? ratio(1.0) : undefined,
    }),
  );
}

// ---- no-middleware fast path vs a direct call ----
{
  const engine = new MiddlewareEngine(new FailureReporter(log));
  const terminal = async (a) => a;
  const ours = await median(() => engine.runExecution("tool_execution", { a: 1 }, terminal), 200000);
  const peer = await median(() => terminal({ a: 1 }), 200000);
  add(
    valueRow({
      name: "no-middleware fast path",
      peerName: "a direct call",
      unit: "ns",
      metric: "wall",
      kit: ours,
      peer,
    }),
  );
}

// ---- startup vs plain node importing the same modules ----
const scratch = [];
process.on("exit", () => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

function makeHome(n) {
  const home = mkdtempSync(join(tmpdir(), `hermes-bench-rt-${n}-`));
  scratch.push(home);
  const names = [];
  for (let i = 0; i < n; i++) {
    const name = `p${String(i).padStart(4, "0")}`;
    names.push(name);
    const d = join(home, "plugins", name);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, "plugin.yaml"), `name: ${name}\nversion: "1"\nhooks: [post_tool_call]\n`);
    writeFileSync(
      join(d, "index.js"),
      `export function register(ctx) { ctx.register_hook("post_tool_call", () => undefined); }\n`,
    );
  }
  writeFileSync(join(home, "config.yaml"), `plugins:\n  enabled: [${names.join(", ")}]\n`);
  return { home, names };
}

/** Wall ms of a new node process with `args`: { median, min, max } of 5 runs. */
function timeProcess(args, env) {
  const xs = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    const p = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, encoding: "utf8" });
    if (p.status !== 0) throw new Error(`${args.join(" ")} failed: ${p.stderr}`);
    xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return spread(xs);
}

/** A start-up row: no goal here (the start-up row is cli.bench's `hermes plugins chain`). */
const startRow = (name, ours, peer) =>
  add(
    valueRow({
      name,
      peerName: "node importing the runtime's and the plugins' modules",
      unit: "ms",
      metric: "wall",
      kit: ours,
      peer,
    }),
  );

const bundled = mkdtempSync(join(tmpdir(), "hermes-bench-bundled-"));
scratch.push(bundled);
const startScript = (home, verify) =>
  `const { startRuntime } = await import(${JSON.stringify(join(root, "dist/app/start-runtime.js"))}); await ` +
  `startRuntime({ home: ${JSON.stringify(home)}, verify: ${JSON.stringify(verify)} }); process.exit(0);`;
const verifyRows = [];
for (const n of [1, 100, 500]) {
  const { home, names } = makeHome(n);
  await compile({ home, env: { ...process.env, HERMES_BUNDLED_PLUGINS: bundled } });
  const env = { HERMES_BUNDLED_PLUGINS: bundled, HERMES_LOG_LEVEL: "silent" };
  // The peer: a bare node process importing the same plugin modules and the runtime's own modules.
  const bare =
    `await import(${JSON.stringify(join(root, "dist/app/start-runtime.js"))}); await ` +
    `Promise.all(${JSON.stringify(names.map((x) => join(home, "plugins", x, "index.js")))}.map((f) => ` +
    "import(f))); process.exit(0);";
  const ours = timeProcess(["--input-type=module", "-e", startScript(home, "fast")], env);
  const peer = timeProcess(["--input-type=module", "-e", bare], env);
  startRow(`startRuntime, ${n} plugin(s), --verify fast`, ours, peer);
  // What the default buys: fast re-hashes only files whose stat data changed; full re-hashes all.
  if (n === 100) {
    for (const mode of ["off", "full"])
      verifyRows.push([
        `startRuntime, 100 plugins, --verify ${mode}`,
        timeProcess(["--input-type=module", "-e", startScript(home, mode)], env),
        peer,
      ]);
  }
}
for (const [name, ours, peer] of verifyRows) startRow(name, ours, peer);

console.log("\nruntime benchmark (medians; ratio = median of per-pair kit ÷ peer for the interleaved rows)\n");
console.log(formatTable(rows));
console.log(
  "\nin-process rows: CPU ns per call (per layer for the chains), interleaved; fast path: wall ns; start-up: wall " +
    `ms of new processes; node ${process.version}`,
);
