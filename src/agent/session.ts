import { newId } from "./ids.js";
import type { ChatMessage } from "./types.js";

/**
 * One conversation: its ids, its messages (the system prompt first, frozen once rendered), and
 * the approvals a person gave "for this session".
 */
export class Session {
  readonly session_id: string;
  readonly task_id: string;
  readonly messages: ChatMessage[] = [];
  /** Turns started so far (the first one fires on_session_start). */
  turns = 0;
  systemPrompt: string | undefined;
  readonly sessionApprovals = new Set<string>();
  /** The session key plugins see (hermes serve's X-Hermes-Session-Key); the session id when unset. */
  sessionKey: string | undefined;

  constructor(ids: { session_id?: string; task_id?: string } = {}) {
    this.session_id = ids.session_id ?? newId("sess");
    this.task_id = ids.task_id ?? newId("task");
  }

  get key(): string {
    return this.sessionKey ?? this.session_id;
  }

  /** A conversation kept elsewhere (hermes serve's store), continued where it stopped. */
  static restore(saved: {
    session_id: string;
    turns: number;
    system_prompt: string | null;
    messages: readonly ChatMessage[];
  }): Session {
    const s = new Session({ session_id: saved.session_id });
    s.turns = saved.turns;
    if (saved.system_prompt !== null) {
      s.systemPrompt = saved.system_prompt;
      s.messages.push({ role: "system", content: saved.system_prompt });
    }
    s.messages.push(...structuredClone(saved.messages));
    return s;
  }

  /** The conversation without the system prompt, as hooks see it (a copy). */
  history(): ChatMessage[] {
    return structuredClone(this.messages.filter((m) => m.role !== "system"));
  }
}
