#!/usr/bin/env node
// Index search benchmark (see bench/README.md). Generates a 10,000-entry community index (the
// same bytes every run), measures the load step on its own (parse + validate, then prepare:
// lowercasing, word indexes, character tables), then times `searchIndex` per query kind, one row
// each, interleaved with a peer measured in the same run: a plain `Array.filter` substring match
// over the same entries' pre-lowercased name and description (no ranking, no typo tolerance).
// The goal (issue 19): every query kind under 5 ms, judged on the median CPU time of its row.
// Never fails on time. Exits non-zero only when the search misbehaves (a sanity query does not
// rank the entry it was made from first).
import { parseIndexDocument } from "../dist/install/index/parse.js";
import { prepareIndex, searchIndex } from "../dist/install/index/search.js";
import { below, emitRow, valueRow } from "./lib/rows.mjs";

const N = 10_000;
const REPS = 41;
const LOAD_REPS = 7;
const TARGET_MS = 5;

// ---------------------------------------------------------------------------------------------
// A deterministic index: names of 2–3 words (often with a hermes-/plugin- prefix), descriptions
// of 10–20 words, 1–5 tags, authors and capability labels drawn from small sets.

let seed = 0x2545f491;
function rand() {
  // xorshift32
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const SYL = [
  "tel",
  "gram",
  "me",
  "dia",
  "stu",
  "dio",
  "chro",
  "me",
  "re",
  "search",
  "craft",
  "lat",
  "ex",
  "bil",
  "ling",
  "vau",
  "lt",
  "jour",
  "nal",
  "pro",
  "file",
  "cal",
  "en",
  "dar",
  "mail",
  "git",
  "hub",
  "voice",
  "note",
  "task",
  "flow",
  "graph",
  "cache",
  "sync",
  "shell",
  "web",
  "page",
  "doc",
  "mind",
  "map",
];
const WORDS = [];
while (WORDS.length < 400) {
  const w = pick(SYL) + pick(SYL) + (rand() < 0.4 ? pick(SYL) : "");
  if (!WORDS.includes(w)) WORDS.push(w);
}
const PREFIX = ["hermes-", "plugin-", "hermes-plugin-", "", "", ""];
const AUTHORS = [
  "NousResearch",
  "Acme Labs",
  "anpicasso",
  "kadiratesdev",
  "Revell, Inc.",
  "ResearchCraft",
  "metDaisy",
  "creolben",
];
const CAPS = ["tools", "platform", "commands", "llm", "dashboard", "memory", "skills"];

const names = new Set();
const plugins = [];
while (plugins.length < N) {
  const words = Array.from({ length: 2 + (rand() < 0.3 ? 1 : 0) }, () => pick(WORDS));
  const name = `${pick(PREFIX)}${words.join("-")}`;
  if (names.has(name)) continue;
  names.add(name);
  plugins.push({
    name,
    repo: `${pick(AUTHORS).replace(/\W+/g, "").toLowerCase()}/${name}`,
    description: `${Array.from({ length: 10 + Math.floor(rand() * 11) }, () => pick(WORDS)).join(" ")}.`,
    author: pick(AUTHORS),
    tags: Array.from({ length: 1 + Math.floor(rand() * 5) }, () => pick(WORDS)),
    capabilities: Array.from({ length: 1 + Math.floor(rand() * 2) }, () => pick(CAPS)),
    ref: "0".repeat(40),
  });
}
const target = plugins[4321];
const targetWords = target.name.replace(/^(hermes-plugin-|hermes-|plugin-)/, "").split("-");
const typo = (w) => (w.length > 4 ? w.slice(0, 2) + w[3] + w[2] + w.slice(4) : `${w}x`);

/** [query, kind, expected top name or undefined] */
const QUERIES = [
  [target.name, "exact name", target.name],
  [target.name.slice(0, Math.max(4, target.name.length - 5)), "name prefix", undefined],
  [targetWords[0], "word", undefined],
  [targetWords.join(" "), "words of the name", undefined],
  [typo(target.name), "typo in the name", target.name],
  [typo(targetWords[targetWords.length - 1]), "typo in one word", undefined],
  [target.tags[0], "tag", undefined],
  ["acme", "author", undefined],
  ["zzqxv", "no match", undefined],
  ["me", "two letters (many hits)", undefined],
];

// ---------------------------------------------------------------------------------------------
// Measurement: wall and CPU time (user + system of this process) per call.

const ms = (t0, t1) => Number(t1 - t0) / 1e6;
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const summary = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const value = fn();
  const wall = ms(t0, process.hrtime.bigint());
  const c = process.cpuUsage(c0);
  return { value, ms: wall, cpu: (c.user + c.system) / 1000 };
}

