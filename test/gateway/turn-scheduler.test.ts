import { describe, expect, it } from "vitest";
import { QueueFullError, TurnScheduler } from "../../src/gateway/turn-scheduler.js";
import { sleep } from "../support/util.js";

/** A turn that records when it starts and ends, and finishes when released. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe("TurnScheduler", () => {
  it("runs the turns of one session one at a time, in arrival order", async () => {
    const s = new TurnScheduler({ maxConcurrent: 4, maxQueued: 10 });
    const log: string[] = [];
    const turn = (n: number, ms: number) =>
      s.run("a", async () => {
        log.push(`start ${n}`);
        await sleep(ms);
        log.push(`end ${n}`);
      });
    await Promise.all([turn(1, 30), turn(2, 1), turn(3, 1)]);
    expect(log).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
  });

  it("runs sessions side by side up to maxConcurrent, then makes them wait", async () => {
    const s = new TurnScheduler({ maxConcurrent: 2, maxQueued: 10 });
    const gates = [gate(), gate(), gate()];
    let running = 0;
    let peak = 0;
    const all = gates.map((g, i) =>
      s.run(`s${i}`, async () => {
        peak = Math.max(peak, ++running);
        await g.opened;
        running--;
      }),
    );
    await sleep(5);
    expect(s.active).toBe(2);
    expect(s.waiting).toBe(1);
    for (const g of gates) g.open();
    await Promise.all(all);
    expect(peak).toBe(2);
    expect(s.active).toBe(0);
  });

  it("refuses at once, queuing nothing, when the waiting queue is full", async () => {
    const s = new TurnScheduler({ maxConcurrent: 1, maxQueued: 1 });
    const g = gate();
    const first = s.run("a", () => g.opened);
    const second = s.run("b", async () => "ran");
    expect(s.refuses("c")).toBe(true);
    expect(() => s.run("c", async () => "never")).toThrow(QueueFullError);
    expect(s.waiting).toBe(1);
    g.open();
    await first;
    expect(await second).toBe("ran");
    expect(s.refuses("c")).toBe(false);
  });

  it("a turn that throws frees its slot and its session", async () => {
    const s = new TurnScheduler({ maxConcurrent: 1, maxQueued: 5 });
    await expect(s.run("a", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await s.run("a", async () => 2)).toBe(2);
    expect(s.active).toBe(0);
  });

  it("idle() resolves once nothing runs or waits", async () => {
    const s = new TurnScheduler({ maxConcurrent: 1, maxQueued: 5 });
    const done: number[] = [];
    void s.run("a", async () => {
      await sleep(20);
      done.push(1);
    });
    void s.run("b", async () => {
      await sleep(5);
      done.push(2);
    });
    await s.idle();
    expect(done).toEqual([1, 2]);
  });
});
