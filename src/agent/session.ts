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

  constructor(ids: { session_id?: string; task_id?: string } = {}) {
    this.session_id = ids.session_id ?? newId("sess");
    this.task_id = ids.task_id ?? newId("task");
  }

  /** The conversation without the system prompt, as hooks see it (a copy). */
  history(): ChatMessage[] {
    return structuredClone(this.messages.filter((m) => m.role !== "system"));
  }
}
