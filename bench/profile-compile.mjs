#!/usr/bin/env node
// Where does a compile of N plugins spend its time? Not a benchmark (run.mjs skips it): a driver
// that times the phases of `compile()` one by one from their exported pieces, on a fresh
// synthetic home, for a cold compile and then for a no-op recompile.
//
//   node bench/profile-compile.mjs [N=1000]
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile-compile.mjs 1000   # plus a CPU profile
//
// The apply steps mirror `applyPlan` in src/compile/compile.ts (not exported; the stale-temp sweep
// before it is left out); keep them in step when apply changes.
import { createHash } from "node:crypto";
import { createReadStream, promises as fsp } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../dist/compile/compile.js";
import { gatherInputs } from "../dist/compile/gather.js";
import {
  assertLinkSlotsFree,
  currentGeneration,
  pruneGenerations,
  registerGcRoots,
  removeLinks,
  switchTo,
  syncLinks,
  writeGeneration,
} from "../dist/compile/generations.js";
import { IntegrityCache } from "../dist/compile/integrity-cache.js";
import { parseLockText, readLock, serializeLock } from "../dist/contracts/lock.js";
import { planCompile } from "../dist/compile/plan.js";
import { fingerprint, hashTree, listTree } from "../dist/compile/tree-hash.js";
import { verifyLock } from "../dist/compile/verify.js";
import { migrateEnabledList } from "../dist/discovery/migrate.js";
import { homePaths } from "../dist/core/paths.js";
import { discover } from "../dist/discovery/discover.js";
import { freshCopy, makeTemplateHome } from "./lib/synthetic-home.mjs";

const N = Number(process.argv[2] ?? 1000);
const root = await fsp.mkdtemp(join(tmpdir(), "hermes-profile-compile-"));
const bundled = join(root, "bundled-empty");
await fsp.mkdir(bundled);
const envFor = (home) => {
  const env = { ...process.env, HERMES_HOME: home, HERMES_BUNDLED_PLUGINS: bundled, HERMES_LOG_LEVEL: "silent" };
  delete env.HERMES_ENABLE_PROJECT_PLUGINS;
  return env;
};

const rows = [];
async function phase(name, fn) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const value = await fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.cpuUsage(c0);
  rows.push([name, wall, (c.user + c.system) / 1000]);
  return value;
}
const section = (name) => rows.push([`-- ${name}`]);

/** Run `fn` over `items` with the same bounded concurrency (8) as gatherInputs. */
async function pool(items, fn, width = 8) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let x = queue.shift(); x; x = queue.shift()) await fn(x);
    }),
  );
}

async function fileShaStream(p) {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(p)) h.update(chunk);
  return h.digest("hex");
}
const fileShaRead = async (p) =>
  createHash("sha256")
    .update(await fsp.readFile(p))
    .digest("hex");

