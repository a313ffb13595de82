import { readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";
import { sleep } from "../support/util.js";
import { readTrace, waitFor } from "./agent-helpers.js";
import {
  api,
  echoModel,
  type EchoModel,
  openSse,
  type SseStreamRead,
  serve,
  type Served,
  writeRecorder,
  writeServeConfig,
} from "./serve-helpers.js";

/**
 * `hermes serve` changing generations under load, spawned as a user runs it: a reload (SIGHUP, or
 * --watch seeing the lock change) while a streamed turn is in flight, a generation that fails to load,
 * and SIGTERM with and without a grace period.
 */
const scratch = new Scratch("hermes-e2e-serve-reload-");
let model: EchoModel;
const running: Served[] = [];

beforeAll(async () => {
  model = await echoModel();
});

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop("SIGKILL")));
  await model?.close();
  scratch.cleanup();
});

interface Home {
  home: string;
  plugins: string;
  /** The recorders' JSON-lines file. */
  events: string;
  env: Record<string, string>;
}

/**
 * An unmanaged home with p1 enabled (a recorder with a tool and on_unload, recording `hooks`); its first
 * `hermes serve` compiles it.
 */
function makeHome(name: string, gateway = "", hooks: string[] = []): Home {
  const root = scratch.dir(name);
  const home = join(root, "home");
  const plugins = join(home, "plugins");
  const events = join(root, "events.jsonl");
  const bundled = scratch.dir("bundled-empty");
  writeRecorder(plugins, "p1", { file: events, tool: "p1_tool", onUnload: true, hooks });
  writeServeConfig(home, model.url, `plugins:\n  enabled: [p1]\n${gateway ? `gateway:\n${gateway}` : ""}`);
  return { home, plugins, events, env: { HERMES_BUNDLED_PLUGINS: bundled } };
}

