import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * End-to-end tests spawn dist/cli/main.js, so it must be built from the current sources.
 *
 * A successful build here leaves dist/.test-build-stamp; while no input of the build (src/, schemas/,
 * the build scripts, tsconfig.json, package.json) is newer than that stamp, the next run uses dist/ as
 * it is (a rebuild takes a while on 2 cores, and each suite would redo it). A build that failed leaves
 * no stamp, so the next run builds again. HERMES_TEST_SKIP_BUILD=1 always uses the dist/ already there
 * (when it was just built by hand); HERMES_TEST_BUILD=1 always builds.
 */
export default function setup(): void {
  if (process.env.HERMES_TEST_SKIP_BUILD === "1") return;
  const root = fileURLToPath(new URL("..", import.meta.url));
  const stamp = join(root, "dist", ".test-build-stamp");
  if (process.env.HERMES_TEST_BUILD !== "1" && existsSync(stamp) && newestInput(root) < statSync(stamp).mtimeMs) return;
  const started = Date.now();
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.json`], {
    stdio: "inherit",
  });
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.types.json`], {
    stdio: "inherit",
  });
  execFileSync(process.execPath, [`${root}scripts/postbuild.mjs`], { stdio: "inherit" });
  writeFileSync(stamp, `built by test/global-setup.ts at ${new Date(started).toISOString()}\n`);
  // The stamp carries the time the build started: a source saved during the build is newer, so the next run builds
  // again.
  utimesSync(stamp, new Date(started), new Date(started));
}

/** The newest modification time among the build's inputs (folders too: a deleted file changes its folder). */
function newestInput(root: string): number {
  let newest = 0;
  const visit = (p: string) => {
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name));
  };
  for (const p of ["src", "schemas", "scripts", "tsconfig.json", "tsconfig.types.json", "package.json"])
    visit(join(root, p));
  return newest;
}
