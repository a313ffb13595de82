import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";
import { cleanupTemp, tempDir } from "../support/home.js";

afterAll(cleanupTemp);

/**
 * Kill `hermes compile` at every fault point of apply (HERMES_FAULT_KILL_AT) and at many random
 * moments (SIGKILL after varied delays): the home must then hold exactly the previous generation
 * or the new one — lock and resolving links together — and a rerun must converge on the state a
 * clean run produces.
 */
interface HomeState {
  lock: string | null;
  links: Record<string, string>;
  config: string;
}

/** Homes are copies at different paths: compare with the home's own path written as $HOME. */
function norm(text: string, home: string): string {
  return [home, base].filter(Boolean).reduce((t, p) => t.split(p).join("$HOME"), text);
}

function readState(home: string): HomeState {
  let lock: string | null = null;
  try {
    lock = norm(readFileSync(join(home, "hermes.lock.json"), "utf8"), home)
      .replace(/"inputs_hash": "[^"]+"/, "")
      .replace(/"checksum": "[^"]+"/, "");
  } catch {
    lock = null;
  }
  const links: Record<string, string> = {};
  const dir = join(home, "plugins");
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    if (!name.startsWith("nix-managed-") || !lstatSync(join(dir, name)).isSymbolicLink()) continue;
    try {
      links[name] = norm(realpathSync(join(dir, name)), home);
    } catch {
      // dangling: not part of the effective state
    }
  }
  return { lock, links, config: norm(readFileSync(join(home, "config.yaml"), "utf8"), home) };
}

function leftovers(home: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.endsWith(".tmp") || e.name.endsWith(".lock")) out.push(join(d, e.name));
      if (e.isDirectory() && !e.isSymbolicLink() && e.name !== "links") walk(join(d, e.name));
    }
  };
  walk(home);
  return out;
}

function runCompile(home: string, spec: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, "--home", home, "compile", "--spec", spec, "--managed", "nixos"], {
    env: { ...process.env, HERMES_BUNDLED_PLUGINS: join(home, "..", "bundled"), ...env },
    encoding: "utf8",
  });
}

let root: string;
let base: string;
let specNew: string;
let specOld: string;
let oldState: HomeState;
let newState: HomeState;

function plugin(dir: string, name: string, body: string) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plugin.yaml"), `name: ${name}\nversion: "1"\n`);
  writeFileSync(join(dir, "index.js"), `export function register(ctx) { /* ${body} */ }\n`);
}

function freshHome(tag: string): string {
  const dir = join(root, `run-${tag}`);
  cpSync(base, join(dir, "home"), { recursive: true, verbatimSymlinks: true });
  mkdirSync(join(dir, "bundled"), { recursive: true });
  return join(dir, "home");
}

/** Like freshHome, but compiled in place: its lock names its own paths, so a runtime can start on it. */
function compiledHome(tag: string): string {
  const home = join(root, `run-${tag}`, "home");
  mkdirSync(join(root, `run-${tag}`, "bundled"), { recursive: true });
  cpSync(join(base, "config.yaml"), join(home, "config.yaml"));
  cpSync(join(base, "plugins", "handmade"), join(home, "plugins", "handmade"), { recursive: true });
  // The base's config was rewritten by its compile; start again from the hand-written one.
  writeFileSync(join(home, "config.yaml"), "# hand-written\nmodel:\n  default: mine  # keep me\n");
  const r = runCompile(home, specOld);
  expect(r.status, r.stderr).toBe(0);
  return home;
}

function expectOldOrNew(home: string, label: string) {
  const s = readState(home);
  const isOld = s.lock === oldState.lock && JSON.stringify(s.links) === JSON.stringify(oldState.links);
  const isNew = s.lock === newState.lock && JSON.stringify(s.links) === JSON.stringify(newState.links);
  expect(isOld || isNew, `${label}: lock+links are a mix\n${JSON.stringify(s.links)}`).toBe(true);
  expect([oldState.config, newState.config], `${label}: config.yaml is neither old nor new`).toContain(s.config);
  // config.yaml is written before the switch, so a new generation never sits on an old config.
  if (isNew) expect(s.config, label).toBe(newState.config);
}

/**
 * The runtime starts on what a kill left, or refuses with the one thing to do: re-run the same
 * spec (never a stale-lock error naming the previous spec).
 */
function expectStartableOrRerun(home: string, label: string) {
  const r = spawnSync(process.execPath, [CLI, "--home", home, "plugins", "chain"], {
    env: { ...process.env, HERMES_BUNDLED_PLUGINS: join(home, "..", "bundled") },
    encoding: "utf8",
  });
  if (r.status === 0) return;
  expect(r.stderr, `${label}: start refused without naming the compile to re-run`).toContain("E_COMPILE_INTERRUPTED");
  expect(r.stderr, label).toContain(`re-run that same compile: \`hermes compile --spec ${specNew} --managed nixos\``);
}

