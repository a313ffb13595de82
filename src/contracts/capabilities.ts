import { sha256Hex } from "../core/hash.js";

/**
 * The capability catalog: ids, the legacy `plugins.entries.<key>` path each
 * one mirrors, and the sentence shown when a person is asked for consent.
 */
export const CAPABILITIES = {
  "tools.override": { legacy: ["allow_tool_override"], summary: "replace built-in tools or tools of other plugins" },
  "llm.provider_override": {
    legacy: ["llm", "allow_provider_override"],
    summary: "call the LLM through a provider other than the host's",
  },
  "llm.model_override": {
    legacy: ["llm", "allow_model_override"],
    summary: "call the LLM with a model other than the host's",
  },
  "llm.agent_id_override": { legacy: ["llm", "allow_agent_id_override"], summary: "call the LLM as another agent id" },
  "llm.profile_override": { legacy: ["llm", "allow_profile_override"], summary: "call the LLM under another profile" },
  "llm.task_override": { legacy: ["llm", "allow_task_override"], summary: "use auxiliary LLM task lanes" },
  "gateway.platform_actions": {
    legacy: ["allow_platform_actions"],
    summary: "act on messaging platforms (send, edit, delete)",
  },
  "gateway.plugin_status": { legacy: ["allow_plugin_status"], summary: "post status messages to gateway sessions" },
} as const satisfies Record<string, { legacy: readonly string[]; summary: string }>;

export type CapabilityId = keyof typeof CAPABILITIES;

export const CAPABILITY_IDS = Object.keys(CAPABILITIES) as CapabilityId[];

export function isCapabilityId(s: unknown): s is CapabilityId {
  return typeof s === "string" && Object.prototype.hasOwnProperty.call(CAPABILITIES, s);
}

/** Known ids only, trimmed, first occurrence kept. */
export function knownCapabilities(raw: readonly unknown[]): CapabilityId[] {
  const out: CapabilityId[] = [];
  for (const r of raw) {
    const s = typeof r === "string" ? r.trim() : r;
    if (isCapabilityId(s) && !out.includes(s)) out.push(s);
  }
  return out;
}

/** Order-insensitive hash of a declared set; grants are bound to it, so a changed set asks again. */
export function consentHash(caps: readonly string[]): string {
  const unique = [...new Set(caps)].sort();
  return sha256Hex(unique.join("\n"));
}
