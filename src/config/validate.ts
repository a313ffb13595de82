import { basename, resolve } from "node:path";
import { diagnostic, type Diagnostic } from "../core/errors.js";
import { schemaId, schemaSources } from "../core/schema.js";
import { nearest } from "../core/suggest.js";
import { loadConfig } from "./config-file.js";
import { ACCEPTED_PROVIDERS } from "./model-providers.js";
import { readShellHooks } from "./shell-hooks.js";

/**
 * Top-level keys the original Hermes reads that hermes-kit does not describe in its schema: they are
 * kept as they are, never warned about; anything else at the top level is most likely a typo.
 */
export const ORIGINAL_TOP_LEVEL_KEYS = [
  "providers",
  "custom_providers",
  "fallback_providers",
  "fallback_model",
  "credential_pool_strategies",
  "toolsets",
  "platform_toolsets",
  "browser",
  "checkpoints",
  "compression",
  "auxiliary",
  "display",
  "voice",
  "delegation",
  "skills",
  "smart_model_routing",
  "honcho",
  "web",
  "code_execution",
  "quick_commands",
  "personalities",
  "timezone",
  "cron",
  "session_reset",
  "streaming",
  "privacy",
  "group_sessions",
  "gateway",
  "discord",
  "telegram",
  "slack",
  "whatsapp",
  "signal",
  "matrix",
  "email",
  "sms",
  "homeassistant",
  "mattermost",
  "command_allowlist",
  "prefill_messages_file",
  "logging",
  "network",
  "hooks",
  "platforms",
  "dashboard",
  "tool_output",
  "tool_loop_guardrails",
  "file_read_max_chars",
  "context_file_max_chars",
  "human_delay",
  "worktree",
  "worktree_sync",
  "lsp",
  "plugin_guard",
  "kanban",
  "goals",
  "sessions",
  "update",
  "cli",
  "tools",
];

/** The top-level keys config.schema.json describes. */
function configSchemaKeys(): string[] {
  const doc = schemaSources().docs.find((d) => (d as { $id?: string }).$id === schemaId("config")) as
    | { properties?: Record<string, unknown> }
    | undefined;
  return Object.keys(doc?.properties ?? {});
}

/** The manifest fields that make a document a plugin.yaml rather than a config.yaml. */
const MANIFEST_MARKERS = [
  "manifest_version",
  "provides_tools",
  "provides_hooks",
  "hooks",
  "requires_env",
  "kind",
  "version",
  "description",
];

/**
 * `hermes config validate`: parse and schema (what compile checks), and the rules the schema cannot
 * state: values above their clamp, top-level keys nobody reads (with the nearest known key), a
 * `model.provider` neither the agent nor a model-provider plugin (`pluginProviders`) has, and a plugin
 * manifest given in place of a config.
 */
export async function validateConfigFile(
  file: string,
  opts: { pluginProviders?: readonly string[] } = {},
): Promise<Diagnostic[]> {
  const cfg = await loadConfig(resolve(file));
  if (!cfg.exists) return [diagnostic("E_FS_READ", `${cfg.file} does not exist`, { file: cfg.file })];
  const value = cfg.value;
  const top = Object.keys(value);
  const looksLikeManifest =
    /^plugin\.ya?ml$/i.test(basename(cfg.file)) ||
    (typeof value.name === "string" &&
      top.some((k) => MANIFEST_MARKERS.includes(k)) &&
      !top.some((k) => k === "plugins" || k === "model"));
  if (looksLikeManifest && !cfg.diagnostics.some((d) => d.code === "E_YAML_PARSE")) {
    return [
      diagnostic("E_CONFIG_IS_MANIFEST", `${cfg.file} is a plugin manifest (plugin.yaml), not a config.yaml`, {
        file: cfg.file,
        line: 1,
        col: 1,
      }),
    ];
  }
  const out = [...cfg.diagnostics];
  const known = [...configSchemaKeys(), ...ORIGINAL_TOP_LEVEL_KEYS];
  for (const k of top) {
    if (known.includes(k)) continue;
    const near = nearest(k, known);
    out.push(
      diagnostic(
        "W_CONFIG_UNKNOWN_KEY",
        `unknown top-level key '${k}'` +
          `${near ? `; did you mean '${near}'?` : " (read neither by hermes-kit nor by the original Hermes)"}`,
        cfg.source.locate([k], { key: true }),
      ),
    );
  }
  const model = value.model;
  const provider =
    model && typeof model === "object" && !Array.isArray(model)
      ? (model as Record<string, unknown>).provider
      : undefined;
  const accepted = [...ACCEPTED_PROVIDERS, ...(opts.pluginProviders ?? [])];
  if (typeof provider === "string" && provider.trim() && !accepted.includes(provider.trim().toLowerCase())) {
    const near = nearest(provider.trim(), accepted);
    out.push(
      diagnostic(
        "W_CONFIG_UNKNOWN_PROVIDER",
        `model.provider '${provider}' is neither a built-in provider nor a model-provider plugin ` +
          `of this home${near ? `; did you mean '${near}'?` : ""} (accepted: ${accepted.join(", ")})`,
        cfg.source.locate(["model", "provider"]),
      ),
    );
  }
  // Shell hooks the schema accepts but the runtime would not run (unknown or never-fired hook, misplaced matcher).
  for (const p of readShellHooks(value).problems) {
    const at = (p.path ?? "hooks").split(".").map((seg) => (/^\d+$/.test(seg) ? Number(seg) : seg));
    out.push({ ...p, ...cfg.source.locate(at) });
  }
  const plugins = value.plugins as Record<string, unknown> | undefined;
  if (plugins && typeof plugins === "object") {
    for (const k of ["hook_callback_timeout", "load_timeout_seconds"] as const) {
      const v = plugins[k];
      if (typeof v === "number" && v > 600) {
        out.push(
          diagnostic(
            "W_CONFIG_CLAMPED",
            `plugins.${k} = ${v} is above 600 and will be clamped to 600`,
            cfg.source.locate(["plugins", k]),
          ),
        );
      }
    }
  }
  return out;
}
