import type { Command } from "commander";
import { formatDiagnostic } from "../../core/errors.js";
import type { Explanation } from "../../discovery/explain.js";
import type { PluginView } from "../../discovery/plugin-set.js";
import type { ProviderRole } from "../../app/provider-plugins.js";
import type { ToggleEdit } from "../../app/toggle-plugin.js";
import { chainCommand } from "./runtime.js";
import { scanCommand } from "./scan.js";
import { packCommand, searchCommand } from "./pack.js";
import { capabilitiesCommand, installCommand, removeCommand, updateCommand } from "./install.js";
import { homeOf, inspectOptions, reportConfigProblems } from "../context.js";
import { terminalIo } from "../io.js";
import {
  err,
  finishValidation,
  json,
  out,
  resultJson,
  style,
  table,
  validatorOptions,
  type ValidatorOptions,
} from "../output.js";

const STATUS_LABEL = { enabled: "enabled", disabled: "disabled", "not-enabled": "not enabled" } as const;

function statusText(v: PluginView): string {
  const s = STATUS_LABEL[v.verdict.state];
  return s === "enabled" ? style.green(s) : s === "disabled" ? style.red(s) : style.yellow(s);
}

function broken(v: PluginView): boolean {
  return v.conflict || v.candidate.status !== "ok";
}

/** One row of `plugins list --json` (and the head of `plugins show --json`, which has no `provider`). */
function listRow(v: PluginView, role?: ProviderRole | null) {
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
    ...(role !== undefined ? { provider: role } : {}),
  };
}

/** The key that selects a provider plugin, as a person types it. */
function selectKey(r: ProviderRole): string {
  return r.kind === "model" ? `${r.select} (or --provider)` : r.select;
}

/** Whether a provider plugin is the active one of its kind, and what its key holds otherwise. */
function roleText(r: ProviderRole, loads: boolean): string {
  if (r.active) return style.green("active");
  const now = r.selected === null ? `${r.select} is unset` : `${r.select} is '${r.selected}'`;
  return r.selected !== null && !loads ? style.yellow(`selected, does not load`) : `not active (${now})`;
}

/** Below the table: every provider-type plugin, the key that selects it and whether it is the active one. */
function printProviderRoles(views: readonly PluginView[], roles: ReadonlyMap<PluginView, ProviderRole>): void {
  const rows = views.flatMap((v) => {
    const r = roles.get(v);
    return r ? [[style.bold(v.candidate.key), selectKey(r), roleText(r, v.verdict.action !== "skip")]] : [];
  });
  if (!rows.length) return;
  out("");
  out(table(["Provider plugin", "Selected by", "Active"], rows));
}

function printExplanation(x: Explanation): void {
  const label =
    x.action === "skip"
      ? style.yellow("does not load")
      : style.green(x.action === "defer" ? "loads on first use" : "loads");
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
  if (x.requires_hermes)
    out(
      `  hermes:    requires ${x.requires_hermes.spec}; ` +
        `running ${x.requires_hermes.running}${x.requires_hermes.met ? "" : " (not met: not loaded)"}`,
    );
  if (x.capabilities.declared.length || x.capabilities.granted.length) {
    out(
      `  capabilities declared: ${x.capabilities.declared.join(", ") || "(none)"}; ` +
        `granted: ${x.capabilities.granted.join(", ") || "(none)"}`,
    );
  }
  if (x.shadowed_by) out(`  shadowed by: ${x.shadowed_by.source} plugin at ${x.shadowed_by.path}`);
  for (const s of x.shadows)
    out(`  shadows:   ${s.source} plugin at ${s.path}${s.reason === "impostor" ? " (impostor, ignored)" : ""}`);
  if (x.diagnostics.length) {
    out("  problems:");
    for (const d of x.diagnostics) out(`    ${formatDiagnostic(d, { hint: true }).replace(/\n/g, "\n    ")}`);
  }
}

type ListFlags = { json?: boolean; plain?: boolean; enabled?: boolean; user?: boolean; bundled?: boolean };

