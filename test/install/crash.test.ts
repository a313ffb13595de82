/**
 * kill -9 at any instant of install, update and remove: after the next command, the plugins dir
 * and the metadata are exactly as before (or, once the change committed, exactly as after) and no
 * staging dir is left. Two ways to kill: at every fault point (HERMES_FAULT_KILL_AT=N makes the CLI
 * SIGKILL itself at its N-th durable step), and from outside after varied delays.
 */
import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch } from "../support/home.js";
import {
  ENTRY,
  hermes,
  newHome,
  pluginFiles,
  Repo,
  snapshot,
  stagingLeftovers,
  type Ctx,
  type Home,
} from "./helpers.js";

let s: Scratch;
let ctx: Ctx;
let repo: Repo;
let v2 = "";
/** A home with the plugin installed at v1 (the state every scenario starts from). */
let template: Home;

beforeAll(async () => {
  s = new Scratch("hermes-crash-");
  const repos = s.dir("repos");
  ctx = { s, bundled: bundledWithHelloWorld(s) };
  repo = new Repo(repos, "acme/crashy", { ...pluginFiles("crashy"), "data.txt": "v1\n" });
  template = newHome(s, "template", "plugins:\n  enabled: []\n");
  const r = await hermes(ctx, template, ["install", repo.url, "--enable"]);
  expect(r.code, r.stderr).toBe(0);
  v2 = repo.commit({ "data.txt": "version two\n", "index.js": `${ENTRY}// v2\n`, "extra.txt": "new file\n" });
}, 240_000);
afterAll(() => s?.cleanup());

function cloneHome(name: string): Home {
  const h = newHome(s, name);
  cpSync(template.home, h.home, { recursive: true, verbatimSymlinks: true });
  return h;
}

interface State {
  tree: string[];
  meta: string | undefined;
}

const state = (h: Home): State => ({
  tree: snapshot(h),
  meta: existsSync(h.metadataFile) ? readFileSync(h.metadataFile, "utf8") : undefined,
});

/** The state a scenario ends in when it runs to completion (computed once, in a twin home). */
async function finalState(name: string, args: string[]): Promise<State> {
  const h = cloneHome(`${name}-final`);
  const r = await hermes(ctx, h, args);
  expect(r.code, r.stderr).toBe(0);
  return state(h);
}

async function afterNextCommand(h: Home): Promise<void> {
  const next = await hermes(ctx, h, ["list", "--json"]);
  expect(next.code, next.stderr).toBe(0);
  expect(stagingLeftovers(h)).toEqual([]);
}

async function faultPoints(
  name: string,
  args: string[],
  maxPoints: number,
): Promise<{ before: number; after: number }> {
  const before = state(cloneHome(`${name}-before`));
  const after = await finalState(name, args);
  expect(after).not.toEqual(before);
  const seen = { before: 0, after: 0 };
  for (let n = 1; n <= maxPoints; n++) {
    const h = cloneHome(`${name}-${n}`);
    const r = await hermes(ctx, h, args, { env: { HERMES_FAULT_KILL_AT: String(n) } });
    await afterNextCommand(h);
    const got = state(h);
    if (r.signal !== "SIGKILL") {
      // Fewer fault points than maxPoints: the run completed.
      expect(r.code, r.stderr).toBe(0);
      expect(got).toEqual(after);
      break;
    }
    if (JSON.stringify(got) === JSON.stringify(before)) seen.before++;
    else {
      expect(got, `kill at fault point ${n}`).toEqual(after);
      seen.after++;
    }
  }
  return seen;
}