function expectConverges(home: string, spec: string, label: string) {
  const r = runCompile(home, spec);
  expect(r.status, `${label}: rerun failed\n${r.stderr}`).toBe(0);
  const s = readState(home);
  expect(s.lock, `${label}: rerun lock`).toBe(newState.lock);
  expect(s.links, `${label}: rerun links`).toEqual(newState.links);
  expect(s.config, `${label}: rerun config`).toBe(newState.config);
  expect(leftovers(home), `${label}: leftovers`).toEqual([]);
}

beforeAll(() => {
  root = tempDir("hk-crash-");
  const store = join(root, "store");
  plugin(join(store, "alpha-1"), "alpha", "one");
  plugin(join(store, "alpha-2"), "alpha", "two");
  plugin(join(store, "beta"), "beta", "b");
  plugin(join(store, "gamma"), "gamma", "g");
  plugin(join(store, "delta"), "delta", "d");
  specOld = join(root, "spec-old.yaml");
  specNew = join(root, "spec-new.yaml");
  writeFileSync(
    specOld,
    `plugins:\n  - path: ${store}/alpha-1\n  - path: ${store}/beta\nsettings:\n  model: {default: one}\n`,
  );
  writeFileSync(
    specNew,
    `plugins:\n  - path: ${store}/alpha-2\n  - path: ${store}/gamma\n  - path: ${store}/delta\nsettings:\n  ` +
      "model: {default: two}\n  plugins: {hook_callback_timeout: 5}\n",
  );
  base = join(root, "base", "home");
  mkdirSync(base, { recursive: true });
  mkdirSync(join(root, "base", "bundled"));
  writeFileSync(join(base, "config.yaml"), "# hand-written\nmodel:\n  default: mine  # keep me\n");
  plugin(join(base, "plugins", "handmade"), "handmade", "h");
  const first = runCompile(base, specOld);
  expect(first.status, first.stderr).toBe(0);
  oldState = readState(freshHome("old"));
  const ref = freshHome("reference");
  const second = runCompile(ref, specNew);
  expect(second.status, second.stderr).toBe(0);
  newState = readState(ref);
  expect(newState.lock).not.toBe(oldState.lock);
  expect(Object.keys(newState.links).sort()).toEqual(["nix-managed-alpha", "nix-managed-delta", "nix-managed-gamma"]);
}, 60_000);

describe("compile survives SIGKILL at any point of apply", () => {
  it("at every fault point (injected failure after each fs step)", () => {
    let killed = 0;
    for (let k = 1; k < 200; k++) {
      const home = compiledHome(`fault-${k}`);
      const r = runCompile(home, specNew, { HERMES_FAULT_KILL_AT: String(k) });
      if (r.signal !== "SIGKILL") {
        expect(r.status, r.stderr).toBe(0);
        expect(readState(home)).toEqual(newState);
        break;
      }
      killed++;
      expectOldOrNew(home, `fault point ${k}`);
      expectStartableOrRerun(home, `fault point ${k}`);
      expectConverges(home, specNew, `fault point ${k}`);
    }
    console.log(`killed at ${killed} distinct fault points; each left the old or new generation and converged`);
    expect(killed).toBeGreaterThan(10);
  }, 300_000);

  it("at 50 random moments (SIGKILL after varied delays)", async () => {
    const t0 = Date.now();
    runCompile(freshHome("timing"), specNew);
    const span = Math.max(200, Date.now() - t0);
    const outcomes = { old: 0, new: 0 };
    for (let i = 0; i < 50; i++) {
      const home = freshHome(`random-${i}`);
      const delay = Math.round((span * 1.2 * i) / 50);
      await new Promise<void>((resolve) => {
        const child = spawn(
          process.execPath,
          [CLI, "--home", home, "compile", "--spec", specNew, "--managed", "nixos"],
          {
            env: { ...process.env, HERMES_BUNDLED_PLUGINS: join(home, "..", "bundled") },
            stdio: "ignore",
          },
        );
        const timer = setTimeout(() => child.kill("SIGKILL"), delay);
        child.on("exit", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      expectOldOrNew(home, `random kill after ${delay} ms`);
      outcomes[readState(home).lock === newState.lock ? "new" : "old"]++;
      expectConverges(home, specNew, `random kill after ${delay} ms`);
    }
    console.log(`random kills: ${outcomes.old} left the old generation, ${outcomes.new} the new one`);
  }, 300_000);
});
