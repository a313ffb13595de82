import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** End-to-end tests spawn dist/cli/main.js, so it must be built from the current sources. */
export default function setup(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.json`], { stdio: "inherit" });
  execFileSync(process.execPath, [`${root}scripts/postbuild.mjs`], { stdio: "inherit" });
}
