import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, Scratch, writeText } from "./cli.js";

/**
 * Issue 5: `hermes chat` on a terminal — the REPL prompt, the built-in approval prompt (once),
 * Ctrl-C interrupting a running command, Ctrl-C at the prompt leaving. The terminal is a
 * pseudo-terminal made by util-linux `script`; without it these tests are skipped.
 */
const hasScript = spawnSync("script", ["-qfec", "true", "/dev/null"], { stdio: "ignore" }).status === 0;
const scratch = new Scratch("hermes-e2e-agent-tty-");
afterAll(() => scratch.cleanup());

function tty(args: string[], opts: { cwd: string; home: string }) {
  const cmd = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("HERMES_")) env[k] = v;
  Object.assign(env, { HERMES_HOME: opts.home, NO_COLOR: "1", HERMES_BUNDLED_PLUGINS: join(opts.home, "no-bundled") });
  const child = spawn("script", ["-qfec", cmd, "/dev/null"], { cwd: opts.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
  const done = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  let from = 0;
  return {
    /** Wait for `text` after what was already matched. */
    async expect(text: string, ms = 20_000) {
      const t0 = Date.now();
      while (out.indexOf(text, from) < 0) {
        if (Date.now() - t0 > ms) throw new Error(`no ${JSON.stringify(text)} in:\n${out}`);
        await new Promise((r) => setTimeout(r, 40));
      }
      from = out.indexOf(text, from) + text.length;
    },
    type: (s: string) => child.stdin.write(s),
    done,
    out: () => out,
  };
}

describe.skipIf(!hasScript)("hermes chat on a terminal", () => {
  it("asks for approval at the prompt; Ctrl-C interrupts a running command; Ctrl-C at the prompt leaves", async () => {
    const root = scratch.dir("tty");
    const home = join(root, "home");
    const work = join(root, "work");
    mkdirSync(join(work, "victim"), { recursive: true });
    const script = writeText(
      join(root, "s.yaml"),
      '- call: {tool: terminal, args: {command: "rm -rf victim"}}\n- say: "removed it"\n- call: {tool: terminal, args: {command: "sleep 30"}}\n- say: "never"\n',
    );
    const t = tty(["chat", "--script", script], { cwd: work, home });
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
    expect(await t.done).toBe(0);
  });
});
