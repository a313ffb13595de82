import { Command } from "../commander.js";
import type { GlobalOptions } from "../context.js";

// What the actions use is imported when one runs: declaring the commands (for --help) loads only commander.
const support = () =>
  Promise.all([import("../../core/errors.js"), import("../../core/paths.js"), import("../output.js")]);

interface CompileFlags {
  spec?: string;
  managed?: string;
  dryRun?: boolean;
  check?: boolean;
  json?: boolean;
  rollback?: string | boolean;
  listGenerations?: boolean;
  fullHash?: boolean;
}

export function compileCommand(): Command {
  return new Command("compile")
    .description("compile config, deploy spec and manifests into nix-managed links and hermes.lock.json")
    .option("--spec <file>", "deploy spec (YAML or JSON) to apply")
    .option("--managed <kind>", "mark the home as managed by a deployer (nixos, home-manager, …)")
    .option("--dry-run", "print the plan; write nothing")
    .option("--check", "exit 1 when the home is not up to date; write nothing")
    .option("--json", "print the plan (or result) as JSON")
    .option("--rollback [generation]", "return to an earlier generation (default: the previous one)")
    .option("--list-generations", "list generations")
    .option("--full-hash", "hash every plugin tree, also immutable store paths")
    .action(async (o: CompileFlags, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const [{ formatDiagnostic, HermesError }, { homePaths }, { err, json, out, style }] = await support();
      const { compileHome, compileHomeDir, rollbackHome } = await import("../../app/compile-home.js");
      const home = await compileHomeDir({ home: g.home, profile: g.profile, spec: o.spec });
      if (o.listGenerations) {
        const { listGenerations } = await import("../../compile/generations.js");
        const gens = await listGenerations(homePaths(home));
        if (o.json) return json(gens);
        if (!gens.length) return out("no generations yet: run hermes compile");
        for (const g of gens) {
          out(
            `${g.current ? style.green("*") : " "} ${String(g.generation).padStart(4)}  ${g.created_at}  ` +
              `${g.reason.padEnd(8)}  ${g.loading}/${g.plugins} loading${g.kind ? `  ${g.kind}` : ""}` +
              `${g.spec ? `  ${g.spec}` : ""}${g.current_reason ? `  (current: ${g.current_reason})` : ""}`,
          );
        }
        return;
      }
      if (o.rollback !== undefined) {
        const to = typeof o.rollback === "string" ? Number(o.rollback) : undefined;
        if (to !== undefined && (!Number.isInteger(to) || to < 1))
          throw new HermesError("E_USAGE", {
            message: `--rollback takes a generation number (got ${String(o.rollback)})`,
          });
        const r = await rollbackHome({ home, to, warn: err });
        if (o.json) return json(r);
        out(
          `rolled back to generation ${r.to}${r.from !== undefined ? ` (from ${r.from})` : ""}` +
            `${r.recompiled ? `; the home changed since, recompiled as generation ${r.generation}` : ""}`,
        );
        for (const d of r.diagnostics) err(formatDiagnostic(d));
        return;
      }
      const res = await compileHome({
        home,
        spec: o.spec,
        managed: o.managed,
        dryRun: o.dryRun,
        check: o.check,
        fullHash: o.fullHash,
        warn: err,
      });
      const { planToJson, renderPlan } = await import("../../compile/plan-format.js");
      const warnings = res.plan.diagnostics.filter((d) => d.severity === "warning");
      if (o.json) json({ ...planToJson(res.plan), applied: res.applied, generation: res.generation ?? null, home });
      else {
        for (const d of warnings) err(formatDiagnostic(d, { hint: false }));
        out(renderPlan(res.plan));
        if (res.applied)
          out(
            style.green(
              `applied: generation ${res.generation} is current (${res.plan.lock.load_order.length} plugin(s) load)`,
            ),
          );
        else if (!o.dryRun && !o.check && !res.plan.changed)
          out(style.dim(`generation ${res.generation ?? "-"} is current`));
      }
      if (o.check && res.plan.changed) process.exitCode = 1;
    });
}

export function lockCommand(): Command {
  const lock = new Command("lock").description("inspect and verify hermes.lock.json");
  lock
    .command("verify")
    .description("re-hash what the lock names and report drift per plugin and event hook (exit 1 on drift)")
    .option("--full", "also hash /nix/store paths (trusted by path otherwise)")
    .option("--all", "also verify plugins that do not load")
    .option("--json", "print the report as JSON")
    .action(async (o: { full?: boolean; all?: boolean; json?: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const [{ formatDiagnostic }, { homePaths, resolveHome }, { err, json, out, style }] = await support();
      const { passed, verifyLock } = await import("../../compile/verify.js");
      const report = await verifyLock(homePaths(resolveHome({ home: g.home, profile: g.profile })), {
        full: o.full,
        all: o.all,
      });
      if (o.json) json(report);
      else {
        const line = (status: Parameters<typeof passed>[0], label: string) =>
          out(`${(passed(status) ? style.green : style.red)(status.padEnd(12))} ${label}`);
        for (const p of report.plugins) line(p.status, p.key);
        for (const h of report.event_hooks) line(h.status, `event hook ${h.name}`);
        for (const d of report.diagnostics) err(formatDiagnostic(d));
        const hooks = report.event_hooks.filter((h) => !passed(h.status)).length;
        const summary = {
          ok: "lock verified: no drift",
          drift: `drift in ${report.diagnostics.length - hooks} plugin(s)${hooks ? ` and ${hooks} event hook(s)` : ""}`,
          missing: "no lock to verify",
          invalid: "the lock is not valid",
          tampered: "the lock itself was changed since it was compiled; plugins were not checked",
        };
        out(summary[report.state]);
      }
      if (!report.ok) process.exitCode = 1;
    });
  return lock;
}
