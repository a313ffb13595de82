/**
 * The benchmark harness (bench/lib): real processes measured through the wait4 meter, rows judged
 * against their thresholds, the BENCH_ROW line format bench/run.mjs collects, and the markdown and
 * SVG report. No assertion on how long anything takes.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { closeMeter, measureProcess, processPairs } from "../../bench/lib/process-pairs.mjs";
import { writeReport } from "../../bench/lib/report.mjs";
import { below, parseRow, processRow, ratio, ROW_PREFIX, valueRow } from "../../bench/lib/rows.mjs";
import { ROOT } from "../support/cli.js";

const node = (code: string) => ({ argv: [process.execPath, "-e", code] });
const scratch = mkdtempSync(join(tmpdir(), "hermes-bench-harness-"));
afterAll(() => {
  closeMeter();
  rmSync(scratch, { recursive: true, force: true });
});

/** A processPairs-shaped result with chosen medians (CPU and wall), for the verdict tests. */
function result(kitCpu: number, peerCpu: number | null, kitWall = kitCpu) {
  const s = (v: number) => ({ median: v, min: v, max: v });
  const side = (c: number, w: number) => ({ n: 1, cpu: s(c), wall: s(w), rssKiB: { median: 1024, max: 2048 } });
  return {
    kit: side(kitCpu, kitWall),
    peer: peerCpu === null ? null : side(peerCpu, peerCpu),
    cpuRatio: peerCpu === null ? undefined : kitCpu / peerCpu,
    wallRatio: peerCpu === null ? undefined : kitWall / peerCpu,
  };
}

describe("process meter", () => {
  it("reports the exit status, output, CPU and peak RSS of a real child", async () => {
    const r = await measureProcess(node("process.stdout.write('out'); process.stderr.write('err'); process.exit(3)"));
    expect(r.status).toBe(3);
    expect(r.stdout).toBe("out");
    expect(r.stderr).toBe("err");
    expect(r.cpuMs).toBeGreaterThan(0);
    expect(r.wallMs).toBeGreaterThan(0);
    expect(r.rssKiB).toBeGreaterThan(1024); // a node process holds megabytes
  });

  it("runs interleaved pairs and refuses a side that exits wrong or prints the wrong thing", async () => {
    const pairs = await processPairs({ kit: node("1"), peer: node("0"), pairs: 3, warmup: 0 });
    expect(pairs.kit.n).toBe(3);
    expect(pairs.peer?.n).toBe(3);
    expect(pairs.cpuRatio).toBeGreaterThan(0);
    await expect(processPairs({ kit: node("process.exit(1)"), peer: node("0"), pairs: 1 })).rejects.toThrow(
      /kit .* exited 1, expected 0/,
    );
    const check = (r: { stdout: string }) => {
      if (r.stdout !== "yes") throw new Error(`wrong output ${r.stdout}`);
    };
    await expect(processPairs({ kit: { ...node("0"), check }, pairs: 1, warmup: 0 })).rejects.toThrow(/wrong output/);
  });
});

describe("rows", () => {
  it("judges ratio thresholds inclusively and budgets exclusively", () => {
    expect(processRow({ name: "a", result: result(150, 100), target: ratio(1.5) }).result).toBe("PASS");
    expect(processRow({ name: "b", result: result(151, 100), target: ratio(1.5) }).result).toBe("MISS");
    expect(processRow({ name: "c", result: result(10, null, 999), target: below(1000, "wall") }).result).toBe("PASS");
    expect(processRow({ name: "d", result: result(10, null, 1000), target: below(1000, "wall") }).result).toBe("MISS");
    expect(processRow({ name: "e", result: result(100, 10) }).result).toBe("");
    const v = valueRow({
      name: "f",
      unit: "ns",
      kit: { median: 9, min: 8, max: 10 },
      peer: { median: 10, min: 9, max: 11 },
      target: ratio(1),
    });
    expect([v.ratio, v.result]).toEqual([0.9, "PASS"]);
  });

  it("round-trips through the BENCH_ROW line a bench file prints", () => {
    const code =
      `const { emitRow, processRow, ratio } = await import(${JSON.stringify(join(ROOT, "bench/lib/rows.mjs"))});` +
      `console.log("other output"); emitRow(processRow({ name: "x", result: ${JSON.stringify(result(3, 2))}, ` +
      "target: ratio(1.1) }));";
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" });
    const [first = "", second = ""] = r.stdout.trim().split("\n");
    expect(first).toBe("other output");
    expect(parseRow(first)).toBeUndefined();
    expect(second.startsWith(ROW_PREFIX)).toBe(true);
    expect(parseRow(second)).toMatchObject({ name: "x", ratio: 1.5, result: "MISS", target: { max: 1.1 } });
  });
});

describe("report", () => {
  it("writes the markdown table and an SVG chart with one bar and one goal line per judged row", () => {
    const rows = [
      {
        ...processRow({ name: "fast", peerName: "node -e 0", result: result(100, 100), target: ratio(1.5) }),
        file: "cli.bench.mjs",
      },
      {
        ...processRow({ name: "slow", peerName: "node -e 0", result: result(400, 100), target: ratio(2.5) }),
        file: "cli.bench.mjs",
      },
      {
        ...processRow({ name: "cold", result: result(900, null, 1500), target: below(1000, "wall"), rss: true }),
        file: "cli.bench.mjs",
      },
    ];
    const md = join(scratch, "report.md");
    const meta = {
      date: "d",
      node: "v",
      cpus: 2,
      cpuModel: "cpu",
      os: "os",
      loadStart: "1",
      loadEnd: "2",
      files: ["cli.bench.mjs"],
    };
    const svgFile = writeReport(md, rows, { meta, failures: [] });
    expect(svgFile).toBe(join(scratch, "report.svg"));
    const text = readFileSync(md, "utf8");
    expect(text).toContain("**1 PASS, 2 MISS**");
    expect(text).toMatch(/\| fast \| node -e 0 \| 100 ms CPU \| 100 ms \| 1\.00× \| ≤ 1\.5× \| \*\*PASS\*\* \|/);
    expect(text).toMatch(/\| slow \|.*\| 4\.00× \| ≤ 2\.5× \| \*\*MISS\*\* \|/);
    expect(text).toContain("![kit ÷ peer per row, with each row's goal](report.svg)");
    expect(text).toMatch(/\| cold \| 2\.0 MiB \| – \|/); // peak RSS section
    const svg = readFileSync(svgFile, "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.match(/<rect x=/g)).toHaveLength(3);
    expect(svg.match(/stroke="#000"/g)).toHaveLength(3);
    expect(svg.match(/fill="#2e7d32"/g)).toHaveLength(2); // the PASS bar and its label
    expect(svg).toContain("MISS 1500 ms ÷ budget &lt; 1 s wall");
  });
});