// The load step, measured apart from the queries (a one-shot `hermes plugins search` pays it once).
const doc = JSON.stringify({ schema_version: 1, plugins });
const parses = [];
const prepares = [];
let entries;
let index;
for (let r = 0; r < LOAD_REPS; r++) {
  const load = timed(() => parseIndexDocument(JSON.parse(doc), "bench"));
  entries = load.value.entries;
  const prep = timed(() => prepareIndex(entries));
  index = prep.value;
  parses.push(load.cpu);
  prepares.push(prep.cpu);
}
if (entries.length !== N) {
  console.error(`search.bench: ${entries.length} of ${N} generated entries validated`);
  process.exit(1);
}
const parseCpu = summary(parses);
const prepCpu = summary(prepares);
const fmt = (x) => (Number.isFinite(x) ? x.toFixed(2) : "-");
console.log(
  `index: ${N} entries (${(doc.length / 1048576).toFixed(1)} MB JSON); load, median CPU of ${LOAD_REPS}: ` +
    `JSON.parse + validate ${fmt(parseCpu.median)} ms (${fmt(parseCpu.min)}..${fmt(parseCpu.max)}), ` +
    `prepareIndex ${fmt(prepCpu.median)} ms (${fmt(prepCpu.min)}..${fmt(prepCpu.max)}); ` +
    "once per load, not in the rows below",
);
emitRow(
  valueRow({
    name: "search index load, 10k entries: prepareIndex (after parse + validate)",
    unit: "ms",
    metric: "cpu",
    kit: prepCpu,
    note: `JSON.parse + validate: ${fmt(parseCpu.median)} ms CPU`,
  }),
);

const peerFields = entries.map((e) => ({ e, name: e.name.toLowerCase(), description: e.description.toLowerCase() }));
const peer = (q) => peerFields.filter((x) => x.name.includes(q) || x.description.includes(q));

// Warm-up (JIT), not counted.
for (let i = 0; i < 5; i++)
  for (const [q] of QUERIES) {
    searchIndex(index, q);
    peer(q.toLowerCase());
  }

const rows = [];
let failed = false;
for (const [q, kind, expected] of QUERIES) {
  const ours = [];
  const theirs = [];
  let hitsN = 0;
  let peerN = 0;
  for (let r = 0; r < REPS; r++) {
    // Interleaved, the order alternating, so both see the same machine state.
    const b0 = r % 2 ? timed(() => peer(q.toLowerCase())) : undefined;
    const a = timed(() => searchIndex(index, q));
    const b = b0 ?? timed(() => peer(q.toLowerCase()));
    ours.push(a);
    theirs.push(b);
    hitsN = a.value.length;
    peerN = b.value.length;
    if (r === 0 && expected && a.value[0]?.entry.name !== expected) {
      console.error(`search.bench: '${q}' ranked ${a.value[0]?.entry.name} first, expected ${expected}`);
      failed = true;
    }
  }
  const cpu = summary(ours.map((s) => s.cpu));
  const wall = summary(ours.map((s) => s.ms));
  const peerCpu = summary(theirs.map((s) => s.cpu));
  const shown = q.length > 28 ? `${q.slice(0, 27)}…` : q;
  const row = valueRow({
    name: `search 10k, ${kind}: '${shown}'`,
    peerName: "Array.filter substring",
    unit: "ms",
    metric: "cpu",
    kit: cpu,
    peer: peerCpu,
    target: below(TARGET_MS, "cpu"),
    note: `${hitsN} hits (filter: ${peerN}); wall ${fmt(wall.median)} ms (${fmt(wall.min)}..${fmt(wall.max)})`,
  });
  emitRow(row);
  rows.push({ kind, q: shown, cpu, wall, peerCpu, hits: `${hitsN} / ${peerN}`, result: row.result });
}

const table = [
  [
    "query kind",
    "query",
    "cpu ms",
    "min..max",
    "wall ms",
    "min..max",
    "hits (ours / filter)",
    "filter cpu ms",
    "ratio",
    "target",
    "result",
  ],
  ...rows.map((r) => [
    r.kind,
    `'${r.q}'`,
    fmt(r.cpu.median),
    `${fmt(r.cpu.min)}..${fmt(r.cpu.max)}`,
    fmt(r.wall.median),
    `${fmt(r.wall.min)}..${fmt(r.wall.max)}`,
    r.hits,
    fmt(r.peerCpu.median),
    `${(r.cpu.median / r.peerCpu.median).toFixed(1)}x`,
    `< ${TARGET_MS} ms CPU`,
    r.result,
  ]),
];
const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
const numeric = new Set([2, 3, 4, 5, 7, 8]);
const line = (row) =>
  row
    .map((cell, c) => (numeric.has(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
    .join("  ")
    .trimEnd();
console.log();
console.log(line(table[0]));
console.log(widths.map((w) => "-".repeat(w)).join("  "));
for (const row of table.slice(1)) console.log(line(row));
console.log();
console.log(
  `${REPS} repetitions per kind after 5 warm-up rounds; node ${process.version}, ${process.platform}/${process.arch}`,
);
const missed = rows.filter((r) => r.result !== "PASS").map((r) => r.kind);
if (missed.length) console.log(`over ${TARGET_MS} ms: ${missed.join("; ")}`);
if (failed) process.exit(1);
