/**
 * The embedded session store of `hermes serve`: what goes in comes back in order, a turn is written
 * whole or not at all, the file survives a reopen, and every failure of the file is E_SERVE_STORE.
 * Kills at random moments are in sqlite-session-store.crash.test.ts (slow suite).
 */
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/agent/types.js";
import { HermesError } from "../../src/core/errors.js";
import { SCHEMA_VERSION, SqliteSessionStore } from "../../src/gateway/sqlite-session-store.js";
import { permissionsEnforced, Scratch } from "../support/home.js";

const scratch = new Scratch("hermes-sessions-");
afterAll(() => scratch.cleanup());

const open: SqliteSessionStore[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

/** A store in a fresh folder on a clock the test moves by hand (`clock.t`). */
function fresh(file = join(scratch.dir("store"), "sessions", "sessions.db")) {
  const clock = { t: 1_000 };
  const store = SqliteSessionStore.open(file, { now: () => clock.t });
  open.push(store);
  return { store, file, clock };
}

/** The E_SERVE_STORE `fn` throws (the test fails when it throws nothing or another error). */
function storeError(fn: () => unknown): HermesError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HermesError);
    expect((err as HermesError).code).toBe("E_SERVE_STORE");
    return err as HermesError;
  }
  throw new Error("expected E_SERVE_STORE, nothing was thrown");
}

const user = (content: string): ChatMessage => ({ role: "user", content });

/** A turn of every message shape: user, assistant with tool calls and null content, tool result, named. */
function fullTurn(n: number): ChatMessage[] {
  return [
    { role: "user", content: `question ${n}`, name: "alice" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: `call_${n}`, type: "function", function: { name: "lookup", arguments: `{"n":${n}}` } }],
    },
    { role: "tool", content: `result ${n} — ünïcödé ✓`, tool_call_id: `call_${n}`, name: "lookup" },
    { role: "assistant", content: `answer ${n}` },
  ];
}

describe("SqliteSessionStore: sessions and turns", () => {
  it("round trip: create, append a turn of every message shape, get it back as written", () => {
    const { store, clock } = fresh();
    expect(store.get("s1")).toBeUndefined();
    const created = store.create("s1", "key-1");
    expect(created).toEqual({
      session_id: "s1",
      session_key: "key-1",
      created_at: 1_000,
      updated_at: 1_000,
      turns: 0,
      system_prompt: null,
      messages: [],
    });
    clock.t = 2_000;
    store.appendTurn("s1", { messages: fullTurn(1), turns: 1, system_prompt: "You are terse." });
    expect(store.get("s1")).toEqual({
      ...created,
      updated_at: 2_000,
      turns: 1,
      system_prompt: "You are terse.",
      messages: fullTurn(1),
    });
  });

  it("appendTurn keeps the order of messages across many turns of varied sizes", () => {
    const { store } = fresh();
    store.create("s", null);
    const expected: ChatMessage[] = [];
    for (let t = 1; t <= 60; t++) {
      const messages = Array.from({ length: 1 + (t % 5) }, (_, i) =>
        user(`t${t}.m${i} ${"x".repeat((t * 97) % 3000)}`),
      );
      store.appendTurn("s", { messages, turns: t, system_prompt: "sp" });
      expected.push(...messages);
    }
    const s = store.get("s")!;
    expect(s.turns).toBe(60);
    expect(s.messages.map((m) => m.content)).toEqual(expected.map((m) => m.content));
  });

  it("a turn with no messages still counts", () => {
    const { store } = fresh();
    store.create("s", null);
    store.appendTurn("s", { messages: [], turns: 1, system_prompt: null });
    expect(store.get("s")).toMatchObject({ turns: 1, messages: [] });
  });

  it("a turn that names a session key keeps it; one that names none leaves the key as it was", () => {
    const { store } = fresh();
    store.create("s", "first");
    store.appendTurn("s", { messages: [user("a")], turns: 1, system_prompt: null, session_key: "second" });
    expect(store.get("s")?.session_key).toBe("second");
    store.appendTurn("s", { messages: [user("b")], turns: 2, system_prompt: null });
    expect(store.get("s")?.session_key).toBe("second");
  });

  it("reset forgets messages, turns and the system prompt; keeps id, key and created_at; numbering restarts", () => {
    const { store, clock } = fresh();
    store.create("s", "k");
    store.create("other", null);
    clock.t = 2_000;
    store.appendTurn("s", { messages: fullTurn(1), turns: 1, system_prompt: "sp" });
    store.appendTurn("other", { messages: [user("kept")], turns: 1, system_prompt: null });
    clock.t = 3_000;
    store.reset("s");
    expect(store.get("s")).toEqual({
      session_id: "s",
      session_key: "k",
      created_at: 1_000,
      updated_at: 3_000,
      turns: 0,
      system_prompt: null,
      messages: [],
    });
    expect(store.get("other")!.messages).toEqual([user("kept")]);
    store.appendTurn("s", { messages: [user("again")], turns: 1, system_prompt: "sp2" });
    expect(store.get("s")).toMatchObject({ turns: 1, system_prompt: "sp2", messages: [user("again")] });
    store.reset("no-such-session");
    expect(store.count()).toBe(2);
  });

  it("list: most recently updated first, ties by session id, with turn and message counts; count", () => {
    const { store, clock } = fresh();
    expect(store.list()).toEqual([]);
    expect(store.count()).toBe(0);
    for (const id of ["a", "b", "c", "d"]) store.create(id, id === "b" ? "key-b" : null);
    clock.t = 5_000;
    store.appendTurn("b", { messages: fullTurn(1), turns: 1, system_prompt: null });
    clock.t = 6_000;
    store.appendTurn("a", { messages: [user("hi")], turns: 1, system_prompt: null });
    store.appendTurn("a", { messages: [user("again")], turns: 2, system_prompt: null });
    expect(store.list()).toEqual([
      { session_id: "a", session_key: null, turns: 2, messages: 2, updated_at: 6_000 },
      { session_id: "b", session_key: "key-b", turns: 1, messages: 4, updated_at: 5_000 },
      { session_id: "c", session_key: null, turns: 0, messages: 0, updated_at: 1_000 },
      { session_id: "d", session_key: null, turns: 0, messages: 0, updated_at: 1_000 },
    ]);
    expect(store.count()).toBe(4);
  });

  it("create of an existing id returns the existing session unchanged, key and messages included", () => {
    const { store, clock } = fresh();
    store.create("s", "first-key");
    store.appendTurn("s", { messages: [user("hello")], turns: 1, system_prompt: "sp" });
    clock.t = 9_000;
    const again = store.create("s", "second-key");
    expect(again).toEqual(store.get("s"));
    expect(again).toMatchObject({ session_key: "first-key", created_at: 1_000, turns: 1, messages: [user("hello")] });
    expect(store.count()).toBe(1);
  });

  it("appendTurn to an id the store does not have is refused, and writes nothing", () => {
    const { store } = fresh();
    const e = storeError(() => store.appendTurn("ghost", { messages: [user("x")], turns: 1, system_prompt: null }));
    expect(e.message).toContain("ghost");
    expect(store.count()).toBe(0);
    expect(store.list()).toEqual([]);
  });

  it("a turn that fails midway (disk full) leaves the session as it was, and the store usable", () => {
    const { store, file } = fresh();
    store.create("s", null);
    store.appendTurn("s", { messages: [user("before")], turns: 1, system_prompt: null });
    const before = store.get("s");
    // Same effect as a full disk: SQLite refuses to grow the file past this many pages (SQLITE_FULL).
    const db = (store as unknown as { db: Database.Database }).db;
    db.pragma(`max_page_count = ${(db.pragma("page_count", { simple: true }) as number) + 2}`);
    const big = Array.from({ length: 5 }, (_, i) => user(`${i} ${"y".repeat(20_000)}`));
    const e = storeError(() => store.appendTurn("s", { messages: big, turns: 2, system_prompt: "sp" }));
    expect(e.message).toContain(file);
    expect(e.message).toContain("SQLITE_FULL");
    expect(e.hint).toMatch(/free space/);
    expect(store.get("s")).toEqual(before);
    store.appendTurn("s", { messages: [user("after")], turns: 2, system_prompt: null });
    expect(store.get("s")!.messages).toEqual([user("before"), user("after")]);
  });

  it("every method of a closed store throws E_SERVE_STORE; closing twice is harmless", () => {
    const { store } = fresh();
    open.splice(open.indexOf(store), 1);
    store.close();
    store.close();
    storeError(() => store.get("s"));
    storeError(() => store.create("s", null));
    storeError(() => store.list());
  });
});

