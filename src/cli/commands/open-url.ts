import { Command } from "../commander.js";

/** `hermes open-url <link>`: what a desktop's hermes:// scheme registration runs. */
export function openUrlCommand(): Command {
  return new Command("open-url")
    .argument("[url]", "a hermes:// (or hermes-dev://) link: plugin/install?repo=owner/repo or mcp/install?…")
    .description("handle a hermes:// install link: show it, confirm on a terminal, then install or add it")
    .option("--register", "make this CLI the desktop handler of hermes:// links (freedesktop .desktop + xdg-mime)")
    .option("--unregister", "remove the desktop handler written by --register")
    .action(async (url: string | undefined, o: { register?: boolean; unregister?: boolean }, cmd: Command) => {
      const modes = [url !== undefined, Boolean(o.register), Boolean(o.unregister)].filter(Boolean).length;
      const [{ HermesError }, { out }] = await Promise.all([import("../../core/errors.js"), import("../output.js")]);
      if (modes !== 1) {
        throw new HermesError("E_USAGE", { message: "give exactly one of <url>, --register or --unregister" });
      }
      if (o.register || o.unregister) {
        const { registerUrlHandler, unregisterUrlHandler } = await import("../../app/url-handler.js");
        const r = o.register ? await registerUrlHandler(process.argv[1]!) : await unregisterUrlHandler();
        if (o.register) {
          out(`Wrote ${r.desktopFile}`);
          out(
            r.defaultsUpdated
              ? "xdg-mime: hermes:// links now open with it"
              : "xdg-mime not found: set the " + "default handler for x-scheme-handler/hermes in your desktop settings",
          );
        } else out(r.changed ? `Removed ${r.desktopFile}` : "No hermes:// handler was registered");
        return;
      }
      const [{ openLink }, { homeOf }, { terminalIo }] = await Promise.all([
        import("../../app/open-link.js"),
        import("../context.js"),
        import("../io.js"),
      ]);
      await openLink({ paths: homeOf(cmd), link: url!, io: terminalIo() });
    });
}
