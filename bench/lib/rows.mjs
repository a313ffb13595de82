// Benchmark rows: one format for every bench file, so bench/run.mjs can collect them, print the
// summary with PASS/MISS against the issue's thresholds, and write the report. A bench file builds
// rows with `processRow` (spawned commands, from bench/lib/process-pairs.mjs) or `valueRow`
// (in-process numbers it measured itself) and prints each with `emitRow`: one stdout line
// `BENCH_ROW <json>`. The threshold is part of the row: there is no other target.

export const ROW_PREFIX = "BENCH_ROW ";

/**
 * @typedef {import("./process-pairs.mjs").PairsResult} PairsResult
 * @typedef {import("./process-pairs.mjs").Spread} Spread
 * @typedef {{ on: "ratio" | "value", max: number, inclusive: boolean, text: string, metric?: string }} Target
 */

/**
 * A threshold. `ratio(1.5)`: kit ÷ peer ≤ 1.5. `below(1000, "wall")`: the kit's median is < 1000
 * (in the row's unit) with no peer. `inclusive` says whether equal passes.
 */
/** @type {(max: number) => Target} */
export const ratio = (max) => ({ on: "ratio", max, inclusive: true, text: `≤ ${max}×` });
/** @type {(max: number, metric: string, unit?: string) => Target} */
export const below = (max, metric, unit = "ms") => ({
  on: "value",
  metric,
  max,
  inclusive: false,
  text: `< ${max >= 1000 && unit === "ms" ? `${max / 1000} s` : `${max} ${unit}`} ${metric}`,
});

function verdict(value, target) {
  if (!target || value === null || value === undefined || Number.isNaN(value)) return "";
  return (target.inclusive ? value <= target.max : value < target.max) ? "PASS" : "MISS";
}

/**
 * A row from `processPairs` output. `metric` ("cpu" or "wall") is what the ratio threshold is
 * judged on; both are always reported. `rss: true` puts the peak RSS into the report.
 * @param {{ name: string, peerName?: string, result: PairsResult, target?: Target, metric?: "cpu" | "wall",
 *   rss?: boolean, note?: string }} opts
 */
export function processRow({ name, peerName, result, target, metric = "cpu", rss = false, note }) {
  const side = (s) => s && { cpu: s.cpu, wall: s.wall, rssKiB: s.rssKiB, n: s.n };
  const r = metric === "wall" ? result.wallRatio : result.cpuRatio;
  const judged = target?.on === "value" ? result.kit[target.metric].median : r;
  return {
    kind: "process",
    name,
    peerName: peerName ?? null,
    unit: "ms",
    metric: target?.on === "value" ? target.metric : metric,
    kit: side(result.kit),
    peer: side(result.peer),
    ratio: result.peer ? r : null,
    cpuRatio: result.cpuRatio ?? null,
    wallRatio: result.wallRatio ?? null,
    target: target ?? null,
    result: verdict(judged, target),
    rss,
    meter: result.meter ?? null,
    note: note ?? null,
  };
}

/**
 * A row of numbers measured in-process: `kit` and `peer` are { median, min, max } in `unit`;
 * `ratioValue` is kit ÷ peer as the bench computed it (e.g. the median of interleaved round ratios).
 * @param {{ name: string, peerName?: string, unit: string, kit: Spread, peer?: Spread, ratioValue?: number,
 *   target?: Target, metric?: string, note?: string }} opts
 */
export function valueRow({ name, peerName, unit, kit, peer, ratioValue, target, metric = "time", note }) {
  const r = ratioValue ?? (peer ? kit.median / peer.median : null);
  return {
    kind: "in-process",
    name,
    peerName: peerName ?? null,
    unit,
    metric,
    kit: { [metric]: kit },
    peer: peer ? { [metric]: peer } : null,
    ratio: r,
    target: target ?? null,
    result: verdict(target?.on === "value" ? kit.median : r, target),
    rss: false,
    note: note ?? null,
  };
}

/** Print the row for bench/run.mjs (one line, prefixed). */
export function emitRow(row) {
  process.stdout.write(`${ROW_PREFIX}${JSON.stringify(row)}\n`);
}

/** Parse a stdout line; undefined when it is not a row. */
export function parseRow(line) {
  return line.startsWith(ROW_PREFIX) ? JSON.parse(line.slice(ROW_PREFIX.length)) : undefined;
}

const fmt = (x) => (x === undefined || x === null ? "–" : x >= 100 ? x.toFixed(0) : x.toFixed(x >= 10 ? 1 : 2));
const range = (s) => (s ? `${fmt(s.min)}..${fmt(s.max)}` : "");
const mib = (kib) => `${(kib / 1024).toFixed(0)} MiB`;

/** The main number of one side, for tables: its compared metric's median. */
export function sideValue(row, which) {
  const s = row[which];
  return s ? s[row.metric]?.median : undefined;
}

/** "kit / peer (ratio×)" of one measure of a process row. */
function pairCell(row, metric, pairRatio) {
  const k = fmt(row.kit[metric].median);
  return row.peer ? `${k} / ${fmt(row.peer[metric].median)} (${pairRatio.toFixed(2)}×)` : k;
}

const METRIC_LABEL = { cpu: "CPU", wall: "wall" };

/** Table cells of a row (shared by the console table and the markdown report). */
export function rowCells(row) {
  const proc = row.kind === "process";
  return {
    name: row.name,
    peer: row.peerName ?? "–",
    kit: `${fmt(sideValue(row, "kit"))} ${row.unit} ${METRIC_LABEL[row.metric] ?? ""}`.trimEnd(),
    peerValue: row.peer ? `${fmt(sideValue(row, "peer"))} ${row.unit}` : "–",
    ratio: row.ratio === null ? "–" : `${row.ratio.toFixed(2)}×`,
    target: row.target?.text ?? "–",
    result: row.result || "info",
    spread: `${range(row.kit[row.metric])}${row.peer ? ` / ${range(row.peer[row.metric])}` : ""}`,
    cpu: proc ? pairCell(row, "cpu", row.cpuRatio) : "",
    wall: proc ? pairCell(row, "wall", row.wallRatio) : "",
    rss: row.rss ? `${mib(row.kit.rssKiB.max)}${row.peer ? ` / ${mib(row.peer.rssKiB.max)}` : ""}` : "",
  };
}

/** Plain-text table of rows with PASS/MISS, for the console. */
export function formatTable(rows) {
  const files = rows.some((r) => r.file);
  const head = ["row", "kit", "peer", "ratio", "target", "result", "spread kit / peer", "CPU ms", "wall ms"];
  const body = rows.map((r) => {
    const c = rowCells(r);
    return [c.name, c.kit, c.peerValue, c.ratio, c.target, c.result, c.spread, c.cpu, c.wall];
  });
  if (files) {
    head.unshift("bench");
    rows.forEach((r, i) => body[i].unshift((r.file ?? "").replace(/\.bench\.mjs$/, "")));
  }
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(head), ...body.map(line)].join("\n");
}

/**
 * The rows of one bench file: `add(row)` emits it for bench/run.mjs, keeps it in `rows` for the file's own
 * table, and prints a one-line progress note.
 */
export function rowCollector() {
  const rows = [];
  const add = (row) => {
    rows.push(row);
    emitRow(row);
    const r = row.ratio === null ? "" : ` ${row.ratio.toFixed(2)}×`;
    console.log(`  ${row.name}:${r} ${row.result || "info"}`);
  };
  return { rows, add };
}
