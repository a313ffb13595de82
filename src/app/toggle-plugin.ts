import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { loadConfig, type LoadedConfig } from "../config/config-file.js";
import { disablePlugin, enablePlugin, type OwnershipGuard, type ToggleResult } from "../config/enable.js";
import { knownCapabilities, type CapabilityId } from "../contracts/capabilities.js";
import { consentEdits, parseGrantFlag, runConsent, type Io } from "../consent/flow.js";
import { findPlugin, type PluginView } from "../discovery/plugin-set.js";
import { compile, editCompileCheck, type CompileResult } from "../compile/compile.js";
import { loadPluginState, ownershipGuard } from "./plugin-state.js";
import { withPythonEnvs } from "./python-envs.js";

export interface TogglePluginOptions {
  paths: HomePaths;
  verb: "enable" | "disable";
  /** Key, manifest name or unique leaf name. */
  name: string;
  /** `enable --grant` values as given (comma-separated, repeatable). */
  grant?: readonly string[];
  /** Consent questions and notes (stderr with --json). */
  io: Io;
  /** Called once the config is written, before consent is asked: the edit's own report comes first. */
  onEdited?: (edit: ToggleEdit) => void;
}

export interface ToggleEdit {
  res: ToggleResult;
  /** Granted with --grant, in the same config write. */
  grants?: CapabilityId[];
  /** Declared but not granted by --grant. */
  pending: CapabilityId[];
}

export interface TogglePluginResult extends ToggleEdit {
  view: PluginView;
  /** The compile that follows a changed config (none when nothing changed). */
  compiled?: CompileResult;
  /** Why an enabled plugin still cannot load, when it cannot. */
  cannotLoad?: string;
}

/** `enable --grant`: validated against the declared set before anything is written. */
export function enableGrants(view: PluginView, raw: readonly string[] | undefined): CapabilityId[] | undefined {
  if (!raw || !raw.length) return undefined;
  return parseGrantFlag(raw, knownCapabilities(view.candidate.manifest?.capabilities ?? []), view.candidate.key);
}

/** Consent after `enable` (interactive on a terminal, headless with --grant, pending otherwise). Returns whether config
 * changed. */
export async function consentOnEnable(
  paths: HomePaths,
  view: PluginView,
  grants: CapabilityId[] | undefined,
  guard: OwnershipGuard,
  io: Io,
): Promise<boolean> {
  const declared = knownCapabilities(view.candidate.manifest?.capabilities ?? []);
  if (!declared.length) return false;
  const config = (await loadConfig(paths.config)).value;
  const r = await runConsent({
    configFile: paths.config,
    config,
    key: view.candidate.key,
    declared,
    context: "enable",
    io,
    grants,
    guard,
  });
  return r.recorded;
}

/**
 * `hermes plugins enable|disable <name>`: edit the enable lists (and grants) in one config write,
 * ask for consent after an enable, then compile so the lock follows the edit.
 */
export async function togglePlugin(o: TogglePluginOptions): Promise<TogglePluginResult> {
  const { paths, verb, name } = o;
  const { set } = await loadPluginState({ paths, warn: (line) => o.io.warn(line) });
  const view = findPlugin(set, name, { includeLosers: true });
  if (view.shadowedBy) {
    throw new HermesError("E_PLUGIN_NOT_FOUND", {
      message: `'${name}' resolves to ${view.candidate.path}, which is ${view.verdict.reason}`,
      hint: `run \`hermes plugins why ${name}\``,
    });
  }
  const ref = { key: view.candidate.key, name: view.candidate.name };
  const guard = await ownershipGuard(paths);
  const grants = verb === "enable" ? enableGrants(view, o.grant) : undefined;
  const declared = knownCapabilities(view.candidate.manifest?.capabilities ?? []);
  // --grant is written in the same config write as the enable: a kill never leaves one without the other.
  const withGrants = grants?.length
    ? (cur: LoadedConfig) => consentEdits(cur.value, ref.key, grants, declared, "flag", guard).edits
    : undefined;
  // Refused before writing when the edit would leave the home unable to compile (a required plugin).
  const check = editCompileCheck(paths.home);
  const res =
    verb === "enable"
      ? await enablePlugin(paths.config, ref, guard, withGrants, check)
      : await disablePlugin(paths.config, ref, guard, check);
  const edit: ToggleEdit = {
    res,
    ...(grants ? { grants } : {}),
    pending: grants ? declared.filter((c) => !grants.includes(c)) : [],
  };
  o.onEdited?.(edit);
  const consented =
    verb === "enable" && !grants?.length && (await consentOnEnable(paths, view, undefined, guard, o.io));
  // One truth: the lock follows every edit of the enable lists and grants.
  const compiled = res.changed || consented ? await compile({ home: paths.home }) : undefined;
  if (compiled && verb === "enable") await withPythonEnvs({ home: paths.home, note: (l) => o.io.warn(l) }, compiled);
  const broken = view.conflict || view.candidate.status !== "ok";
  const cannotLoad = verb === "enable" && view.verdict.action === "skip" && broken ? view.verdict.reason : undefined;
  return { ...edit, view, ...(compiled ? { compiled } : {}), ...(cannotLoad !== undefined ? { cannotLoad } : {}) };
}
