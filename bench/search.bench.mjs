#!/usr/bin/env node
// Index search benchmark (see bench/README.md). Generates a 10,000-entry community index (the
// same bytes every run), prepares it once (the load step: lowercasing, word and tag splitting,
// character histograms), then times `searchIndex` per query against a peer measured in the same
// run: a plain `Array.filter` substring match over the same entries' pre-lowercased name and
// description (what a naive search would do, with no ranking and no typo tolerance).
// Reports medians and ratios; never fails on time. Exits non-zero only when the search
// misbehaves (a sanity query does not rank the entry it was made from first).
import { parseIndexDocument } from "../dist/install/index/parse.js";
import { prepareIndex, searchIndex } from "../dist/install/index/search.js";

const N = 10_000;
const REPS = 41;
const TARGET_MS = 20;

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
// Measurement (same helpers as compile.bench.mjs)

const ms = (t0, t1) => Number(t1 - t0) / 1e6;
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
function stats(samples) {
  const wall = samples.map((s) => s.ms);
  return { ms: median(wall), spread: [Math.min(...wall), Math.max(...wall)], cpu: median(samples.map((s) => s.cpu)) };
}
function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const value = fn();
  const wall = ms(t0, process.hrtime.bigint());
  const c = process.cpuUsage(c0);
  return { value, ms: wall, cpu: (c.user + c.system) / 1000 };
}

const doc = JSON.stringify({ schema_version: 1, plugins });
const load = timed(() => parseIndexDocument(JSON.parse(doc), "bench"));
const entries = load.value.entries;
if (entries.length !== N) {
  console.error(`search.bench: ${entries.length} of ${N} generated entries validated`);
  process.exit(1);
}
const prep = timed(() => prepareIndex(entries));
const index = prep.value;
const peerFields = entries.map((e) => ({ e, name: e.name.toLowerCase(), description: e.description.toLowerCase() }));
const peer = (q) => peerFields.filter((x) => x.name.includes(q) || x.description.includes(q));
console.log(
  `index: ${N} entries (${(doc.length / 1048576).toFixed(1)} MB JSON); parse + ` +
    `validate ${load.ms.toFixed(0)} ms, prepare ${prep.ms.toFixed(0)} ms (once per load)`,
);

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
    // Interleaved, so both see the same machine state.
    const a = timed(() => searchIndex(index, q));
    ours.push(a);
    hitsN = a.value.length;
    if (r === 0 && expected && a.value[0]?.entry.name !== expected) {
      console.error(`search.bench: '${q}' ranked ${a.value[0]?.entry.name} first, expected ${expected}`);
      failed = true;
    }
    const b = timed(() => peer(q.toLowerCase()));
    theirs.push(b);
    peerN = b.value.length;
  }
  const st = stats(ours);
  const pst = stats(theirs);
  rows.push({
    name: `${kind}: '${q.length > 28 ? `${q.slice(0, 27)}…` : q}'`,
    ...st,
    hits: `${hitsN} / ${peerN}`,
    peer: pst.ms,
    ratio: `${(st.ms / pst.ms).toFixed(1)}x filter`,
    ok: st.ms < TARGET_MS,
  });
}

const fmt = (x) => (Number.isFinite(x) ? x.toFixed(2) : "-");
const table = [
  ["query", "median ms", "min..max ms", "cpu ms", "hits (ours / filter)", "filter ms", "ratio", "target", "result"],
  ...rows.map((r) => [
    r.name,
    fmt(r.ms),
    `${fmt(r.spread[0])}..${fmt(r.spread[1])}`,
    fmt(r.cpu),
    r.hits,
    fmt(r.peer),
    r.ratio,
    `< ${TARGET_MS} ms`,
    r.ok ? "OK" : "MISS",
  ]),
];
const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
const line = (row) =>
  row
    .map((cell, c) => ((c >= 1 && c <= 3) || c === 5 ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
    .join("  ")
    .trimEnd();
console.log();
console.log(line(table[0]));
console.log(widths.map((w) => "-".repeat(w)).join("  "));
for (const row of table.slice(1)) console.log(line(row));
console.log();
console.log(
  `median over queries: ${fmt(median(rows.map((r) => r.ms)))} ms per search (filter ` +
    `peer: ${fmt(median(rows.map((r) => r.peer)))} ms); ` +
    `node ${process.version}, ${process.platform}/${process.arch}`,
);
const missed = rows.filter((r) => !r.ok).map((r) => r.name);
if (missed.length) console.log(`targets missed: ${missed.join("; ")}`);
if (failed) process.exit(1);
