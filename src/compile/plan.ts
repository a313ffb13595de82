import { sha256Hex } from "../core/hash.js";
import { canonicalJson } from "../core/canonical-json.js";
import { diagnostic, hasErrors, type Diagnostic } from "../core/errors.js";
import { applyYamlEdits } from "../core/yaml-edit.js";
import { parseConfigText, type ConfigValue } from "../config/config-file.js";
import { pluginEntry } from "../config/plugin-lists.js";
import { resolveGrants } from "../consent/grants.js";
import { buildPluginSet, type PluginView } from "../discovery/plugin-set.js";
import { HOOK_CATALOG_VERSION, isHookName, isMiddlewareKind, suggestHook } from "../contracts/hook-catalog.js";
import type { CompileInputs, SpecTarget } from "./gather.js";
import {
  sealLock,
  LOCK_SCHEMA,
  type Lock,
  type LockLink,
  type LockPlugin,
  type LockSettings,
} from "../contracts/lock.js";
import { mergeDeclared, planOverlay, type OverlayChange, type Ownership } from "./overlay.js";
import { ownershipOf, ownershipRecord } from "../config/managed.js";
import { linkValue } from "./link-farm.js";
import { kitVersion } from "../core/kit-version.js";

export const KIT_VERSION = kitVersion();

export interface LinkChange {
  op: "add" | "replace" | "remove" | "repair";
  link: string;
  target?: string;
  from?: string;
}

export interface PluginChange {
  op: "add" | "remove" | "change";
  key: string;
  details: string[];
}

export interface CompilePlan {
  ok: boolean;
  diagnostics: Diagnostic[];
  lock: Lock;
  lockText: string;
  configText: string;
  configChanged: boolean;
  configChanges: OverlayChange[];
  /** The deployment's declared overlay, kept with the generation for rollback. */
  declared: Record<string, unknown> | null;
  links: LockLink[];
  linkChanges: LinkChange[];
  pluginChanges: PluginChange[];
  lockChanged: boolean;
  /** Pointers (`hermes.lock.json`, `generations/current`) or link farm need repair. */
  repair: boolean;
  managedKind: string | null;
  /** Anything to write at all. */
  changed: boolean;
  /** Per-plugin file hashes for the generation's drift record. */
  files: Record<string, Record<string, string>>;
  /** The planner's parse of `configText` (schema-checked), for the config cache; absent on a no-op. */
  configRead?: { text: string; value: ConfigValue; diagnostics: Diagnostic[] };
}

// Kept in their own module so that readers of generations (lock verify) do not load the planner.
export { farmName, linkValue } from "./link-farm.js";

function clamp(v: unknown, def: number): number {
  if (v === null || v === undefined || typeof v !== "number" || !Number.isFinite(v) || v < 0) return def;
  return Math.min(v, 600);
}

function str(v: unknown): string | null {
  return typeof v === "string" && v.trim() ? v.trim() : null;
}

/** Warnings for values the lock clamps (the schema allows them; the runtime cannot honour them). */
export function settingsWarnings(config: ConfigValue, file: string): Diagnostic[] {
  const plugins = (config.plugins ?? {}) as Record<string, unknown>;
  const out: Diagnostic[] = [];
  for (const k of ["hook_callback_timeout", "load_timeout_seconds"]) {
    const v = plugins[k];
    if (typeof v === "number" && v > 600)
      out.push(diagnostic("W_CONFIG_CLAMPED", `plugins.${k} = ${v} is clamped to 600`, { file, path: `plugins.${k}` }));
  }
  return out;
}

