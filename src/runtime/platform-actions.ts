import type { Logger } from "pino";
import type { PlatformActionResult, PlatformVerb, RuntimeHost } from "./host.js";

/** The arguments each verb needs, all non-empty strings. */
const ARGS: Record<PlatformVerb, readonly string[]> = {
  add_reaction: ["platform", "chat_id", "message_id", "emoji"],
  set_thread_title: ["platform", "chat_id", "thread_id", "title"],
};

/**
 * `ctx.platform_actions` (v1): async verbs that return plain objects and never throw into the hook.
 * Checked on every call, in order: the gateway.platform_actions capability, the arguments, a running
 * gateway, then (by the gateway) the platform, its adapter and its connection. Every call is logged.
 */
export function platformActions(host: RuntimeHost, key: string, log: Logger) {
  const run = async (verb: PlatformVerb, raw: unknown): Promise<PlatformActionResult> => {
    const result = await attempt(host, key, verb, raw);
    const platform = raw && typeof raw === "object" ? String((raw as Record<string, unknown>).platform ?? "") : "";
    log.info(
      `platform_action plugin=${key} verb=${verb} platform=${platform || "-"} ok=${result.ok}` +
        `${result.ok ? "" : ` error=${result.error}`}`,
    );
    return result;
  };
  return Object.freeze({
    add_reaction: (args: unknown) => run("add_reaction", args),
    set_thread_title: (args: unknown) => run("set_thread_title", args),
  });
}

async function attempt(
  host: RuntimeHost,
  key: string,
  verb: PlatformVerb,
  raw: unknown,
): Promise<PlatformActionResult> {
  const granted =
    host.grantedCapabilities(key).includes("gateway.platform_actions") ||
    host.pluginEntry(key).allow_platform_actions === true;
  if (!granted)
    return {
      ok: false,
      error: "capability_not_granted",
      detail: `grant gateway.platform_actions: hermes plugins enable ${key} --grant gateway.platform_actions`,
    };
  const args: Record<string, string> = {};
  for (const name of ARGS[verb]) {
    const v = raw && typeof raw === "object" ? (raw as Record<string, unknown>)[name] : undefined;
    if (typeof v !== "string" || !v.trim())
      return { ok: false, error: "invalid_argument", detail: `${verb}: ${name} must be a non-empty string` };
    args[name] = v;
  }
  if (!host.gateway)
    return {
      ok: false,
      error: "gateway_unavailable",
      detail: "no gateway runs in this process (hermes serve runs one)",
    };
  try {
    return await host.gateway.platformAction(verb, args);
  } catch (e) {
    return { ok: false, error: "action_failed", detail: String((e as Error)?.message ?? e).slice(0, 512) };
  }
}