try {
  const template = await makeTemplateHome(root, N);
  // Warm-up (module loading, schema compilation) on a small home.
  const warm = await makeTemplateHome(join(root, "warm"), 1);
  await compile({ home: warm, env: envFor(warm), cwd: root });

  // ---- the whole thing, for reference
  section(`N=${N}: compile() end to end`);
  const homeA = await freshCopy(root, template);
  await phase("compile() cold", () => compile({ home: homeA, env: envFor(homeA), cwd: root }));
  await phase("compile() no-op", () => compile({ home: homeA, env: envFor(homeA), cwd: root }));

  // ---- cold compile, phase by phase
  section("cold compile, by phase");
  const home = await freshCopy(root, template);
  const paths = homePaths(home);
  const env = envFor(home);
  await phase("migrateEnabledList (config lock + parse)", () => migrateEnabledList(home, env));
  const inputs = await phase("gatherInputs (total)", () => gatherInputs({ home, env, cwd: root }));
  const plan = await phase("planCompile", () => planCompile(inputs));
  await phase("apply: assertLinkSlotsFree + currentGeneration", async () => {
    await assertLinkSlotsFree(paths, plan.links);
    return currentGeneration(paths);
  });
  const gen = await phase(
    `apply: writeGeneration (lock ${(plan.lockText.length / 1024).toFixed(0)} KiB, ` +
      `files.json ${(JSON.stringify(plan.files).length / 1024).toFixed(0)} KiB)`,
    () =>
      writeGeneration(
        paths,
        plan.lockText,
        plan.links,
        plan.declared,
        { created_at: new Date().toISOString(), reason: "compile", spec: null, kind: null },
        plan.files,
      ),
  );
  await phase("apply: gc roots, links, switch, prune", async () => {
    await registerGcRoots(paths, gen, plan.links);
    await syncLinks(paths, plan.links);
    await switchTo(paths, gen);
    await removeLinks(paths, []);
    await pruneGenerations(paths);
  });
  await phase("integrity cache save", () => inputs.cache.save());

  // ---- inside gatherInputs (each on its own; the OS cache is warm from the run above)
  section("inside gatherInputs, cold (fresh copy, empty cache)");
  const homeB = await freshCopy(root, template);
  const pathsB = homePaths(homeB);
  const disc = await phase("discover (scan + parse + validate manifests)", () =>
    discover({ home: homeB, env: envFor(homeB), cwd: root }),
  );
  const reals = disc.resolution.winners.map((c) => c.realPath);
  const lists = new Map();
  await phase("listTree x N (readdir + lstat + realpath)", () =>
    pool(reals, async (r) => lists.set(r, await listTree(r))),
  );
  await phase("fingerprint x N", () => {
    for (const r of reals) fingerprint(lists.get(r));
  });
  await phase("hashTree x N (as shipped: stream per file)", () => pool(reals, (r) => hashTree(r, lists.get(r))));
  const files = reals.flatMap((r) =>
    lists
      .get(r)
      .filter((e) => e.type === "file")
      .map((e) => join(r, e.rel)),
  );
  await phase(`  sha256 of ${files.length} files, createReadStream`, () => pool(files, fileShaStream));
  await phase(`  sha256 of ${files.length} files, fsp.readFile`, () => pool(files, fileShaRead));
  await phase(`  sha256 of ${files.length} files, fsp.readFile, 64 wide`, () => pool(files, fileShaRead, 64));
  const cacheB = await IntegrityCache.open(pathsB.cache);
  await phase("IntegrityCache.integrity x N (list + hash)", () => pool(reals, (r) => cacheB.integrity(r)));

  // ---- no-op recompile, phase by phase
  section("no-op recompile, by phase (home compiled above)");
  await phase("migrateEnabledList", () => migrateEnabledList(home, env));
  const lockText = await fsp.readFile(paths.lock, "utf8");
  await phase(`  readFile lock (${(lockText.length / 1024).toFixed(0)} KiB)`, () => fsp.readFile(paths.lock, "utf8"));
  await phase("  readLock (JSON.parse + schema validation)", () => readLock(paths.lock));
  await phase("  JSON.parse lock only", () => JSON.parse(lockText));
  await phase("  IntegrityCache.open", () => IntegrityCache.open(paths.cache));
  await phase("  discover", () => discover({ home, env, cwd: root }));
  await phase("  listTree x N (the stat fingerprint walk)", () =>
    pool(
      reals.map((r) => r.replace(homeB, home)),
      (r) => listTree(r),
    ),
  );
  const inputs2 = await phase("gatherInputs (total)", () => gatherInputs({ home, env, cwd: root }));
  const plan2 = await phase("planCompile", () => planCompile(inputs2));
  await phase("  serializeLock", () => serializeLock(plan2.lock));
  await phase("  parseLockText (schema validation of the new lock)", () => parseLockText(plan2.lockText, paths.lock));
  if (plan2.changed) console.log("warning: the no-op plan has changes", plan2.pluginChanges.slice(0, 3));
  await phase("integrity cache save (not dirty)", () => inputs2.cache.save());

  section("verifyLock");
  await phase("verifyLock", () => verifyLock(paths));
} finally {
  await fsp.rm(root, { recursive: true, force: true });
}

const w = Math.max(...rows.map((r) => r[0].length));
console.log(`${"phase".padEnd(w)}  ${"wall ms".padStart(9)}  ${"cpu ms".padStart(9)}`);
for (const [name, wall, cpu] of rows) {
  if (wall === undefined) console.log(`\n${name}`);
  else console.log(`${name.padEnd(w)}  ${wall.toFixed(1).padStart(9)}  ${cpu.toFixed(1).padStart(9)}`);
}
