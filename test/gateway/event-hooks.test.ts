import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { scanEventHooks } from "../../src/compile/event-hooks.js";
import { IntegrityCache } from "../../src/compile/integrity-cache.js";
import { hashTree } from "../../src/compile/tree-hash.js";
import { eventMatches, GatewayEventHooks } from "../../src/gateway/event-hooks.js";
import { captureLog } from "../runtime/helpers.js";
import { Scratch, writeText } from "../support/home.js";

/** The gateway's event-hook loader against real folders: wildcards, the integrity check, skipped folders. */
const scratch = new Scratch("hk-event-hooks-unit-");
afterAll(() => scratch.cleanup());
const integrityOf = async (dir: string) => (await hashTree(dir)).integrity;

describe("gateway event hooks", () => {
  it("command:* matches every command event and nothing else", () => {
    expect(eventMatches("command:*", "command:reset")).toBe(true);
    expect(eventMatches("command:*", "commands:x")).toBe(false);
    expect(eventMatches("agent:start", "agent:start")).toBe(true);
    expect(eventMatches("agent:start", "agent:end")).toBe(false);
  });

  it("a folder changed after the scan is refused with E_EVENT_HOOK_TAMPERED; the others run", async () => {
    const home = scratch.dir("home");
    const out = join(home, "out.txt");
    for (const name of ["a", "b"]) {
      writeText(join(home, "hooks", name, "HOOK.yaml"), `events: ["command:*"]\n`);
      writeText(
        join(home, "hooks", name, "handler.js"),
        `import { appendFileSync } from "node:fs";\nexport function handle(e, c) { ` +
          `appendFileSync(${JSON.stringify(out)}, "${name} " + e + " " + c.command + "\\n"); }\n`,
      );
    }
    writeText(join(home, "hooks", "no-events", "HOOK.yaml"), "events: []\n");
    writeText(join(home, "hooks", "no-events", "handler.js"), "export function handle() {}\n");
    writeText(join(home, "hooks", "not-a-hook", "README.md"), "nothing\n");
    const scan = await scanEventHooks(home, [], await IntegrityCache.open(join(home, "cache")));
    expect(scan.hooks.map((h) => h.name)).toEqual(["a", "b"]);
    expect(scan.diagnostics.map((d) => d.code)).toEqual(["W_EVENT_HOOK_SKIPPED"]);
    expect(scan.diagnostics[0]!.message).toContain("no-events");
    writeText(join(home, "hooks", "b", "handler.js"), "export function handle() { /* swapped */ }\n");
    const cap = captureLog();
    const hooks = await GatewayEventHooks.load(scan.hooks, cap.log, integrityOf);
    expect(hooks.names()).toEqual(["a"]);
    expect(cap.records.some((r) => (r as { code?: string }).code === "E_EVENT_HOOK_TAMPERED")).toBe(true);
    await hooks.emit("command:reset", { command: "reset" });
    await hooks.emit("agent:start", { command: "x" });
    expect(readFileSync(out, "utf8")).toBe("a command:reset reset\n");
  });
});
