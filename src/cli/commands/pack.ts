import { Command } from "../commander.js";
import type { showPack } from "../../pack/install.js";
import { homeOf } from "../context.js";
import { terminalIo } from "../io.js";
import { err, json, out, resultJson, style, table } from "../output.js";

function cut(s: string): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > 70 ? `${one.slice(0, 67)}...` : one;
}

/** `hermes plugins search [term] [--capability C] [--json] [--refresh]`. */
export function searchCommand(): Command {
  return new Command("search")
    .argument("[term]", "words, a name, a prefix or a tag (typos tolerated); empty lists every plugin by name", "")
    .description("search the community plugin index (names, tags, descriptions, authors)")
    .option("--capability <label>", "only plugins with this index capability label (tools, platform, dashboard, …)")
    .option("--json", "print {source, query, results, note} as JSON")
    .option("--refresh", "fetch the index now instead of using a cache younger than 24 h")
    .action(async (term: string, o: { capability?: string; json?: boolean; refresh?: boolean }, cmd: Command) => {
      const [{ searchPlugins }, { entryToJson, INDEX_TRUST_NOTE }] = await Promise.all([
        import("../../app/search-plugins.js"),
        import("../../install/index/load.js"),
      ]);
      const { index: idx, hits } = await searchPlugins({
        paths: homeOf(cmd),
        term,
        capability: o.capability,
        refresh: o.refresh,
        warn: (l) => err(style.yellow(l)),
      });
      if (o.json) {
        return json({
          source: idx.source,
          query: term,
          results: hits.map((h) => entryToJson(h.entry)),
          note: INDEX_TRUST_NOTE,
          stale: idx.stale,
          warnings: idx.warnings,
        });
      }
      const flag = idx.source === "seed" ? ", OFFLINE SEED COPY" : idx.stale ? ", STALE" : "";
      const where = `index source: ${idx.source}${flag}`;
      if (!hits.length) {
        out(`No plugins matched '${term}'${o.capability ? ` with capability '${o.capability}'` : ""} (${where})`);
        return;
      }
      out(style.bold(`Community plugins (${hits.length} ${hits.length === 1 ? "match" : "matches"})`));
      out(
        table(
          ["Name", "Description", "Author", "Tags"],
          hits.map((h) => [
            style.bold(h.entry.name),
            cut(h.entry.description),
            h.entry.author,
            style.dim(h.entry.tags.join(", ")),
          ]),
          70,
        ),
      );
      out(
        style.dim(
          `Index source: ${idx.source}` +
            `${idx.source === "seed" ? " (offline seed copy)" : idx.stale ? " (stale cache)" : ""}. Install: ` +
            "hermes plugins install <name>",
        ),
      );
      out(style.dim(INDEX_TRUST_NOTE));
    });
}

/** `pack show --json`: the pack, how each entry resolves, and the bundle's pinned trees when it is one. */
function showJson(r: Awaited<ReturnType<typeof showPack>>): Record<string, unknown> {
  return {
    pack: r.pack,
    entries: r.resolved.entries.map((e) => ({
      display: e.entry.display,
      identifier: e.identifier ?? null,
      ref: e.entry.ref,
      capabilities: e.capabilities ?? null,
      error: e.error ?? null,
      suggestions: e.suggestions ?? [],
    })),
    index_source: r.resolved.indexSource ?? null,
    bundle: r.bundle
      ? {
          sha256: r.bundle.sha256,
          plugins: r.bundle.plugins.map((p) => ({
            name: p.meta.name,
            revision: p.meta.revision,
            tree: p.meta.tree,
            integrity: p.meta.integrity,
          })),
        }
      : null,
  };
}

/** `hermes plugins pack show|install|export`. */
export function packCommand(): Command {
  const pack = new Command("pack").description(
    "plugin packs: review, install and export sets of pinned plugins (hermes-pack.yaml, bundles)",
  );

  pack
    .command("show <src>")
    .description("review a pack (file, https:// URL or bundle) without installing anything")
    .option("--json", "print the pack and how each entry resolves as JSON (the review goes to stderr)")
    .action(async (src: string, o: { json?: boolean }, cmd: Command) => {
      const paths = homeOf(cmd);
      const { showPack } = await import("../../pack/install.js");
      const r = await showPack({ paths, src, io: terminalIo({ toStderr: o.json }) });
      if (o.json) {
        json(showJson(r));
      }
    });

  pack
    .command("install <src>")
    .description("review, confirm once, then install every plugin of a pack at its pinned commit (needs a terminal)")
    .option("-f, --force", "reinstall plugins that already exist; accept 'caution' scan verdicts")
    .option("--json", "print {pack, installed, failed} as JSON on stdout (the review and progress go to stderr)")
    .action(async (src: string, o: { force?: boolean; json?: boolean }, cmd: Command) => {
      const { installPackIntoHome } = await import("../../app/install-plugin.js");
      const summary = await installPackIntoHome({
        paths: homeOf(cmd),
        src,
        force: o.force,
        io: terminalIo({ toStderr: o.json }),
      });
      if (o.json) json(resultJson(summary));
    });

  pack
    .command("export")
    .description("print the git-installed plugins as a hermes-pack.yaml at their exact revisions (or write a bundle)")
    .option("--enabled-only", "only plugins that are enabled")
    .option("--name <name>", "pack name", "my-hermes-pack")
    .option("--bundle <file>", "write a reproducible .tar.gz with the pack and every plugin tree, for offline installs")
    .option(
      "--json",
      "print the pack document (or, with --bundle, {file, bytes, sha256, plugins}) as JSON; warnings go to stderr",
    )
    .action(async (o: { enabledOnly?: boolean; name: string; bundle?: string; json?: boolean }, cmd: Command) => {
      const paths = homeOf(cmd);
      if (o.bundle) {
        const { exportBundle } = await import("../../pack/bundle/bundle.js");
        const r = await exportBundle({ paths, enabledOnly: o.enabledOnly, name: o.name, out: o.bundle });
        for (const w of r.warnings) err(`Warning: ${w}`);
        if (o.json)
          return json({
            file: r.file,
            bytes: r.bytes,
            sha256: r.sha256,
            plugins: r.plugins.length,
            warnings: r.warnings,
          });
        out(`Wrote ${r.file}: ${r.plugins.length} plugin(s), ${r.bytes} bytes`);
        out(`sha256 ${r.sha256}`);
        return;
      }
      const { exportPack } = await import("../../pack/export.js");
      const r = await exportPack({ paths, enabledOnly: o.enabledOnly, name: o.name });
      for (const w of r.warnings) err(`Warning: ${w}`);
      if (o.json) return json({ pack: r.doc, warnings: r.warnings });
      process.stdout.write(r.yaml);
    });

  return pack;
}
