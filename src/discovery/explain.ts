import type { Diagnostic } from "../core/errors.js";
import { pluginEntry } from "../config/plugin-lists.js";
import type { ConfigValue } from "../config/config-file.js";
import { consentHash, knownCapabilities } from "../contracts/capabilities.js";
import { HERMES_COMPAT_VERSION, satisfiesHermes } from "../manifest/requires-hermes.js";
import type { PluginSet, PluginView } from "./plugin-set.js";

export interface Explanation {
  key: string;
  name: string;
  aliases: string[];
  source: string;
  origin: string;
  kind?: string;
  version?: string;
  path: string;
  real_path?: string;
  link_target?: string;
  manifest?: string;
  entry?: string;
  state: string;
  action: string;
  reason: string;
  load_position?: number;
  shadowed_by?: { key: string; source: string; path: string; reason: string };
  shadows: { source: string; path: string; reason: string }[];
  capabilities: { declared: string[]; granted: string[]; consent_current: boolean };
  requires: string[];
  /** The manifest's requires_hermes, or null when it sets none. */
  requires_hermes: { spec: string; running: string; met: boolean } | null;
  diagnostics: Diagnostic[];
}

/** Everything `hermes plugins why` says about one plugin, as data. */
export function explain(set: PluginSet, view: PluginView, config: ConfigValue): Explanation {
  const c = view.candidate;
  const entry = pluginEntry(config, c.key);
  const declared = c.manifest?.capabilities ?? [];
  const granted = knownCapabilities(Array.isArray(entry.granted_capabilities) ? entry.granted_capabilities : []);
  const consent = entry.capabilities_consent as { hash?: unknown } | undefined;
  return {
    key: c.key,
    name: c.name,
    aliases: view.aliases,
    source: c.source,
    origin: c.origin,
    kind: c.manifest?.kind,
    version: c.manifest?.version,
    path: c.path,
    real_path: c.realPath,
    link_target: c.linkTarget,
    manifest: c.manifestFile,
    entry: c.entry,
    state: view.verdict.state,
    action: view.verdict.action,
    reason: view.verdict.reason,
    load_position: view.loadPosition,
    shadowed_by: view.shadowedBy
      ? {
          key: view.shadowedBy.by.key,
          source: view.shadowedBy.by.source,
          path: view.shadowedBy.by.path,
          reason: view.shadowedBy.reason,
        }
      : undefined,
    shadows: set.losers
      .filter((l) => l.shadowedBy?.by === c)
      .map((l) => ({ source: l.candidate.source, path: l.candidate.path, reason: l.shadowedBy!.reason })),
    capabilities: {
      declared,
      granted,
      consent_current: typeof consent?.hash === "string" && consent.hash === consentHash(declared),
    },
    requires: c.manifest?.requires_plugins.map((r) => r.id) ?? [],
    requires_hermes: c.manifest?.requires_hermes
      ? {
          spec: c.manifest.requires_hermes,
          running: HERMES_COMPAT_VERSION,
          met: satisfiesHermes(c.manifest.requires_hermes),
        }
      : null,
    diagnostics: c.diagnostics,
  };
}
