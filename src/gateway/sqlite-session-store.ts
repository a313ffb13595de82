import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { ChatMessage } from "../agent/types.js";
import { HermesError } from "../core/errors.js";
import type { SessionStore, SessionSummary, StoredSession, TurnRecord } from "./session-store.js";

/**
 * The embedded session store of `hermes serve`: one SQLite file in WAL mode. Every failure of SQLite
 * or of the file system is a HermesError E_SERVE_STORE naming the file and the step that failed.
 */

/** The schema this code writes (PRAGMA user_version); a higher one was written by a newer hermes-kit. */
export const SCHEMA_VERSION = 1;

/** How long a write waits for another connection's lock before it fails with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/** MIGRATIONS[v] takes a file from schema v to v + 1; all of one open run in a single transaction. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY NOT NULL,
    session_key TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    turns INTEGER NOT NULL DEFAULT 0,
    system_prompt TEXT
  );
  CREATE INDEX sessions_by_update ON sessions (updated_at DESC, session_id);
  CREATE TABLE messages (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
  );`,
];

export interface SqliteSessionStoreOptions {
  /** The clock of created_at and updated_at (milliseconds since the epoch); tests pin it. */
  now?: () => number;
}

interface SessionRow {
  session_id: string;
  session_key: string | null;
  created_at: number;
  updated_at: number;
  turns: number;
  system_prompt: string | null;
}

const SESSION_COLUMNS = "session_id, session_key, created_at, updated_at, turns, system_prompt";

const LIST_SQL =
  "SELECT s.session_id, s.session_key, s.turns, s.updated_at, " +
  "(SELECT count(*) FROM messages m WHERE m.session_id = s.session_id) AS messages " +
  "FROM sessions s ORDER BY s.updated_at DESC, s.session_id";

