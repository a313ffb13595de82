/**
 * Index search (src/install/index/search.ts) and bare-name resolution
 * against the real index documents of the shared fixtures (test/shared-dir.ts): the quality table pins the top
 * result of typical queries (exact names, prefixes, words, tags, typos, several words), and
 * each row also shows what the original's scoring ranks first, for comparison.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { catalogEntryToIndex, parseIndexDocument, type IndexEntry } from "../../src/install/index/parse.js";
import { resolveIndexName } from "../../src/install/index/load.js";
import { closestNames, prepareIndex, searchIndex } from "../../src/install/index/search.js";
import { ratio } from "../../src/install/index/sequence-matcher.js";
import { hasShared, SHARED_FIXTURES } from "../shared-dir.js";
import { indexEntry } from "./helpers.js";

const INDEX = join(SHARED_FIXTURES, "index");
const SHARED = hasShared("test/install/index-search.test.ts: search on the shared index fixtures");

/** Every entry of the four index documents and the catalog files, first name wins. */
function fixtureEntries(): IndexEntry[] {
  const out: IndexEntry[] = [];
  const seen = new Set<string>();
  const add = (e: IndexEntry) => {
    if (seen.has(e.name)) return;
    seen.add(e.name);
    out.push(e);
  };
  for (const f of readdirSync(INDEX)
    .filter((x) => x.endsWith(".json"))
    .sort()) {
    for (const e of parseIndexDocument(JSON.parse(readFileSync(join(INDEX, f), "utf8")), f).entries) add(e);
  }
  const cat = join(INDEX, "plugin-catalog");
  for (const f of readdirSync(cat)
    .filter((x) => x.endsWith(".yaml"))
    .sort())
    add(catalogEntryToIndex(parse(readFileSync(join(cat, f), "utf8")), f));
  return out;
}

/** The original's scoring, for the comparison column. */
function originalTop(entries: readonly IndexEntry[], term: string): string | undefined {
  const t = term.trim().toLowerCase();
  const scored = entries
    .map((e) => {
      const name = e.name.toLowerCase();
      if (name === t) return { e, s: 100 };
      const tags = e.tags.map((x) => x.toLowerCase());
      let s = 0;
      if (name.includes(t)) s = Math.max(s, 80);
      if (tags.includes(t)) s = Math.max(s, 70);
      if (tags.some((x) => x.includes(t))) s = Math.max(s, 55);
      if (e.description.toLowerCase().includes(t)) s = Math.max(s, 50);
      if (e.author.toLowerCase().includes(t)) s = Math.max(s, 40);
      const r = ratio(t, name);
      if (r >= 0.6) s = Math.max(s, r * 60);
      return { e, s };
    })
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || (a.e.name < b.e.name ? -1 : a.e.name > b.e.name ? 1 : 0));
  return scored[0]?.e.name;
}

const entries = SHARED ? fixtureEntries() : [];
const index = prepareIndex(entries);

/** query, expected top result, what kind of query it is. */
const QUALITY: Array<[string, string, string]> = [
  ["hermes-media-studio", "hermes-media-studio", "exact name"],
  ["HERMES-Media-Studio", "hermes-media-studio", "exact, other case"],
  ["media studio", "hermes-media-studio", "words of the name, blank for '-'"],
  ["medai", "hermes-media-studio", "typo in one word"],
  ["telegram", "hermes-telegram-business", "word of the name"],
  ["telgram", "hermes-telegram-business", "typo in one word of a long name"],
  ["tele", "hermes-telegram-business", "word prefix"],
  ["chrom", "hermes-plugin-chrome-profiles", "word prefix"],
  ["chrome profile", "hermes-plugin-chrome-profiles", "several words"],
  ["reserchcraft", "researchcraft", "typo in a one-word name"],
  ["latex", "researchcraft", "tag"],
  ["revel", "revell", "name prefix (shorter name first on ties)"],
  ["revell-contxt", "revell-context", "typo"],
  ["biling", "billing", "typo"],
  ["statusbar", "billing", "tag shared by three: ties by name"],
  ["async", "plugin-llm-async-example", "word"],
  ["image gen", "hermes-media-studio", "tag written with a blank"],
  ["jornal", "my-journal", "typo in a word"],
  ["vault", "vault-view", "prefix"],
  ["llm example", "plugin-llm-example", "several words: the closer name first"],
  ["memory provider", "revell", "tag 'memory-provider'"],
  ["reasoning", "reasoning-switch", "prefix"],
  ["crew", "crew", "catalog entry, exact"],
  ["nous", "billing", "tag 'nous-portal' beats author 'NousResearch'"],
];

