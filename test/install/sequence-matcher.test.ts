/**
 * The ratio is a faithful port of Python's difflib.SequenceMatcher: this
 * table was produced by CPython 3.11 (`SequenceMatcher(None, a, b).ratio()`), including inputs
 * where b has 200+ elements (the "autojunk" popular-element rule) and non-BMP code points.
 */
import { describe, expect, it } from "vitest";
import {
  codePoints,
  lcsLength,
  matchingSize,
  matchingSizeMasks,
  matchingSizeQ,
  prepareQuery,
  prepareSeq,
  quickRatio,
  ratio,
  realQuickRatio,
} from "../../src/install/index/sequence-matcher.js";

const PYTHON: Array<[string, string, number]> = [
  ["telgram", "hermes-telegram-business", 0.45161290322580644],
  ["media-studoi", "hermes-media-studio", 0.7096774193548387],
  ["studoi", "studio", 0.8333333333333334],
  ["", "", 1.0],
  ["a", "", 0.0],
  ["abc", "abc", 1.0],
  ["revell-contxt", "revell-context", 0.9629629629629629],
  ["chrom", "hermes-plugin-chrome-profiles", 0.29411764705882354],
  ["résumé", "resume", 0.6666666666666666],
  ["😀ab", "ab😀", 0.6666666666666666],
  ["abxcd", "abcd", 0.8888888888888888],
  ["tide", "diet", 0.25],
  ["bd-aa", "eaceaebaaddabaedaeab--eaee", 0.1935483870967742],
  ["abaebc", "beaece-baee-b", 0.5263157894736842],
  ["ae-ae", "e", 0.3333333333333333],
  ["d-e", "cdedccbb-baec", 0.375],
  ["dc-dceaa", "dbcbdda-aeecc-ce", 0.4166666666666667],
  ["edaacd-", "aa--c-e-dc-d-cadcbead", 0.35714285714285715],
  ["", "cb-bdd", 0.0],
  ["abddecb", "dec-dc-dbbabbb-badebccabde", 0.24242424242424243],
  ["eecb-", "ee---ad-eddddad-dababdbacea", 0.1875],
  ["a", "beaceaabedb-ccecda", 0.10526315789473684],
  ["d", "ddcaba-c-cd-be", 0.13333333333333333],
  ["", "ecb-ea", 0.0],
  ["ec-a-cecbcbe", "ec-bebbd-bbedc-aa", 0.3448275862068966],
  ["cdcb-ecd-cca", "abdbcbd", 0.42105263157894735],
  ["ead-c-a-a", "d-bdbd-ca-ddd-a-bbbabed-beed-", 0.3684210526315789],
  ["beeba", "", 0.0],
  ["--ae-bdbbacb", "ebeccedba", 0.47619047619047616],
  ["cd-eedebebe", "adbeabbbde-aeac-", 0.37037037037037035],
  ["eedaeabb", "aaedeaad", 0.5],
  ["eeeeb", "cdeedeb-ecebdbdaddca-b", 0.2962962962962963],
  ["ab-cab", "---cbcbdb-addb-bb-dedcdbcca-ca", 0.2777777777777778],
  ["edd-a", "ceeceaabaacc", 0.23529411764705882],
  ["", "bcbd-cdbeeed-caca-bdaca-acae", 0.0],
  ["aca", "acedcebae-babc", 0.35294117647058826],
  ["", "bc-ce", 0.0],
  ["bcde-bccacaa", "", 0.0],
  ["eebedbda--d", "dedec-bbcb---bdcabaa-", 0.375],
  ["cdbaa-de-ce", "-cadbbc", 0.4444444444444444],
  ["acccecb", "c", 0.25],
  ["cba", "dadce-bbea", 0.46153846153846156],
  ["c", "abdeadacc-baeeb--edc-dbc-e", 0.07407407407407407],
  ["ba-e-d--eb", "eeea-e----baaab-caddea-a-e-bd", 0.41025641025641024],
  ["ada-", "eea-ea--dcacb-bb--dddad-cae--", 0.24242424242424243],
  ["aeb", "c---ceebad", 0.3076923076923077],
  ["", "c-a-b-dc-ecddda", 0.0],
  ["bcadacda", "edcdbbaeab-eccbe-eca-cbddd", 0.29411764705882354],
  ["", "ad-dd", 0.0],
  ["-bdc", "cacaccdab-a-", 0.125],
  ["ccad", "eacdcacaa-c-", 0.375],
  ["bc", "ecbcda-deeb-a", 0.26666666666666666],
  [
    "ghjc eha",
    "icchgfeee eg dehi gbc cbdihidhfhgciddbcfibfdfejdagggidgefahejfc ii dbedgg hgeacaghjhabgihhdbdcci b " +
      "hbiaacdja ec ei gbbbeijdgedjaaiehef dhididag eaadh  gbed gfdhafgf gdaeibdhdeddhdeebjhjcdhg " +
      "ajcgadajcgaacghfbbcfdc ihae gffhcbabebfgbidgfegbahdfihdffha gd gagahbaedbjffefjaefeeaj " +
      "badbhhgeghchcaecjdffhfjbidgcdgb ahiifcg",
    0.0,
  ],
  [
    "bejbdbghhcd",
    "ghj di beeejefeedhdcddcejdfbgediid b habahdhfaedbadjjdbfichje ab jjfdaffcadeaj dafg fcjebdahihbgbg ic " +
      "ib cgege egaejfggaf dggdagcgbbgjfhccaaic gbjjficcfecicbbghdecahfaj gbjc djgjdhcjdagicgfbcddai a fbgjhi " +
      "e gejdgg fhi",
    0.0,
  ],
  [
    "caajhhdhjhchgbbcfgfbhii aa cbfiba",
    "ig cabjbdchec dbfjecfjehceihdjejidffadcgc e fgcebia fhiijbei gfegfjcffbhdcjaeiee j faadcej ggifachdj " +
      "aaaajfebifidgjejcdfjhccadchbb c egeaa ifj jhjihdcaaaiagcdcabaji dcgdij i  gjciebe ahiagghb hcdbed " +
      "abfeae i g iee dbiaceddcfdgfjdg  ihhiaagdjedgjjbjccaabbjcfcaaac  ababjfdi bgbdddbaa b  ehbcb deff",
    0.0,
  ],
  [
    "eafeeaffjihejagagibfhaijdbjecgai",
    "eaafhbhchjfiejceddhcb bhib ffbggbg afdeegiicg dhcijj afjfich ifchhejdcfh dideejccdfjifcdfdebc " +
      "bdgcceegedb bedghaaggdi ehacejgadgjj gd   jd c bhgfe bgdg ceghhajgi  c faghbaeidcdifbjhidhia fifghd " +
      "cgibjf aeeggaabgg  fjebdegidghd",
    0.01556420233463035,
  ],
  [
    "cb dh idcf  ghe",
    "i chfdeg eg chaefd efhhgj b fcegabjfcif ja adb eejbjcdchfcdgicjjb i edhdibh bibegdchhiahhchdhcijacfhjh " +
      "ehfgg bc f  aaja fbihhcadg cfb ffhiidegfgeiaeefhgfieifd hbfdfecj bagigijagebaadhj aiijgjc  j bda  h cb " +
      "cagb afceieecgafagj jahjiabgjghba gjj chgibb hdc agaa  bbdbchaejdhcafcbe ihh eaaaaa  jbgeej",
    0.0,
  ],
  [
    "hjaffjhh ccbf c",
    "ghghejfeeaj jfjacjejgdgg gjdheafeegcjaecjcei hfibiihgddeja ghdejaghibifbdgjieifhijddddbcefjjfgicdahfbf " +
      "hbcfjafeijabadjhjjdeegbhjjceafdcgbaaaifhhbj gbbefjd b igchcfddcaefaiaaei habcfad ejjh bhffegbfhgchdc " +
      "ahdacdbjfchbga bhffdhb fcfdachichceggdcaejefcehbfhhbcia  dihebedfgeddbgegcae",
    0.0,
  ],
  [
    "xxxxxy",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" +
      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" +
      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxy",
    0.04669260700389105,
  ],
  [
    "yyyy",
    "yyyzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz" +
      "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz" +
      "zzz",
    0.028985507246376812,
  ],
];

