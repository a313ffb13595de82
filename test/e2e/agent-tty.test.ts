import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasScript, ttyCli } from "../support/cli.js";
import { Scratch, writeText } from "../support/home.js";

/**
 * Issue 5: `hermes chat` on a terminal — the REPL prompt, the built-in approval prompt (once),
 * Ctrl-C interrupting a running command, Ctrl-C at the prompt leaving. The terminal is a
 * pseudo-terminal made by util-linux `script`; without it these tests are skipped.
 */
const scratch = new Scratch("hermes-e2e-agent-tty-");
afterAll(() => scratch.cleanup());

describe.skipIf(!hasScript)("hermes chat on a terminal", () => {
  it("asks for approval at the prompt; Ctrl-C interrupts a running command; Ctrl-C at the prompt leaves", async () => {
    const root = scratch.dir("tty");
    const home = join(root, "home");
    const work = join(root, "work");
    mkdirSync(join(work, "victim"), { recursive: true });
    const script = writeText(
      join(root, "s.yaml"),
      '- call: {tool: terminal, args: {command: "rm -rf victim"}}\n- say: "removed it"\n- call: {tool: ' +
        'terminal, args: {command: "sleep 30"}}\n- say: "never"\n',
    );
    const t = ttyCli(["chat", "--script", script], {
      cwd: work,
      home,
      env: { HERMES_BUNDLED_PLUGINS: join(home, "no-bundled") },
    });
    await t.expect("you › ");
    t.type("please remove victim\r");
    await t.expect("⚠ approval needed (terminal: recursive delete)");
    await t.expect("[o]nce  [s]ession  [a]lways  [d]eny (default deny) › ");
    expect(existsSync(join(work, "victim"))).toBe(true);
    t.type("o\r");
    await t.expect("removed it");
    expect(existsSync(join(work, "victim"))).toBe(false);
    await t.expect("you › ");
    t.type("now sleep\r");
    await new Promise((r) => setTimeout(r, 1500));
    const t0 = Date.now();
    t.type("\x03");
    await t.expect("E_AGENT_INTERRUPTED: interrupted by Ctrl-C");
    expect(Date.now() - t0).toBeLessThan(10_000);
    await t.expect("you › ");
    t.type("\x03");
    expect((await t.done).code).toBe(0);
  });
});
