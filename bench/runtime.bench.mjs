// Runtime benchmark (issues 4, 19): prints ratios against peers measured in the same run.
// - execution middleware chain vs koa-compose, per layer, for 1, 10 and 100 async layers
// - hook dispatch with 10 sync and 10 async callbacks vs hookable's callHook
// - the no-middleware fast path vs a direct call
// - runtime startup for 1, 100 and 500 plugins vs a plain `node` importing the same modules
// In-process rows interleave the kit and the peer in the same process (many rounds, CPU time).
// Targets (issue 19): chain per layer <= 1.0x koa-compose; async hook dispatch <= 1.0x hookable;
// startup for 100 plugins <= 1.3x the bare import. Nothing here asserts on time.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import compose from "koa-compose";
import { createHooks } from "hookable";
import { pino } from "pino";

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

async function median(fn, iterations, reps = 5) {
  const xs = [];
  for (let r = 0; r < reps; r++) xs.push(await timeLoop(fn, iterations));
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)];
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
 * alternating (ABBA), after 3 untimed pairs; medians of CPU ns per call (÷ per), and the kit's spread.
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
  const sorted = (v) => [...v].sort((a, b) => a - b);
  const [sx, sy] = [sorted(xs), sorted(ys)];
  return { ours: sx[sx.length >> 1], peer: sy[sy.length >> 1], spread: `${sx[0].toFixed(0)}..${sx.at(-1).toFixed(0)}` };
}

const rows = [];
const row = (name, ours, peer, target, unit = "ns", spread = "") => {
  const ratio = ours / peer;
  rows.push({
    name,
    ours: ours.toFixed(1),
    peer: peer.toFixed(1),
    unit,
    ratio: `${ratio.toFixed(2)}x`,
    target: target ? `<= ${target.toFixed(1)}x` : "",
    result: target ? (ratio <= target ? "PASS" : "MISS") : "",
    spread,
  });
};

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
  row(`execution chain, ${layers} layer(s), per layer`, m.ours, m.peer, 1.0, "ns", m.spread);
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
  row(`hook dispatch, 10 ${kind} callbacks`, m.ours, m.peer, 1.0, "ns", m.spread);
}

// ---- no-middleware fast path vs a direct call ----
{
  const engine = new MiddlewareEngine(new FailureReporter(log));
  const terminal = async (a) => a;
  const ours = await median(() => engine.runExecution("tool_execution", { a: 1 }, terminal), 200000);
  const peer = await median(() => terminal({ a: 1 }), 200000);
  row("no-middleware fast path vs direct call", ours, peer, 0);
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

function timeProcess(args, env) {
  const xs = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    const p = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, encoding: "utf8" });
    if (p.status !== 0) throw new Error(`${args.join(" ")} failed: ${p.stderr}`);
    xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  xs.sort((a, b) => a - b);
  return xs[2];
}

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
  row(`startup, ${n} plugin(s)`, ours, peer, n === 100 ? 1.3 : 0, "ms");
  // What the default buys: fast re-hashes only files whose stat data changed; full re-hashes all.
  if (n === 100) {
    for (const mode of ["off", "full"])
      verifyRows.push([
        `startup, 100 plugins, --verify ${mode}`,
        timeProcess(["--input-type=module", "-e", startScript(home, mode)], env),
        peer,
      ]);
  }
}
for (const [name, ours, peer] of verifyRows) row(name, ours, peer, 0, "ms");

console.log("\nruntime benchmark (medians; ratio = ours / peer)\n");
console.log(
  `${"case".padEnd(44)}${"ours".padStart(10)}${"peer".padStart(10)}  ` +
    `unit  ${"ratio".padEnd(8)}${"target".padEnd(9)}${"result".padEnd(7)}spread (ours, in-process CPU ns)`,
);
for (const r of rows)
  console.log(
    `${r.name.padEnd(44)}${r.ours.padStart(10)}${r.peer.padStart(10)}  ${r.unit.padEnd(4)}  ` +
      `${r.ratio.padEnd(8)}${r.target.padEnd(9)}${r.result.padEnd(7)}${r.spread}`,
  );
console.log(
  "\npeers: koa-compose (execution chain), hookable callHook (hooks), a direct call, node importing the same " +
    `modules; node ${process.version}`,
);