describe("SqliteSessionStore: the file", () => {
  it("reopening after close keeps every session, message and counter", () => {
    const { store, file } = fresh();
    store.create("s", "k");
    store.appendTurn("s", { messages: fullTurn(1), turns: 1, system_prompt: "sp" });
    store.create("t", null);
    const before = { s: store.get("s"), list: store.list() };
    open.splice(open.indexOf(store), 1);
    store.close();
    const again = fresh(file).store;
    expect({ s: again.get("s"), list: again.list() }).toEqual(before);
    again.appendTurn("s", { messages: fullTurn(2), turns: 2, system_prompt: "sp" });
    expect(again.get("s")!.messages).toEqual([...fullTurn(1), ...fullTurn(2)]);
  });

  it("creates its folder 0700 and the file 0600, in WAL mode, at the current schema version", () => {
    const { file } = fresh();
    expect(statSync(join(file, "..")).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    } finally {
      db.close();
    }
  });

  it("a file of a newer schema version is refused, and left as it was", () => {
    const file = join(scratch.dir("newer"), "sessions.db");
    const db = new Database(file);
    db.exec("CREATE TABLE future (x)");
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const bytes = readFileSync(file);
    const e = storeError(() => SqliteSessionStore.open(file));
    expect(e.message).toContain(file);
    expect(e.message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
    expect(e.hint).toMatch(/newer hermes-kit/);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it("a file that is not a database (garbage bytes) is refused, and left as it was", () => {
    const file = join(scratch.dir("corrupt"), "sessions.db");
    const garbage = Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 131 + 7) % 256));
    writeFileSync(file, garbage);
    const e = storeError(() => SqliteSessionStore.open(file));
    expect(e.message).toContain(file);
    expect(e.message).toMatch(/file is not a database/);
    expect(e.hint).toMatch(/move it aside/);
    expect(readFileSync(file).equals(garbage)).toBe(true);
  });

  it("another program's SQLite database (tables, no schema version) is refused", () => {
    const file = join(scratch.dir("foreign"), "app.db");
    const db = new Database(file);
    db.exec("CREATE TABLE notes (body TEXT)");
    db.close();
    const e = storeError(() => SqliteSessionStore.open(file));
    expect(e.message).toContain(file);
    expect(e.message).toMatch(/another program/);
  });

  it.skipIf(!permissionsEnforced)(
    "a folder it may not write is refused, naming the file (root writes anywhere)",
    () => {
      const dir = scratch.dir("locked");
      chmodSync(dir, 0o500);
      for (const file of [join(dir, "sessions.db"), join(dir, "sessions", "sessions.db")]) {
        const e = storeError(() => SqliteSessionStore.open(file));
        expect(e.message).toContain(file);
        expect(e.hint).toMatch(/may write/);
      }
    },
  );
});
