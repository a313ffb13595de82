// The CLI entry must be executable after `npm ci` so `npx hermes` and the bin link work.
import { chmodSync, existsSync, readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
const entry = new URL("../dist/cli/main.js", import.meta.url);
if (existsSync(entry)) chmodSync(entry, 0o755);

// No source maps are built (src/ is not shipped); maps left by an older build would point at nothing.
const dist = fileURLToPath(new URL("../dist/", import.meta.url));
if (existsSync(dist)) {
  for (const f of readdirSync(dist, { recursive: true, encoding: "utf8" }))
    if (f.endsWith(".map")) rmSync(`${dist}${f}`);
}

await import("./precompile-schemas.mjs");
