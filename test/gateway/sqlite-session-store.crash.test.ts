/**
 * kill -9 at random moments of a process appending turns to the session store: after each kill the
 * file opens, holds every turn the process reported committed, whole and in order, at most the one
 * turn in flight besides, never part of a turn, and passes SQLite's integrity check.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { seededRandom } from "../support/util.js";
import { SqliteSessionStore } from "../../src/gateway/sqlite-session-store.js";
import { ROOT } from "../support/cli.js";
import { Scratch } from "../support/home.js";

const scratch = new Scratch("hermes-sessions-crash-");
afterAll(() => scratch.cleanup());

/** Messages per turn: a kill that split a turn would leave a count that is not a multiple of it. */
const PER_TURN = 3;
const SESSION = "main";
const SEED = Number(process.env.HERMES_TEST_SEED ?? Date.now() % 1_000_000);

/**
 * The writer: opens the store from dist/, prints "open <turns>", then appends turns until killed,
 * printing each turn's number once appendTurn returned. Every tenth turn carries a message of several
 * pages, so commits span page boundaries and the WAL reaches a checkpoint.
 */
const WRITER = `
import { writeSync } from "node:fs";
const [storeUrl, file, perTurn, session] = process.argv.slice(2);
const { SqliteSessionStore } = await import(storeUrl);
const store = SqliteSessionStore.open(file);
store.create(session, null);
let turns = store.list().find((s) => s.session_id === session).turns;
writeSync(1, "open " + turns + "\\n");
for (;;) {
  turns++;
  const messages = [];
  for (let i = 0; i < Number(perTurn); i++) {
    const pad = "x".repeat(turns % 10 === 0 && i === 1 ? 9000 + turns % 7000 : (turns * 31 + i) % 300);
    messages.push({ role: i === 0 ? "user" : "assistant", content: "t" + turns + "." + i + " " + pad });
  }
  store.appendTurn(session, { messages, turns, system_prompt: "sp" });
  writeSync(1, turns + "\\n");
}
`;

interface Run {
  /** The turn count the writer found when it opened, if it got that far. */
  opened?: number;
  /** The last turn the writer reported committed, if any. */
  reported?: number;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Start the writer on `file` and SIGKILL it `delayMs` after it opened the store (or after spawn). */
function killedWriter(script: string, file: string, delayMs: number, afterOpen: boolean): Promise<Run> {
  const storeUrl = pathToFileURL(join(ROOT, "dist", "gateway", "sqlite-session-store.js")).href;
  const child = spawn(process.execPath, [script, storeUrl, file, String(PER_TURN), SESSION], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let stderr = "";
  let armed = false;
  const arm = () => {
    armed = true;
    setTimeout(() => child.kill("SIGKILL"), delayMs);
  };
  // A writer that never opens (or never dies) fails the run instead of hanging it.
  const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
  if (!afterOpen) arm();
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
    if (!armed && out.includes("\n")) arm();
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((resolve) => {
    child.on("close", (_code, signal) => {
      clearTimeout(guard);
      // The text after the last newline is empty or a line the kill cut short.
      const lines = out.split("\n").slice(0, -1);
      const opened = lines[0]?.startsWith("open ") ? Number(lines[0].slice(5)) : undefined;
      const last = lines.length > 1 ? Number(lines[lines.length - 1]) : undefined;
      resolve({ opened, reported: Number.isNaN(last) ? undefined : last, signal, stderr });
    });
  });
}

/** Open the file as `hermes serve` would, check the session against what the writers reported; its turns. */
function verify(file: string, floor: number, run: Run, label: string): number {
  const store = SqliteSessionStore.open(file);
  let turns: number;
  try {
    const s = store.get(SESSION);
    turns = s?.turns ?? 0;
    const committed = Math.max(floor, run.reported ?? run.opened ?? 0);
    // Every turn reported is there; besides, at most the one in flight, and none if the writer never got to write.
    expect(turns, label).toBeGreaterThanOrEqual(committed);
    expect(turns, label).toBeLessThanOrEqual(run.opened === undefined ? committed : committed + 1);
    const contents = (s?.messages ?? []).map((m) => m.content ?? "");
    expect(contents.length, label).toBe(turns * PER_TURN);
    const wrong = contents.findIndex((c, k) => !c.startsWith(`t${Math.floor(k / PER_TURN) + 1}.${k % PER_TURN} `));
    expect(wrong, `${label}: first message out of place`).toBe(-1);
  } finally {
    store.close();
  }
  const db = new Database(file, { readonly: true });
  try {
    expect(db.pragma("integrity_check", { simple: true }), label).toBe("ok");
  } finally {
    db.close();
  }
  return turns;
}

describe(`session store under kill -9 (seed ${SEED})`, () => {
  const script = join(scratch.dir("writer"), "writer.mjs");
  writeFileSync(script, WRITER);

  it("60 writers killed at random moments: every reported turn is kept whole and in order", async () => {
    const random = seededRandom(SEED);
    const file = join(scratch.dir("kills"), "sessions", "sessions.db");
    let turns = 0;
    let wrote = 0;
    for (let i = 0; i < 60; i++) {
      // One run in six is killed from spawn on (startup, open, WAL recovery); the others mid-append.
      const fromSpawn = i % 6 === 5;
      const delay = fromSpawn ? Math.floor(random() * 150) : Math.floor(random() * 25);
      const run = await killedWriter(script, file, delay, !fromSpawn);
      const label = `run ${i} (seed ${SEED}, kill ${delay} ms after ${fromSpawn ? "spawn" : "open"})`;
      expect(run.signal, `${label}: ${run.stderr}`).toBe("SIGKILL");
      const after = verify(file, turns, run, label);
      if (after > turns) wrote++;
      turns = after;
    }
    // Most runs must have written: a test whose writers all died before their first turn proves nothing.
    expect(wrote).toBeGreaterThan(30);
  }, 120_000);

  it("writers killed while creating a new file leave one that opens whole", async () => {
    const random = seededRandom(SEED + 1);
    for (let i = 0; i < 15; i++) {
      const file = join(scratch.dir(`new-${i}`), "sessions", "sessions.db");
      const delay = Math.floor(random() * 120);
      const run = await killedWriter(script, file, delay, false);
      const label = `new file ${i} (seed ${SEED}, kill ${delay} ms after spawn)`;
      expect(run.signal, `${label}: ${run.stderr}`).toBe("SIGKILL");
      verify(file, 0, run, label);
    }
  }, 60_000);
});
