// The benchmark report: a markdown table of every collected row (PASS/MISS against its threshold)
// and a hand-written SVG bar chart of kit ÷ peer with each row's goal line, so misses show at a
// glance. Rows with an absolute budget (e.g. "< 1 s wall") are drawn as value ÷ budget.
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { rowCells } from "./rows.mjs";

const COLORS = { PASS: "#2e7d32", MISS: "#c62828", info: "#9e9e9e" };

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const cell = (s) => String(s).replace(/\|/g, "\\|");

/** What the chart draws for a row: { value, goal, label } on the ratio axis, or undefined. */
export function chartPoint(row) {
  if (row.target?.on === "value") {
    const v = row.kit[row.target.metric].median;
    return {
      value: v / row.target.max,
      goal: 1,
      label: `${v.toFixed(v >= 100 ? 0 : 2)} ${row.unit} ÷ budget ${row.target.text}`,
    };
  }
  if (row.ratio === null || row.ratio === undefined) return undefined;
  const goal = row.target?.on === "ratio" ? row.target.max : undefined;
  return { value: row.ratio, goal, label: `${row.ratio.toFixed(2)}×${goal ? ` (goal ${row.target.text})` : ""}` };
}

/** Axis maximum and tick step for the largest drawn value. */
function axis(max) {
  const top = Math.max(2, max * 1.08);
  const step = top <= 3 ? 0.5 : top <= 8 ? 1 : top <= 16 ? 2 : 5;
  return { top: Math.ceil(top / step) * step, step };
}

/** The SVG bar chart of `rows` (the ones with a ratio or a budget). */
export function chartSvg(rows, title) {
  const drawn = rows.map((r) => ({ row: r, p: chartPoint(r) })).filter((d) => d.p);
  const labelW = 400;
  const plotW = 460;
  const noteW = 240;
  const rowH = 28;
  const top = 48;
  const height = top + drawn.length * rowH + 44;
  const width = labelW + plotW + noteW;
  const { top: xMax, step } = axis(Math.max(1, ...drawn.flatMap((d) => [d.p.value, d.p.goal ?? 0])));
  const x = (v) => +(labelW + (Math.min(v, xMax) / xMax) * plotW).toFixed(1);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${esc(title)}</text>`,
    `<text x="10" y="38" fill="#555">bar = kit ÷ peer (median); black tick = the row's goal; ` +
      `green = PASS, red = MISS, grey = no goal</text>`,
  ];
  const bottom = top + drawn.length * rowH;
  for (let v = 0; v <= xMax + 1e-9; v += step) {
    const dash = Math.abs(v - 1) < 1e-9 ? "" : ' stroke-dasharray="2,3"';
    out.push(`<line x1="${x(v)}" y1="${top}" x2="${x(v)}" y2="${bottom}" stroke="#bbb"${dash}/>`);
    out.push(`<text x="${x(v)}" y="${bottom + 16}" text-anchor="middle" fill="#555">${+v.toFixed(2)}×</text>`);
  }
  out.push(`<text x="${labelW + plotW / 2}" y="${bottom + 34}" text-anchor="middle" fill="#555">kit ÷ peer</text>`);
  drawn.forEach(({ row, p }, i) => {
    const y = top + i * rowH;
    const color = COLORS[row.result || "info"];
    const name = `${row.file ? `${row.file.replace(/\.bench\.mjs$/, "")}: ` : ""}${row.name}`;
    out.push(`<text x="${labelW - 8}" y="${y + 18}" text-anchor="end">${esc(name)}</text>`);
    out.push(
      `<rect x="${labelW}" y="${y + 7}" width="${(x(p.value) - labelW).toFixed(1)}" height="14" fill="${color}"/>`,
    );
    if (p.goal !== undefined)
      out.push(
        `<line x1="${x(p.goal)}" y1="${y + 3}" x2="${x(p.goal)}" y2="${y + 25}" stroke="#000" stroke-width="3"/>`,
      );
    const over = p.value > xMax ? " ▶" : "";
    const note = `${row.result || "info"} ${p.label}${over}`;
    out.push(`<text x="${labelW + plotW + 8}" y="${y + 18}" fill="${color}">${esc(note)}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/** The markdown report: run facts, the table, the chart, peak RSS, and files that failed. */
export function reportMarkdown(rows, { svgName, meta, failures }) {
  const count = (r) => rows.filter((x) => (x.result || "info") === r).length;
  const meter = rows.find((r) => r.meter)?.meter ?? "wait4 rusage";
  const lines = [
    "# hermes-kit benchmarks",
    "",
    `Run ${meta.date} · node ${meta.node} · ${meta.cpus} × ${meta.cpuModel} · ${meta.os} · load average ` +
      `${meta.loadStart} at the start, ${meta.loadEnd} at the end · bench files: ${meta.files.join(", ")}`,
    "",
    `**${count("PASS")} PASS, ${count("MISS")} MISS**, ${count("info")} without a goal. ` +
      "Process rows: CPU = user + system time of the spawned process and the children it waited for " +
      `(${meter}), medians of interleaved pairs; ratio = median of the per-pair ratios. ` +
      "Spread = min..max of the judged measure.",
    "",
    "| bench | row | peer | kit | peer | ratio | goal | result | spread kit / peer | CPU ms kit / peer " +
      "| wall ms kit / peer |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const c = rowCells(r);
    const result = c.result === "info" ? "–" : `**${c.result}**`;
    lines.push(
      `| ${[r.file ?? "", c.name, c.peer, c.kit, c.peerValue, c.ratio, c.target, result, c.spread, c.cpu, c.wall]
        .map(cell)
        .join(" | ")} |`,
    );
  }
  lines.push("", `![kit ÷ peer per row, with each row's goal](${svgName})`, "");
  const rss = rows.filter((r) => r.rss);
  if (rss.length) {
    lines.push("## Peak RSS", "", "| row | kit | peer |", "|---|---|---|");
    for (const r of rss) {
      const mib = (s) => (s ? `${(s.rssKiB.max / 1024).toFixed(1)} MiB` : "–");
      lines.push(`| ${cell(r.name)} | ${mib(r.kit)} | ${mib(r.peer)} |`);
    }
    lines.push(
      "",
      "Peak RSS is the largest `ru_maxrss` of the runs (the resident high-water mark of the process).",
      "",
    );
  }
  if (failures.length) lines.push("## Bench files that failed", "", ...failures.map((f) => `- ${f}`), "");
  return lines.join("\n");
}

/** Write `file` (markdown) and the chart next to it (same name, .svg). Returns the SVG path. */
export function writeReport(file, rows, { meta, failures }) {
  const svgFile = `${file.replace(/\.md$/i, "")}.svg`;
  // A report asked for in a folder that does not exist yet gets it, not an ENOENT after minutes of benching.
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(svgFile, chartSvg(rows, `hermes-kit benchmarks, ${meta.date}`));
  writeFileSync(file, reportMarkdown(rows, { svgName: basename(svgFile), meta, failures }));
  return svgFile;
}