export function lockSettings(config: ConfigValue): LockSettings {
  const plugins = (config.plugins ?? {}) as Record<string, unknown>;
  const security = (config.security ?? {}) as Record<string, unknown>;
  const approval = (security.approval ?? {}) as Record<string, unknown>;
  return {
    hook_callback_timeout: clamp(plugins.hook_callback_timeout, 30),
    load_timeout_seconds: clamp(plugins.load_timeout_seconds, 10),
    approval_transport: str(approval.transport),
    approval_transport_fallback: str(approval.transport_fallback) ?? "deny",
    memory_provider: str((config.memory as Record<string, unknown> | undefined)?.provider),
    context_engine: str((config.context as Record<string, unknown> | undefined)?.engine),
  };
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function declaredOverlay(inputs: CompileInputs): Record<string, unknown> | null {
  const spec = inputs.spec;
  if (!spec) return null;
  const declared = structuredClone(spec.settings);
  const enabled = inputs.specTargets.filter((t) => t.entry.enable).map((t) => t.candidate.key);
  const entries: Record<string, unknown> = {};
  for (const t of inputs.specTargets)
    if (Object.keys(t.entry.settings).length) entries[t.candidate.key] = { settings: t.entry.settings };
  const plugins: Record<string, unknown> = {};
  if (enabled.length) plugins.enabled = enabled;
  if (Object.keys(entries).length) plugins.entries = entries;
  return mergeDeclared(declared, Object.keys(plugins).length ? { plugins } : {});
}

function previousOwnership(inputs: CompileInputs): Ownership {
  const d = inputs.previous?.deployment;
  const cur = ownershipOf(d);
  const p = inputs.pendingOwnership;
  if (!p) return cur;
  const items: Record<string, string[]> = { ...cur.items };
  for (const [k, v] of Object.entries(p.items)) items[k] = [...new Set([...(items[k] ?? []), ...v])];
  const seen = new Set(cur.leaves.map((l) => JSON.stringify(l)));
  return { leaves: [...cur.leaves, ...p.leaves.filter((l) => !seen.has(JSON.stringify(l)))], items };
}

/** A required plugin that will not load: where the requirement is written and the one edit that fixes it. */
function requiredSkipped(
  view: PluginView,
  inputs: CompileInputs,
  spec: SpecTarget | undefined,
  dep: { grants: string[]; required: boolean } | undefined,
  reason: string,
): Diagnostic {
  const c = view.candidate;
  const m = c.manifest;
  const specFile = inputs.spec?.file ?? inputs.previous?.deployment.spec ?? undefined;
  const where = dep?.required
    ? spec
      ? inputs.spec!.source.locate([...spec.entry.at, "required"])
      : { file: specFile, path: "plugins[].required" }
    : m?.required
      ? { file: c.manifestFile, path: "required" }
      : { file: inputs.paths.config, path: `plugins.entries.${c.key}.required` };
  const owner = dep?.required
    ? `the deploy spec${specFile ? ` ${specFile}` : ""}`
    : m?.required
      ? `its manifest (${c.manifestFile})`
      : `plugins.entries.${c.key}.required in ${inputs.paths.config}`;
  // The hint names the one edit that fixes this state, not the generic advice.
  const hint =
    view.verdict.state === "disabled"
      ? `remove ${c.key} from plugins.disabled in ${inputs.paths.config} (\`hermes plugins enable ${c.key}\`); ` +
        `it is required by ${owner}`
      : view.verdict.state === "not-enabled"
        ? `enable it (\`hermes plugins enable ${c.key}\`); it is required by ${owner}`
        : `fix the plugin (\`hermes plugins why ${c.key}\`) or drop the requirement in ${owner}`;
  return {
    ...diagnostic("E_COMPILE_INVALID_PLUGIN", `required plugin ${c.key} will not load: ${reason}`, where),
    hint,
  };
}

/** The catalog hooks a plugin declares; an unknown one is warned about when the plugin loads. */
function knownHooks(c: PluginView["candidate"], loads: boolean, diagnostics: Diagnostic[]): string[] {
  const m = c.manifest;
  const hooks: string[] = [];
  for (const h of [...new Set([...(m?.hooks ?? []), ...(m?.provides_hooks ?? [])])]) {
    if (isHookName(h)) hooks.push(h);
    else if (loads) {
      const near = suggestHook(h);
      diagnostics.push(
        diagnostic(
          "W_MANIFEST_UNKNOWN_HOOK",
          `plugin ${c.key} declares unknown hook '${h}'${near ? `; did you mean '${near}'?` : ""}`,
          { file: c.manifestFile, path: "hooks" },
        ),
      );
    }
  }
  return hooks;
}

/** Report deploy-spec and required plugins that cannot load, and enabled ones that are skipped. */
function reportLoadProblems(
  view: PluginView,
  inputs: CompileInputs,
  spec: SpecTarget | undefined,
  dep: { grants: string[]; required: boolean } | undefined,
  outcome: { required: boolean; action: LockPlugin["action"]; reason: LockPlugin["reason"] },
  diagnostics: Diagnostic[],
): void {
  const c = view.candidate;
  const { required, action, reason } = outcome;
  if (spec && c.status !== "ok") {
    diagnostics.push(
      diagnostic(
        "E_COMPILE_INVALID_PLUGIN",
        `deploy spec plugin ${spec.entry.path} cannot load: ${view.verdict.reason}`,
        inputs.spec!.source.locate([...spec.entry.at, "path"]),
      ),
    );
  }
  if (required && action === "skip") {
    diagnostics.push(requiredSkipped(view, inputs, spec, dep, reason));
  } else if (view.verdict.state === "enabled" && !spec && c.status !== "ok") {
    // Enabled but broken: the lock records why; say it here too, with the plugin's own findings.
    diagnostics.push(
      diagnostic("W_COMPILE_PLUGIN_SKIPPED", `enabled plugin ${c.key} will not load: ${reason}`, {
        file: c.manifestFile ?? c.path,
      }),
    );
  }
  if (view.verdict.state === "enabled" || spec) {
    for (const d of c.diagnostics)
      diagnostics.push(spec || d.severity === "warning" ? d : { ...d, severity: "warning" });
  }
}

function lockPlugin(
  view: PluginView,
  inputs: CompileInputs,
  config: ConfigValue,
  spec: SpecTarget | undefined,
  dep: { grants: string[]; required: boolean } | undefined,
  diagnostics: Diagnostic[],
): LockPlugin {
  const c = view.candidate;
  const m = c.manifest;
  const hashed = c.realPath ? inputs.integrity.get(c.realPath) : undefined;
  let action = view.verdict.action;
  let reason = view.verdict.reason;
  const entry = pluginEntry(config, c.key);
  const required = Boolean(dep?.required || m?.required || entry.required === true);
  if (hashed?.error) {
    if (action !== "skip" || spec)
      diagnostics.push({ ...hashed.error, message: `plugin ${c.key}: ${hashed.error.message}` });
    else diagnostics.push({ ...hashed.error, severity: "warning" });
    action = "skip";
    reason = `cannot verify: ${hashed.error.message}`;
  }
  reportLoadProblems(view, inputs, spec, dep, { required, action, reason }, diagnostics);
  // The spec's own order, so that an error points at the grant as written.
  const specGrants = spec ? spec.entry.grants : dep?.grants;
  const { grants, diagnostics: gd } = resolveGrants({
    key: c.key,
    declared: m?.capabilities ?? [],
    entry,
    specGrants,
    specLocate: spec ? (i) => inputs.spec!.source.locate([...spec.entry.at, "grants", i]) : undefined,
  });
  diagnostics.push(...gd);
  const hooks = knownHooks(c, action !== "skip", diagnostics);
  const middleware = (m?.provides_middleware ?? []).filter(isMiddlewareKind);
  const git = c.source === "user" ? (inputs.gitOrigins[c.dirName] ?? null) : null;
  return {
    key: c.key,
    name: c.name,
    version: m?.version ?? "",
    kind: m?.kind ?? "standalone",
    source: c.source,
    origin: c.origin,
    path: c.path,
    target: c.realPath ?? c.linkTarget ?? c.path,
    entry: c.entry ?? null,
    integrity: hashed?.integrity ?? "",
    manifest_sha256: c.manifestSha256 ?? "",
    state: view.verdict.state,
    action,
    reason,
    load_position: action === "skip" ? null : (view.loadPosition ?? null),
    required,
    capabilities: {
      declared: grants.declared,
      granted: grants.granted,
      consent_hash: grants.consent_hash,
      consent: grants.consent,
      not_carried: grants.not_carried,
    },
    hooks: hooks.sort(byKey),
    middleware: middleware.sort(byKey),
    git,
    managed: spec !== undefined || (inputs.previous?.deployment.links ?? []).some((l) => c.path.endsWith(`/${l.link}`)),
  };
}

/** A key claimed twice that nothing enables or deploys loads nowhere either way: a warning, not a refusal of the whole
 * home. */
function downgradeUnusedConflicts(
  inputs: CompileInputs,
  set: ReturnType<typeof buildPluginSet>,
  diagnostics: Diagnostic[],
): void {
  for (const [key, list] of inputs.discovery.resolution.conflicts) {
    const used =
      inputs.specTargets.some((t) => t.candidate.key === key) ||
      set.views.some((v) => list.includes(v.candidate) && v.verdict.state === "enabled");
    if (used) continue;
    for (let i = 0; i < diagnostics.length; i++) {
      const d = diagnostics[i]!;
      if (d.code === "E_DISCOVERY_DUPLICATE_KEY" && d.message.startsWith(`plugin key '${key}' `))
        diagnostics[i] = { ...d, severity: "warning" };
    }
  }
}

/** Hook and middleware chains: the loading plugins that declare each, in load order. */
function chainsOf(
  loading: Map<string, LockPlugin>,
  loadOrder: string[],
): { hooks: Record<string, string[]>; middleware: Record<string, string[]> } {
  const hooks: Record<string, string[]> = {};
  const middleware: Record<string, string[]> = {};
  for (const k of loadOrder) {
    const p = loading.get(k)!;
    for (const h of p.hooks) (hooks[h] ??= []).push(k);
    for (const mw of p.middleware) (middleware[mw] ??= []).push(k);
  }
  return { hooks, middleware };
}

/** What of each discovered candidate goes into the inputs hash. */
function candidateFingerprints(inputs: CompileInputs): unknown[][] {
  return (
    [...inputs.discovery.candidates]
      .sort((a, b) => byKey(a.path, b.path) || byKey(a.key, b.key))
      // What a link resolves to counts, not how it is spelled (a deployment link reads differently
      // before and after it is placed).
      // The git origin too: it is in the lock, and same inputs must give the same lock (startup compares them).
      .map((c) => [
        c.key,
        c.source,
        c.path,
        c.realPath ?? null,
        c.manifestSha256 ?? null,
        c.status,
        c.realPath ? (inputs.integrity.get(c.realPath)?.integrity ?? null) : null,
        c.source === "user" ? (inputs.gitOrigins[c.dirName] ?? null) : null,
      ])
  );
}

function diffLinks(inputs: CompileInputs, links: LockLink[]): LinkChange[] {
  const linkChanges: LinkChange[] = [];
  const prevLinks = new Map((inputs.previous?.deployment.links ?? []).map((l) => [l.link, l.target]));
  const want = new Map(links.map((l) => [l.link, l.target]));
  for (const l of links) {
    const prev = prevLinks.get(l.link);
    if (prev === undefined) linkChanges.push({ op: "add", link: l.link, target: l.target });
    else if (prev !== l.target) linkChanges.push({ op: "replace", link: l.link, target: l.target, from: prev });
    else if (inputs.linksOnDisk[l.link] !== linkValue(l.link))
      linkChanges.push({ op: "repair", link: l.link, target: l.target });
  }
  for (const [link, value] of Object.entries(inputs.linksOnDisk)) {
    if (!want.has(link)) linkChanges.push({ op: "remove", link, from: prevLinks.get(link) ?? value });
  }
  return linkChanges;
}

/** Per plugin, what differs from the previous lock, in words. */
function diffPlugins(inputs: CompileInputs, plugins: LockPlugin[]): PluginChange[] {
  const prevPlugins = new Map((inputs.previous?.plugins ?? []).map((p) => [p.key, p]));
  const pluginChanges: PluginChange[] = [];
  for (const p of plugins) {
    const old = prevPlugins.get(p.key);
    if (!old) {
      pluginChanges.push({
        op: "add",
        key: p.key,
        details: [`${p.state}, ${p.action === "skip" ? `does not load (${p.reason})` : `loads #${p.load_position}`}`],
      });
      continue;
    }
    const details: string[] = [];
    if (old.version !== p.version) details.push(`version ${old.version || "?"} → ${p.version || "?"}`);
    if (old.integrity !== p.integrity) details.push("files changed");
    if (old.state !== p.state) details.push(`state ${old.state} → ${p.state}`);
    if (old.action !== p.action)
      details.push(`${old.action} → ${p.action}${p.action === "skip" ? ` (${p.reason})` : ""}`);
    if (old.load_position !== p.load_position && p.action !== "skip" && old.action !== "skip")
      details.push(`load position ${old.load_position} → ${p.load_position}`);
    if (old.capabilities.granted.join() !== p.capabilities.granted.join())
      details.push(`granted [${old.capabilities.granted.join(", ")}] → [${p.capabilities.granted.join(", ")}]`);
    if (old.target !== p.target) details.push(`target ${old.target} → ${p.target}`);
    if (details.length) pluginChanges.push({ op: "change", key: p.key, details });
  }
  for (const key of prevPlugins.keys())
    if (!plugins.some((p) => p.key === key)) pluginChanges.push({ op: "remove", key, details: [] });
  return pluginChanges;
}

/** The declared settings written into config.yaml (when it parses as a mapping), and who owns what afterwards. */
function overlayConfig(
  inputs: CompileInputs,
  before: ReturnType<typeof parseConfigText>,
  declared: Record<string, unknown> | null,
  policy: Parameters<typeof planOverlay>[2],
): { configText: string; configChanges: OverlayChange[]; owned: Ownership } {
  let configText = inputs.configText;
  let configChanges: OverlayChange[] = [];
  let owned = previousOwnership(inputs);
  if (declared && before.source.ok && !before.diagnostics.some((d) => d.code === "E_CONFIG_NOT_MAPPING")) {
    const o = planOverlay(before.value, declared, policy, owned);
    configText = applyYamlEdits(inputs.configText, o.edits);
    configChanges = o.changes;
    owned = o.owned;
  }
  return { configText, configChanges, owned };
}

/** The deployment's plugins (grants and required): the spec's when there is one, else the previous lock's. */
function deploymentPlugins(inputs: CompileInputs): Record<string, { grants: string[]; required: boolean }> {
  return inputs.spec
    ? Object.fromEntries(
        inputs.specTargets.map((t) => [
          t.candidate.key,
          { grants: [...t.entry.grants].sort(byKey), required: t.entry.required },
        ]),
      )
    : { ...(inputs.previous?.deployment.plugins ?? {}) };
}

/** The deployment's links in link order: the spec's when there is one, else the previous lock's. */
function deploymentLinks(inputs: CompileInputs): LockLink[] {
  return (
    inputs.spec
      ? inputs.specTargets.map((t) => ({ link: t.link, target: t.entry.path }))
      : [...(inputs.previous?.deployment.links ?? [])]
  ).sort((a, b) => byKey(a.link, b.link));
}

/** Per-plugin file hashes of every hashed plugin, keyed by plugin key. */
function integrityFiles(inputs: CompileInputs, plugins: readonly LockPlugin[]) {
  return Object.fromEntries(
    plugins.flatMap((p) => {
      const f = inputs.integrity.get(p.target)?.files;
      return f ? [[p.key, f]] : [];
    }),
  );
}

/** config.yaml as the plan starts from it: this process's parse of the same bytes when it has one. */
function configBefore(inputs: CompileInputs): ReturnType<typeof parseConfigText> {
  const file = inputs.paths.config;
  return inputs.configParsed?.file === file ? inputs.configParsed : parseConfigText(inputs.configText, file);
}

/** Pure: validated inputs in, plan and lock out. Nothing here touches the disk. */
export function planCompile(inputs: CompileInputs): CompilePlan {
  const diagnostics: Diagnostic[] = [...inputs.diagnostics];
  const before = configBefore(inputs);
  diagnostics.push(...before.diagnostics);
  const declared = declaredOverlay(inputs);
  const policy = inputs.spec?.listPolicy ?? inputs.previous?.deployment.list_policy ?? "union";
  const { configText, configChanges, owned } = overlayConfig(inputs, before, declared, policy);
  const after = configText === inputs.configText ? before : parseConfigText(configText, inputs.paths.config);
  if (after !== before) diagnostics.push(...after.diagnostics.filter((d) => d.severity === "error"));
  const config = after.value;

  diagnostics.push(...settingsWarnings(config, inputs.paths.config));
  const set = buildPluginSet(inputs.discovery, config, inputs.paths.config);
  downgradeUnusedConflicts(inputs, set, diagnostics);
  diagnostics.push(...set.diagnostics.filter((d) => !inputs.discovery.diagnostics.includes(d)));
  const specByKey = new Map(inputs.specTargets.map((t) => [t.candidate.key, t]));
  const depPlugins = deploymentPlugins(inputs);
  const plugins = set.views.map((v) =>
    lockPlugin(v, inputs, config, specByKey.get(v.candidate.key), depPlugins[v.candidate.key], diagnostics),
  );
  const loading = new Map(plugins.filter((p) => p.action !== "skip").map((p) => [p.key, p]));
  const loadOrder = set.loadOrder.filter((k) => loading.has(k));
  const { hooks, middleware } = chainsOf(loading, loadOrder);
  const links = deploymentLinks(inputs);
  const deployment = {
    kind: inputs.managedKind,
    spec: inputs.spec?.file ?? inputs.previous?.deployment.spec ?? null,
    list_policy: policy,
    ...ownershipRecord(owned),
    links,
    plugins: depPlugins,
  };
  const candidates = candidateFingerprints(inputs);
  const eventHooks = inputs.eventHooks?.hooks ?? [];
  // Canonical: a deployment parsed back from the lock (sorted keys) hashes like the one built here.
  // Event hooks join the hash only when there are some, so homes without them keep their hash.
  const hashed = { kit: KIT_VERSION, config: configText, env: inputs.env, deployment, candidates };
  const inputsHash = `sha256:${sha256Hex(canonicalJson(eventHooks.length ? { ...hashed, eventHooks } : hashed))}`;
  const lock: Lock = {
    schema: LOCK_SCHEMA,
    inputs_hash: inputsHash,
    hook_catalog: HOOK_CATALOG_VERSION,
    settings: lockSettings(config),
    load_order: loadOrder,
    chains: { hooks, middleware },
    deployment,
    plugins,
    ...(eventHooks.length ? { event_hooks: eventHooks } : {}),
  };
  const lockText = sealLock(lock);
  const linkChanges = diffLinks(inputs, links);
  const pluginChanges = diffPlugins(inputs, plugins);
  const lockChanged = inputs.previousText !== lockText;
  const configChanged = configText !== inputs.configText;
  const repair =
    !lockChanged &&
    (inputs.pointers.lock !== "generations/current/hermes.lock.json" || inputs.pointers.current === undefined);
  const ok = !hasErrors(diagnostics);
  return {
    ok,
    diagnostics,
    lock,
    lockText,
    configText,
    configChanged,
    configChanges,
    declared,
    links,
    linkChanges,
    pluginChanges,
    lockChanged,
    repair,
    managedKind: inputs.managedKind,
    files: integrityFiles(inputs, plugins),
    changed: lockChanged || configChanged || repair || linkChanges.length > 0,
    configRead: { text: configText, value: after.value, diagnostics: after.diagnostics },
  };
}
