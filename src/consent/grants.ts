import { diagnostic, type Diagnostic } from "../core/errors.js";
import {
  CAPABILITIES,
  consentHash,
  isCapabilityId,
  knownCapabilities,
  type CapabilityId,
} from "../contracts/capabilities.js";

export type ConsentSource = "interactive" | "flag" | "declarative";

export interface ResolvedGrants {
  declared: CapabilityId[];
  granted: CapabilityId[];
  consent_hash: string;
  consent: ConsentSource | null;
  not_carried: string[];
}

export interface GrantInput {
  key: string;
  declared: readonly CapabilityId[];
  /** `plugins.entries.<key>` from config.yaml. */
  entry: Record<string, unknown>;
  /** Declarative grants from the deploy spec, when the plugin comes from it. */
  specGrants?: readonly string[];
  /** Where spec grants are, for positioned errors. */
  specLocate?: (i: number) => Partial<Diagnostic>;
}

function legacyValue(entry: Record<string, unknown>, path: readonly string[]): unknown {
  let cur: unknown = entry;
  for (const p of path) {
    if (!cur || typeof cur !== "object" || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

/**
 * What a plugin may do: grants count only for capabilities it declares, and only while the
 * declared set hashes to what the person (or the deploy spec) consented to. Anything else is
 * reported and not carried: a grant never outlives the set it was given for.
 */
export function resolveGrants(input: GrantInput): { grants: ResolvedGrants; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const declared = [...input.declared];
  const hash = consentHash(declared);
  const granted = new Set<CapabilityId>();
  const notCarried = new Set<string>();
  let consent: ConsentSource | null = null;

  input.specGrants?.forEach((g, i) => {
    const where = input.specLocate?.(i) ?? {};
    if (!isCapabilityId(g)) {
      diagnostics.push(
        diagnostic("E_GRANT_UNKNOWN_CAPABILITY", `plugin ${input.key}: unknown capability '${g}'`, where),
      );
    } else if (!declared.includes(g)) {
      diagnostics.push(
        diagnostic(
          "E_GRANT_UNDECLARED",
          `plugin ${input.key} does not declare capability '${g}' (declared: ${declared.join(", ") || "none"})`,
          where,
        ),
      );
    } else {
      granted.add(g);
      consent = "declarative";
    }
  });

  const recorded = knownCapabilities(
    Array.isArray(input.entry.granted_capabilities) ? input.entry.granted_capabilities : [],
  );
  const record = input.entry.capabilities_consent as { hash?: unknown; granted_via?: unknown } | undefined;
  const current = typeof record?.hash === "string" && record.hash === hash;
  for (const cap of recorded) {
    if (current && declared.includes(cap)) {
      if (!granted.has(cap)) {
        granted.add(cap);
        consent ??= record?.granted_via === "flag" ? "flag" : "interactive";
      }
    } else notCarried.add(cap);
  }
  if (notCarried.size) {
    diagnostics.push(
      diagnostic(
        "W_GRANT_STALE",
        `plugin ${input.key}: grant(s) ${[...notCarried].join(", ")} not ` +
          `carried: ${current ? "no longer declared" : "the declared capabilities changed since consent"}`,
        { path: `plugins.entries.${input.key}.granted_capabilities` },
      ),
    );
  }
  for (const cap of declared) {
    if (granted.has(cap)) continue;
    const legacy = CAPABILITIES[cap].legacy;
    if (legacyValue(input.entry, legacy)) {
      diagnostics.push(
        diagnostic(
          "W_GRANT_LEGACY_ONLY",
          `plugin ${input.key}: legacy key ${legacy.join(".")} is set but no consent is recorded for ` +
            `'${cap}'; not granted`,
          {
            path: `plugins.entries.${input.key}.${legacy.join(".")}`,
          },
        ),
      );
    }
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    grants: {
      declared,
      granted: [...granted].sort(order),
      consent_hash: hash,
      consent: granted.size ? consent : null,
      not_carried: [...notCarried].sort(order),
    },
    diagnostics,
  };
}