async function hermes(h: Home, ...args: string[]) {
  const r = await runCli(["--home", h.home, ...args], { env: h.env });
  expect(r.code, `hermes ${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

async function start(h: Home, args: string[] = []): Promise<Served> {
  const s = await serve(h.home, args, h.env);
  running.push(s);
  return s;
}

function currentGeneration(h: Home): number {
  return Number(readlinkSync(join(h.home, "generations", "current")));
}

async function health(s: Served): Promise<Record<string, unknown>> {
  const r = await api(s.url, "/health/detailed");
  expect(r.status).toBe(200);
  return r.body;
}

/** `count` words: a `slow:<ms>` turn of them streams for count × ms. */
function words(count: number): string {
  return Array.from({ length: count }, (_, i) => `w${i + 1}`).join(" ");
}

/** A streamed chat completion; resolves once the first content chunk arrived. */
async function streamTurn(s: Served, text: string, sessionId?: string): Promise<SseStreamRead> {
  const sse = await openSse(`${s.url}/v1/chat/completions`, {
    body: { messages: [{ role: "user", content: text }], stream: true },
    ...(sessionId ? { headers: { "x-hermes-session-id": sessionId } } : {}),
  });
  expect(sse.status).toBe(200);
  await waitFor(() => sse.frames.some((f) => contentOf([f])), 15_000, "the first streamed word");
  return sse;
}

/** The text of the content deltas of a streamed completion. */
function contentOf(frames: SseStreamRead["frames"]): string {
  return frames
    .map((f) => (f.json?.choices as Array<{ delta?: { content?: string } }> | undefined)?.[0]?.delta?.content ?? "")
    .join("");
}

function finishOf(frames: SseStreamRead["frames"]): unknown {
  return (frames.at(-2)?.json?.choices as Array<{ finish_reason?: unknown }> | undefined)?.[0]?.finish_reason;
}

async function chat(s: Served, content: string): Promise<string> {
  const r = await api<{ choices: Array<{ message: { content: string } }> }>(s.url, "/v1/chat/completions", {
    messages: [{ role: "user", content }],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.choices[0]!.message.content;
}

const instances = (h: Home, plugin: string, ev: string) =>
  readTrace(h.events)
    .filter((t) => t.plugin === plugin && t.ev === ev)
    .map((t) => String(t.instance));

// The two variants run side by side: most of their time is spent waiting for the stream.
describe.concurrent("reload while a streamed turn is in flight", () => {
  for (const how of ["SIGHUP", "--watch"] as const) {
    it(`${how}: the stream finishes on the old generation; new turns get the new one with p2's tool`, async () => {
      const h = makeHome(`reload-${how}`);
      const s = await start(h, how === "--watch" ? ["--watch"] : []);
      const first = await health(s);
      expect(first).toMatchObject({ generation: currentGeneration(h), plugins_loaded: ["p1"], last_reload: null });
      const [servingP1] = instances(h, "p1", "register");
      expect(servingP1).toBeDefined();
      // About 7 s of streaming: time for the person to add a plugin, compile and reload meanwhile.
      const text = `slow:150 ${words(48)}`;
      const stream = await streamTurn(s, text);
      writeRecorder(h.plugins, "p2", { file: h.events, tool: "p2_tool", onUnload: true });
      await hermes(h, "plugins", "enable", "p2");
      await hermes(h, "compile");
      const next = currentGeneration(h);
      expect(next).toBeGreaterThan(Number(first.generation));
      if (how === "SIGHUP") s.proc.child.kill("SIGHUP");
      const deadline = Date.now() + 15_000;
      let now = await health(s);
      while (now.generation !== next && Date.now() < deadline) {
        await sleep(100);
        now = await health(s);
      }
      expect(now).toMatchObject({
        generation: next,
        plugins_loaded: ["p1", "p2"],
        plugins_failed: [],
        last_reload: { ok: true, generation: next },
      });
      // The reload came while the turn streamed: it is still streaming on the old generation, whose
      // p1 is not unloaded before the turn ends.
      expect(stream.frames.at(-1)?.data).not.toBe("[DONE]");
      expect(instances(h, "p1", "unload")).toEqual([]);
      const { frames } = await stream.done;
      expect(contentOf(frames)).toBe(`echo: ${words(48)}`);
      expect(finishOf(frames)).toBe("stop");
      expect(frames.at(-1)!.data).toBe("[DONE]");
      // Then the old generation is retired: its p1 ran on_unload; the new generation's p1 did not.
      await waitFor(() => instances(h, "p1", "unload").length > 0, 10_000, "p1's on_unload");
      const p1Loads = instances(h, "p1", "register");
      expect(p1Loads).toHaveLength(2);
      expect(instances(h, "p1", "unload")).toEqual([servingP1]);
      expect(instances(h, "p2", "register")).toHaveLength(1);
      expect(instances(h, "p2", "unload")).toEqual([]);
      const answer = await chat(s, "tool:p2_tool {}");
      expect(JSON.parse(answer.replace(/^done: /, ""))).toEqual({ tool: "p2_tool", plugin: "p2", marker: "" });
      expect(await chat(s, "tool:p1_tool {}")).toMatch(/^done: \{"tool":"p1_tool"/);
      if (how === "SIGHUP") {
        expect(s.proc.stderr()).toContain("hermes serve: SIGHUP: loading the current generation");
        expect(s.proc.stderr()).toContain(`hermes serve: generation ${next} serves new turns`);
      }
      const exit = await s.stop();
      expect(exit).toEqual({ code: 0, signal: null });
      // Stopping unloads the new generation too.
      expect(instances(h, "p2", "unload")).toHaveLength(1);
    });
  }
});

