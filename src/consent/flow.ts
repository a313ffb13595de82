import { editConfig, type ConfigValue } from "../config/config-file.js";
import type { OwnershipGuard } from "../config/enable.js";
import { pluginEntry } from "../config/plugin-lists.js";
import { HermesError } from "../core/errors.js";
import { didYouMean } from "../core/suggest.js";
import type { YamlEdit } from "../core/yaml-edit.js";
import {
  CAPABILITIES,
  CAPABILITY_IDS,
  consentHash,
  isCapabilityId,
  knownCapabilities,
  type CapabilityId,
} from "../contracts/capabilities.js";
import { resolveGrants } from "./grants.js";

/**
 * Capability consent: who may grant what, and how a grant
 * is written. A grant needs a person at a terminal (`interactive`) or an explicit flag (`flag`);
 * a session without a terminal prints what is pending, grants nothing and never reads stdin.
 */

/** How deep code talks to the person running the command; the CLI supplies the terminal one. */
export interface Io {
  /** stdin and stdout are both terminals: prompts are allowed. */
  readonly interactive: boolean;
  out(line?: string): void;
  warn(line: string): void;
  /** Ask a yes/no question (default no). Only called when `interactive`. */
  confirm(question: string): Promise<boolean>;
  /** Ask for a line of text; `null` on EOF/Ctrl-C. Only called when `interactive`. */
  ask(question: string, opts?: { secret?: boolean }): Promise<string | null>;
}

export type ConsentVia = "interactive" | "flag";
export type ConsentContext = "install" | "enable" | "update";

export interface ConsentState {
  declared: CapabilityId[];
  /** Known ids in `granted_capabilities`. */
  recorded: CapabilityId[];
  /** Declared, not recorded (in declared order). */
  pending: CapabilityId[];
  /** The stored consent hash equals the hash of the declared set. */
  hashCurrent: boolean;
  storedVia?: ConsentVia;
}

export function consentState(entry: Record<string, unknown>, declared: readonly CapabilityId[]): ConsentState {
  const recorded = knownCapabilities(Array.isArray(entry.granted_capabilities) ? entry.granted_capabilities : []);
  const rec = entry.capabilities_consent as { hash?: unknown; granted_via?: unknown } | undefined;
  const hashCurrent = typeof rec?.hash === "string" && rec.hash === consentHash(declared);
  const storedVia = rec?.granted_via === "flag" || rec?.granted_via === "interactive" ? rec.granted_via : undefined;
  return {
    declared: [...declared],
    recorded,
    pending: declared.filter((c) => !recorded.includes(c)),
    hashCurrent,
    storedVia,
  };
}

function utcSeconds(d = new Date()): string {
  return `${d.toISOString().slice(0, 19)}+00:00`;
}

