import { relative } from "node:path";
import { isInside } from "./contain.js";
/**
 * The one catalog of everything hermes-kit refuses or warns about.
 *
 * Every refusal a user can see carries a stable code so scripts and docs can key on it. `npm run docs`
 * builds, then scripts/gen-docs.mjs renders `docs/errors.md` from the built table (core/errors-doc.ts);
 * test/core/catalogs.test.ts fails when the file is stale.
 * Codes starting with `W_` are warnings: reported, never fatal on their own.
 */

export interface ErrorSpec {
  /** One-line summary used when the thrower gives no message of its own. */
  readonly title: string;
  /** What the user should do next. */
  readonly hint: string;
  /** Process exit code when this error ends a command (2 = usage, 1 = refused/failed). */
  readonly exit?: 1 | 2;
}

export const ERROR_CATALOG = {
  E_USAGE: {
    title: "the command line is not valid",
    hint: "run the command with --help to see its arguments and options",
    exit: 2,
  },
  E_INTERNAL: {
    title: "an unexpected internal error",
    hint: "re-run with HERMES_LOG_LEVEL=debug and report the output",
  },
  E_FS_READ: {
    title: "a file or folder could not be read",
    hint: "check that the path exists and that you may read it",
  },
  E_FS_WRITE: {
    title: "a file could not be written",
    hint: "check free space and permissions of the folder; the previous file was left as it was",
  },
  E_FS_LOCK_TIMEOUT: {
    title: "another hermes process holds the lock on this file",
    hint: "wait for the other command to finish; if none runs, delete the stale .lock file named here",
  },
  E_YAML_PARSE: {
    title: "the file is not valid YAML",
    hint: "fix the syntax at the position shown (indentation, quotes, a missing colon)",
  },
  E_SCHEMA_INVALID: {
    title: "a value does not match the schema",
    hint: "change the value at the JSON path shown; the schemas in schemas/ describe every field",
  },
  W_SCHEMA_UNKNOWN_FIELD: {
    title: "an unknown field is ignored",
    hint: "remove the field or correct its spelling",
  },
  E_CONFIG_TOO_LARGE: {
    title: "config.yaml is larger than a config may be (1 MiB)",
    hint: "remove what does not belong in config.yaml (data, generated blocks); nothing was read or changed",
  },
  E_CONFIG_NOT_MAPPING: {
    title: "config.yaml must be a YAML mapping",
    hint: "make the top level of config.yaml a mapping (key: value lines)",
  },
  W_CONFIG_CLAMPED: {
    title: "a config value is out of range and is clamped",
    hint: "set a value within the documented range",
  },
  W_CONFIG_UNKNOWN_KEY: {
    title: "a top-level config key is read neither by hermes-kit nor by the original Hermes",
    hint: "correct its spelling (the nearest known key is named when there is one) or remove it",
  },
  W_CONFIG_UNKNOWN_PROVIDER: {
    title: "model.provider names neither a built-in provider nor a model-provider plugin of the home",
    hint:
      "use openai-compatible (or its aliases openai, custom) with model.base_url, scripted with model.script, or " +
      "the folder name of a plugin in plugins/model-providers/",
  },
  E_CONFIG_IS_MANIFEST: {
    title: "the file given as config.yaml is a plugin manifest",
    hint: "check a plugin folder with `hermes plugins validate <dir>`; give `config validate` the home's config.yaml",
  },
  E_LOG_LEVEL: {
    title: "HERMES_LOG_LEVEL names no log level",
    hint:
      "set HERMES_LOG_LEVEL to one of trace, debug, info, warn, error, fatal, silent (or unset it), or use " +
      "--verbose / --quiet",
    exit: 2,
  },
  E_CONFIG_MANAGED_KEY: {
    title: "this config key is owned by the deployment",
    hint: "change it in the deployment (Nix module or deploy spec) and re-run its activation",
  },
  E_CONFIG_EDIT_BREAKS_COMPILE: {
    title: "the config edit would make the home fail to compile; nothing was written",
    hint:
      "fix what the message names, or first drop the requirement it names (plugins.entries.<key>.required, the " +
      "manifest's required:), then run the command again",
  },
  E_CONFIG_KEY_INVALID: {
    title: "the config key is not a dotted key",
    hint: "write the key as dotted names, e.g. plugins.index_url or model.default (no empty parts)",
    exit: 2,
  },
  E_CONFIG_KEY_UNKNOWN: {
    title: "the config key is not one hermes-kit or the original Hermes reads",
    hint: "use the key suggested, or see schemas/config.schema.json for the keys each section has",
  },
  E_CONFIG_KEY_NOT_SET: {
    title: "the config key is not set in config.yaml",
    hint: "set it with `hermes config set <key> <value>`; until then the default applies",
  },
  E_CONFIG_VALUE_INVALID: {
    title: "the value does not fit the config schema at that key; nothing was written",
    hint: "give a value of the type the message names (quote it, or pass --string, to force a string)",
  },
  E_CONFIG_SECRET_VALUE: {
    title: "a secret is not written into config.yaml",
    hint: "put the secret in the environment or $HERMES_HOME/.env and set the key to a ${VAR} reference to it",
  },
  E_MANIFEST_NOT_MAPPING: {
    title: "plugin.yaml must be a YAML mapping",
    hint: "make the top level of plugin.yaml a mapping with at least a name",
  },
  E_MANIFEST_ENTRY_IN_VCS: {
    title: "the manifest's main: points into a version-control folder (.git, .hg, .svn)",
    hint: "move the entry module out of the version-control folder and point main: at its new path",
  },
  E_MANIFEST_TOO_LARGE: {
    title: "plugin.yaml is larger than a manifest may be (256 KiB)",
    hint: "a manifest declares metadata only: move data into files the plugin reads, and keep plugin.yaml small",
  },
  E_MANIFEST_PATH_ESCAPE: {
    title: "a manifest path is absolute or leaves the plugin folder",
    hint: "use a path relative to the plugin folder without '..' segments",
  },
  W_MANIFEST_COERCED: {
    title: "a manifest value was coerced or ignored",
    hint: "write the value in the documented shape to silence this warning",
  },
  W_MANIFEST_UNKNOWN_HOOK: {
    title: "a manifest declares a hook name that is not in the hook catalog",
    hint: "correct the name (see docs/hooks.md); the declaration gets no slot in the lock's hook chains",
  },
  W_PLUGIN_REQUIRES_HERMES: {
    title: "a plugin's requires_hermes is not met by this hermes-kit",
    hint: "install a version of the plugin made for this hermes-kit, or upgrade hermes-kit; the plugin is not loaded",
  },
  W_MANIFEST_VERSION_NEWER: {
    title: "the manifest declares a newer manifest_version than this runtime supports",
    hint: "upgrade hermes-kit; the plugin is still loaded with the fields this version knows",
  },
  E_DISCOVERY_DUPLICATE_KEY: {
    title: "two plugins claim the same key",
    hint: "rename one plugin's folder (category plugins) or its manifest name (flat plugins)",
  },
  E_DISCOVERY_DANGLING_LINK: {
    title: "a plugin folder is a symlink whose target is missing",
    hint: "restore the target or remove the link",
  },
  E_DISCOVERY_UNREADABLE: {
    title: "a plugin folder could not be read",
    hint: "fix the folder's permissions or remove it",
  },
  E_DISCOVERY_NO_MANIFEST: {
    title: "the folder holds no plugin.yaml",
    hint: "add a plugin.yaml (or plugin.yml) at the top of the plugin folder",
  },
  W_DISCOVERY_IMPOSTOR: {
    title: "a user or project plugin uses a bundled plugin's key from a differently named folder",
    hint: "rename the folder to the bundled plugin's folder name to override it on purpose, or rename the plugin",
  },
  E_PYTHON_PLUGIN_ERROR: {
    title: "a Python plugin's code raised an exception",
    hint: "the Python traceback is in the log: run with --verbose (or HERMES_LOG_LEVEL=debug) to see it",
  },
  E_PYBRIDGE_NO_PYTHON: {
    title: "no Python 3.10 or newer to run Python plugins with",
    hint: "install python3 (3.10+) or set HERMES_PYTHON to an interpreter; the Nix module sets it for you",
  },
  E_PYBRIDGE_DIED: {
    title: "a Python plugin's process exited or was killed; the plugin is disabled and the agent goes on",
    hint: "see the log for the plugin's last lines; a hook that outlives the hook timeout is killed with its process",
  },
  E_PYBRIDGE_CALL: {
    title: "a Python plugin made a call the bridge does not offer",
    hint: "see docs/python-plugins.md for the ctx API the bridge supports",
  },
  E_PYENV_PACKAGE_NOT_FOUND: {
    title: "pip found no distribution for a Python plugin's dependency; its environment was not built",
    hint:
      "offline installs need PIP_FIND_LINKS=<folder of wheels> and PIP_NO_INDEX=1, or a Nix-provided Python " +
      "environment (services.hermes-agent.extraPythonPackages) that already has the package; then run hermes compile",
  },
  E_PYENV_INSTALL_FAILED: {
    title: "a Python plugin's virtual environment could not be built; the plugin does not load",
    hint:
      "read pip's output in the message, fix the requirement (pip_dependencies, requirements.txt) or the pip " +
      "environment (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX), then run hermes compile",
  },
  W_DISCOVERY_PORTABLE_PLUGIN: {
    title: "a portable plugin.json package is not loadable by this runtime yet",
    hint: "ship a plugin.yaml beside plugin.json to load it",
  },
  E_PLUGIN_NO_ENTRY: {
    title: "the plugin has no JavaScript entry module",
    hint: "add index.js (or index.mjs) exporting register(ctx), or point main: in plugin.yaml at the entry",
  },
  E_PLUGIN_NO_REGISTER: {
    title: "the plugin's entry module exports no register() function",
    hint: "export register(ctx) from the entry module (or a default export with a register method)",
  },
  E_PLUGIN_REGISTRATION: {
    title: "a plugin's register() made a registration it may not make; the plugin did not load",
    hint: "fix the register() call named in the message (hermes plugins why <key> shows it)",
  },
  W_PROVIDER_NOT_BUILT: {
    title: "a plugin registered a provider of a kind hermes-kit does not build",
    hint: "the plugin loads, but the provider is ignored: the kit has no web search or browser tool to route to it",
  },
  W_HOOK_NOT_FIRED: {
    title: "a plugin registered a hook hermes-kit never fires",
    hint: "the plugin loads, but this callback never runs; docs/hooks.md says why (e.g. no kanban board)",
  },
  E_PLUGIN_TOOL_OVERRIDE: {
    title: "a plugin asked to override a tool without the tools.override capability",
    hint:
      "grant it: hermes plugins enable <key> --grant tools.override, or register the tool without override " +
      "under another name",
  },
  E_PLUGIN_NEXT_CALL_REUSED: {
    title: "a middleware callback called next_call() more than once",
    hint: "call next_call() once per frame and await that one promise; downstream execution is single-use",
  },
  E_PLUGIN_STATE_INVALID: {
    title: "ctx.state was given a key or value it cannot store",
    hint: "use keys of letters, digits, '_', '.', ':', '-' (at most 128, no '..') and JSON-serialisable values",
  },
  E_PLUGIN_STATE_CORRUPT: {
    title: "a plugin's state file is not a JSON object; it was not overwritten",
    hint: "repair or delete the state.json named (deleting it drops the plugin's stored state)",
  },
  E_PLUGIN_STATE_QUOTA: {
    title: "a plugin's state would exceed 10 MiB; nothing was written",
    hint: "store less under ctx.state (keep large data in files of the plugin's own)",
  },
  E_PLUGIN_NOT_FOUND: {
    title: "no plugin with that name is installed or bundled",
    hint: "run `hermes plugins list` to see the names and keys",
  },
  E_PLUGIN_AMBIGUOUS: {
    title: "the name matches more than one plugin",
    hint: "use the full key shown by `hermes plugins list`",
  },
  E_PLUGIN_DISPATCH_NO_SESSION: {
    title: "ctx.dispatch_tool was called with no agent session running, so there is no tool pipeline to run it",
    hint: "call dispatch_tool from a tool, hook or slash command of hermes chat or hermes serve, not from register()",
  },
  E_PLUGIN_DISPATCH_RECURSION: {
    title: "ctx.dispatch_tool named a tool that is already running in the same call chain",
    hint: "a tool (or its hooks) may not dispatch itself, directly or through other tools; call the logic directly",
  },
  E_PLUGIN_DISPATCH_ARGS: {
    title: "ctx.dispatch_tool got arguments that are not JSON",
    hint: "pass a plain object of JSON values (no cycles, BigInt or functions)",
  },
  E_ENV_FLAG: {
    title: "an environment flag has a value that is not a boolean",
    hint: "use one of 1, true, yes, on, 0, false, no, off (or leave it empty)",
  },
  E_PROFILE_NAME: {
    title: "the profile name is not valid",
    hint: "use letters, digits, '-', '_' and '.' only, not starting with '.'",
  },
  E_PROFILE_NOT_FOUND: {
    title: "the profile does not exist",
    hint: "check the spelling (existing profiles are listed), or pass --create to make a new profile",
  },
  E_HOME_NOT_FOUND: {
    title: "the Hermes home does not exist; a read-only command never creates one",
    hint:
      "check --home / HERMES_HOME / --profile; commands that set a home up (plugins enable, install, compile) " +
      "create it",
  },
  W_ORDER_MISSING_DEPENDENCY: {
    title: "a plugin requires a plugin that is not enabled or installed",
    hint: "enable or install the required plugin; the dependent still loads and can probe with ctx.has_plugin",
  },
  W_ORDER_UNKNOWN_KEY: {
    title: "plugins.order names a plugin that does not load",
    hint: "remove the name from plugins.order or enable the plugin",
  },
  W_ORDER_DEPENDENCY_CYCLE: {
    title: "requires_plugins form a cycle; key order is used for all plugins",
    hint: "break the cycle in the plugins' requires_plugins, or state the order in plugins.order",
  },
  E_ORDER_CYCLE: {
    title: "plugins.order contradicts the plugins' dependencies",
    hint: "reorder plugins.order so every plugin comes after the plugins it requires",
  },
  E_COMPILE_LINK_ESCAPE: {
    title: "a symlink inside a plugin folder points outside it",
    hint: "replace the link with the file it points to, or point it inside the plugin folder",
  },
  E_COMPILE_UNSAFE_NAME: {
    title: "a name in a plugin folder cannot be hashed unambiguously",
    hint: "rename it: no control characters (newline, tab, …) in any name, no spaces in a symlink's path or target",
  },
  E_SPEC_TOO_LARGE: {
    title: "the deploy spec is larger than a spec may be (1 MiB)",
    hint: "check that --spec names the deploy spec; a spec lists plugins and settings, never data",
  },
  E_SPEC_INVALID: {
    title: "the deploy spec is not valid",
    hint: "fix the entry at the JSON path shown; see schemas/deploy-spec.schema.json",
  },
  E_SPEC_NO_MANIFEST: {
    title: "a deploy spec plugin path holds no plugin.yaml",
    hint: "point the entry at the plugin's folder (the one with plugin.yaml); nothing was changed",
  },
  E_SPEC_DUPLICATE_KEY: {
    title: "two deploy spec entries have the same plugin key",
    hint: "remove one of the entries, or rename one plugin; link names are nix-managed-<key>",
  },
  E_SPEC_KEY_MISMATCH: {
    title: "a deploy spec entry states a key its manifest does not have",
    hint:
      "set `key` to the manifest's `name` (or drop `key`); the key names the link and every config entry of " +
      "the plugin",
  },
  E_GRANT_UNKNOWN_CAPABILITY: {
    title: "a grant names a capability id that does not exist",
    hint: "use a known capability id (tools.override, llm.*_override, gateway.platform_actions, gateway.plugin_status)",
  },
  E_GRANT_UNDECLARED: {
    title: "a grant names a capability the plugin does not declare",
    hint: "grant only capabilities listed under capabilities: in the plugin's manifest",
  },
  W_GRANT_STALE: {
    title: "a recorded grant no longer matches what the plugin declares",
    hint: "review and grant again: hermes plugins enable <key> --grant <caps> (or interactively on a terminal)",
  },
  W_GRANT_LEGACY_ONLY: {
    title: "a legacy allow_* key is set without a recorded consent",
    hint: "record the consent: hermes plugins enable <key> --grant <capability>",
  },
  E_COMPILE_INVALID_PLUGIN: {
    title: "a plugin that should load has an invalid manifest or cannot load",
    hint: "fix the plugin (hermes plugins why <key>) or remove it from plugins.enabled",
  },
  E_COMPILE_REFUSED: {
    title: "compile found errors in its inputs; nothing was changed",
    hint: "fix every problem listed below and compile again",
  },
  W_COMPILE_PLUGIN_SKIPPED: {
    title: "an enabled plugin will not load",
    hint: "run `hermes plugins why <key>` and fix the plugin, or disable it",
  },
  W_PROVIDER_NOT_FOUND: {
    title: "memory.provider or context.engine names no memory provider or context engine that exists",
    hint:
      "correct the name in config.yaml (the folder under plugins/memory/ or plugins/context_engine/, or the name " +
      'a plugin registers), or set it to "" (memory) / compressor (context); until then the built-in one is used',
  },
  E_COMPILE_STALE: {
    title: "the lock is out of date with its inputs",
    hint: "run `hermes compile` (with the deployment's --spec in a managed home)",
  },
  E_COMPILE_INTERRUPTED: {
    title: "a compile of this managed home did not finish (killed or failed mid-apply)",
    hint:
      "re-run the same compile (the command in the message, or the deployment's activation); nothing else " +
      "needs fixing",
  },
  E_COMPILE_NO_GENERATION: {
    title: "the requested generation does not exist",
    hint: "list them with hermes compile --list-generations",
  },
  E_LOCK_INVALID: {
    title: "hermes.lock.json is missing or not valid",
    hint: "run `hermes compile` to write it again",
  },
  E_LOCK_CATALOG: {
    title: "the lock was compiled for another hook catalog",
    hint: "compile the home again with this hermes-kit (in a managed home: re-run its deployment)",
  },
  E_LOCK_TAMPERED: {
    title: "hermes.lock.json was changed by something other than hermes compile",
    hint:
      "run `hermes compile` to write it again from its inputs (in a managed home: re-run the deployment, " +
      "`hermes compile --spec FILE --managed KIND`)",
  },
  E_LOCK_MISSING: {
    title: "there is no lock to verify",
    hint: "check --home / --profile; a home gets its lock from its first `hermes compile`",
  },
  E_LOCK_DRIFT: {
    title: "files on disk differ from what the lock recorded",
    hint: "run `hermes compile` to accept the change (in a managed home: re-run the deployment's activation)",
  },
  E_RUNTIME_REQUIRED_FAILED: {
    title: "a required plugin did not load, so the runtime does not start",
    hint: "fix the plugin (hermes plugins why <key>) or remove required: true",
  },
  E_RUNTIME_MANIFEST_CHANGED: {
    title: "a plugin's manifest is missing or no longer parses since the lock was compiled",
    hint: "restore or fix plugin.yaml (hermes plugins validate <dir> checks it), then run `hermes compile`",
  },
  E_AGENT_NO_PROVIDER: {
    title: "no model provider is configured",
    hint:
      "pass --provider scripted --script FILE, or --provider openai-compatible --base-url URL --model NAME, or " +
      "set model: {provider, base_url, default} in config.yaml",
    exit: 2,
  },
  E_AGENT_DELEGATE: {
    title: "delegate_task could not run a child agent",
    hint: "give delegate_task a non-empty goal; children cannot delegate further",
  },
  W_AGENT_MEMORY_FAILED: {
    title: "the memory provider failed or is unavailable; the turn goes on without it",
    hint: "see the message for the provider method that failed; fix the provider or clear memory.provider",
  },
  W_AGENT_COMPRESS_FAILED: {
    title: "the context engine could not compact the conversation; it is kept as it was",
    hint: "see the message (a failed summary call, or an engine that returned no valid message list)",
  },
  E_AGENT_MAX_TURNS: {
    title: "the turn stopped after max_turns model calls without a final answer",
    hint: "raise --max-turns (or agent.max_turns in config.yaml), or ask for something smaller",
  },
  E_AGENT_INTERRUPTED: {
    title: "the turn was interrupted",
    hint:
      "nothing was left half-done: the running tool or model call was cancelled and the hooks saw interrupted: " +
      "true",
  },
  E_AGENT_TOOL_ARGS: {
    title: "the model sent tool arguments that are not a JSON object",
    hint: "the model got an error result naming the problem and may retry; nothing was executed",
  },
  E_AGENT_UNKNOWN_TOOL: {
    title: "the model called a tool that does not exist or is not available",
    hint: "the model got an error result; check the enabled plugins (hermes plugins list) and the tool's requires_env",
  },
  E_AGENT_TOOL_FAILED: {
    title: "a tool raised an error",
    hint: "the model got an error result naming the tool and the message; see the log for details",
  },
  E_AGENT_MIDDLEWARE_FAILED: {
    title: "a required plugin's middleware failed, so the call failed",
    hint: "fix the plugin named (hermes plugins why <key>) or remove required: true",
  },
  E_AGENT_LLM_TRUST: {
    title: "ctx.llm refused an override the plugin is not trusted for",
    hint:
      "grant the llm.*_override capability (hermes plugins enable <key> --grant llm.model_override) or drop " +
      "the override",
  },
  E_AGENT_LLM_INVALID: {
    title: "ctx.llm was called with invalid arguments, or the output does not match the schema",
    hint: "pass non-empty instructions and input; make the JSON schema one the model can satisfy",
  },
  E_VOICE_NO_PROVIDER: {
    title: "text_to_speech or transcribe_audio has no usable provider",
    hint:
      "set tts.provider / stt.provider to a tts.providers.<name> / stt.providers.<name> entry with a command, " +
      "to a plugin's provider name, or (STT) to local_command with HERMES_LOCAL_STT_COMMAND set",
  },
  W_SHELL_HOOK_SKIPPED: {
    title: "an entry of the top-level `hooks:` of config.yaml is not run",
    hint:
      "each hook name maps to a list of {command, matcher?, timeout?}; the hook must be one hermes-kit fires " +
      "(docs/hooks.md), `matcher` only for tool hooks, `timeout` in (0, 300] seconds",
  },
  W_EVENT_HOOK_SKIPPED: {
    title: "a gateway event hook folder (hooks/<name>/HOOK.yaml) is skipped",
    hint: "HOOK.yaml needs a non-empty `events` list and the folder a handler.js (or handler.mjs) exporting handle()",
  },
  E_EVENT_HOOK_TAMPERED: {
    title: "a gateway event hook changed after the lock was compiled",
    hint: "review the change, then run `hermes compile` so the lock records the folder's new integrity",
  },
  E_VOICE_COMMAND_TEMPLATE: {
    title: "a voice command template cannot be used",
    hint:
      "fix the quoting or the placeholder named in the message; the known placeholders are listed there, and " +
      "{{ / }} are literal braces",
  },
  E_VOICE_COMMAND_FAILED: {
    title: "a TTS or STT command provider failed, timed out or produced nothing",
    hint: "run the command from the message by hand; the end of its output is quoted there",
  },
  E_VOICE_PROVIDER_FAILED: {
    title: "a plugin's TTS or transcription provider failed",
    hint: "see the message for the provider and its error; fix the plugin or choose another provider",
  },
  E_VOICE_INPUT: {
    title: "the audio file or text given to a voice tool cannot be used",
    hint: "give an existing, non-empty audio file (or non-empty text), and an output_path without '..'",
  },
  E_VOICE_BLOCKED: {
    title: "a pre_tts_synthesis hook refused the text, or a required policy plugin is missing",
    hint:
      "the message names the reason; tts.pre_synthesis.required_plugins lists plugins whose hook must be " +
      "registered (hermes plugins why <key>)",
  },
  E_AGENT_SCRIPT: {
    title: "the scripted provider's script is not valid or is used up",
    hint: "a script is a YAML list of turns, each `say: text` or `call: {tool: NAME, args: {...}}`, one per model call",
  },
  E_PROVIDER_CONFIG: {
    title: "the model provider settings are not valid",
    hint:
      "check --provider/--base-url/--model or the model: section of config.yaml (provider, base_url, default, " +
      "api_key_env)",
    exit: 2,
  },
  E_PROVIDER_NO_KEY: {
    title: "the configured API key variable is not set",
    hint:
      "export the variable named by model.api_key_env (or by the provider plugin's env_vars), or remove " +
      "api_key_env for a server without keys",
  },
  E_PROVIDER_HTTP: {
    title: "the model provider answered with an HTTP error",
    hint: "check the base URL, model name and key; 429 and 5xx answers are retried automatically",
  },
  E_PROVIDER_TIMEOUT: {
    title: "the model provider did not answer in time",
    hint: "raise model.timeout (seconds) or check that the server is up",
  },
  E_PROVIDER_MALFORMED: {
    title: "the model provider sent a response that is not valid chat-completions JSON",
    hint: "check that the base URL points at an OpenAI-compatible /v1 endpoint",
  },
  E_PROVIDER_STREAM: {
    title: "the model provider's stream ended before the response was complete",
    hint: "it is retried automatically; if it keeps happening, try without streaming (--no-stream)",
  },
  E_PROVIDER_NETWORK: {
    title: "the model provider could not be reached",
    hint: "check the base URL and that the server is running",
  },
  E_SERVE_KEY_REQUIRED: {
    title: "hermes serve would listen beyond this machine without an API key",
    hint:
      "set API_SERVER_KEY in the service's environment (the NixOS module's environmentFile), or listen on a " +
      "loopback address (gateway.api_server.host: 127.0.0.1)",
  },
  E_SERVE_LISTEN: {
    title: "hermes serve could not listen on its address",
    hint: "another process may hold the port: choose another with --port or gateway.api_server.port",
  },
  E_SERVE_STORE: {
    title: "the session store of hermes serve could not be opened or written",
    hint: "check free space and the permissions of <home>/sessions/; the sessions written before are kept",
  },
  E_SERVE_PLATFORM: {
    title: "a chat platform of hermes serve could not start or connect; the service keeps running",
    hint:
      "see /health/detailed (platforms) for the reason: enable the plugin that registers the platform, or fix " +
      "its token and settings under gateway.platforms.<name>; a failed connection is retried with backoff",
  },
  E_SERVE_RELOAD: {
    title: "a new generation could not be loaded; the running one keeps serving",
    hint: "fix what the message names, compile again, then reload (SIGHUP or systemctl reload hermes-agent)",
  },
  E_APPROVAL_DENIED: {
    title: "a dangerous action was not approved",
    hint: "the model was told the action was denied; approve it on a terminal, or change approvals.mode",
  },
  E_APPROVAL_HARDLINE: {
    title: "a command is blocked unconditionally (hardline)",
    hint: "hardline commands (wiping /, formatting disks, fork bombs) never run, whatever any approval says",
  },
  E_APPROVAL_DENY_RULE: {
    title: "a command matches one of the user's deny rules (approvals.deny) and is refused before any approval",
    hint: "the rule is yours: remove or narrow it in approvals.deny of config.yaml if the command should run",
  },
  E_APPROVAL_TRANSPORT: {
    title: "the selected approval transport failed, so the action was denied",
    hint:
      "check the transport plugin (security.approval.transport); set security.approval.transport_fallback: " +
      "builtin to fall back to the built-in prompt",
  },
  E_MCP_CONFIG_INVALID: {
    title: "an mcp_servers entry in config.yaml is not valid; that server is skipped",
    hint:
      "give the server either command (stdio) or url (HTTP), with args/env/cwd or headers as documented in " +
      "schemas/config.schema.json",
  },
  W_MCP_CONFIG_ADJUSTED: {
    title: "an mcp_servers value was adjusted (clamped timeout, unset ${VAR}, renamed tool)",
    hint: "set the value within the documented range, or export the environment variable named",
  },
  E_MCP_NOT_ALLOWED: {
    title: "a plugin called an MCP server that is not in its allowlist",
    hint:
      "add the server name to plugins.entries.<key>.mcp_allowlist in config.yaml (exact names; no wildcard; " +
      "default is no MCP access)",
  },
  E_MCP_UNKNOWN_SERVER: {
    title: "no MCP server of that name is configured and enabled",
    hint: "add it under mcp_servers in config.yaml (or set enabled: true), or correct the name",
  },
  E_MCP_CONNECT_FAILED: {
    title: "an MCP server could not be started or connected to",
    hint: "check the server's command/url, and run the command by hand to see its error; the next call tries again",
  },
  E_MCP_TIMEOUT: {
    title: "an MCP call did not answer within its timeout",
    hint:
      "raise the timeout (mcp_servers.<name>.timeout, or call_mcp's timeout; at most 600 s) or fix the server; " +
      "the call was cancelled",
  },
  E_MCP_SERVER_CLOSED: {
    title: "an MCP server exited or dropped the connection during a call",
    hint: "see the server's stderr in the debug log (HERMES_LOG_LEVEL=debug); the server is restarted on the next call",
  },
  E_MCP_CALL_FAILED: {
    title: "an MCP server refused a call (unknown tool, invalid arguments, protocol error)",
    hint: "check the tool name and arguments against the server's tool list",
  },
  W_MCP_TOOL_SKIPPED: {
    title: "an MCP tool was not registered because its name is taken",
    hint: "rename or filter the tool (mcp_servers.<name>.tools.exclude), or rename the server",
  },
  E_PACK_INVALID: {
    title: "the plugin pack is not valid",
    hint: "fix the entry named; see schemas/pack.schema.json",
  },
  E_PACK_REF_NOT_SHA: {
    title: "a pack entry's ref is not an exact 40-character commit SHA",
    hint: "pin the full commit SHA (git rev-parse <tag>^{commit}); tags and branches are not reproducible",
  },
  E_PACK_SEED_RESERVED: {
    title: "a pack config seed sets a reserved key",
    hint: "packs cannot pre-grant capabilities or trust gates; remove the key, consent happens at install",
  },
  E_PACK_SEED_SECRET: {
    title: "a pack config seed sets a secret-shaped key",
    hint: "secrets never travel in packs; declare the secret in the plugin's requires_env instead",
  },
  E_INDEX_INVALID: {
    title: "the plugin index document has the wrong shape",
    hint: "an index is a JSON object with a 'plugins' list, or a bare list of entries",
  },
  W_INDEX_ENTRY_DROPPED: {
    title: "an invalid index entry was dropped",
    hint: "report the entry to the index maintainers",
  },
  E_INDEX_UNAVAILABLE: {
    title: "the community plugin index could not be loaded",
    hint: "check the network and plugins.index_url, or install with an explicit owner/repo or git URL",
  },
  W_INDEX_FETCH_FAILED: {
    title: "the community plugin index could not be fetched from plugins.index_url",
    hint: "check the network and plugins.index_url; meanwhile a cached or seed copy is used and says so",
  },
  W_INDEX_STALE: {
    title: "the community plugin index answer comes from a cached copy, because the remote index failed",
    hint: "check the network and plugins.index_url, then retry with --refresh",
  },
  W_INDEX_SEED: {
    title: "the community plugin index answer comes from the offline seed copy shipped with hermes-kit",
    hint: "the seed copy is likely out of date: check the network and plugins.index_url, then retry with --refresh",
  },
  E_PACK_NOT_FOUND: {
    title: "the pack file does not exist or is not a file",
    hint:
      "pass the path of a hermes-pack.yaml (or an https:// URL, or a bundle made by `hermes plugins pack " +
      "export --bundle`)",
  },
  E_PACK_TOO_LARGE: {
    title: "the pack is larger than the 1 MiB limit",
    hint: "a pack lists plugins and seeds only; check that the file or URL really is a hermes-pack.yaml",
  },
  E_PACK_URL_SCHEME: {
    title: "remote packs must use https://",
    hint: "use an https:// URL, or download the pack and pass its local path",
  },
  E_PACK_FETCH_FAILED: {
    title: "the pack could not be fetched",
    hint: "check the URL and the network (the fetch times out after 15 s and follows redirects to https only)",
  },
  E_PACK_UNRESOLVED: {
    title: "a pack entry's name could not be resolved to exactly one community-index plugin",
    hint: "use the exact index name shown in the suggestions, or give the entry a repo: (owner/repo or git URL)",
  },
  E_PACK_NOT_INTERACTIVE: {
    title: "pack install needs a terminal to review and confirm the pack; nothing was installed",
    hint:
      "run it in a terminal (there is no --yes); for unattended installs use a deploy spec (hermes compile " +
      "--spec) or install plugins one by one with --ref",
  },
  E_PACK_ABORTED: {
    title: "the pack install was not confirmed; nothing was installed",
    hint: "review the pack with `hermes plugins pack show <src>` and answer y to install it",
  },
  E_PACK_INSTALL_FAILED: {
    title: "some plugins of the pack failed to install; the others stay installed",
    hint:
      "fix the failures listed (each names its plugin), then run the pack install again with --force, or " +
      "install the failed ones by hand",
  },
  E_PACK_EXPORT_EMPTY: {
    title: "there is nothing to export: no installed plugin has git provenance",
    hint:
      "only git-installed plugins (hermes plugins install) can be exported; local and Nix-managed plugins are " +
      "listed as comments",
  },
  E_BUNDLE_CORRUPT: {
    title: "the bundle is truncated, modified or not a hermes-kit bundle; nothing was installed",
    hint:
      "export the bundle again (hermes plugins pack export --bundle) and copy it in binary mode; compare its " +
      "sha256 with the one printed by the export",
  },
  E_BUNDLE_UNSAFE_ENTRY: {
    title:
      "the bundle holds an entry that is absolute, leaves the bundle, or is not a plain file, folder or " +
      "inner link; nothing was installed",
    hint:
      "only bundles written by `hermes plugins pack export --bundle` are accepted; do not unpack and repack " +
      "them by hand",
  },
  E_BUNDLE_MANIFEST_INVALID: {
    title: "the bundle's manifest (hermes-bundle.json) is missing or not valid; nothing was installed",
    hint: "export the bundle again with this version of hermes-kit",
  },
  E_BUNDLE_INTEGRITY: {
    title: "a file of the bundle does not match the hash its manifest records; nothing was installed",
    hint: "the bundle was modified after export; export it again from the source machine",
  },
  E_BUNDLE_REVISION: {
    title: "a plugin tree in the bundle is not the git revision the bundle claims; nothing was installed",
    hint: "the bundle was modified after export; export it again from the source machine",
  },
  E_BUNDLE_TOO_LARGE: {
    title: "the bundle unpacks to more than the size or entry-count limit",
    hint:
      "bundles are capped at 1 GiB unpacked and 200 000 entries; split the pack (pack export --name … with " +
      "fewer plugins)",
  },
  E_BUNDLE_EXPORT_SOURCE: {
    title: "a plugin cannot be bundled: its git checkout does not hold the recorded revision",
    hint:
      "reinstall the plugin (hermes plugins install <source> --force --ref <revision>) so its checkout holds " +
      "the revision, then export again",
  },
  E_INSTALL_IDENTIFIER: {
    title: "the install identifier is not a git URL, owner/repo[/subdir] or index name",
    hint:
      "use owner/repo, owner/repo/path/to/plugin, a git URL (https, ssh, git@, file://, #subdir), a local path " +
      "(./folder, /srv/git/repo.git) or an exact index name",
    exit: 2,
  },
  E_DEEPLINK_INVALID: {
    title: "the link is not a hermes:// link hermes-kit handles",
    hint:
      "use hermes://plugin/install?repo=owner/repo[&enable=1][&force=1] or hermes://mcp/install?name=NAME&" +
      "config=BASE64URL-JSON (hermes-dev:// likewise); no other parameter, transport or scheme is accepted",
    exit: 2,
  },
  E_DEEPLINK_NOT_INTERACTIVE: {
    title: "an install link needs a terminal to be confirmed; nothing was installed or written",
    hint: "run the command, or add the settings, shown above; or open the link again from a terminal",
  },
  E_DEEPLINK_ABORTED: {
    title: "the link was not confirmed; nothing was installed or written",
    hint: "open the link again and answer y to go on",
  },
  E_DEEPLINK_NO_AGENT_PLUGIN: {
    title: "the linked repository holds no agent plugin this kit can install; nothing was installed",
    hint:
      "a desktop plugin (plugin.js, or desktop/plugin.js) is for the Hermes desktop app; an agent plugin needs " +
      "a plugin.yaml at the top of the repository",
  },
  E_DEEPLINK_MCP_EXISTS: {
    title: "an MCP server of that name is already configured; it was not overwritten",
    hint: "remove or rename mcp_servers.<name> in config.yaml first, or ask for a link with another name",
  },
  E_DEEPLINK_MCP_INVALID: {
    title: "the MCP server settings of the link are not valid for hermes-kit; nothing was written",
    hint: "the settings must be a server entry of mcp_servers (see docs/plugins.md and the config schema)",
  },
  E_INSTALL_REF_NOT_SHA: {
    title: "--ref is not a full 40-character commit SHA",
    hint: "pass the full commit SHA (git rev-parse <tag>^{commit}); tags, branches and short SHAs are not reproducible",
    exit: 2,
  },
  E_INSTALL_INDEX_NOT_FOUND: {
    title: "no plugin of that exact name is in the community index",
    hint: "use one of the closest names shown, or install directly with owner/repo",
  },
  E_INSTALL_INDEX_AMBIGUOUS: {
    title: "the name matches several plugins of the community index",
    hint: "re-run with the owner/repo identifier of the one you mean",
  },
  E_INSTALL_NAME_INVALID: {
    title: "the plugin name cannot be used as a folder name",
    hint:
      "the manifest name (or the repository or subdirectory name) must not be empty, hidden, or contain '/', " +
      "'\\' or '..'; ask the author to fix plugin.yaml",
  },
  E_INSTALL_SUBDIR_ESCAPE: {
    title: "the plugin subdirectory leaves the repository",
    hint:
      "name a folder inside the repository, relative to its root, without '..' and not through a symlink that " +
      "points outside",
  },
  E_INSTALL_SUBDIR_MISSING: {
    title: "the plugin subdirectory does not exist in the repository or is not a folder",
    hint: "check the path (case matters) against the repository at the installed revision",
  },
  E_INSTALL_NO_MANIFEST: {
    title: "the repository (or subdirectory) has no plugin.yaml",
    hint: "point the identifier at the folder that holds plugin.yaml (owner/repo/<subdir> or <url>#<subdir>)",
  },
  E_INSTALL_MANIFEST_INVALID: {
    title: "the plugin's manifest or files have errors; it would not load",
    hint: "see the problems listed; ask the author to fix them (hermes plugins validate <dir> checks a folder)",
  },
  E_INSTALL_EXISTS: {
    title: "a plugin of that name is already installed",
    hint:
      "unpinned: `hermes plugins update <name>`; pinned: `hermes plugins install <source> --force --ref " +
      "<40-character commit SHA>`; --force reinstalls",
  },
  E_INSTALL_LOCAL_PATH: {
    title: "the local path to install from does not exist or is not a folder",
    hint:
      "give the path of the plugin's folder (the one with plugin.yaml) or of its git repository; owner/repo " +
      "names a GitHub repository",
  },
  E_INSTALL_LOCAL_NOT_GIT: {
    title: "--ref was given for a local folder that is not in a git repository",
    hint: "drop --ref (the folder is copied as it is), or commit the folder to a git repository and install from that",
    exit: 2,
  },
  E_INSTALL_PINNED: {
    title: "the installed plugin is pinned and the reinstall names no revision",
    hint: "reinstall with --ref <40-character commit SHA> to change its source or revision",
  },
  E_INSTALL_SCAN_BLOCKED: {
    title: "the security scan found dangerous content; nothing was installed",
    hint:
      "review the findings; --force does not override a dangerous verdict; after review an operator may waive " +
      "a finding for this exact revision in plugins.scan_waivers",
  },
  E_INSTALL_SCAN_CAUTION: {
    title: "the security scan verdict is 'caution' and nobody accepted it; nothing was installed",
    hint: "review the findings; re-run with --force to accept them (or answer yes on a terminal)",
  },
  E_INSTALL_METADATA_CORRUPT: {
    title: "plugins/.install-metadata.json is not valid",
    hint:
      "fix the file at the position shown, or delete it (it only records source, revision and pin of git " +
      "installs); nothing was changed",
  },
  W_INSTALL_METADATA_CORRUPT: {
    title: "plugins/.install-metadata.json is not valid; compile went on without the git origins it records",
    hint: "fix the file at the position shown, or delete it (it only records source, revision and pin of git installs)",
  },
  E_INSTALL_ROLLBACK_FAILED: {
    title: "a failed install, update or remove could not be undone automatically",
    hint: "move the recovery copy named in the message back into the plugins folder by hand",
  },
  E_UPDATE_PINNED: {
    title: "the plugin is pinned to a commit; update never moves a pin",
    hint: "reinstall at the new commit: hermes plugins install <source> --force --ref <40-character commit SHA>",
  },
  E_UPDATE_NOT_GIT: {
    title: "the plugin was not installed from git (no .git folder); it cannot be updated",
    hint: "reinstall it from its repository with hermes plugins install <identifier> --force",
  },
  E_UPDATE_STASH_FAILED: {
    title: "local changes in the plugin checkout could not be stashed; nothing was changed",
    hint: "commit or move your changes in the plugin folder, then run the update again",
  },
  E_UPDATE_PULL_FAILED: {
    title: "git pull of the plugin failed; the installed plugin was not changed",
    hint:
      "see git's message; local commits that diverge from upstream must be rebased or dropped by hand; if " +
      "upstream rewrote its history, reinstall with hermes plugins install <source> --force",
  },
  E_UPDATE_SCAN_BLOCKED: {
    title: "the security scan found dangerous content in the update; the previous revision stays in place",
    hint:
      "review the findings; to accept a reviewed finding, add a waiver to plugins.scan_waivers for this " +
      "plugin, revision and finding id, then update again",
  },
  E_REMOVE_FAILED: {
    title: "the plugin could not be removed; it was left as it was",
    hint: "check the permissions of the plugins folder",
  },
  E_PLUGIN_MANAGED: {
    title: "the plugin is linked by the deployment (nix-managed-*)",
    hint: "change it in the deployment (Nix module or deploy spec) and re-run its activation",
  },
  E_GIT_MISSING: {
    title: "git is not installed or not in PATH",
    hint: "install git (it is needed to install and update plugins from repositories)",
  },
  E_GIT_TIMEOUT: {
    title: "a git operation timed out",
    hint: "check the network and the repository's host; large repositories may need a faster connection",
  },
  E_GIT_CLONE_FAILED: {
    title: "the repository could not be cloned",
    hint:
      "check that the repository exists and that you may read it; for a private repository configure a git " +
      "credential helper or an ssh key",
  },
  E_GIT_BRANCH_NOT_FOUND: {
    title: "the branch named in the URL does not exist in the repository",
    hint: "copy the URL again from the repository's web page, or install owner/repo/<subdir> for the default branch",
  },
  E_GIT_FETCH_FAILED: {
    title: "the requested commit could not be fetched",
    hint: "check the SHA; it must be a commit of the repository reachable from a branch or tag",
  },
  E_GIT_CHECKOUT_FAILED: {
    title: "the requested commit could not be checked out",
    hint: "check the SHA; it must name a commit, not a tree or a blob",
  },
  E_GIT_REVISION_MISMATCH: {
    title: "the checked-out revision differs from the requested commit",
    hint: "retry; if it persists the repository or a git hook rewrites HEAD",
  },
  E_GIT_FAILED: {
    title: "a git command failed",
    hint:
      "fix what git's message (quoted in the error) names: the repository path or URL, its permissions, or an " +
      "empty repository; then run the command again",
  },
  E_SCAN_DIR_UNREADABLE: {
    title: "the folder to scan does not exist or cannot be read",
    hint: "pass the path of a plugin folder you may read (the one with plugin.yaml)",
  },
  E_SCAN_ARGS: {
    title: "the scan's waiver target is incomplete or not valid",
    hint: "give --plugin-key and --revision together; the revision is a full 40-character commit SHA or 'local'",
    exit: 2,
  },
  E_SCAN_BLOCKED: {
    title: "the security scan gave a dangerous verdict; nothing was installed",
    hint:
      "review the deciding findings; --force does not override a dangerous verdict, an operator waiver for " +
      "this exact revision (plugins.scan_waivers) does",
  },
  E_SCAN_NEEDS_CONFIRMATION: {
    title: "the security scan gave a caution verdict that nobody confirmed",
    hint: "review the findings, then re-run on a terminal and answer yes, or pass --force to accept a caution verdict",
  },
  W_SCAN_WAIVER_INVALID: {
    title: "a scan waiver in config.yaml is malformed and is ignored",
    hint: "write each plugins.scan_waivers entry as {plugin, revision (40-hex or local), finding, file?, reason}",
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export type Severity = "error" | "warning";

/** A positioned problem. Validation collects many of these before anything is refused. */
export interface Diagnostic {
  code: ErrorCode;
  severity: Severity;
  message: string;
  file?: string;
  line?: number;
  col?: number;
  /** JSON path of the offending value, e.g. `plugins.enabled[2]`. */
  path?: string;
  hint?: string;
}

export interface HermesErrorInit {
  message?: string;
  hint?: string;
  file?: string;
  line?: number;
  col?: number;
  path?: string;
  diagnostics?: Diagnostic[];
  cause?: unknown;
}

/** Deep code throws this; the CLI boundary prints it and exits with the catalog's code. */
export class HermesError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;
  readonly file?: string;
  readonly line?: number;
  readonly col?: number;
  readonly path?: string;
  readonly diagnostics: Diagnostic[];

  constructor(code: ErrorCode, init: HermesErrorInit = {}) {
    super(init.message ?? ERROR_CATALOG[code].title, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "HermesError";
    this.code = code;
    this.hint = init.hint ?? ERROR_CATALOG[code].hint;
    this.file = init.file;
    this.line = init.line;
    this.col = init.col;
    this.path = init.path;
    this.diagnostics = init.diagnostics ?? [];
  }

  get exitCode(): 1 | 2 {
    const spec: ErrorSpec = ERROR_CATALOG[this.code];
    return spec.exit ?? 1;
  }

  toDiagnostic(): Diagnostic {
    return {
      code: this.code,
      severity: "error",
      message: this.message,
      file: this.file,
      line: this.line,
      col: this.col,
      path: this.path,
      hint: this.hint,
    };
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      hint: this.hint,
      file: this.file,
      line: this.line,
      col: this.col,
      path: this.path,
      diagnostics: this.diagnostics.length ? this.diagnostics : undefined,
    };
  }
}

export function isHermesError(e: unknown): e is HermesError {
  return e instanceof HermesError;
}

export function diagnostic(
  code: ErrorCode,
  message: string,
  where: Omit<Diagnostic, "code" | "message" | "severity"> = {},
): Diagnostic {
  return {
    code,
    severity: code.startsWith("W_") ? "warning" : "error",
    message,
    hint: ERROR_CATALOG[code].hint,
    ...where,
  };
}

/** `file:line:col json.path: message` — the one rendering every surface uses. */
export function formatLocation(d: Pick<Diagnostic, "file" | "line" | "col" | "path">): string {
  let loc = d.file ?? "";
  if (d.file && d.line !== undefined) loc += `:${d.line}:${d.col ?? 1}`;
  if (d.path) loc += loc ? ` ${d.path}` : d.path;
  return loc;
}

export function formatDiagnostic(d: Diagnostic, opts: { hint?: boolean } = {}): string {
  const loc = formatLocation(d);
  const head = `${d.severity === "warning" ? "warning" : "error"} ${d.code}${loc ? ` ${loc}` : ""}: ${d.message}`;
  return opts.hint !== false && d.hint ? `${head}\n  hint: ${d.hint}` : head;
}

/** GitHub Actions workflow-command annotation for CI (`--format github`). */
/** A workflow annotation names a file relative to the checkout: the working directory, when the file is under it. */
function annotationPath(file: string, cwd = process.cwd()): string {
  const rel = relative(cwd, file);
  return rel && isInside(cwd, file) ? rel : file;
}

export function formatGithub(d: Diagnostic): string {
  const props: string[] = [];
  if (d.file) props.push(`file=${escapeGithubProperty(annotationPath(d.file))}`);
  if (d.line !== undefined) props.push(`line=${d.line}`);
  if (d.col !== undefined) props.push(`col=${d.col}`);
  props.push(`title=${escapeGithubProperty(d.code)}`);
  const msg = `${d.path ? `${d.path}: ` : ""}${d.message}${d.hint ? ` (${d.hint})` : ""}`;
  return `::${d.severity === "warning" ? "warning" : "error"} ${props.join(",")}::${escapeGithubData(msg)}`;
}

function escapeGithubData(s: string): string {
  return s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

function escapeGithubProperty(s: string): string {
  return escapeGithubData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === "error");
}
