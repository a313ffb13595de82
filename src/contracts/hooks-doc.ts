import {
  FIRED_HOOKS,
  HOOK_CATALOG,
  HOOK_FIRE_SITES,
  HOOK_CATALOG_VERSION,
  MIDDLEWARE_CATALOG,
  MIDDLEWARE_KINDS,
  NOT_FIRED_HOOKS,
  type HookName,
  type HookSpec,
  type MiddlewareSpec,
} from "./hook-catalog.js";
import { GATEWAY_EVENTS, SHELL_HOOK_DEFAULT_TIMEOUT, SHELL_HOOK_MAX_TIMEOUT } from "./shell-hooks.js";

/** A table cell must not end the row early. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

function codeList(fields: readonly string[]): string {
  return fields.map((f) => `\`${f}\``).join(", ");
}

/** docs/hooks.md, generated from the catalog so the two can never disagree. */
export function renderHooksDoc(): string {
  const lines = [...introLines(), ...hookTableLines(), ...shellHookLines(), ...eventHookLines(), ...middlewareLines()];
  return `${lines.join("\n")}\n`;
}

/** The prose before the tables: classes, how results combine, timeouts. */
function introLines(): string[] {
  return [
    "# Hooks and middleware",
    "",
    "<!-- Generated from src/contracts/hook-catalog.ts by `npm run docs`; a test fails when this file is stale. -->",
    "",
    `Catalog version: \`${HOOK_CATALOG_VERSION}\` (recorded in the lock). A plugin registers a hook with`,
    "`ctx.register_hook(name, callback)` and middleware with `ctx.register_middleware(kind, callback)`. An",
    "unknown name is an error in a locked (strict) runtime and a warning otherwise, always with the nearest",
    "valid name. Callbacks run in plugin load order, then registration order.",
    "",
    "## Classes",
    "",
    "- **directive**: the result steers control flow (block a tool call, skip a message, add context).",
    "- **transform**: the result replaces content (a tool result, terminal output, the final text).",
    "- **observer**: the result is ignored; the hook only watches.",
    "",
    "Every payload is one object; destructure the fields you need and ignore the rest, because fields are",
    "added over time. Unless the table says otherwise the payload also carries",
    '`telemetry_schema_version: "hermes.observer.v1"`. Correlation ids (`turn_id`, `tool_call_id`, …) are',
    "opaque and may be absent.",
    "",
    "## How results combine",
    "",
    "- `directive` (`pre_tool_call`): `modify` results shallow-merge their `args`, later keys winning; a valid",
    "  `block` (non-empty `message`) returns at once and beats any `approve`; otherwise the first valid",
    "  `approve` sends the call to the human approval gate.",
    '- `first-string`: the first string result replaces the value; `""` counts.',
    "- `first-non-empty`: the first non-empty string result replaces the value.",
    "- `joined`: every valid result (a non-empty string or `{context}`) is joined with a blank line, in",
    "  callback order, and appended to the current turn's user message.",
    "- `last-writer-per-field`: object results are applied in order and the last writer wins per field",
    '  (`prompt`, `language`, `model`; `""` clears the prompt); other keys and non-string values are ignored, and',
    "  a `file_path` (read-only) is warned about once.",
    "- `first-valid`: all callbacks run, then the first result the hook accepts wins.",
    '- `tts-policy`: each result is `null`, a block (`{action: "block", message?}`) or exactly `{text}`. A',
    "  block refuses synthesis; a rewrite is re-checked by all callbacks and a second, different rewrite is",
    "  refused. Malformed results, errors and timeouts refuse.",
    "- `ignored`: results are discarded.",
    "",
    "## Timeout classes",
    "",
    "- **bounded**: each callback is raced against `plugins.hook_callback_timeout` (default 30 s; `0`",
    "  disables the bound; a negative or non-numeric value warns and uses the default; values above 600 are",
    "  clamped to 600). A callback that overruns is skipped (fail-open) and abandoned, never awaited.",
    "- **fail-closed**: bounded the same way, but a timeout or an exception turns into a block directive, so",
    "  an enforcement hook never lets a call through by failing.",
    "- **caller**: runs on the caller's own path, in order, and is never raced against a timer.",
    "- **unbounded**: runs to completion. Stream and room-activity hooks are delivered off the hot path",
    "  through a bounded queue per callback instead.",
    "",
    "A timeout can only bound a callback that returns a promise. A callback that blocks synchronously (a",
    "busy loop, synchronous I/O) holds the event loop, and no in-process timer can pre-empt it; keep",
    "callbacks asynchronous and short.",
    "",
  ];
}

function hookTableLines(): string[] {
  const lines = [
    "## Hooks",
    "",
    "*Fired by hermes-kit* says where hermes-kit calls a hook. A hook marked *not fired by hermes-kit* is",
    "accepted at registration (plugins that use it still load, with a `W_HOOK_NOT_FIRED` warning) but its",
    "callbacks never run, for the reason given; one marked *not fired yet* has no fire site today.",
    "",
    "| Hook | Class | Combine | Timeout | Payload fields | Summary | Fired by hermes-kit |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const [name, spec] of Object.entries(HOOK_CATALOG) as [string, HookSpec][]) {
    const payload = codeList(spec.payload) + (spec.telemetry ? "" : " (no `telemetry_schema_version`)");
    const row = [
      `\`${name}\``,
      spec.class,
      spec.combine,
      spec.timeout,
      payload,
      spec.summary,
      firedCell(name as HookName),
    ];
    lines.push(`| ${row.map(cell).join(" | ")} |`);
  }
  return lines;
}

