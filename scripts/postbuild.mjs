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

// `hermes --help` printed from this text skips loading commander and the command table (src/cli/main.ts);
// it is written by the same build, from the same command table, so it cannot be out of date.
{
  const { execFileSync } = await import("node:child_process");
  const helpFile = fileURLToPath(new URL("../dist/cli/root-help.txt", import.meta.url));
  rmSync(helpFile, { force: true });
  const text = execFileSync(process.execPath, [fileURLToPath(entry), "help"], {
    encoding: "utf8",
    env: { ...process.env, HERMES_LOG_LEVEL: "" },
  });
  const { writeFileSync } = await import("node:fs");
  writeFileSync(helpFile, text);
}
