import type { Command } from "commander";
import { homeOf } from "../context.js";
import { finishValidation, json, out, resultJson, style, validatorOptions, type ValidatorOptions } from "../output.js";

/** Every `config` subcommand (program.ts declares the command itself, loading this on use). */
export function addConfigCommands(config: Command): void {
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
  addKeyCommands(config);
}

/** A value as a person reads it: strings bare, everything else as YAML. */
async function printValue(value: unknown): Promise<void> {
  if (typeof value === "string") return out(value);
  const { stringify } = await import("yaml");
  out(stringify(value, { lineWidth: 0 }).replace(/\n$/, ""));
}

/** `config get|set|unset <key>`: the CLI parses and prints; src/app/config-keys.ts decides. */
function addKeyCommands(config: Command): void {
  config
    .command("get <key>")
    .description("print the value of a dotted key of config.yaml (exit 1 when it is not set)")
    .option("--json", "print the value as JSON")
    .action(async (key: string, o: { json?: boolean }, cmd: Command) => {
      const { getConfigKey } = await import("../../app/config-keys.js");
      const value = await getConfigKey(homeOf(cmd), key);
      if (o.json) return json(value);
      await printValue(value);
    });
  config
    .command("set <key> <value>")
    .description("set a dotted key of config.yaml to a YAML value, checked against the schema; comments kept")
    .option("--string", "write the value as a string, never as a number, boolean, list or mapping")
    .option("--json", "print the result as JSON")
    .action(async (key: string, raw: string, o: { string?: boolean; json?: boolean }, cmd: Command) => {
      const { parseValue, setConfigKey } = await import("../../app/config-keys.js");
      const r = await setConfigKey(homeOf(cmd), key, parseValue(raw, o.string));
      if (o.json) return json(resultJson(r));
      out(r.changed ? `✓ ${r.key} set. Takes effect on next session.` : `${r.key} already has that value.`);
      if (r.compile?.applied) out(style.dim(`lock updated: generation ${r.compile.generation}`));
    });
  config
    .command("unset <key>")
    .description("remove a dotted key from config.yaml (and the mappings it leaves empty); comments kept")
    .option("--json", "print the result as JSON")
    .action(async (key: string, o: { json?: boolean }, cmd: Command) => {
      const { unsetConfigKey } = await import("../../app/config-keys.js");
      const r = await unsetConfigKey(homeOf(cmd), key);
      if (o.json) return json(resultJson(r));
      out(r.changed ? `✓ ${r.key} removed. Takes effect on next session.` : `${r.key} is not set; nothing changed.`);
      if (r.compile?.applied) out(style.dim(`lock updated: generation ${r.compile.generation}`));
    });
}