/** Every statement of the store, prepared once when it opens. */
function prepareStatements(db: Database.Database) {
  return {
    session: db.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = ?`),
    messages: db.prepare<[string], { seq: number; json: string }>(
      "SELECT seq, json FROM messages WHERE session_id = ? ORDER BY seq",
    ),
    insertSession: db.prepare<[string, string | null, number, number]>(
      "INSERT OR IGNORE INTO sessions (session_id, session_key, created_at, updated_at) VALUES (?, ?, ?, ?)",
    ),
    setCounters: db.prepare<[number, string | null, number, string]>(
      "UPDATE sessions SET turns = ?, system_prompt = ?, updated_at = ? WHERE session_id = ?",
    ),
    setKey: db.prepare<[string, string]>("UPDATE sessions SET session_key = ? WHERE session_id = ?"),
    nextSeq: db.prepare<[string], { next: number }>(
      "SELECT coalesce(max(seq), -1) + 1 AS next FROM messages WHERE session_id = ?",
    ),
    insertMessage: db.prepare<[string, number, string]>(
      "INSERT INTO messages (session_id, seq, json) VALUES (?, ?, ?)",
    ),
    deleteMessages: db.prepare<[string]>("DELETE FROM messages WHERE session_id = ?"),
    list: db.prepare<[], SessionSummary>(LIST_SQL),
    count: db.prepare<[], { n: number }>("SELECT count(*) AS n FROM sessions"),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/** What a user can do about a failure, by the SQLite or errno code it carries (undefined: the catalog's hint). */
function hintFor(code: string | undefined): string | undefined {
  if (code === undefined) return undefined;
  if (/^SQLITE_(NOTADB|CORRUPT)/.test(code))
    return (
      "the file is damaged or is not a session store: move it aside (hermes serve then starts with no " +
      "sessions) and keep it for inspection"
    );
  if (/^SQLITE_FULL|^ENOSPC$|^EDQUOT$/.test(code)) return "free space on the disk that holds the file";
  if (/^SQLITE_(CANTOPEN|READONLY|PERM|AUTH)|^(EACCES|EPERM|EROFS)$/.test(code))
    return "check that the user running hermes serve may write the file and its folder";
  if (/^SQLITE_(BUSY|LOCKED)/.test(code))
    return `another process held the store for over ${BUSY_TIMEOUT_MS / 1000} s: run one hermes serve per home`;
  return undefined;
}

/** Any failure as E_SERVE_STORE naming the file and the step (a HermesError already is one). */
function storeError(file: string, step: string, err: unknown): HermesError {
  if (err instanceof HermesError) return err;
  const raw = (err as { code?: unknown } | null)?.code;
  const code = typeof raw === "string" ? raw : undefined;
  const reason = err instanceof Error ? err.message : String(err);
  return new HermesError("E_SERVE_STORE", {
    message: `session store ${file}: ${step} failed: ${reason}${code ? ` (${code})` : ""}`,
    hint: hintFor(code),
    file,
    cause: err,
  });
}

function newerSchema(file: string, version: number): HermesError {
  return new HermesError("E_SERVE_STORE", {
    message: `session store ${file} has schema version ${version}; this hermes-kit reads up to ${SCHEMA_VERSION}`,
    hint: "a newer hermes-kit wrote it: run that version, or move the file aside to start with no sessions",
    file,
  });
}

function userVersion(db: Database.Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/** Bring the schema to SCHEMA_VERSION; a write lock first, so two processes opening a new file migrate once. */
function migrate(db: Database.Database, file: string): void {
  db.transaction(() => {
    const version = userVersion(db);
    if (version > SCHEMA_VERSION) throw newerSchema(file, version);
    if (version === 0) {
      const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number };
      // Version 0 with tables is another program's database: adding ours would mix two programs' data.
      if (tables.n > 0)
        throw new HermesError("E_SERVE_STORE", {
          message: `session store ${file} is the SQLite database of another program (tables, no schema version)`,
          hint: "point hermes serve at its own file, or move this one aside",
          file,
        });
    }
    for (let v = version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/** The pragmas and schema of an opened file; a newer schema is refused before anything is written. */
function configure(db: Database.Database, file: string): void {
  const version = userVersion(db);
  if (version > SCHEMA_VERSION) throw newerSchema(file, version);
  // Where WAL is impossible SQLite keeps a rollback journal, which survives kill -9 as well.
  db.pragma("journal_mode = WAL");
  // WAL + NORMAL: a commit is in the WAL (OS cache) when it returns, so kill -9 loses nothing; a power cut may.
  db.pragma("synchronous = NORMAL");
  if (version < SCHEMA_VERSION) migrate(db, file);
}

/** A stored message back as a ChatMessage; a row that is not one is a damaged store. */
function parseMessage(file: string, sessionId: string, seq: number, json: string): ChatMessage {
  const m = JSON.parse(json) as Partial<ChatMessage> | null;
  if (m === null || typeof m !== "object" || typeof m.role !== "string")
    throw new HermesError("E_SERVE_STORE", {
      message: `session store ${file}: message ${seq} of session ${sessionId} is not a chat message`,
      hint: hintFor("SQLITE_CORRUPT"),
      file,
    });
  return m as ChatMessage;
}

export class SqliteSessionStore implements SessionStore {
  private readonly stmt: Statements;
  /** Transactions, like the statements, made once: get reads one snapshot, the writers take the lock first. */
  private readonly tx: ReturnType<SqliteSessionStore["transactions"]>;

  private constructor(
    private readonly db: Database.Database,
    readonly file: string,
    private readonly now: () => number,
  ) {
    this.stmt = prepareStatements(db);
    this.tx = this.transactions();
  }

  /** Open `file`, creating it (and its folder, 0700) when missing, and its schema when new. */
  static open(file: string, options: SqliteSessionStoreOptions = {}): SqliteSessionStore {
    let db: Database.Database | undefined;
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the same mode.
      closeSync(openSync(file, "a", 0o600));
      db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
      configure(db, file);
      return new SqliteSessionStore(db, file, options.now ?? Date.now);
    } catch (err) {
      db?.close();
      throw storeError(file, "opening", err);
    }
  }

  get(sessionId: string): StoredSession | undefined {
    return this.guard(`reading session ${sessionId}`, () => this.tx.get(sessionId));
  }

  create(sessionId: string, sessionKey: string | null): StoredSession {
    return this.guard(`creating session ${sessionId}`, () => this.tx.create.immediate(sessionId, sessionKey));
  }

  appendTurn(sessionId: string, turn: TurnRecord): void {
    this.guard(`appending turn ${turn.turns} to session ${sessionId}`, () => {
      // Serialized before the write lock is taken: the lock is held for the inserts only.
      const rows = turn.messages.map((m) => JSON.stringify(m));
      this.tx.append.immediate(sessionId, turn, rows);
    });
  }

  reset(sessionId: string): void {
    this.guard(`resetting session ${sessionId}`, () => this.tx.reset.immediate(sessionId));
  }

  list(): SessionSummary[] {
    return this.guard("listing sessions", () => this.stmt.list.all());
  }

  count(): number {
    return this.guard("counting sessions", () => this.stmt.count.get()!.n);
  }

  close(): void {
    this.guard("closing", () => this.db.close());
  }

  private transactions() {
    const { db, stmt } = this;
    return {
      get: db.transaction((sessionId: string) => this.load(sessionId)),
      create: db.transaction((sessionId: string, sessionKey: string | null) => {
        const now = this.now();
        stmt.insertSession.run(sessionId, sessionKey, now, now);
        return this.load(sessionId)!;
      }),
      append: db.transaction((sessionId: string, turn: TurnRecord, rows: string[]) => {
        if (stmt.setCounters.run(turn.turns, turn.system_prompt, this.now(), sessionId).changes === 0)
          throw new HermesError("E_SERVE_STORE", {
            message: `session store ${this.file}: no session ${sessionId} to append turn ${turn.turns} to`,
            hint: "create the session before its first turn",
            file: this.file,
          });
        if (turn.replace) stmt.deleteMessages.run(sessionId);
        if (turn.session_key !== undefined) stmt.setKey.run(turn.session_key, sessionId);
        let seq = stmt.nextSeq.get(sessionId)!.next;
        for (const json of rows) stmt.insertMessage.run(sessionId, seq++, json);
      }),
      // An unknown id has nothing to forget.
      reset: db.transaction((sessionId: string) => {
        if (stmt.setCounters.run(0, null, this.now(), sessionId).changes > 0) stmt.deleteMessages.run(sessionId);
      }),
    };
  }

  /** The session and its messages; called inside a transaction so both come from one snapshot. */
  private load(sessionId: string): StoredSession | undefined {
    const row = this.stmt.session.get(sessionId);
    if (!row) return undefined;
    const messages = this.stmt.messages.all(sessionId).map((m) => parseMessage(this.file, sessionId, m.seq, m.json));
    return { ...row, messages };
  }

  private guard<T>(step: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw storeError(this.file, step, err);
    }
  }
}
