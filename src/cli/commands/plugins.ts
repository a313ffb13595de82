import { Command } from "commander";
import { formatDiagnostic, HermesError } from "../../core/errors.js";
import { disablePlugin, enablePlugin } from "../../config/enable.js";
import type { LoadedConfig } from "../../config/config-file.js";
import { knownCapabilities } from "../../contracts/capabilities.js";
import { consentEdits } from "../../consent/flow.js";
import { explain, type Explanation } from "../../discovery/explain.js";
import { findPlugin, type PluginView } from "../../discovery/plugin-set.js";
import { validatePluginDir } from "../../app/validate-plugin.js";
import { compile, editCompileCheck } from "../../compile/compile.js";
import { readRuntimeStatus } from "../../runtime/runtime.js";
import { chainCommand } from "./runtime.js";
import { scanCommand } from "./scan.js";
import { packCommand, searchCommand } from "./pack.js";
import { capabilitiesCommand, consentOnEnable, enableGrants, installCommand, removeCommand, updateCommand } from "./install.js";
import { ownershipGuard, pluginState, reportConfigProblems } from "../context.js";
import { err, finishValidation, json, out, resultJson, style, table, validatorOptions, type ValidatorOptions } from "../output.js";

const STATUS_LABEL = { enabled: "enabled", disabled: "disabled", "not-enabled": "not enabled" } as const;

function statusText(v: PluginView): string {
  const s = STATUS_LABEL[v.verdict.state];
  return s === "enabled" ? style.green(s) : s === "disabled" ? style.red(s) : style.yellow(s);
}

function broken(v: PluginView): boolean {
  return v.conflict || v.candidate.status !== "ok";
}

function listRow(v: PluginView) {
  const c = v.candidate;
  return {
    key: c.key,
    name: c.name,
    status: STATUS_LABEL[v.verdict.state],
    version: c.manifest?.version ?? "",
    description: c.manifest?.description ?? "",
    source: c.source,
    origin: c.origin,
    kind: c.manifest?.kind ?? null,
    path: c.path,
    loads: v.verdict.action !== "skip",
    reason: v.verdict.reason,
    problems: c.diagnostics.filter((d) => d.severity === "error").length + (v.conflict ? 1 : 0),
  };
}

function printExplanation(x: Explanation): void {
  const label = x.action === "skip" ? style.yellow("does not load") : style.green(x.action === "defer" ? "loads on first use" : "loads");
  out(`${style.bold(x.key)}${x.version ? style.dim(` v${x.version}`) : ""}: ${label}`);
  out(`  why:       ${x.reason}`);
  out(`  state:     ${STATUS_LABEL[x.state as keyof typeof STATUS_LABEL] ?? x.state}`);
  out(`  source:    ${x.source}${x.origin !== x.source ? ` (${x.origin})` : ""}`);
  out(`  path:      ${x.path}${x.link_target ? ` → ${x.link_target}` : ""}`);
  if (x.real_path && x.real_path !== x.path) out(`  resolved:  ${x.real_path}`);
  if (x.aliases.length) out(`  aliases:   ${x.aliases.join(", ")}`);
  if (x.kind) out(`  kind:      ${x.kind}`);
  if (x.entry) out(`  entry:     ${x.entry}`);
  if (x.load_position) out(`  order:     #${x.load_position} in load order`);
  if (x.requires.length) out(`  requires:  ${x.requires.join(", ")}`);
  if (x.requires_hermes) out(`  hermes:    requires ${x.requires_hermes.spec}; running ${x.requires_hermes.running}${x.requires_hermes.met ? "" : " (not met: not loaded)"}`);
  if (x.capabilities.declared.length || x.capabilities.granted.length) {
    out(`  capabilities declared: ${x.capabilities.declared.join(", ") || "(none)"}; granted: ${x.capabilities.granted.join(", ") || "(none)"}`);
  }
  if (x.shadowed_by) out(`  shadowed by: ${x.shadowed_by.source} plugin at ${x.shadowed_by.path}`);
  for (const s of x.shadows) out(`  shadows:   ${s.source} plugin at ${s.path}${s.reason === "impostor" ? " (impostor, ignored)" : ""}`);
  if (x.diagnostics.length) {
    out("  problems:");
    for (const d of x.diagnostics) out(`    ${formatDiagnostic(d, { hint: true }).replace(/\n/g, "\n    ")}`);
  }
}

