/** `hooks.<name>[i].timeout` of config.yaml when unset, and its ceiling (seconds), as in the original. */
export const SHELL_HOOK_DEFAULT_TIMEOUT = 60;
export const SHELL_HOOK_MAX_TIMEOUT = 300;

/** The gateway events `hermes serve` emits to event hooks (HOOK.yaml `events`), with their context keys. */
export const GATEWAY_EVENTS: ReadonlyArray<{ event: string; when: string; context: readonly string[] }> = [
  { event: "gateway:startup", when: "`hermes serve` has loaded and its platforms started", context: ["platforms"] },
  {
    event: "session:start",
    when: "the first turn of a new session starts",
    context: ["platform", "user_id", "session_id", "session_key"],
  },
  {
    event: "session:reset",
    when: "a session was reset (`/reset`, `POST /v1/sessions/{id}/reset`)",
    context: ["platform", "user_id", "session_key"],
  },
  {
    event: "agent:start",
    when: "a turn starts (after `session:start`)",
    context: ["platform", "user_id", "session_id", "session_key", "message"],
  },
  {
    event: "agent:step",
    when: "the model answered once within a turn (a tool-calling round or the final answer)",
    context: ["platform", "user_id", "session_id", "session_key", "iteration", "tool_names"],
  },
  {
    event: "agent:end",
    when: "a turn finished",
    context: ["platform", "user_id", "session_id", "session_key", "message", "response"],
  },
  {
    event: "command:<name>",
    when: "a chat platform's slash command runs, before it does",
    context: ["platform", "user_id", "command", "args"],
  },
];
