#!/usr/bin/env node
// hermes serve benchmark (see bench/README.md, "hermes serve"). Every number is printed beside a
// peer measured in the same run, with the ratio:
//   - turn latency (p50, p99) and CPU per turn, 1 session and 200 concurrent sessions, and turns/s
//     with 200 sessions: POST /v1/chat/completions to a spawned `hermes serve` vs the same agent
//     turn in this process (startAgent on the same home); both talk to one echo model server on
//     127.0.0.1 (a child process running this file with --echo-model);
//   - RSS per idle session: VmRSS of the serve process before and after N sessions of one turn
//     each, vs a child process keeping N in-process agent sessions of one turn each;
//   - reload with 100 plugins: SIGHUP until /health/detailed shows the new generation, vs loading
//     the same generation in this (warm) process with startAgentRuntime;
//   - cold start with 100 plugins: spawn to the "listening on" line, vs `hermes plugins chain`.
// Medians; pairs interleaved (the order alternates). Never fails on time: the exit code is non-zero
// only when the service misbehaves (a wrong answer, a refused turn, a failed reload).
//
// Counts come from the environment (defaults in parentheses):
//   HERMES_BENCH_SERVE_SEQ_TURNS (200)      turns of the 1-session case, per side
//   HERMES_BENCH_SERVE_CLIENTS (200)        concurrent sessions
//   HERMES_BENCH_SERVE_CLIENT_TURNS (5)     turns each concurrent session makes, per block
//   HERMES_BENCH_SERVE_CONC_REPS (2)        blocks per side with 200 sessions (interleaved)
//   HERMES_BENCH_SERVE_IDLE_SESSIONS (1000) sessions created for the RSS case
//   HERMES_BENCH_SERVE_PLUGINS (100)        plugins of the reload and cold-start home
//   HERMES_BENCH_SERVE_RELOADS (5)          reloads (and peer loads)
//   HERMES_BENCH_SERVE_STARTS (5)           cold starts (and peer runs)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, Agent as HttpAgent, request as httpRequest } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "dist", "cli", "main.js");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;

// ---------------------------------------------------------------------------------------------
// The echo model (child mode): streams `echo: <first paragraph of the last user message> [<n> messages]`.

function echoText(body) {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  const user = [...msgs].reverse().find((m) => m.role === "user");
  return `echo: ${String(user?.content ?? "").split("\n\n")[0]} [${msgs.length} messages]`;
}

