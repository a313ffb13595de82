import { Command } from "../commander.js";
import type { CapabilityId } from "../../contracts/capabilities.js";
import type { CapabilityRow } from "../../consent/flow.js";
import { homeOf, inspectOptions } from "../context.js";
import { terminalIo } from "../io.js";
import { json, out, resultJson } from "../output.js";

const collect = (v: string, prev: string[]) => [...prev, v];

export function installCommand(): Command {
  return new Command("install")
    .argument(
      "<identifier>",
      "owner/repo[/subdir], a git URL (https, ssh, git@, file://, #subdir, GitHub /tree/<branch>/<path>), a " +
        "hermes://plugin/install?repo=owner/repo link, a local path (git repository or folder) or an exact index name",
    )
    .description("install a plugin from git into the home's plugins folder (scanned, staged, atomic)")
    .option("--ref <sha>", "install exactly this 40-character commit SHA (pins the plugin)")
    .option("-f, --force", "replace an installed plugin of the same name; accept a 'caution' scan verdict")
    .option("--enable", "enable the plugin after installing")
    .option("--no-enable", "do not enable the plugin (the default without a terminal)")
    .option("--grant <caps>", "grant declared capabilities without a prompt (comma-separated; repeatable)", collect, [])
    .option("--json", "print the result as JSON on stdout (progress goes to stderr)")
    .action(
      async (
        identifier: string,
        o: { ref?: string; force?: boolean; enable?: boolean; grant: string[]; json?: boolean },
        cmd: Command,
      ) => {
        // commander sets enable=true by default for a --no-enable pair; only an explicit flag counts.
        const src = cmd.getOptionValueSource("enable");
        const enable = src === "cli" ? o.enable : undefined;
        if (/^\s*hermes(-dev)?:/i.test(identifier)) {
          const { openLink } = await import("../../app/open-link.js");
          const io = terminalIo({ toStderr: o.json });
          const res = await openLink({
            paths: homeOf(cmd),
            link: identifier,
            force: o.force,
            ref: o.ref,
            grants: o.grant,
            enable,
            io,
          });
          if (o.json && res.kind === "plugin") json(resultJson(res.install));
          return;
        }
        const { installIntoHome } = await import("../../app/install-plugin.js");
        const res = await installIntoHome({
          paths: homeOf(cmd),
          identifier,
          ref: o.ref,
          force: o.force,
          enable,
          grants: o.grant,
          io: terminalIo({ toStderr: o.json }),
        });
        if (o.json) json(resultJson(res));
      },
    );
}

export function updateCommand(): Command {
  return new Command("update")
    .argument("<name>", "plugin folder name, key or manifest name")
    .description("update a git-installed plugin to its branch head (local edits autostashed; rescanned)")
    .option("--json", "print the result as JSON on stdout (progress goes to stderr)")
    .action(async (name: string, o: { json?: boolean }, cmd: Command) => {
      const { updateInHome } = await import("../../app/install-plugin.js");
      const res = await updateInHome({ paths: homeOf(cmd), name, io: terminalIo({ toStderr: o.json }) });
      if (o.json) json(resultJson(res));
    });
}

export function removeCommand(): Command {
  return new Command("remove")
    .aliases(["rm", "uninstall"])
    .argument("<name>", "plugin folder name, key or manifest name")
    .description("remove an installed plugin, its enable state, settings and grants")
    .option("--json", "print the result as JSON on stdout (progress goes to stderr)")
    .action(async (name: string, o: { json?: boolean }, cmd: Command) => {
      const { removeFromHome } = await import("../../app/install-plugin.js");
      const res = await removeFromHome({ paths: homeOf(cmd), name, io: terminalIo({ toStderr: o.json }) });
      if (o.json) json(resultJson(res));
    });
}

const LABEL: Record<CapabilityRow["declared"][number]["state"], string> = {
  granted: "granted",
  "not granted": "not granted",
  stale: "granted, but the declared set changed since consent: suspended until consented again",
  "legacy only": "legacy key only (deprecated; not honoured without a recorded consent)",
};

function printRow(r: CapabilityRow, legacyKeyOf: (capability: CapabilityId) => string): void {
  out(`${r.key} (${r.source})`);
  if (!r.declared.length) out("  declared: (none)");
  for (const d of r.declared) {
    out(
      `  ${d.capability}: ` +
        `${d.state === "legacy only" ? `${LABEL[d.state]} via ${legacyKeyOf(d.capability)}` : LABEL[d.state]}`,
    );
  }
  for (const u of r.undeclared) {
    out(
      `  ${u.capability}: granted (not declared in ` +
        `manifest)${u.via === "legacy key" ? ` via legacy key ${legacyKeyOf(u.capability)}` : ""}`,
    );
  }
}

export function capabilitiesCommand(): Command {
  return new Command("capabilities")
    .argument("[name]", "one plugin (key, manifest name or unique leaf name)")
    .description("show declared capabilities against what is granted")
    .option("--json", "print as JSON")
    .action(async (name: string | undefined, o: { json?: boolean }, cmd: Command) => {
      const [{ capabilityRows }, { legacyKeyOf }] = await Promise.all([
        import("../../app/inspect-plugins.js"),
        import("../../consent/flow.js"),
      ]);
      const shown = await capabilityRows({ ...inspectOptions(cmd), ...(name !== undefined ? { name } : {}) });
      if (o.json) return json(shown);
      if (!shown.length) return out("No plugins declare or hold capabilities.");
      shown.forEach((r, i) => {
        if (i) out();
        printRow(r, legacyKeyOf);
      });
    });
}
