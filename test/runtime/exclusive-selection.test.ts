import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/runtime/runtime.js";
import { cleanupTemp, tempDir } from "../support/home.js";
import { captureLog, makeLock, plugin } from "./helpers.js";

afterEach(cleanupTemp);

/**
 * An exclusive plugin (memory provider, context engine) in the lock loads only while config.yaml still
 * selects it: a lock alone never starts a provider the config no longer names.
 */
async function run(config: string) {
  const home = tempDir("hk-excl-");
  writeFileSync(join(home, "config.yaml"), config);
  const lock = makeLock(home, [
    plugin("memory/facts", 'ctx.register_memory_provider({ name: "facts" });'),
    plugin("context_engine/lcm", 'ctx.register_context_engine({ name: "lcm", compress: (m) => m });'),
  ]);
  for (const p of lock.plugins) Object.assign(p, { kind: "exclusive", state: "not-enabled" });
  const logs = captureLog();
  const rt = new Runtime(home, lock, { log: logs.log });
  await rt.loadAll();
  return { rt, logs };
}

describe("exclusive plugins at start", () => {
  it("load while memory.provider / context.engine select them", async () => {
    const { rt } = await run("memory:\n  provider: facts\ncontext:\n  engine: lcm\n");
    expect(rt.status.get("memory/facts")?.state).toBe("loaded");
    expect(rt.status.get("context_engine/lcm")?.state).toBe("loaded");
    expect(rt.providers.list("memory").map((p) => p.name)).toEqual(["facts"]);
  });

  it("are skipped with the reason when the config selects something else (or the built-in compressor)", async () => {
    const { rt, logs } = await run("memory:\n  provider: other\ncontext:\n  engine: compressor\n");
    expect(rt.status.get("memory/facts")).toMatchObject({ state: "skipped", error: "not selected by memory.provider" });
    expect(rt.status.get("context_engine/lcm")).toMatchObject({
      state: "skipped",
      error: "not selected by context.engine",
    });
    expect(rt.providers.list("memory")).toEqual([]);
    expect(logs.records.map((r) => r.msg).join("\n")).toContain(
      "the lock loads memory/facts but memory.provider no longer selects it; not loaded",
    );
  });
});
