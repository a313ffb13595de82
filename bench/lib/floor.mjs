// A floor beside a row: the least any Node program does for the same job, run as its own process —
// start, then `stat` (lstat) or `hash` (read + sha256) every path of a NUL-separated list. A kit row
// whose goal is below its floor's ratio cannot meet it by removing overhead; the report shows both.
import { createHash } from "node:crypto";
import { lstatSync, readFileSync } from "node:fs";

const [mode, list] = process.argv.slice(2);
const paths = readFileSync(list, "utf8").split("\0").filter(Boolean);
if (mode === "stat") for (const p of paths) lstatSync(p, { throwIfNoEntry: false });
else if (mode === "hash") for (const p of paths) createHash("sha256").update(readFileSync(p)).digest("hex");
else throw new Error(`floor.mjs: mode is stat or hash, not ${mode}`);