/** `plugins list` (and `plugins` without a terminal): a table, `--plain` columns or `--json` rows. */
async function printList(o: ListFlags, cmd: Command): Promise<void> {
  const { listPlugins } = await import("../../app/inspect-plugins.js");
  const { views, config, roles } = await listPlugins({
    ...inspectOptions(cmd),
    bundled: !(o.user || o.bundled === false),
    enabledOnly: o.enabled,
  });
  if (o.json) return json(views.map((v) => listRow(v, roles.get(v) ?? null)));
  reportConfigProblems(config.diagnostics);
  if (o.plain) {
    for (const v of views) {
      // Each field keeps at least one space, so long values never run into the next column.
      const col = (s: string, w: number) => `${s} `.padEnd(w);
      out(
        `${col(STATUS_LABEL[v.verdict.state], 12)}${col(v.candidate.source, 8)}` +
          `${col(v.candidate.manifest?.version ?? "", 8)}${v.candidate.key}`,
      );
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
  printProviderRoles(views, roles);
  const bad = views.filter(broken);
  if (bad.length) out(style.red(`! ${bad.length} plugin(s) cannot load: hermes plugins why ${bad[0]!.candidate.key}`));
  out(style.dim("Enable/disable: hermes plugins enable/disable <name> · Explain: hermes plugins why <name>"));
  out(style.dim("Plugins are opt-in: only 'enabled' plugins load."));
}

/** `plugins list`: a table, `--plain` columns or `--json` rows. */
function addListCommand(parent: Command): void {
  parent
    .command("list")
    .alias("ls")
    .description("list discovered plugins and whether they load")
    .option("--json", "print a JSON array")
    .option("--plain", "one line per plugin: status, source, version, key")
    .option("--enabled", "only plugins that are enabled")
    .option("--user", "leave out bundled plugins")
    .option("--no-bundled", "leave out bundled plugins")
    .action(printList);
}

/** `plugins enable|disable <name>`: the edit's lines, any consent question, then the compile. */
function addToggleCommands(parent: Command): void {
  const toggle = (verb: "enable" | "disable") =>
    parent
      .command(`${verb} <name>`)
      .description(`${verb} a plugin by key, manifest name or unique leaf name`)
      .option("--json", "print the result as JSON")
      .action(async (name: string, o: { json?: boolean; grant?: string[] }, cmd: Command) => {
        // The edit's own lines come before any consent question.
        const printEdit = ({ res, grants, pending }: ToggleEdit) => {
          out(res.message + (res.changed ? " Takes effect on next session." : ""));
          if (!grants?.length) return;
          out(`✓ Granted: ${grants.join(", ")} (plugins.entries.${res.key}.granted_capabilities, via --grant)`);
          if (pending.length)
            out(
              `  Not granted: ${pending.join(", ")}. Grant them with: hermes plugins enable ${res.key} ` +
                `--grant ${pending.join(",")}`,
            );
        };
        const { togglePlugin } = await import("../../app/toggle-plugin.js");
        const r = await togglePlugin({
          paths: homeOf(cmd),
          verb,
          name,
          grant: o.grant,
          io: terminalIo({ toStderr: o.json }),
          ...(o.json ? {} : { onEdited: printEdit }),
        });
        if (o.json) return json({ ...r.res, generation: r.compiled?.generation ?? null });
        if (r.compiled?.applied) out(style.dim(`lock updated: generation ${r.compiled.generation}`));
        if (r.cannotLoad !== undefined) err(`warning: ${r.view.candidate.key} cannot load: ${r.cannotLoad}`);
      });
  toggle("enable").option(
    "--grant <caps>",
    "grant declared capabilities without a prompt (comma-separated; repeatable)",
    (v: string, p: string[]) => [...p, v],
    [],
  );
  toggle("disable");
}

/** `plugins show <name>`: the manifest and state of one plugin. */
function addShowCommand(parent: Command): void {
  parent
    .command("show <name>")
    .alias("info")
    .description("show a plugin's manifest and state")
    .option("--json", "print as JSON")
    .action(async (name: string, o: { json?: boolean }, cmd: Command) => {
      const { showPlugin } = await import("../../app/inspect-plugins.js");
      const v = await showPlugin({ ...inspectOptions(cmd), name });
      const c = v.candidate;
      const m = c.manifest;
      if (o.json)
        return json({
          ...listRow(v),
          manifest: m ? resultJson(m) : null,
          manifest_file: c.manifestFile ?? null,
          diagnostics: c.diagnostics,
        });
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
      if (c.diagnostics.length)
        out(style.yellow(`${c.diagnostics.length} manifest problem(s): hermes plugins why ${c.key}`));
    });
}

/** `plugins why <name>`: why a plugin does or does not load, and its last run. */
function addWhyCommand(parent: Command): void {
  parent
    .command("why <name>")
    .description("explain in one screen why a plugin does or does not load")
    .option("--json", "print as JSON")
    .action(async (name: string, o: { json?: boolean }, cmd: Command) => {
      const { explainPlugin } = await import("../../app/inspect-plugins.js");
      const { explanation: x, runtime: rt, provider, python } = await explainPlugin({ ...inspectOptions(cmd), name });
      if (o.json) return json({ ...x, runtime: rt ?? null, provider, ...(python ? { python } : {}) });
      printExplanation(x);
      if (python)
        out(
          `  python:    ${
            python.problem ? style.red(`cannot run: ${python.problem}`) : `${python.executable} ` + `${python.version}`
          } (${python.command}); environment: ${
            python.environment_error
              ? style.red(`not built — ${python.environment_error}`)
              : (python.environment ?? "none (no pip_dependencies)")
          }`,
        );
      if (provider) {
        const status = roleText(provider, x.action !== "skip");
        out(`  provider:  ${provider.kind}, selected by ${selectKey(provider)}: ${status}`);
      }
      if (rt) out(`  last run:  ${rt.state}${rt.error ? ` — ${rt.error}` : ""}`);
      for (const issue of rt?.issues ?? []) out(`             ${issue}`);
    });
}

/** `plugins` alone: the interactive screen on a terminal, `plugins list` otherwise (never a hang on a pipe). */
async function pluginsRoot(o: Record<string, never>, cmd: Command): Promise<void> {
  if (cmd.args.length) cmd.error(`error: unknown command '${cmd.args[0]}'`, { code: "commander.unknownCommand" });
  const { isInteractive } = await import("../io.js");
  if (!isInteractive()) return printList(o, cmd);
  const { openPluginsScreen } = await import("../plugins-screen.js");
  await openPluginsScreen(homeOf(cmd));
}

/** Everything `plugins` does besides its name and description (program.ts declares those, loading this on use). */
export function addPluginsCommands(plugins: Command): void {
  plugins.action(pluginsRoot);

  addListCommand(plugins);
  addToggleCommands(plugins);
  for (const c of [installCommand(), updateCommand(), removeCommand(), capabilitiesCommand()]) plugins.addCommand(c);

  addShowCommand(plugins);
  addWhyCommand(plugins);
  plugins
    .command("validate <dir>")
    .description("validate one plugin folder (for CI); exit 1 on any error (--strict: on any warning too)")
    .action(async (dir: string, o: ValidatorOptions) => {
      const { validatePluginDir } = await import("../../app/validate-plugin.js");
      const { candidate, diagnostics } = await validatePluginDir(dir);
      finishValidation(dir, diagnostics, o, candidate?.key);
    });
  validatorOptions(plugins.commands.find((c) => c.name() === "validate")!);

  plugins.addCommand(chainCommand());
  plugins.addCommand(scanCommand());
  plugins.addCommand(searchCommand());
  plugins.addCommand(packCommand());
  // Set last: subcommands made with .command() copy this setting, and they must keep refusing extra arguments.
  plugins.allowExcessArguments(true);
}