describe("search quality on the shared index fixtures", () => {
  it.skipIf(!SHARED)(`has the ${entries.length} fixture entries to search`, () => {
    expect(entries.length).toBeGreaterThan(30);
  });

  it.skipIf(!SHARED)("the expected plugin is the top result of each query", () => {
    const rows: string[] = [];
    const wrong: string[] = [];
    for (const [q, expected, kind] of QUALITY) {
      const hits = searchIndex(index, q);
      const top = hits[0];
      const orig = originalTop(entries, q);
      rows.push(
        `| \`${q}\` | ${kind} | ${top ? `${top.entry.name} (${top.score}, ${top.match})` : "–"} ` +
          `| ${orig ?? "(no result)"} |`,
      );
      if (top?.entry.name !== expected) wrong.push(`${q}: got ${top?.entry.name}, expected ${expected}`);
    }
    console.log(
      `| query | kind | top result (score, rule) | original's top |\n| --- | --- | --- | --- |\n${rows.join("\n")}`,
    );
    expect(wrong).toEqual([]);
  });

  it(
    "ranks exact > prefix > word > substring > tag; a close typo (r·60) can pass description and author, as in " +
      "the original",
    () => {
      const e = indexEntry;
      const pool = [
        e("zz-typo", { description: "nothing" }),
        e("studi"),
        e("by-author", { author: "Studio Labs" }),
        e("in-description", { description: "a studio for things" }),
        e("tagged", { tags: ["studio"] }),
        e("xstudiox"),
        e("media-studio"),
        e("studio-tools"),
        e("studio"),
      ];
      expect(searchIndex(pool, "studio").map((h) => `${h.entry.name}:${h.match}`)).toEqual([
        "studio:exact",
        "studio-tools:prefix",
        "media-studio:word",
        "xstudiox:name",
        "tagged:tag",
        "studi:typo",
        "in-description:description",
        "by-author:author",
      ]);
    },
  );

  it.skipIf(!SHARED)("an empty term browses every entry sorted by name; --capability filters exactly", () => {
    const all = searchIndex(index, "  ");
    expect(all).toHaveLength(entries.length);
    const names = all.map((h) => h.entry.name);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const dash = searchIndex(index, "", { capability: "DASHBOARD" }).map((h) => h.entry.name);
    expect(dash.length).toBeGreaterThan(0);
    for (const n of dash)
      expect(entries.find((x) => x.name === n)!.capabilities.map((c) => c.toLowerCase())).toContain("dashboard");
    expect(searchIndex(index, "", { capability: "dash" })).toEqual([]);
  });

  it.skipIf(!SHARED)("nothing matches nonsense; results never contain a zero score", () => {
    expect(searchIndex(index, "zzzzqqq")).toEqual([]);
    for (const h of searchIndex(index, "e")) expect(h.score).toBeGreaterThan(0);
  });
});

describe.skipIf(!SHARED)("bare-name resolution: exact, case-insensitive only", () => {
  it("resolves exact names in any case", () => {
    expect(resolveIndexName(entries, "Hermes-Telegram-Business")).toMatchObject({
      kind: "found",
      entry: { name: "hermes-telegram-business" },
    });
  });

  it("a unique substring is only a suggestion (the original installed it)", () => {
    const r = resolveIndexName(entries, "telegram");
    expect(r.kind).toBe("unknown");
    expect(r.kind === "unknown" && r.closest[0]?.name).toBe("hermes-telegram-business");
  });

  it("typos get the closest names, best first; nonsense gets none", () => {
    const r = resolveIndexName(entries, "revell-contxt");
    expect(r.kind === "unknown" && r.closest[0]?.name).toBe("revell-context");
    expect(closestNames(index, "qqqqqq")).toEqual([]);
  });

  it("two entries with the same name are ambiguous", () => {
    const dup = [...entries, { ...entries.find((x) => x.name === "billing")!, name: "Billing", repo: "other/billing" }];
    const r = resolveIndexName(dup, "billing");
    expect(r.kind).toBe("ambiguous");
    expect(r.kind === "ambiguous" && r.candidates.map((c) => c.repo).sort()).toEqual([
      "anotherchu/billing",
      "other/billing",
    ]);
  });
});

