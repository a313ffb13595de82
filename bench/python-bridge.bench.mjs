// Python plugin bridge (issue 20): what crossing to a Python plugin costs, against the same plugin in
// JavaScript, and what starting 10 Python plugins costs against `python3 -c 'import …'` of the same modules.
// - a tool call and a hook dispatch into Python: p50 / p99 wall time per call minus the JavaScript plugin's,
//   the two interleaved in blocks in one runtime (goal: < 150 µs p50 per crossing)
// - start: the CPU of the Python processes (the supervisor and every plugin process it forks) from launch
//   until every register(ctx) returned, against one python3 importing the same 10 modules (goal: <= 1.3x)
// Nothing here asserts on time.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, spread } from "./lib/process-pairs.mjs";
import { below, emitRow, ratio, valueRow } from "./lib/rows.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(root, "dist/cli/main.js");
const py = spawnSync("python3", ["-c", "import sys; print(sys.version_info >= (3, 10))"], { encoding: "utf8" });
if (!py.stdout?.includes("True")) {
  console.log("python-bridge bench: no python3 3.10+ here; skipped");
  process.exit(0);
}
const { openRuntime } = await import(join(root, "dist/app/open-runtime.js"));
const work = mkdtempSync(join(tmpdir(), "hermes-bench-py-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));

function plugin(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
}

/** A home with the same small plugin twice: pybench in Python, jsbench in JavaScript. */
function crossingHome() {
  const home = join(work, "crossing");
  plugin(join(home, "plugins", "pybench"), {
    "plugin.yaml": "name: pybench\nhooks: [pre_llm_call]\n",
    "__init__.py":
      "import json\n\ndef echo(args, **kw):\n    return json.dumps({'ok': True, 'n': args.get('n')})\n\n" +
      "def register(ctx):\n" +
      "    ctx.register_tool('py_echo', 'bench', {'name': 'py_echo', 'description': 'echo'}, echo)\n" +
      "    ctx.register_hook('pre_llm_call', lambda **kw: None)\n",
  });
  plugin(join(home, "plugins", "jsbench"), {
    "plugin.yaml": "name: jsbench\nhooks: [post_llm_call]\n",
    "index.js":
      "export function register(ctx) {\n  ctx.register_tool({ name: 'js_echo', toolset: 'bench', schema: { name: " +
      "'js_echo', description: 'echo' }, handler: (args) => JSON.stringify({ ok: true, n: args.n }) });\n" +
      "  ctx.register_hook('post_llm_call', () => null);\n}\n",
  });
  writeFileSync(join(home, "config.yaml"), "plugins:\n  enabled: [pybench, jsbench]\n");
  const c = spawnSync(process.execPath, [CLI, "--home", home, "compile"], { encoding: "utf8" });
  if (c.status !== 0) throw new Error(`compile failed: ${c.stderr}`);
  return home;
}

/** Wall µs of each call, the two sides interleaved in blocks of `block` calls, ABBA. */
async function latencies(a, b, total = 4000, block = 200) {
  const xs = [];
  const ys = [];
  const run = async (fn, into) => {
    for (let i = 0; i < block; i++) {
      const t0 = process.hrtime.bigint();
      await fn(i);
      into.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  };
  for (let i = 0; i < 200; i++) {
    await a(i);
    await b(i);
  }
  for (let r = 0; r < total / block; r++) {
    if (r % 2) {
      await run(b, ys);
      await run(a, xs);
    } else {
      await run(a, xs);
      await run(b, ys);
    }
  }
  return { kit: xs, peer: ys };
}

const pct = (xs, p) => [...xs].sort((u, v) => u - v)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function crossingRow(name, peerName, m) {
  const p50 = pct(m.kit, 0.5) - pct(m.peer, 0.5);
  const p99 = pct(m.kit, 0.99) - pct(m.peer, 0.99);
  console.log(
    `${name}: Python p50 ${pct(m.kit, 0.5).toFixed(1)} µs, p99 ${pct(m.kit, 0.99).toFixed(1)} µs; ` +
      `JavaScript p50 ${pct(m.peer, 0.5).toFixed(1)} µs, p99 ${pct(m.peer, 0.99).toFixed(1)} µs; ` +
      `overhead p50 ${p50.toFixed(1)} µs, p99 ${p99.toFixed(1)} µs`,
  );
  emitRow(
    valueRow({
      name,
      peerName,
      unit: "µs",
      metric: "p50 overhead",
      kit: { median: p50, min: p50, max: p99 },
      target: below(150, "p50 overhead", "µs"),
      note: `p99 overhead ${p99.toFixed(0)} µs (the spread column shows p50..p99)`,
    }),
  );
}

// ---- crossings ----
{
  const home = crossingHome();
  const rt = await openRuntime({ home, warn: () => undefined });
  const pyTool = rt.tools.get("py_echo").handler;
  const jsTool = rt.tools.get("js_echo").handler;
  const tools = await latencies(
    (i) => pyTool({ n: i }, {}),
    (i) => jsTool({ n: i }, {}),
  );
  crossingRow("Python tool call, overhead per call", "the same tool in JavaScript", tools);
  const payload = { session_id: "s", turn_id: "t", user_message: "hi", is_first_turn: false };
  const hooks = await latencies(
    () => rt.hooks.invoke("pre_llm_call", payload),
    () => rt.hooks.invoke("post_llm_call", payload),
  );
  crossingRow("Python hook dispatch, overhead per call", "the same hook in JavaScript", hooks);
  await rt.unloadAll();
}

// ---- start of 10 Python plugins ----
{
  const home = join(work, "start");
  const names = Array.from({ length: 10 }, (_, i) => `pystart${i}`);
  for (const n of names)
    plugin(join(home, "plugins", n), {
      "plugin.yaml": `name: ${n}\nhooks: [post_tool_call]\n`,
      "__init__.py":
        "import json\n\nSCHEMA = {'name': 'NAME', 'description': 'a tool', 'parameters': {'type': 'object'}}\n\n" +
        "def handler(args, **kw):\n    return json.dumps({'ok': True})\n\n" +
        "def register(ctx):\n    ctx.register_tool('NAME', 'bench', SCHEMA, handler)\n" +
        "    ctx.register_hook('post_tool_call', lambda **kw: None)\n".replace(/NAME/g, `${n}_tool`),
    });
  for (const n of names) {
    const f = join(home, "plugins", n, "__init__.py");
    writeFileSync(f, readFileSync(f, "utf8").replace(/NAME/g, `${n}_tool`));
  }
  writeFileSync(join(home, "config.yaml"), `plugins:\n  enabled: [${names.join(", ")}]\n`);
  const c = spawnSync(process.execPath, [CLI, "--home", home, "compile"], { encoding: "utf8" });
  if (c.status !== 0) throw new Error(`compile failed: ${c.stderr}`);
  const cpuFile = join(work, "cpu.txt");
  const wrapper = join(work, "python-metered");
  const meter = join(root, "bench/lib/wait4-exec.py");
  writeFileSync(wrapper, `#!/bin/sh\nexec python3 ${meter} ${cpuFile} python3 "$@"\n`);
  chmodSync(wrapper, 0o755);
  const lastCpu = () => Number(readFileSync(cpuFile, "utf8").trim().split("\n").at(-1));
  // Bytecode cached as a deployed home has it (the bridge writes it under the home, never into plugin folders).
  const env = { ...process.env, PYTHONPYCACHEPREFIX: join(home, "cache", "python") };
  delete env.PYTHONDONTWRITEBYTECODE;
  const kitOnce = async () => {
    process.env.HERMES_PYTHON = wrapper;
    delete process.env.PYTHONDONTWRITEBYTECODE;
    const rt = await openRuntime({ home, warn: () => undefined });
    const loaded = [...rt.status.values()].filter((s) => s.key.startsWith("pystart") && s.state === "loaded").length;
    if (loaded !== 10) throw new Error(`expected 10 Python plugins loaded, got ${loaded}`);
    const before = readFileSync(cpuFile, "utf8").length;
    await rt.unloadAll();
    // The supervisor exits once every plugin process has: its line in cpu.txt says so.
    for (let i = 0; i < 400 && readFileSync(cpuFile, "utf8").length === before; i++)
      await new Promise((r) => setTimeout(r, 5));
    return lastCpu();
  };
  const pluginsDir = JSON.stringify(join(home, "plugins"));
  const imports = `import sys; sys.path.insert(0, ${pluginsDir}); import ${names.join(", ")}`;
  const peerOnce = () => {
    const r = spawnSync(wrapper, ["-c", imports], { env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`peer failed: ${r.stderr}`);
    return lastCpu();
  };
  writeFileSync(cpuFile, "");
  await kitOnce();
  peerOnce();
  const kit = [];
  const peer = [];
  const ratios = [];
  for (let i = 0; i < 15; i++) {
    // Interleaved pairs, the order alternating, so a change in machine load hits both sides alike.
    let k;
    let p;
    if (i % 2) {
      p = peerOnce();
      k = await kitOnce();
    } else {
      k = await kitOnce();
      p = peerOnce();
    }
    kit.push(k);
    peer.push(p);
    ratios.push(k / p);
  }
  console.log(
    `start 10 Python plugins: bridge CPU median ${median(kit).toFixed(1)} ms; python3 importing them ` +
      `${median(peer).toFixed(1)} ms; ratio ${median(ratios).toFixed(2)}x`,
  );
  emitRow(
    valueRow({
      name: "start 10 Python plugins (CPU of the Python processes)",
      peerName: "python3 -c 'import' of the same 10 modules",
      unit: "ms",
      metric: "cpu",
      kit: spread(kit),
      peer: spread(peer),
      ratioValue: median(ratios),
      target: ratio(1.3),
    }),
  );
}
process.exit(0);