export function pluginsCommand(): Command {
  const plugins = new Command("plugins").description("list, inspect, enable and disable plugins");

  plugins
    .command("list")
    .alias("ls")
    .description("list discovered plugins and whether they load")
    .option("--json", "print a JSON array")
    .option("--plain", "one line per plugin: status, source, version, key")
    .option("--enabled", "only plugins that are enabled")
    .option("--user", "leave out bundled plugins")
    .option("--no-bundled", "leave out bundled plugins")
    .action(async (o: { json?: boolean; plain?: boolean; enabled?: boolean; user?: boolean; bundled?: boolean }, cmd: Command) => {
      const { set, config } = await pluginState(cmd, { bundled: !(o.user || o.bundled === false), readOnly: true });
      let views = set.views;
      if (o.enabled) views = views.filter((v) => v.verdict.state === "enabled");
      if (o.json) return json(views.map(listRow));
      reportConfigProblems(config.diagnostics);
      if (o.plain) {
        for (const v of views) {
          // Each field keeps at least one space, so long values never run into the next column.
          const col = (s: string, w: number) => `${s} `.padEnd(w);
          out(`${col(STATUS_LABEL[v.verdict.state], 12)}${col(v.candidate.source, 8)}${col(v.candidate.manifest?.version ?? "", 8)}${v.candidate.key}`);
        }
        return;
      }
      if (views.length === 0) {
        out("No plugins installed.");
        out(style.dim("Install with: hermes plugins install owner/repo"));
        return;
      }
      out(
        table(
          ["Key", "Status", "Version", "Source", "Description"],
          views.map((v) => [
            style.bold(v.candidate.key) + (broken(v) ? style.red(" !") : ""),
            statusText(v),
            v.candidate.manifest?.version ?? "",
            v.candidate.origin,
            v.candidate.manifest?.description.split("\n")[0] ?? "",
          ]),
        ),
      );
      const bad = views.filter(broken);
      if (bad.length) out(style.red(`! ${bad.length} plugin(s) cannot load: hermes plugins why ${bad[0]!.candidate.key}`));
      out(style.dim("Enable/disable: hermes plugins enable/disable <name> · Explain: hermes plugins why <name>"));
      out(style.dim("Plugins are opt-in: only 'enabled' plugins load."));
    });

  const toggle = (verb: "enable" | "disable") =>
    plugins
      .command(`${verb} <name>`)
      .description(`${verb} a plugin by key, manifest name or unique leaf name`)
      .option("--json", "print the result as JSON")
      .action(async (name: string, o: { json?: boolean; grant?: string[] }, cmd: Command) => {
        const { set, paths } = await pluginState(cmd);
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
        const withGrants = grants?.length ? (cur: LoadedConfig) => consentEdits(cur.value, ref.key, grants, declared, "flag", guard).edits : undefined;
        // Refused before writing when the edit would leave the home unable to compile (a required plugin).
        const check = editCompileCheck(paths.home);
        const res = verb === "enable" ? await enablePlugin(paths.config, ref, guard, withGrants, check) : await disablePlugin(paths.config, ref, guard, check);
        if (!o.json) out(res.message + (res.changed ? " Takes effect on next session." : ""));
        if (grants?.length && !o.json) {
          const pending = declared.filter((c) => !grants.includes(c));
          out(`✓ Granted: ${grants.join(", ")} (plugins.entries.${ref.key}.granted_capabilities, via --grant)`);
          if (pending.length) out(`  Not granted: ${pending.join(", ")}. Grant them with: hermes plugins enable ${ref.key} --grant ${pending.join(",")}`);
        }
        const consented = verb === "enable" && !grants?.length && (await consentOnEnable(paths, view, undefined, guard, o.json));
        // One truth: the lock follows every edit of the enable lists and grants.
        const compiled = res.changed || consented ? await compile({ home: paths.home }) : undefined;
        if (o.json) return json({ ...res, generation: compiled?.generation ?? null });
        if (compiled?.applied) out(style.dim(`lock updated: generation ${compiled.generation}`));
        if (verb === "enable" && view.verdict.action === "skip" && broken(view)) err(`warning: ${view.candidate.key} cannot load: ${view.verdict.reason}`);
      });
  toggle("enable").option("--grant <caps>", "grant declared capabilities without a prompt (comma-separated; repeatable)", (v: string, p: string[]) => [...p, v], []);
  toggle("disable");
  for (const c of [installCommand(), updateCommand(), removeCommand(), capabilitiesCommand()]) plugins.addCommand(c);

  plugins
    .command("show <name>")
    .alias("info")
    .description("show a plugin's manifest and state")
    .option("--json", "print as JSON")
    .action(async (name: string, o: { json?: boolean }, cmd: Command) => {
      const { set } = await pluginState(cmd, { readOnly: true });
      const v = findPlugin(set, name, { includeLosers: true });
      const c = v.candidate;
      const m = c.manifest;
      if (o.json) return json({ ...listRow(v), manifest: m ? resultJson(m) : null, manifest_file: c.manifestFile ?? null, diagnostics: c.diagnostics });
      out(`${style.bold(c.name)}${m?.version ? style.dim(` v${m.version}`) : ""}`);
      if (m?.description) out(m.description.trim());
      out();
      out(`Status:       ${STATUS_LABEL[v.verdict.state]}`);
      out(`Source:       ${c.source}${c.origin !== c.source ? ` (${c.origin})` : ""}`);
      out(`Key:          ${c.key}`);
      out(`Path:         ${c.path}`);
      if (m) {
        out(`Kind:         ${m.kind}`);
        if (m.author) out(`Author:       ${m.author}`);
        out(`Capabilities: ${m.capabilities.join(", ") || "(none)"}`);
        if (m.provides_tools.length) out(`Tools:        ${m.provides_tools.join(", ")}`);
        const hooks = [...new Set([...m.hooks, ...m.provides_hooks])];
        if (hooks.length) out(`Hooks:        ${hooks.join(", ")}`);
        if (m.requires_env.length) out(`Requires env: ${m.requires_env.map((e) => e.name).join(", ")}`);
        out(`Emits:        ${m.emits.join(", ") || "(none)"}`);
        out(`Listens:      ${m.listens.join(", ") || "(none)"}`);
      }
      if (c.diagnostics.length) out(style.yellow(`${c.diagnostics.length} manifest problem(s): hermes plugins why ${c.key}`));
    });

  plugins
    .command("why <name>")
    .description("explain in one screen why a plugin does or does not load")
    .option("--json", "print as JSON")
    .action(async (name: string, o: { json?: boolean }, cmd: Command) => {
      const { set, config, paths } = await pluginState(cmd, { readOnly: true });
      const v = findPlugin(set, name, { includeLosers: true });
      const x = explain(set, v, config.value);
      const rt = readRuntimeStatus(paths.home)?.plugins[x.key];
      if (o.json) return json({ ...x, runtime: rt ?? null });
      printExplanation(x);
      if (rt) out(`  last run:  ${rt.state}${rt.error ? ` — ${rt.error}` : ""}`);
      for (const issue of rt?.issues ?? []) out(`             ${issue}`);
    });

  plugins
    .command("validate <dir>")
    .description("validate one plugin folder (for CI); exit 1 on any error (--strict: on any warning too)")
    .action(async (dir: string, o: ValidatorOptions) => {
      const { candidate, diagnostics } = await validatePluginDir(dir);
      finishValidation(dir, diagnostics, o, candidate?.key);
    });
  validatorOptions(plugins.commands.find((c) => c.name() === "validate")!);

  plugins.addCommand(chainCommand());
  plugins.addCommand(scanCommand());
  plugins.addCommand(searchCommand());
  plugins.addCommand(packCommand());
  return plugins;
}
