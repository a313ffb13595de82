import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * End-to-end tests spawn dist/cli/main.js, so it must be built from the current sources.
 * HERMES_TEST_SKIP_BUILD=1 uses the dist/ already there (when it was just built by hand).
 */
export default function setup(): void {
  if (process.env.HERMES_TEST_SKIP_BUILD === "1") return;
  const root = fileURLToPath(new URL("..", import.meta.url));
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.json`], { stdio: "inherit" });
  execFileSync(process.execPath, [`${root}scripts/postbuild.mjs`], { stdio: "inherit" });
}
