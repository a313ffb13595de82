import type { Command } from "commander";
import { homeOf } from "../context.js";
import { err, json, out, style } from "../output.js";

/** `hermes hooks list`: shell hooks of config.yaml and gateway event hooks (hooks/<name>/, the deploy spec). */
export function addHooksCommands(hooks: Command): void {
  hooks
    .command("list")
    .description("list the shell hooks config.yaml declares and the gateway event hooks with their lock state")
    .option("--json", "print as JSON")
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const { listHooks } = await import("../../app/list-hooks.js");
      const r = await listHooks(homeOf(cmd));
      for (const w of r.warnings) err(style.yellow(`! ${w}`));
      if (o.json) return json(r);
      out(style.bold("shell hooks"));
      if (!r.shell.length) out(style.dim("  (none)"));
      for (const s of r.shell)
        out(
          `  ${s.hook} ${s.owner}: ${s.command}  timeout ${s.timeout}s` +
            `${s.matcher !== null ? `  matcher /${s.matcher}/` : ""}`,
        );
      out(style.bold("event hooks"));
      if (!r.event.length) out(style.dim("  (none)"));
      for (const e of r.event) {
        const state = e.state === "locked" ? style.green(e.state) : style.yellow(e.state);
        out(`  ${e.name} [${state}] ${e.events.join(", ")}  ${e.path}${e.description ? `  — ${e.description}` : ""}`);
      }
    });
}
