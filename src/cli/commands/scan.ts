import { Command, Option } from "../commander.js";
import { formatDiagnostic, HermesError } from "../../core/errors.js";
import { homeOf } from "../context.js";
import { err, style } from "../output.js";

type ScanFormat = "text" | "json" | "sarif";

/** `hermes plugins scan <dir>`: the install-time scan on its own, for CI. Exit 1 on a dangerous verdict. */
export function scanCommand(): Command {
  return new Command("scan")
    .description("scan a plugin folder for dangerous code and prompt injection (for CI); exit 1 on a dangerous verdict")
    .argument("<dir>", "the plugin folder (the one with plugin.yaml)")
    .addOption(
      new Option("--format <format>", "output format (sarif: SARIF 2.1.0 for code scanning)")
        .choices(["text", "json", "sarif"])
        .default("text"),
    )
    .option("--json", "same as --format json")
    .option("--plugin-key <key>", "apply the home's waivers (plugins.scan_waivers) for this plugin key")
    .option("--revision <sha>", "…at this revision: a 40-character commit SHA, or 'local'")
    .action(
      async (
        dir: string,
        o: { format: ScanFormat; json?: boolean; pluginKey?: string; revision?: string },
        cmd: Command,
      ) => {
        if (o.json) o.format = "json";
        const [{ REVISION_RE, renderJson, renderSarif, renderText }, { scanPlugin }] = await Promise.all([
          import("../../install/scan/index.js"),
          import("../../app/scan-plugin.js"),
        ]);
        if (Boolean(o.pluginKey) !== Boolean(o.revision)) {
          throw new HermesError("E_SCAN_ARGS", {
            message:
              "--plugin-key and --revision go together " + `(got only ${o.pluginKey ? "--plugin-key" : "--revision"})`,
          });
        }
        if (o.revision && !REVISION_RE.test(o.revision)) {
          throw new HermesError("E_SCAN_ARGS", {
            message: `--revision ${JSON.stringify(o.revision)} is not a 40-character commit SHA or 'local'`,
          });
        }
        const { settings, report } = await scanPlugin({
          dir,
          configFile: homeOf(cmd).config,
          pluginKey: o.pluginKey,
          revision: o.revision?.toLowerCase() === "local" ? "local" : o.revision?.toLowerCase(),
          onSettings: (s) => {
            for (const d of s.diagnostics) err(formatDiagnostic(d));
          },
        });
        if (o.format === "json") process.stdout.write(renderJson(report));
        else if (o.format === "sarif") process.stdout.write(renderSarif(report));
        else {
          process.stdout.write(renderText(report, { paint: style }));
          if (!o.pluginKey && settings.waivers.length)
            err(style.dim("note: waivers are applied only with --plugin-key and --revision"));
          if (!settings.enabled)
            err(style.dim("note: plugins.scan_on_install is false in this home: install and update do not scan"));
        }
        if (report.verdict === "dangerous") process.exitCode = 1;
      },
    );
}