/** Where the kit fires a hook, or why it never does. */
function firedCell(name: HookName): string {
  const notFired = NOT_FIRED_HOOKS[name];
  if (notFired) return `*Not fired by hermes-kit:* ${notFired}.`;
  if (!FIRED_HOOKS.has(name)) return "*Not fired yet.*";
  return HOOK_FIRE_SITES[name] ?? "Fired.";
}

/** Shell hooks: the top-level `hooks:` of config.yaml. */
function shellHookLines(): string[] {
  return [
    "",
    "## Shell hooks",
    "",
    "The top-level `hooks:` of `config.yaml` (or the deploy spec's `settings.hooks`, the Nix modules' `hooks`)",
    "maps a hook name to a list of commands. Each runs after the plugins' callbacks of that hook, in list order,",
    "with the owner `shell:<index>` (its position in the list) in `hermes plugins chain` and the timeline:",
    "",
    "```yaml",
    "hooks:",
    "  pre_tool_call:",
    '    - matcher: "terminal|write_file"   # optional; a regular expression on tool_name (tool hooks only)',
    '      command: "~/.hermes/agent-hooks/guard.sh"   # split like a POSIX shell; nothing is expanded',
    `      timeout: 10                      # optional; seconds, default ${SHELL_HOOK_DEFAULT_TIMEOUT}, at most ` +
      `${SHELL_HOOK_MAX_TIMEOUT}`,
    "```",
    "",
    "The command runs without a shell, in its own process group, with `HERMES_HOME` set. Its stdin is one JSON",
    "object: `hook_event_name`, `tool_name` and `tool_input` (`null` outside tool hooks), `session_id`, `cwd`,",
    "`profile` and `extra` (every other payload field). Its stdout, parsed as JSON, is the callback's return",
    'and combines like a plugin\'s: `{"action": "block", "message": …}` or `{"decision": "block",',
    '"reason": …}` blocks a `pre_tool_call`, `{"decision": "modify", "tool_input": …}` modifies, a JSON',
    'string replaces the value of a transform hook, `{"context": …}` adds `pre_llm_call` context. Empty',
    "output and `{}` are no result.",
    "",
    "A non-zero exit, output that is not JSON, a command that cannot start and a timeout (the whole process",
    "group is killed: SIGTERM, then SIGKILL two seconds later) count as a failing callback of that hook: it is",
    "reported and skipped, and a `pre_tool_call` fails closed (the tool is blocked). Exit code 2 of a",
    "`pre_tool_call` blocks with the stdout block message, else the first 400 characters of stderr. Shell",
    "hooks keep their own timeout and are not bounded by `plugins.hook_callback_timeout`. An entry naming an",
    "unknown hook, a hook hermes-kit never fires, a `matcher` on a hook without `tool_name` or a malformed",
    "entry is not run (`W_SHELL_HOOK_SKIPPED` at start and in `hermes hooks list`).",
  ];
}

/** Gateway event hooks: hooks/<name>/HOOK.yaml + handler.js, run by hermes serve. */
function eventHookLines(): string[] {
  const lines = [
    "",
    "## Gateway event hooks",
    "",
    "A folder `<home>/hooks/<name>/` with `HOOK.yaml` (`name`, `description`, `events`) and `handler.js` (or",
    "`handler.mjs`) exporting `handle(event_type, context)` (may be async) is an event hook; the deploy spec's",
    "`eventHooks` (the Nix modules' `eventHooks`) adds folders from elsewhere. `hermes compile` records each in",
    "the lock with its tree integrity (`event_hooks`); a folder without both files is passed over, one without",
    "`events` is skipped with `W_EVENT_HOOK_SKIPPED`. Only `hermes serve` runs them: it loads each hook the",
    "first time an event fires and refuses one whose folder no longer has the locked integrity",
    "(`E_EVENT_HOOK_TAMPERED`; a managed home whose hook changed does not start, like a changed plugin).",
    "Handlers subscribed to an event run in name order and are awaited; an error is logged and never reaches",
    "the turn. `command:*` subscribes to every `command:` event. `hermes hooks list` shows the shell hooks",
    "and the event hooks with their state (`locked`, `changed`, `not-compiled`).",
    "",
    "| Event | When | Context keys |",
    "| --- | --- | --- |",
  ];
  for (const e of GATEWAY_EVENTS) lines.push(`| \`${e.event}\` | ${cell(e.when)} | ${codeList(e.context)} |`);
  lines.push("", "`message` and `response` are cut to 500 characters; `user_id` is empty when the sender is unknown.");
  return lines;
}

function middlewareLines(): string[] {
  const lines = [
    "",
    "## Middleware",
    "",
    "Request middleware rewrites a payload before the call and runs as a chain: each callback sees the",
    "previous callback's rewrite. Execution middleware nests around the call in order (the first callback is",
    "outermost); `next` may be called at most once. Payloads also carry `middleware_schema_version`.",
    "",
    "| Kind | Shape | Payload key | Summary |",
    "| --- | --- | --- | --- |",
  ];
  for (const kind of MIDDLEWARE_KINDS) {
    const spec: MiddlewareSpec = MIDDLEWARE_CATALOG[kind];
    lines.push(`| \`${kind}\` | ${spec.shape} | \`${spec.payloadKey}\` | ${cell(spec.summary)} |`);
  }
  return lines;
}
