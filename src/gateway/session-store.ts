import type { ChatMessage } from "../agent/types.js";

/** One conversation of `hermes serve` as the store keeps it. */
export interface StoredSession {
  session_id: string;
  /** The session key plugins see (X-Hermes-Session-Key), or null for the session id. */
  session_key: string | null;
  /** Milliseconds since the epoch. */
  created_at: number;
  updated_at: number;
  /** Completed turns (the first turn of a session fires on_session_start). */
  turns: number;
  /** The system prompt frozen at the first turn, or null before it. */
  system_prompt: string | null;
  /** The conversation without the system prompt, in order. */
  messages: ChatMessage[];
}

/** What one finished turn adds to a session: its messages and the session's new counters. */
export interface TurnRecord {
  /** The messages the turn appended (user, assistant, tool), in order. */
  messages: readonly ChatMessage[];
  /** The session's turn count after this turn. */
  turns: number;
  system_prompt: string | null;
  /**
   * The messages replace all the session had, in the same transaction (a client that sends the whole
   * conversation each time owns it): a kill never leaves the session emptied between the two.
   */
  replace?: boolean;
  /** The session key the turn ran with, when a client named one (X-Hermes-Session-Key): it is kept. */
  session_key?: string;
}

export interface SessionSummary {
  session_id: string;
  session_key: string | null;
  turns: number;
  messages: number;
  updated_at: number;
}

/**
 * Where `hermes serve` keeps its sessions. A turn is written whole or not at all: a process
 * killed at any point leaves every earlier turn readable and loses at most the turn in flight.
 * Every failure of the storage underneath is a HermesError E_SERVE_STORE naming the file or
 * service and the step that failed.
 * An interface so that a store shared by several replicas can replace the embedded one.
 */
export interface SessionStore {
  /** The session, or undefined when the store has none of that id. */
  get(sessionId: string): StoredSession | undefined;
  /**
   * The session of that id: a new empty one, or, when the id exists, the existing one unchanged (its
   * key and messages too), so that two requests racing to open one session both get it.
   */
  create(sessionId: string, sessionKey: string | null): StoredSession;
  /**
   * Append one finished turn atomically: its messages after the session's (instead of them with
   * `replace`), its counters, and updated_at. An id the store does not have is refused (E_SERVE_STORE)
   * rather than dropped.
   */
  appendTurn(sessionId: string, turn: TurnRecord): void;
  /**
   * Forget a session's messages and counters (turns 0, system_prompt null; keeps the id, key and
   * created_at): a reset. Does nothing for an id the store does not have.
   */
  reset(sessionId: string): void;
  /** Every session, most recently updated first (ties by session id). */
  list(): SessionSummary[];
  count(): number;
  close(): void;
}
