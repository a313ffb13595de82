import { Command } from "commander";
import { homeOf } from "../context.js";
import { finishValidation, validatorOptions, type ValidatorOptions } from "../output.js";

export function configCommand(): Command {
  const config = new Command("config").description("inspect and validate config.yaml");
  const validate = config
    .command("validate [file]")
    .description(
      "validate a config.yaml (default: the home's) for CI; exit 1 on any error (--strict: on any warning too)",
    )
    .action(async (file: string | undefined, o: ValidatorOptions, cmd: Command) => {
      const paths = homeOf(cmd);
      const target = file ?? paths.config;
      const { validateConfig } = await import("../../app/validate-config.js");
      finishValidation(target, await validateConfig(target, paths.home), o);
    });
  validatorOptions(validate);
  return config;
}
