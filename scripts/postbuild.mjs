// The CLI entry must be executable after `npm ci` so `npx hermes` and the bin link work.
import { chmodSync, existsSync } from "node:fs";
const entry = new URL("../dist/cli/main.js", import.meta.url);
if (existsSync(entry)) chmodSync(entry, 0o755);

await import("./precompile-schemas.mjs");
