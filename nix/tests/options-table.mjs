// Renders the option table of nix/README.md from the JSON that nix/tests/eval-modules.nix prints
// (its `options` attribute): node nix/tests/options-table.mjs < eval.json
import { readFileSync } from "node:fs";

const { options } = JSON.parse(readFileSync(0, "utf8"));
const rows = new Map();
for (const [where, list] of Object.entries(options)) {
  for (const o of list) {
    // Plugin entry fields are the same in extraNodePackages and in profiles: show extraPlugins' once.
    if (/\.extraNodePackages\.\*\./.test(o.name) || /^services\.hermes-agent\.profiles\.<name>\.(extraPlugins|extraNodePackages)\.\*\./.test(o.name)) continue;
    const key = `${o.name}\u0000${o.default}\u0000${o.type}`;
    const prev = rows.get(key);
    if (prev) prev.where.add(where);
    else rows.set(key, { ...o, where: new Set([where]) });
  }
}
const cell = (s) => (s == null ? "—" : String(s).replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|").trim());
const code = (s) => (s == null ? "—" : `\`${cell(s).replace(/`/g, "'")}\``);
const label = (w) => (w.size === 2 ? "both" : w.has("nixos") ? "NixOS" : "home-manager");
const out = ["| Option | Type | Default | Example | Where | Description |", "| --- | --- | --- | --- | --- | --- |"];
for (const o of [...rows.values()].sort((a, b) => a.name.localeCompare(b.name))) {
  out.push(`| \`${o.name.replace("services.hermes-agent.", "")}\` | ${cell(o.type)} | ${code(o.default)} | ${code(o.example)} | ${label(o.where)} | ${cell(o.description)} |`);
}
process.stdout.write(`${out.join("\n")}\n`);