describe("SequenceMatcher ratio (Ratcliff/Obershelp, as CPython)", () => {
  it("matches CPython on 60 pairs", () => {
    for (const [a, b, r] of PYTHON)
      expect(ratio(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b).slice(0, 40)}`).toBeCloseTo(r, 12);
  });

  it("quick_ratio and real_quick_ratio are upper bounds of ratio", () => {
    for (const [a, b] of PYTHON) {
      const ca = codePoints(a);
      const cb = codePoints(b);
      const r = ratio(ca, cb);
      expect(quickRatio(ca, cb)).toBeGreaterThanOrEqual(r - 1e-12);
      expect(realQuickRatio(ca.length, cb.length)).toBeGreaterThanOrEqual(quickRatio(ca, cb) - 1e-12);
    }
  });

  it("known values from the spec's examples", () => {
    expect(ratio("", "")).toBe(1);
    expect(ratio("abc", "abc")).toBe(1);
    // A typo in one word of a long name is under the original's 0.6 threshold...
    expect(ratio("telgram", "hermes-telegram-business")).toBeLessThan(0.6);
    // ...but close to that word, which is why search.ts also compares name words.
    expect(ratio("telgram", "telegram")).toBeCloseTo(14 / 15, 12);
    // Code points, not UTF-16 units: one emoji is one element.
    expect(ratio("😀", "😀")).toBe(1);
    expect(codePoints("😀a")).toHaveLength(2);
  });

  it("the search's fast paths agree with it: a prepared term (matchingSizeQ) and a prepared b", () => {
    for (const [a, b, r] of PYTHON) {
      const q = prepareQuery(a);
      const cb = codePoints(b);
      const total = q.cps.length + cb.length;
      expect(total ? (2 * matchingSizeQ(q, cb)) / total : 1).toBeCloseTo(r, 12);
      expect(total ? (2 * matchingSize(q.cps, prepareSeq(cb))) / total : 1).toBeCloseTo(r, 12);
    }
  });

  it("bit-parallel LCS equals the textbook LCS (multi-word terms too) and bounds the matching size", () => {
    const lcs = (a: readonly number[], b: readonly number[]) => {
      let prev = new Array<number>(b.length + 1).fill(0);
      for (const x of a) {
        const cur = [0];
        for (let j = 0; j < b.length; j++) cur.push(x === b[j] ? prev[j]! + 1 : Math.max(prev[j + 1]!, cur[j]!));
        prev = cur;
      }
      return prev[b.length]!;
    };
    let seed = 12345;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const word = (n: number) => Array.from({ length: n }, () => "abcde-é😀"[Math.floor(rnd() * 9)]).join("");
    const pairs: Array<[string, string]> = [...PYTHON.map(([a, b]) => [a, b] as [string, string])];
    for (let k = 0; k < 400; k++) pairs.push([word(Math.floor(rnd() * 95)), word(Math.floor(rnd() * 70))]);
    for (const [a, b] of pairs) {
      const q = prepareQuery(a);
      const cb = codePoints(b);
      const got = lcsLength(q, cb);
      expect(got, `${a} / ${b}`).toBe(lcs(q.cps, cb));
      expect(matchingSizeQ(q, cb)).toBeLessThanOrEqual(got);
    }
  });

  it("the position-mask path (names of up to 64 code points) gives the same matching size", () => {
    let seed = 4242;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const word = (n: number) => Array.from({ length: n }, () => "abcde-é😀"[Math.floor(rnd() * 9)]).join("");
    const pairs: Array<[string, string]> = PYTHON.filter(([, b]) => codePoints(b).length <= 64).map(([a, b]) => [a, b]);
    for (let k = 0; k < 400; k++) pairs.push([word(Math.floor(rnd() * 50)), word(Math.floor(rnd() * 65))]);
    for (const [a, b] of pairs) {
      const ca = codePoints(a);
      const cb = codePoints(b);
      // One column per distinct code point, as the search's name tables have them.
      const col = new Map<number, number>();
      for (const c of [...cb, ...ca]) if (!col.has(c)) col.set(c, col.size);
      const lo = new Int32Array(col.size);
      const hi = new Int32Array(col.size);
      cb.forEach((c, j) => {
        if (j < 32) lo[col.get(c)!]! |= 1 << j;
        else hi[col.get(c)!]! |= 1 << (j - 32);
      });
      const cols = Int32Array.from(ca, (c) => col.get(c)!);
      expect(matchingSizeMasks(cols, lo, hi, 0, cb.length), `${a} / ${b}`).toBe(matchingSize(ca, prepareSeq(cb)));
    }
  });
});
