import { Command, Option } from "commander";
import { hasErrors } from "../../core/errors.js";
import { validateConfigFile } from "../../config/validate.js";
import { homeOf } from "../context.js";
import { err, out, printDiagnostics, type DiagnosticFormat } from "../output.js";

export function configCommand(): Command {
  const config = new Command("config").description("inspect and validate config.yaml");
  config
    .command("validate [file]")
    .description("validate a config.yaml (default: the home's) for CI; exit 1 on any error")
    .addOption(new Option("--format <format>", "output format").choices(["text", "json", "github"]).default("text"))
    .action(async (file: string | undefined, o: { format: DiagnosticFormat }, cmd: Command) => {
      const target = file ?? homeOf(cmd).config;
      const ds = await validateConfigFile(target);
      printDiagnostics(ds, o.format);
      const failed = hasErrors(ds);
      if (o.format === "text") {
        if (failed) err(`${target}: ${ds.filter((d) => d.severity === "error").length} error(s)`);
        else out(`${target}: ok${ds.length ? ` (${ds.length} warning(s))` : ""}`);
      }
      if (failed) process.exitCode = 1;
    });
  return config;
}