describe("reloads asked for one after another", () => {
  it("a SIGHUP while a reload is under way is not lost: the generation compiled meanwhile is loaded next", async () => {
    const h = makeHome("reload-twice");
    const s = await start(h);
    const gate = join(scratch.dir("gate"), "hold");
    writeText(gate, "");
    // p2's register() waits on the gate: the reload that loads it stays under way until the test lets go.
    writeRecorder(h.plugins, "p2", { file: h.events, registerWaitsWhile: gate });
    await hermes(h, "plugins", "enable", "p2");
    const second = currentGeneration(h);
    s.proc.child.kill("SIGHUP");
    await waitFor(() => instances(h, "p2", "register").length === 1, 15_000, "the reload to reach p2");
    writeRecorder(h.plugins, "p4", { file: h.events, tool: "p4_tool" });
    await hermes(h, "plugins", "enable", "p4");
    const third = currentGeneration(h);
    expect(third).toBeGreaterThan(second);
    expect((await health(s)).last_reload).toBeNull();
    s.proc.child.kill("SIGHUP");
    await waitFor(
      () => s.proc.stderr().split("SIGHUP: loading the current generation").length === 3,
      10_000,
      "the second SIGHUP",
    );
    rmSync(gate);
    const deadline = Date.now() + 15_000;
    let now = await health(s);
    while (!(now.plugins_loaded as string[]).includes("p4") && Date.now() < deadline) {
      await sleep(100);
      now = await health(s);
    }
    expect(now).toMatchObject({
      generation: third,
      plugins_loaded: ["p1", "p2", "p4"],
      last_reload: { ok: true, generation: third },
    });
    expect(await chat(s, "tool:p4_tool {}")).toMatch(/^done: \{"tool":"p4_tool"/);
    expect(await s.stop()).toEqual({ code: 0, signal: null });
  });
});

describe("a generation that fails to load leaves the old one serving", () => {
  it("a required plugin whose register() throws, then a config.yaml that does not parse: turns go on", async () => {
    const h = makeHome("broken");
    const s = await start(h);
    expect(await chat(s, "before")).toMatch(/^echo: before/);
    const gen = currentGeneration(h);
    writeRecorder(h.plugins, "p3", { file: h.events, onUnload: true, registerThrows: "p3 refuses to load" });
    writeServeConfig(h.home, model.url, "plugins:\n  enabled: [p1, p3]\n  entries:\n    p3:\n      required: true\n");
    await hermes(h, "compile");
    expect(currentGeneration(h)).toBeGreaterThan(gen);
    s.proc.child.kill("SIGHUP");
    await waitFor(() => /hermes serve: reload failed/.test(s.proc.stderr()), 15_000, "the reload to fail");
    let now = await health(s);
    expect(now).toMatchObject({
      generation: gen,
      plugins_loaded: ["p1"],
      last_reload: { ok: false, generation: gen, error: expect.stringContaining("E_RUNTIME_REQUIRED_FAILED") },
    });
    expect(String((now.last_reload as { error: string }).error)).toContain("p3 refuses to load");
    expect(s.proc.stderr()).toMatch(
      new RegExp(`hermes serve: reload failed, generation ${gen} keeps serving: .*required plugin p3`),
    );
    expect(await chat(s, "after")).toMatch(/^echo: after/);
    expect(await chat(s, "tool:p1_tool {}")).toMatch(/^done: \{"tool":"p1_tool"/);
    // The serving p1 is untouched; the p1 the failed load had registered was unloaded with it.
    const loads = instances(h, "p1", "register");
    expect(loads).toHaveLength(2);
    expect(instances(h, "p1", "unload")).toEqual([loads[1]]);

    // A person's broken edit of config.yaml, then SIGHUP: the same.
    const failedAt = String((now.last_reload as { at: string }).at);
    writeText(join(h.home, "config.yaml"), "model: [unclosed\n");
    s.proc.child.kill("SIGHUP");
    await waitFor(
      () => s.proc.stderr().match(/hermes serve: reload failed/g)?.length === 2,
      15_000,
      "the second reload to fail",
    );
    now = await health(s);
    expect(now).toMatchObject({ generation: gen, plugins_loaded: ["p1"], last_reload: { ok: false, generation: gen } });
    expect((now.last_reload as { at: string }).at).not.toBe(failedAt);
    expect(String((now.last_reload as { error: string }).error)).not.toBe("");
    expect(await chat(s, "still here")).toMatch(/^echo: still here/);
    expect(instances(h, "p1", "unload")).toEqual([loads[1]]);
    expect(await s.stop()).toEqual({ code: 0, signal: null });
    expect(instances(h, "p1", "unload")).toEqual([loads[1], loads[0]]);
  });
});

describe("SIGTERM", () => {
  it("with shutdown_grace_seconds: 10, the streamed turn in flight completes and the process exits 0", async () => {
    const h = makeHome("term-grace", "  shutdown_grace_seconds: 10\n");
    const s = await start(h);
    const stream = await streamTurn(s, `slow:100 ${words(15)}`);
    s.proc.child.kill("SIGTERM");
    const { frames } = await stream.done;
    expect(contentOf(frames)).toBe(`echo: ${words(15)}`);
    expect(finishOf(frames)).toBe("stop");
    expect(frames.at(-1)!.data).toBe("[DONE]");
    expect(await s.proc.done).toEqual({ code: 0, signal: null });
    expect(s.proc.stderr()).toContain("hermes serve: SIGTERM: stopping");
    expect(instances(h, "p1", "unload")).toHaveLength(1);
  });

  it("a SIGHUP while the stop finalizes sessions loads nothing: the process still exits", async () => {
    const root = scratch.dir("term-hup");
    const finalizing = join(root, "finalize-gate");
    const loading = join(root, "load-gate");
    const h = makeHome("term-hup");
    // p5 holds the stop in on_session_finalize while `finalizing` exists, and a load while `loading` exists.
    writeRecorder(h.plugins, "p5", {
      file: h.events,
      hooks: ["on_session_finalize"],
      hooksWaitWhile: finalizing,
      registerWaitsWhile: loading,
      onUnload: true,
    });
    writeServeConfig(h.home, model.url, "plugins:\n  enabled: [p1, p5]\ngateway:\n  shutdown_grace_seconds: 5\n");
    const s = await start(h);
    expect(await chat(s, "a session to finalize")).toMatch(/^echo: a session to finalize/);
    writeText(finalizing, "");
    writeText(loading, "");
    s.proc.child.kill("SIGTERM");
    await waitFor(
      () => readTrace(h.events).some((t) => t.ev === "hook:on_session_finalize:called"),
      10_000,
      "the stop to finalize",
    );
    s.proc.child.kill("SIGHUP");
    await waitFor(() => s.proc.stderr().includes("SIGHUP: loading the current generation"), 10_000, "the SIGHUP");
    rmSync(finalizing);
    await sleep(300);
    rmSync(loading);
    const exit = await Promise.race([s.proc.done, sleep(10_000).then(() => "still running")]);
    expect(exit, s.proc.stderr()).toEqual({ code: 0, signal: null });
    // No generation was loaded after the stop began: the one p5 that registered ran its on_unload.
    expect(instances(h, "p5", "register")).toHaveLength(1);
    expect(instances(h, "p5", "unload")).toEqual(instances(h, "p5", "register"));
    expect(s.proc.stderr()).toContain(
      "hermes serve: reload failed, generation 1 keeps serving: the service is stopping",
    );
  });

  it("with shutdown_grace_seconds: 0, a hanging turn is interrupted: exit 0 at once, ended, finalized", async () => {
    const h = makeHome("term-now", "  shutdown_grace_seconds: 0\n", [
      "on_session_start",
      "on_session_end",
      "on_session_finalize",
    ]);
    const s = await start(h);
    const before = model.requests.length;
    const stream = await openSse(`${s.url}/v1/chat/completions`, {
      body: { messages: [{ role: "user", content: "hang" }], stream: true },
    });
    const sessionId = stream.headers.get("x-hermes-session-id");
    expect(sessionId).toMatch(/^api-/);
    await waitFor(
      () => model.requests.slice(before).some((q) => q.messages.at(-1)?.content === "hang"),
      10_000,
      "the model call",
    );
    const t0 = Date.now();
    s.proc.child.kill("SIGTERM");
    expect(await s.proc.done).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(5_000);
    const { frames } = await stream.done;
    expect(frames.at(-1)?.data).toBe("[DONE]");
    const mine = readTrace(h.events).filter((t) => t.session_id === sessionId);
    expect(mine.map((t) => t.ev)).toEqual(["hook:on_session_start", "hook:on_session_end", "hook:on_session_finalize"]);
    expect(mine[1]).toMatchObject({ interrupted: true, completed: false });
    expect(mine[2]).toMatchObject({ reason: "shutdown", platform: "api_server" });
  });
});
