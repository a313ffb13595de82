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

/** A table cell must not end the row early. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

function codeList(fields: readonly string[]): string {
  return fields.map((f) => `\`${f}\``).join(", ");
}

/** docs/hooks.md, generated from the catalog so the two can never disagree. */
export function renderHooksDoc(): string {
  const lines = [...introLines(), ...hookTableLines(), ...middlewareLines()];
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