describe.concurrent("kill -9", { timeout: 900_000 }, () => {
  it("install --force over an existing plugin, killed at every durable step", async () => {
    const seen = await faultPoints("install", ["install", repo.url, "--force"], 16);
    // Kills before the commit leave the old plugin; kills after it leave the new one.
    expect(seen.before).toBeGreaterThan(3);
    expect(seen.after).toBeGreaterThan(0);
  });

  it("a fresh install, killed at every durable step", async () => {
    let completed = false;
    const outcomes: string[] = [];
    for (let n = 1; n <= 14 && !completed; n++) {
      const h = newHome(s, `fresh-${n}`, "plugins:\n  enabled: []\n");
      const r = await hermes(ctx, h, ["install", repo.url], { env: { HERMES_FAULT_KILL_AT: String(n) } });
      await afterNextCommand(h);
      completed = r.signal !== "SIGKILL";
      const got = state(h);
      const record = got.meta ? (JSON.parse(got.meta) as Record<string, { revision: string }>).crashy : undefined;
      const installed = existsSync(join(h.plugins, "crashy"));
      outcomes.push(`${n}: ${installed ? "installed" : "absent"}`);
      // Tree and record agree: both absent, or both the complete new install.
      expect(Boolean(record), `fault point ${n}`).toBe(installed);
      if (installed) {
        expect(record!.revision).toBe(v2);
        expect(readFileSync(join(h.plugins, "crashy", "data.txt"), "utf8")).toBe("version two\n");
      }
      expect(got.tree.filter((t) => !t.startsWith("crashy") && !t.startsWith(".install-metadata.json="))).toEqual([]);
    }
    expect(outcomes.some((o) => o.endsWith("absent"))).toBe(true);
  });

  it("update, killed at every durable step", async () => {
    const seen = await faultPoints("update", ["update", "crashy"], 14);
    expect(seen.before).toBeGreaterThan(2);
  });

  it("remove, killed at every durable step", async () => {
    const seen = await faultPoints("remove", ["remove", "crashy"], 14);
    expect(seen.before + seen.after).toBeGreaterThan(3);
  });

  it(
    "a compile or a runtime start right after a kill mid-placement rolls it back first and never sees the torn " +
      "tree",
    async () => {
      const before = state(cloneHome("torn-before"));
      const placing = (h: Home) =>
        readdirSync(h.plugins)
          .filter((d) => d.startsWith(".install-"))
          .some((d) => {
            try {
              return (
                (JSON.parse(readFileSync(join(h.plugins, d, "journal.json"), "utf8")) as { phase: string }).phase ===
                "placing"
              );
            } catch {
              return false;
            }
          });
      const env = { HERMES_BUNDLED_PLUGINS: ctx.bundled };
      let torn = 0;
      for (let n = 1; n <= 16; n++) {
        const probe = cloneHome(`torn-probe-${n}`);
        const r = await hermes(ctx, probe, ["install", repo.url, "--force"], {
          env: { HERMES_FAULT_KILL_AT: String(n) },
        });
        if (r.signal !== "SIGKILL") break;
        if (!placing(probe)) continue;
        torn++;
        // The same kill, followed by each command that reads the plugins dir without being a `plugins` command.
        for (const next of [
          ["compile", "--json"],
          ["plugins", "chain", "--json"],
        ]) {
          const h = cloneHome(`torn-${n}-${next[0]}`);
          expect(
            (await hermes(ctx, h, ["install", repo.url, "--force"], { env: { HERMES_FAULT_KILL_AT: String(n) } }))
              .signal,
          ).toBe("SIGKILL");
          const res = await runCli(next, { home: h.home, env, timeoutMs: 120_000 });
          expect(res.code, res.stderr).toBe(0);
          expect(res.stderr).toContain("install of 'crashy' was interrupted and has been rolled back");
          expect(stagingLeftovers(h)).toEqual([]);
          expect(state(h)).toEqual(before);
          // What the lock says now is the tree that is there: the first revision, verified.
          const verify = await runCli(["lock", "verify", "--json"], { home: h.home, env });
          expect(verify.code, verify.stdout + verify.stderr).toBe(0);
        }
      }
      expect(torn).toBeGreaterThan(0);
    },
  );

  it("install --force, killed from outside at moments seen on disk and after varied delays", async () => {
    const before = state(cloneHome("timed-before"));
    const started = Date.now();
    const after = await finalState("timed", ["install", repo.url, "--force"]);
    const full = Date.now() - started;
    const staging = (h: Home) =>
      existsSync(h.plugins) ? readdirSync(h.plugins).filter((n) => n.startsWith(".install-")) : [];
    const journalPhase = (h: Home) => {
      for (const d of staging(h)) {
        try {
          return (JSON.parse(readFileSync(join(h.plugins, d, "journal.json"), "utf8")) as { phase: string }).phase;
        } catch {
          // being written
        }
      }
      return undefined;
    };
    const triggers: Array<[string, (h: Home, elapsed: number) => boolean]> = [
      ["staging dir created", (h) => staging(h).length > 0],
      ["clone under way", (h) => staging(h).some((d) => existsSync(join(h.plugins, d, "clone")))],
      ["tree staged", (h) => staging(h).some((d) => existsSync(join(h.plugins, d, "plugin")))],
      ["placement begun", (h) => journalPhase(h) === "placing"],
      ["old tree moved out", (h) => staging(h).some((d) => existsSync(join(h.plugins, d, "previous")))],
      ["metadata rewritten", (h) => existsSync(h.metadataFile) && readFileSync(h.metadataFile, "utf8").includes(v2)],
      ...[0.1, 0.3, 0.5, 0.7, 0.9].map((f): [string, (h: Home, elapsed: number) => boolean] => [
        `${f * 100}% of a run`,
        (_h, elapsed) => elapsed >= full * f,
      ]),
    ];
    const outcomes: string[] = [];
    for (const [label, when] of triggers) {
      const h = cloneHome(`timed-${outcomes.length}`);
      const t0 = Date.now();
      const { child, done: exited } = spawnCli(["plugins", "install", repo.url, "--force"], {
        home: h.home,
        env: { HERMES_BUNDLED_PLUGINS: ctx.bundled },
        ignoreOutput: true,
      });
      const closed = exited.then(({ code, signal }) => signal ?? `exit ${code}`);
      let done = false;
      void closed.then(() => (done = true));
      while (!done && !when(h, Date.now() - t0)) await new Promise((r) => setTimeout(r, 5));
      child.kill("SIGKILL");
      const how = await closed;
      await afterNextCommand(h);
      const got = state(h);
      const which =
        JSON.stringify(got) === JSON.stringify(before)
          ? "before"
          : JSON.stringify(got) === JSON.stringify(after)
            ? "after"
            : "TORN";
      outcomes.push(`${label} (${how}): ${which}`);
      expect(which, outcomes.join("\n")).not.toBe("TORN");
    }
    expect(outcomes.filter((o) => o.includes("SIGKILL")).length).toBeGreaterThan(3);
    console.log(`kill -9 outcomes:\n  ${outcomes.join("\n  ")}`);
  });
});