function sortIds(ids: Iterable<CapabilityId>): CapabilityId[] {
  return [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Record a consent: `granted_capabilities` = sorted union of the prior grants
 * and `granted`; `capabilities_consent` = hash of the declared set the person saw, when, and how;
 * each grant mirrored to its legacy key. Comments and layout of config.yaml are kept.
 */
/** The config edits of a consent, against the config as it is now (shared with `enable --grant`). */
export function consentEdits(
  config: ConfigValue,
  key: string,
  granted: readonly CapabilityId[],
  declared: readonly CapabilityId[],
  via: ConsentVia,
  guard: OwnershipGuard = () => undefined,
): { edits: YamlEdit[]; union: CapabilityId[] } {
  const entry = pluginEntry(config, key);
  const st = consentState(entry, knownCapabilities(declared));
  const union = sortIds([...st.recorded, ...knownCapabilities(granted)]);
  const base = ["plugins", "entries", key];
  const viaNow = granted.length ? via : (st.storedVia ?? via);
  const edits: YamlEdit[] = [
    { op: "set", path: [...base, "granted_capabilities"], value: union },
    {
      op: "set",
      path: [...base, "capabilities_consent"],
      value: { hash: consentHash(knownCapabilities(declared)), granted_at: utcSeconds(), granted_via: viaNow },
    },
  ];
  for (const cap of union) edits.push({ op: "set", path: [...base, ...CAPABILITIES[cap].legacy], value: true });
  for (const e of edits) guard(e.path.map(String));
  return { edits, union };
}

/**
 * Record a consent: `granted_capabilities` = sorted union of the prior grants
 * and `granted`; `capabilities_consent` = hash of the declared set the person saw, when, and how;
 * each grant mirrored to its legacy key. Comments and layout of config.yaml are kept.
 */
export async function recordConsent(
  configFile: string,
  key: string,
  granted: readonly CapabilityId[],
  declared: readonly CapabilityId[],
  via: ConsentVia,
  guard: OwnershipGuard = () => undefined,
): Promise<CapabilityId[]> {
  let union: CapabilityId[] = [];
  await editConfig(configFile, (cur) => {
    const r = consentEdits(cur.value, key, granted, declared, via, guard);
    union = r.union;
    return r.edits;
  });
  return union;
}

/** `--grant a,b --grant c` → validated ids; only capabilities the plugin declares. */
export function parseGrantFlag(raw: readonly string[], declared: readonly CapabilityId[], key: string): CapabilityId[] {
  const items = raw.flatMap((r) => r.split(",")).map((s) => s.trim());
  const out: CapabilityId[] = [];
  items.forEach((item, i) => {
    if (!item) return;
    if (!isCapabilityId(item)) {
      throw new HermesError("E_GRANT_UNKNOWN_CAPABILITY", {
        message:
          `--grant item ${i + 1} '${item}' is not a capability id${didYouMean(item, CAPABILITY_IDS)} ` +
          `(known: ${CAPABILITY_IDS.join(", ")})`,
        path: `--grant[${i}]`,
      });
    }
    if (!declared.includes(item)) {
      throw new HermesError("E_GRANT_UNDECLARED", {
        message:
          `--grant item ${i + 1} '${item}': plugin ${key} does not declare it ` +
          `(declared: ${declared.join(", ") || "none"})${didYouMean(item, declared)}`,
        path: `--grant[${i}]`,
      });
    }
    if (!out.includes(item)) out.push(item);
  });
  if (!out.length)
    throw new HermesError("E_USAGE", { message: "--grant needs at least one capability id (comma-separated)" });
  return out;
}

export interface ConsentOutcome {
  granted: CapabilityId[];
  pending: CapabilityId[];
  recorded: boolean;
}

export interface ConsentRun {
  configFile: string;
  /** Current config (to read prior grants); re-read under the lock when recording. */
  config: ConfigValue;
  key: string;
  declared: readonly CapabilityId[];
  context: ConsentContext;
  io: Io;
  /** Headless grants from `--grant` (already validated with parseGrantFlag). */
  grants?: readonly CapabilityId[];
  guard?: OwnershipGuard;
}

/** The consent flow of install, enable and update. Never reads stdin without a terminal. */
export async function runConsent(r: ConsentRun): Promise<ConsentOutcome> {
  const declared = knownCapabilities(r.declared);
  const st = consentState(pluginEntry(r.config, r.key), declared);
  const io = r.io;
  if (r.grants && r.grants.length) {
    const union = await recordConsent(r.configFile, r.key, r.grants, declared, "flag", r.guard);
    const pending = declared.filter((c) => !union.includes(c));
    io.out(`✓ Granted: ${r.grants.join(", ")} (plugins.entries.${r.key}.granted_capabilities, via --grant)`);
    if (pending.length)
      io.out(
        `  Not granted: ${pending.join(", ")}. Grant them with: hermes plugins enable ${r.key} ` +
          `--grant ${pending.join(",")}`,
      );
    return { granted: union, pending, recorded: true };
  }
  if (!st.pending.length) {
    // Nothing new to ask: bring the consent hash up to date (a capability was dropped, or first record).
    if (declared.length && !st.hashCurrent) {
      const union = await recordConsent(r.configFile, r.key, [], declared, st.storedVia ?? "interactive", r.guard);
      return { granted: union, pending: [], recorded: true };
    }
    return { granted: st.recorded, pending: [], recorded: false };
  }
  const verb = r.context === "update" ? "now requests" : "requests";
  io.out(`  Plugin ${r.key} ${verb} the following capabilities:`);
  for (const c of st.pending) io.out(`    ${c} — ${CAPABILITIES[c].summary}`);
  io.out(
    "  Granting trusts the plugin author with these host surfaces. This is consent, not a sandbox: plugins " +
      "run in-process with your privileges.",
  );
  const carried = st.hashCurrent ? [] : st.recorded.filter((c) => declared.includes(c));
  if (!io.interactive) {
    io.out(
      `  Non-interactive session: capabilities NOT granted (fail closed). Review with \`hermes plugins ` +
        `capabilities ${r.key}\`; grant with \`hermes plugins enable ${r.key} ` +
        `--grant ${st.pending.join(",")}\` or interactively on a terminal.`,
    );
    if (carried.length) {
      io.out(`  Earlier grants (${carried.join(", ")}) stay suspended until the new capability set is consented to.`);
    }
    return { granted: st.hashCurrent ? st.recorded : [], pending: st.pending, recorded: false };
  }
  const yes = await io.confirm("  Grant these capabilities? [y/N] ");
  if (yes) {
    const union = await recordConsent(r.configFile, r.key, st.pending, declared, "interactive", r.guard);
    io.out(`✓ Granted: ${st.pending.join(", ")} (plugins.entries.${r.key}.granted_capabilities)`);
    return { granted: union, pending: [], recorded: true };
  }
  // The person saw the new set and kept only what was granted before: that is a consent to the set.
  if (carried.length) await recordConsent(r.configFile, r.key, [], declared, st.storedVia ?? "interactive", r.guard);
  io.out(
    `  Declined. ${r.key} keeps these capabilities off; it should degrade gracefully (ctx.has_capability()). ` +
      `Grant later with \`hermes plugins enable ${r.key}\`.`,
  );
  const kept = st.hashCurrent || carried.length ? st.recorded.filter((c) => declared.includes(c)) : [];
  return { granted: kept, pending: st.pending, recorded: carried.length > 0 };
}

export type CapabilityLabel = "granted" | "not granted" | "stale" | "legacy only";

export interface CapabilityRow {
  key: string;
  name: string;
  source: string;
  declared: Array<{ capability: CapabilityId; state: CapabilityLabel }>;
  /** Granted (recorded or via a legacy key) but not declared by the manifest. */
  undeclared: Array<{ capability: CapabilityId; via: "granted_capabilities" | "legacy key" }>;
  consent: { hash_current: boolean; granted_via: ConsentVia | null; granted_at: string | null };
}

function legacyTruthy(entry: Record<string, unknown>, cap: CapabilityId): boolean {
  let cur: unknown = entry;
  for (const p of CAPABILITIES[cap].legacy) {
    if (!cur || typeof cur !== "object" || Array.isArray(cur)) return false;
    cur = (cur as Record<string, unknown>)[p];
  }
  return Boolean(cur);
}

/**
 * One plugin's capabilities as `hermes plugins capabilities` shows them, judged exactly as the
 * compiler judges them (grants.ts): a recorded grant counts only while the consent hash matches.
 */
export function capabilityRow(
  p: { key: string; name: string; source: string; declared: readonly CapabilityId[] },
  config: ConfigValue,
): CapabilityRow {
  const entry = pluginEntry(config, p.key);
  const declared = knownCapabilities(p.declared);
  const { grants } = resolveGrants({ key: p.key, declared, entry });
  const st = consentState(entry, declared);
  const rows = declared.map((capability) => {
    let state: CapabilityLabel = "not granted";
    if (grants.granted.includes(capability)) state = "granted";
    else if (st.recorded.includes(capability)) state = "stale";
    else if (legacyTruthy(entry, capability)) state = "legacy only";
    return { capability, state };
  });
  const undeclared: CapabilityRow["undeclared"] = [];
  for (const cap of CAPABILITY_IDS) {
    if (declared.includes(cap)) continue;
    if (st.recorded.includes(cap)) undeclared.push({ capability: cap, via: "granted_capabilities" });
    else if (legacyTruthy(entry, cap)) undeclared.push({ capability: cap, via: "legacy key" });
  }
  const rec = entry.capabilities_consent as { granted_at?: unknown } | undefined;
  return {
    key: p.key,
    name: p.name,
    source: p.source,
    declared: rows,
    undeclared,
    consent: {
      hash_current: st.hashCurrent,
      granted_via: st.storedVia ?? null,
      granted_at: typeof rec?.granted_at === "string" ? rec.granted_at : null,
    },
  };
}

export function legacyKeyOf(cap: CapabilityId): string {
  return CAPABILITIES[cap].legacy.join(".");
}