function runEchoModel() {
  const chunk = (delta, finish = null) =>
    JSON.stringify({
      id: "chatcmpl-echo",
      object: "chat.completion.chunk",
      created: 1,
      model: "echo",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw);
      const text = echoText(body);
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "chatcmpl-echo",
            object: "chat.completion",
            created: 1,
            model: "echo",
            choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${chunk({ role: "assistant", content: text })}\n\n`);
      res.write(`data: ${chunk({}, "stop")}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => console.log(`http://127.0.0.1:${server.address().port}/v1`));
  process.on("SIGTERM", () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// The RSS peer (child mode): N in-process agent sessions of one turn each, kept like serve keeps them.

async function runPeerRss(home, n, warm) {
  const { startAgent } = await import(join(ROOT, "dist/app/start-agent.js"));
  const { Agent } = await import(join(ROOT, "dist/agent/agent.js"));
  const { Session } = await import(join(ROOT, "dist/agent/session.js"));
  const handle = await startAgent({ home, env: process.env });
  const kept = [];
  const oneSession = async (text) => {
    const session = new Session();
    const agent = new Agent({ runtime: handle.runtime, provider: handle.provider, session, env: process.env });
    const r = await agent.runTurn(text);
    if (!r.answer?.startsWith(`echo: ${text} `)) throw new Error(`peer answered ${JSON.stringify(r.answer)}`);
    kept.push(session);
  };
  await pool(warm, 50, (i) => oneSession(`rss-peer-warm ${i}`));
  await sleep(500);
  const before = vmRss(process.pid);
  await pool(n, 50, (i) => oneSession(`rss-peer ${i}`));
  await sleep(1000);
  const after = vmRss(process.pid);
  console.log(JSON.stringify({ before, after, sessions: kept.length }));
  await handle.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/** Run `count` tasks with at most `width` at once. */
async function pool(count, width, task) {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
}

/** VmRSS of a process in KiB. */
function vmRss(pid) {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

let clkTck = 100;
/** User + system CPU time of a process (all threads) in ms, from /proc/<pid>/stat (clock-tick resolution). */
function procCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / clkTck; // utime, stime (fields 14 and 15)
}

/** This process's CPU time (user + system, all threads) in ms. */
function selfCpuMs() {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile. */
function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

class BenchError extends Error {}
function fail(msg) {
  throw new BenchError(msg);
}

// ---------------------------------------------------------------------------------------------
// Child modes

if (process.argv[2] === "--echo-model") {
  runEchoModel();
} else if (process.argv[2] === "--peer-rss") {
  await runPeerRss(process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
} else {
  await main();
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const envInt = (name, d) => {
    const v = Number(process.env[name]);
    return Number.isInteger(v) && v > 0 ? v : d;
  };
  const SEQ_TURNS = envInt("HERMES_BENCH_SERVE_SEQ_TURNS", 200);
  const CLIENTS = envInt("HERMES_BENCH_SERVE_CLIENTS", 200);
  const CLIENT_TURNS = envInt("HERMES_BENCH_SERVE_CLIENT_TURNS", 5);
  const CONC_REPS = envInt("HERMES_BENCH_SERVE_CONC_REPS", 2);
  const IDLE_SESSIONS = envInt("HERMES_BENCH_SERVE_IDLE_SESSIONS", 1000);
  const PLUGINS = envInt("HERMES_BENCH_SERVE_PLUGINS", 100);
  const RELOADS = envInt("HERMES_BENCH_SERVE_RELOADS", 5);
  const STARTS = envInt("HERMES_BENCH_SERVE_STARTS", 5);
  const WARM = 20;

  if (!existsSync(CLI)) {
    console.error("serve bench: dist/cli/main.js is missing: run `npm run build` (or `npm run bench`) first");
    process.exit(1);
  }
  const tck = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  if (tck.status === 0 && Number(tck.stdout) > 0) clkTck = Number(tck.stdout);
  const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

  const started = now();
  const scratch = mkdtempSync(join(tmpdir(), "hermes-bench-serve-"));
  const children = new Set();
  const cleanup = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    rmSync(scratch, { recursive: true, force: true });
  };
  process.on("exit", cleanup);
  for (const s of ["SIGINT", "SIGTERM"])
    process.on(s, () => {
      cleanup();
      process.exit(130);
    });

  // The environment of every hermes process, this one's agent included: no HERMES_* from the
  // developer's shell, an empty bundled-plugin folder, a scratch HOME, the default log level (warn).
  const bundled = join(scratch, "bundled");
  mkdirSync(bundled);
  mkdirSync(join(scratch, "user"));
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("HERMES_")) env[k] = v;
  Object.assign(env, {
    HOME: join(scratch, "user"),
    NO_COLOR: "1",
    HERMES_BUNDLED_PLUGINS: bundled,
    HERMES_LOG_LEVEL: "warn",
  });
  process.env.HERMES_LOG_LEVEL = "warn"; // this process's logger (the in-process peer)

  const track = (child) => {
    children.add(child);
    child.on("exit", () => children.delete(child));
    return child;
  };
  const exited = (child) =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => child.once("exit", () => r()));
  async function stopChild(child, signal = "SIGTERM") {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const t = setTimeout(() => child.kill("SIGKILL"), 40_000);
    await exited(child);
    clearTimeout(t);
  }

  const hermes = (args) => {
    const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: "utf8" });
    if (r.status !== 0) fail(`hermes ${args.join(" ")} exited ${r.status ?? r.signal}:\n${r.stderr}`);
    return r;
  };

  // ---- the echo model ----
  const echo = track(spawn(process.execPath, [SELF, "--echo-model"], { stdio: ["ignore", "pipe", "inherit"] }));
  const modelUrl = await new Promise((resolve, reject) => {
    let out = "";
    echo.stdout.setEncoding("utf8");
    echo.stdout.on("data", (d) => {
      out += d;
      const m = /(http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    echo.once("exit", (c) => reject(new Error(`the echo model exited ${c}`)));
  });

  // ---- homes ----
  const configText = (extra = "", maxTurns = 20) =>
    `model:\n  provider: openai-compatible\n  base_url: ${modelUrl}\n  default: echo\n` +
    `agent:\n  api_max_retries: 0\n  max_turns: ${maxTurns}\n` +
    `gateway:\n  max_concurrent_turns: ${Math.max(256, CLIENTS + 56)}\n` +
    `  max_queued_turns: ${Math.max(512, 2 * CLIENTS + 112)}\n${extra}`;
  const makeHome = (name, plugins = 0) => {
    const home = join(scratch, name);
    const names = [];
    for (let i = 0; i < plugins; i++) {
      const key = `p${String(i).padStart(4, "0")}`;
      names.push(key);
      const d = join(home, "plugins", key);
      mkdirSync(d, { recursive: true });
      // Even plugins register a hook, odd ones a tool.
      if (i % 2 === 0) {
        writeFileSync(join(d, "plugin.yaml"), `name: ${key}\nversion: "1"\nhooks: [post_tool_call]\n`);
        writeFileSync(
          join(d, "index.js"),
          `export function register(ctx) { ctx.register_hook("post_tool_call", () => undefined); }\n`,
        );
      } else {
        writeFileSync(join(d, "plugin.yaml"), `name: ${key}\nversion: "1"\nprovides_tools: [t_${key}]\n`);
        writeFileSync(
          join(d, "index.js"),
          `export function register(ctx) {\n  ctx.register_tool({ name: "t_${key}", toolset: "bench", ` +
            `schema: { name: "t_${key}", description: "bench tool", ` +
            `parameters: { type: "object", properties: {} } }, ` +
            `handler: () => "ok" });\n}\n`,
        );
      }
    }
    mkdirSync(home, { recursive: true });
    const pluginsYaml = `plugins:\n  enabled: [${names.join(", ")}]\n`;
    writeFileSync(join(home, "config.yaml"), configText(pluginsYaml));
    hermes(["--home", home, "compile"]);
    return { home, pluginsYaml };
  };
  const homeLatency = makeHome("home-latency").home;
  const homeRss = makeHome("home-rss").home;
  const homePeerRss = makeHome("home-rss-peer").home;
  const plug = makeHome("home-plugins", PLUGINS);

  /** Spawn `hermes serve --port 0` and resolve at its "listening on" line (no polling: stderr events). */
  function startServe(home, nodeArgs = []) {
    const t0 = now();
    const child = track(
      spawn(process.execPath, [...nodeArgs, CLI, "--home", home, "serve", "--port", "0"], {
        env,
        stdio: ["ignore", "ignore", "pipe"],
      }),
    );
    let err = "";
    const lines = [];
    return new Promise((resolve, reject) => {
      child.stderr.setEncoding("utf8");
      let listening = false;
      child.stderr.on("data", (d) => {
        err += d;
        if (!listening) {
          const m = /listening on (http:\/\/\S+)/.exec(err);
          if (m) {
            listening = true;
            const ms = now() - t0;
            const cpu = procCpuMs(child.pid);
            resolve({ url: m[1], child, ms, cpu, stderr: () => err, lines });
          }
        }
      });
      child.once("exit", (code, sig) => {
        if (!listening) reject(new BenchError(`hermes serve exited ${code ?? sig} before listening:\n${err}`));
      });
    });
  }

  // ---- HTTP client: keep-alive, enough sockets for every concurrent session ----
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: CLIENTS + 64, maxFreeSockets: CLIENTS + 64 });
  function call(method, url, body, headers = {}) {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = httpRequest(
        url,
        {
          method,
          agent: httpAgent,
          headers: {
            ...(data ? { "content-type": "application/json", "content-length": Buffer.byteLength(data) } : {}),
            ...headers,
          },
        },
        (res) => {
          let raw = "";
          res.setEncoding("utf8");
          res.on("data", (d) => (raw += d));
          res.on("end", () => {
            let json;
            try {
              json = JSON.parse(raw);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode, headers: res.headers, json, raw });
          });
        },
      );
      req.on("error", reject);
      req.end(data);
    });
  }
  const health = async (url) => (await call("GET", `${url}/health/detailed`)).json;

  // ---- the two sides of a turn ----
  const { startAgent, startAgentRuntime } = await import(join(ROOT, "dist/app/start-agent.js"));
  const { Agent } = await import(join(ROOT, "dist/agent/agent.js"));
  const { Session } = await import(join(ROOT, "dist/agent/session.js"));

  const runTag = Date.now().toString(36);
  const checkAnswer = (side, text, answer) => {
    if (typeof answer !== "string" || !answer.startsWith(`echo: ${text} [`))
      fail(`${side}: the turn "${text}" was answered ${JSON.stringify(answer)}`);
  };

  /** One turn through the API; `client.sid` carries the session between turns. Returns ms. */
  async function serviceTurn(url, client, text) {
    const t0 = now();
    const r = await call(
      "POST",
      `${url}/v1/chat/completions`,
      { messages: [{ role: "user", content: text }] },
      client.sid ? { "x-hermes-session-id": client.sid } : {},
    );
    const ms = now() - t0;
    if (r.status !== 200) fail(`service: POST /v1/chat/completions answered ${r.status}: ${r.raw.slice(0, 300)}`);
    client.sid ??= r.headers["x-hermes-session-id"];
    checkAnswer("service", text, r.json?.choices?.[0]?.message?.content);
    return ms;
  }

  /** One turn in this process. Returns ms. */
  async function peerTurn(agent, text) {
    const t0 = now();
    const r = await agent.runTurn(text);
    const ms = now() - t0;
    checkAnswer("peer", text, r.answer);
    return ms;
  }

  const rows = [];
  const notes = [];
  const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
  const row = (name, service, peer, unit, o = {}) =>
    rows.push({
      name,
      service,
      peer,
      unit,
      ratio: service / peer,
      added: o.added ? service - peer : undefined,
      cpuS: o.cpuS,
      cpuP: o.cpuP,
      spread: o.spread,
      digits: o.digits ?? 1,
    });

  try {
    // =========================================================================================
    // 1. Turn latency, 1 session and CLIENTS concurrent sessions
    const peer = await startAgent({ home: homeLatency, env });
    const serve = await startServe(homeLatency);
    console.log(`serve (no plugins) listening on ${serve.url}; echo model on ${modelUrl}`);

    // Warm-up (JIT, sockets), in sessions of their own.
    {
      const warmAgent = new Agent({ runtime: peer.runtime, provider: peer.provider, session: new Session(), env });
      const warmClient = {};
      for (let i = 0; i < WARM; i++) {
        await peerTurn(warmAgent, `warm-${runTag} ${i}`);
        await serviceTurn(serve.url, warmClient, `warm-${runTag} ${i}`);
      }
    }

    // 1 session: turns one after another, ABBA-interleaved per turn.
    {
      const client = {};
      const lat = { s: [], p: [] };
      let cpuPeer = 0;
      let cpuClient = 0;
      const svcCpu0 = procCpuMs(serve.child.pid);
      for (let i = 0; i < SEQ_TURNS; i++) {
        const text = `seq-${runTag} t${i}`;
        const runPeer = async () => {
          const c0 = selfCpuMs();
          lat.p.push(await peerTurn(peer.agent, text));
          cpuPeer += selfCpuMs() - c0;
        };
        const runSvc = async () => {
          const c0 = selfCpuMs();
          lat.s.push(await serviceTurn(serve.url, client, text));
          cpuClient += selfCpuMs() - c0;
        };
        if (i % 2) {
          await runSvc();
          await runPeer();
        } else {
          await runPeer();
          await runSvc();
        }
      }
      // The service is idle while the peer runs: its CPU over the whole phase is its turns' CPU.
      const cpuSvc = (procCpuMs(serve.child.pid) - svcCpu0) / SEQ_TURNS;
      cpuPeer /= SEQ_TURNS;
      cpuClient /= SEQ_TURNS;
      const spread = (xs) => [Math.min(...xs), Math.max(...xs)];
      row("turn latency p50, 1 session", pct(lat.s, 50), pct(lat.p, 50), "ms", {
        added: true,
        spread: spread(lat.s),
      });
      row("turn latency p99, 1 session", pct(lat.s, 99), pct(lat.p, 99), "ms", { added: true });
      row("CPU per turn, 1 session", cpuSvc, cpuPeer, "ms", { digits: 2 });
      notes.push(
        `1 session: ${SEQ_TURNS} turns per side (history grows to ${2 * SEQ_TURNS} messages); the HTTP client in ` +
          `this process used ${fmt(cpuClient, 2)} ms CPU per service turn (not in the service column)`,
      );
    }

    // CLIENTS concurrent sessions, each making CLIENT_TURNS turns; blocks alternate peer/service.
    {
      const block = async (side, rep) => {
        const lat = [];
        const svcCpu0 = procCpuMs(serve.child.pid);
        const self0 = selfCpuMs();
        const t0 = now();
        await Promise.all(
          Array.from({ length: CLIENTS }, async (_, c) => {
            const client = {};
            const agent =
              side === "peer"
                ? new Agent({ runtime: peer.runtime, provider: peer.provider, session: new Session(), env })
                : undefined;
            for (let t = 0; t < CLIENT_TURNS; t++) {
              const text = `conc-${runTag}-${side}-r${rep} c${c} t${t}`;
              lat.push(side === "peer" ? await peerTurn(agent, text) : await serviceTurn(serve.url, client, text));
            }
          }),
        );
        const wall = now() - t0;
        const turns = CLIENTS * CLIENT_TURNS;
        const selfCpu = (selfCpuMs() - self0) / turns;
        const cpu = side === "peer" ? selfCpu : (procCpuMs(serve.child.pid) - svcCpu0) / turns;
        return { lat, rps: (turns / wall) * 1000, cpu, clientCpu: side === "peer" ? 0 : selfCpu };
      };
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          const a = new Agent({ runtime: peer.runtime, provider: peer.provider, session: new Session(), env });
          await peerTurn(a, `concwarm-${runTag} c${c}`);
        }),
      );
      await Promise.all(
        Array.from({ length: CLIENTS }, (_, c) => serviceTurn(serve.url, {}, `concwarm-${runTag} c${c}`)),
      );
      const res = { peer: [], service: [] };
      for (let r = 0; r < CONC_REPS; r++) {
        const order = r % 2 ? ["service", "peer"] : ["peer", "service"];
        for (const side of order) res[side].push(await block(side, r));
      }
      const all = (side) => res[side].flatMap((b) => b.lat);
      const med = (side, k) => median(res[side].map((b) => b[k]));
      const h = await health(serve.url);
      if (h?.turns?.running !== 0 || h?.turns?.waiting !== 0)
        fail(`service: turns still running after the blocks: ${JSON.stringify(h?.turns)}`);
      row(`turn latency p50, ${CLIENTS} sessions`, pct(all("service"), 50), pct(all("peer"), 50), "ms", {
        added: true,
      });
      row(`turn latency p99, ${CLIENTS} sessions`, pct(all("service"), 99), pct(all("peer"), 99), "ms", {
        added: true,
      });
      row(`turns/s, ${CLIENTS} sessions`, med("service", "rps"), med("peer", "rps"), "/s", {
        spread: [Math.min(...res.service.map((b) => b.rps)), Math.max(...res.service.map((b) => b.rps))],
      });
      row(`CPU per turn, ${CLIENTS} sessions`, med("service", "cpu"), med("peer", "cpu"), "ms", { digits: 2 });
      notes.push(
        `${CLIENTS} sessions: ${CONC_REPS} block(s) per side of ${CLIENTS} x ${CLIENT_TURNS} turns; the HTTP client ` +
          `used ${fmt(med("service", "clientCpu"), 2)} ms CPU per service turn; service live sessions now ` +
          `${h.sessions.live}`,
      );
    }
    await stopChild(serve.child);
    await peer.close();

    // =========================================================================================
    // 2. RSS per idle session
    {
      const warm = 50;
      const s = await startServe(homeRss);
      await pool(warm, 50, (i) => serviceTurn(s.url, {}, `rss-warm-${runTag} ${i}`));
      await sleep(500);
      const before = vmRss(s.child.pid);
      await pool(IDLE_SESSIONS, 50, (i) => serviceTurn(s.url, {}, `rss-${runTag} ${i}`));
      await sleep(1000);
      const after = vmRss(s.child.pid);
      const h = await health(s.url);
      if (h.sessions.live !== warm + IDLE_SESSIONS)
        fail(`service: ${h.sessions.live} live sessions, expected ${warm + IDLE_SESSIONS}`);
      await stopChild(s.child);

      const p = spawnSync(process.execPath, [SELF, "--peer-rss", homePeerRss, String(IDLE_SESSIONS), String(warm)], {
        env,
        encoding: "utf8",
      });
      if (p.status !== 0) fail(`the RSS peer exited ${p.status ?? p.signal}:\n${p.stderr}`);
      const pr = JSON.parse(p.stdout.trim().split("\n").pop());
      row(
        `RSS per idle session (N=${IDLE_SESSIONS})`,
        (after - before) / IDLE_SESSIONS,
        (pr.after - pr.before) / IDLE_SESSIONS,
        "KiB",
      );
      notes.push(
        `RSS: serve ${fmt(before / 1024)} -> ${fmt(after / 1024)} MiB; in-process peer ${fmt(pr.before / 1024)} -> ` +
          `${fmt(pr.after / 1024)} MiB (no forced GC on either side)`,
      );
    }

    // =========================================================================================
    // 3. Reload with PLUGINS plugins, 4. cold start with PLUGINS plugins
    {
      const s = await startServe(plug.home);
      let maxTurns = 20;
      const recompile = () => {
        maxTurns = maxTurns === 20 ? 21 : 20;
        writeFileSync(join(plug.home, "config.yaml"), configText(plug.pluginsYaml, maxTurns));
        const t0 = now();
        hermes(["--home", plug.home, "compile"]);
        return now() - t0;
      };
      const reloadOnce = async () => {
        const h0 = await health(s.url);
        const t0 = now();
        const c0 = procCpuMs(s.child.pid);
        s.child.kill("SIGHUP");
        for (;;) {
          const h = await health(s.url);
          if (h.last_reload && h.last_reload.at !== h0.last_reload?.at) {
            const ms = now() - t0;
            const cpu = procCpuMs(s.child.pid) - c0;
            if (!h.last_reload.ok) fail(`service: reload failed: ${h.last_reload.error}`);
            if (h.generation !== h0.generation + 1)
              fail(`service: generation ${h.generation} after a reload from ${h0.generation}`);
            if (h.plugins_loaded.length !== PLUGINS)
              fail(`service: ${h.plugins_loaded.length} plugins loaded after a reload, expected ${PLUGINS}`);
            return { ms, cpu };
          }
          await sleep(5);
        }
      };
      const peerLoad = async () => {
        const t0 = now();
        const c0 = selfCpuMs();
        const rt = await startAgentRuntime({ home: plug.home, env });
        const ms = now() - t0;
        const cpu = selfCpuMs() - c0;
        const n = rt.runtime.loadedPlugins().length;
        await rt.close();
        if (n !== PLUGINS) fail(`peer: ${n} plugins loaded, expected ${PLUGINS}`);
        return { ms, cpu };
      };
      // Warm-up: one of each, untimed.
      recompile();
      await reloadOnce();
      await peerLoad();
      const rs = [];
      const ps = [];
      const compiles = [];
      for (let r = 0; r < RELOADS; r++) {
        compiles.push(recompile());
        if (r % 2) {
          ps.push(await peerLoad());
          rs.push(await reloadOnce());
        } else {
          rs.push(await reloadOnce());
          ps.push(await peerLoad());
        }
      }
      row(`reload, ${PLUGINS} plugins`, median(rs.map((x) => x.ms)), median(ps.map((x) => x.ms)), "ms", {
        cpuS: median(rs.map((x) => x.cpu)),
        cpuP: median(ps.map((x) => x.cpu)),
        spread: [Math.min(...rs.map((x) => x.ms)), Math.max(...rs.map((x) => x.ms))],
      });
      notes.push(
        `reload: SIGHUP until /health/detailed (polled every 5 ms) shows a new last_reload.at; the \`hermes ` +
          `compile\` before each took ${fmt(median(compiles), 0)} ms (not counted)`,
      );
      await stopChild(s.child);

      // Cold start: spawn to "listening on" vs `hermes plugins chain` to exit, pairs interleaved.
      const chainOnce = async () => {
        const out = join(scratch, "time.txt");
        const args = [process.execPath, CLI, "--home", plug.home, "plugins", "chain"];
        const t0 = now();
        const child = track(
          timeBin
            ? spawn(timeBin, ["-f", "%U %S", "-o", out, ...args], { env, stdio: "ignore" })
            : spawn(args[0], args.slice(1), { env, stdio: "ignore" }),
        );
        await exited(child);
        const ms = now() - t0;
        if (child.exitCode !== 0) fail(`hermes plugins chain exited ${child.exitCode ?? child.signalCode}`);
        let cpu = NaN;
        if (timeBin) {
          const [u, sy] = readFileSync(out, "utf8").trim().split("\n").pop().split(" ").map(Number);
          cpu = (u + sy) * 1000;
        }
        return { ms, cpu };
      };
      const serveOnce = async () => {
        const x = await startServe(plug.home);
        await stopChild(x.child);
        return { ms: x.ms, cpu: x.cpu };
      };
      await chainOnce(); // warm the file cache, untimed
      await serveOnce();
      const ss = [];
      const cs = [];
      for (let r = 0; r < STARTS; r++) {
        if (r % 2) {
          cs.push(await chainOnce());
          ss.push(await serveOnce());
        } else {
          ss.push(await serveOnce());
          cs.push(await chainOnce());
        }
      }
      row(`cold start, ${PLUGINS} plugins`, median(ss.map((x) => x.ms)), median(cs.map((x) => x.ms)), "ms", {
        cpuS: median(ss.map((x) => x.cpu)),
        cpuP: median(cs.map((x) => x.cpu)),
        spread: [Math.min(...ss.map((x) => x.ms)), Math.max(...ss.map((x) => x.ms))],
      });
      notes.push(
        `cold start: wall time from spawn to the "listening on" line (serve) or to exit (chain); CPU of serve from ` +
          `/proc/<pid>/stat at that line, of chain from ${timeBin ? "/usr/bin/time" : "nothing (no /usr/bin/time)"}; ` +
          `both at ${1000 / clkTck} ms resolution`,
      );
    }
  } catch (e) {
    if (e instanceof BenchError) {
      console.error(`serve bench: ${e.message}`);
      process.exit(1); // the exit handler kills the children this bench started and removes its temp folder
    }
    throw e;
  } finally {
    httpAgent.destroy();
    await stopChild(echo);
  }

  // ---- the table ----
  console.log(`\nhermes serve benchmark (ratio = service / peer; medians unless p50/p99)\n`);
  const head =
    `${"case".padEnd(36)}${"service".padStart(10)}${"peer".padStart(10)}  ${"unit".padEnd(5)}${"ratio".padStart(7)}` +
    `${"added".padStart(9)}${"CPU svc".padStart(9)}${"CPU peer".padStart(9)}  spread (service)`;
  console.log(head);
  console.log("-".repeat(head.length + 4));
  for (const r of rows)
    console.log(
      `${r.name.padEnd(36)}${fmt(r.service, r.digits).padStart(10)}${fmt(r.peer, r.digits).padStart(10)}  ` +
        `${r.unit.padEnd(5)}${`${fmt(r.ratio, 2)}x`.padStart(7)}` +
        `${(r.added === undefined ? "" : `+${fmt(r.added, 2)}`).padStart(9)}` +
        `${(r.cpuS === undefined ? "" : fmt(r.cpuS, 0)).padStart(9)}` +
        `${(r.cpuP === undefined ? "" : fmt(r.cpuP, 0)).padStart(9)}` +
        `  ${r.spread ? `${fmt(r.spread[0])}..${fmt(r.spread[1])}` : ""}`,
    );
  console.log("");
  for (const n of notes) console.log(`- ${n}`);
  console.log(
    `\npeers: latency/CPU/turns/s = the same agent turn in this process (startAgent, same home, same echo model); ` +
      `RSS = a node process keeping the same number of in-process agent sessions; reload = startAgentRuntime of ` +
      `the same generation in this warm process; cold start = \`hermes plugins chain\` on the same home`,
  );
  console.log(
    `node ${process.version}, ${cpus().length} CPU(s) (${cpus()[0]?.model ?? "?"}), whole bench ` +
      `${fmt((now() - started) / 1000, 0)} s`,
  );
}