describe("search through the word indexes equals searching every entry's text", () => {
  // A generated index (names, tags, descriptions from a small vocabulary, so words repeat across
  // entries); the same index with its word indexes dropped searches each field's whole text.
  let seed = 99;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const vocab = ["tele", "gram", "telegram", "media", "studio", "me", "chrome", "pro", "file", "profiles", "note"];
  const phrase = (n: number) => Array.from({ length: n }, () => pick(vocab)).join(pick([" ", "-", "_", ". "]));
  const generated = Array.from({ length: 300 }, (_, i) =>
    indexEntry(`${pick(["hermes-", "", "plugin-"])}${phrase(1 + Math.floor(rnd() * 3))}-${i}`, {
      description: `${phrase(3 + Math.floor(rnd() * 8))}.`,
      tags: Array.from({ length: Math.floor(rnd() * 3) }, () => phrase(1 + Math.floor(rnd() * 2))),
    }),
  );
  const fast = prepareIndex(generated);
  const plain = { ...fast, words: null };
  const show = (hits: ReturnType<typeof searchIndex>) => hits.map((h) => `${h.entry.name} ${h.score} ${h.match}`);

  it("has word indexes to compare", () => {
    expect(fast.words).not.toBeNull();
  });

  it("gives the same hits, scores, kinds and order for words, prefixes, inner parts and phrases", () => {
    const terms = ["me", "tele", "gram", "telegram", "egra", "studio", "media studio", "gram media", "o", "file-"];
    for (let k = 0; k < 60; k++) {
      const w = pick(vocab);
      terms.push(w.slice(Math.floor(rnd() * 2)), `${w} ${pick(vocab)}`, w.slice(0, 2 + Math.floor(rnd() * 3)));
    }
    for (const t of terms) expect(show(searchIndex(fast, t)), t).toEqual(show(searchIndex(plain, t)));
  });
});

describe("the whole-name typo rule's bounds skip only names under the cutoff", () => {
  // Single-word names (no word or tag typos, empty description and author), so a name either
  // contains the term or scores ratio·60 when ratio ≥ 0.6, as the original. Long shared prefixes,
  // names of 3–90 code points (one-word, two-word and longer position masks), terms of 2–80
  // (per-name LCS for short terms, the prefix-sharing walk for long ones), and an index whose
  // names hold more than 255 distinct code points (merged columns): the typo hits must be exactly
  // those of computing every ratio.
  let seed = 7;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const letters = (alphabet: string, n: number) =>
    Array.from({ length: n }, () => [...alphabet][Math.floor(rnd() * [...alphabet].length)]).join("");
  const swap = (w: string) => {
    const k = Math.floor(rnd() * (w.length - 1));
    return w.slice(0, k) + w[k + 1] + w[k] + w.slice(k + 2);
  };
  const cjk = Array.from({ length: 300 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join("");
  const indexes = {
    "small alphabet": (alphabet = "abcdeé") =>
      Array.from({ length: 400 }, (_, i) => {
        const prefix = ["hermesplugin", "hermes", "plugin", ""][i % 4]!;
        return `${prefix}${letters(alphabet, 3 + Math.floor(rnd() * (i % 7 === 0 ? 80 : 40)))}`;
      }),
    "over 255 code points": () =>
      Array.from({ length: 300 }, () => `abc${letters(`abcd${cjk}`, 3 + Math.floor(rnd() * 70))}`),
  };

  for (const [label, names] of Object.entries(indexes)) {
    it(`${label}: every term's typo hits and scores equal the ratio computed for every name`, () => {
      const list = [...new Set(names())];
      const index = prepareIndex(list.map((n) => indexEntry(n)));
      const terms: string[] = ["ab", "abcab", letters("abcdeé", 80)];
      for (let k = 0; k < 40; k++) {
        const n = list[Math.floor(rnd() * list.length)]!;
        terms.push(swap(n), swap(swap(n)), n.slice(0, Math.max(2, n.length - 1 - Math.floor(rnd() * 6))), `x${n}`);
      }
      for (const t of terms) {
        const got = searchIndex(index, t)
          .filter((h) => h.match === "typo")
          .map((h) => `${h.entry.name} ${h.score}`);
        const want = list
          .filter((n) => !n.includes(t))
          .map((n) => ({ n, s: Math.round(ratio(t, n) * 6000) }))
          .filter(({ s }) => s >= 3600)
          .sort((a, b) => b.s - a.s || (a.n < b.n ? -1 : 1))
          .map(({ n, s }) => `${n} ${s / 100}`);
        expect(got, t).toEqual(want);
      }
    });
  }
});
