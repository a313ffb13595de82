import { join } from "node:path";
import { readTextIfExists, writeFileAtomic } from "../core/atomic-fs.js";
import { withFileLock } from "../core/file-lock.js";
import type { HomePaths } from "../core/paths.js";
import type { Io } from "../consent/flow.js";

/**
 * `$HERMES_HOME/.env`: `NAME=value` lines (an `export ` prefix and quotes are read). Values
 * asked for at install are appended or replaced in place; the file stays private (0600).
 */

const LINE_RE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/;

export async function envFileNames(file: string): Promise<Set<string>> {
  const text = (await readTextIfExists(file).catch(() => undefined)) ?? "";
  const names = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const m = LINE_RE.exec(line);
    if (m && !line.trimStart().startsWith("#")) names.add(m[1]!);
  }
  return names;
}

function quote(value: string): string {
  if (/^[A-Za-z0-9_./:@+-]*$/.test(value)) return value;
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\$/g, "\\$")}"`;
}

export async function setEnvValue(file: string, name: string, value: string): Promise<void> {
  await withFileLock(file, async () => {
    const text = (await readTextIfExists(file)) ?? "";
    const lines = text.length ? text.replace(/\n$/, "").split("\n") : [];
    const entry = `${name}=${quote(value)}`;
    const i = lines.findIndex((l) => LINE_RE.exec(l)?.[1] === name && !l.trimStart().startsWith("#"));
    if (i >= 0) lines[i] = entry;
    else lines.push(entry);
    await writeFileAtomic(file, `${lines.join("\n")}\n`, { mode: 0o600 });
  });
}

/** An environment variable a plugin declares (`requires_env`). */
export interface EnvVarSpec {
  name: string;
  description?: string;
  url?: string;
  secret?: boolean;
}

/**
 * Ask for the declared variables set neither in `<home>/.env` nor in the environment, saving each
 * answer to `.env`; without a terminal, list them instead. Returns the names still unset.
 */
export async function promptEnv(
  o: { paths: HomePaths; io: Io; env?: NodeJS.ProcessEnv },
  name: string,
  vars: readonly EnvVarSpec[],
): Promise<string[]> {
  const envFile = join(o.paths.home, ".env");
  const have = await envFileNames(envFile);
  const env = o.env ?? process.env;
  const missing = vars.filter((e) => e.name && !have.has(e.name) && !env[e.name]);
  if (!missing.length) return [];
  const io = o.io;
  if (!io.interactive) {
    io.out(`${name} requires environment variables that are not set:`);
    for (const e of missing)
      io.out(`  ${e.name}${e.description ? ` — ${e.description}` : ""}${e.url ? ` (get it at ${e.url})` : ""}`);
    io.out(`Set them in ${envFile} (no terminal: not asked).`);
    return missing.map((e) => e.name);
  }
  io.out(`\n${name} requires the following environment variables:\n`);
  const left: string[] = [];
  for (let i = 0; i < missing.length; i++) {
    const e = missing[i]!;
    io.out(`  ${e.name}${e.description ? ` — ${e.description}` : ""}`);
    if (e.url) io.out(`  Get yours at: ${e.url}`);
    const v = await io.ask(`  ${e.name}: `, { secret: e.secret === true });
    if (v === null) {
      left.push(...missing.slice(i).map((m) => m.name));
      io.out(`  Skipped the remaining variables (set them in ${envFile} later)`);
      break;
    }
    if (!v.trim()) {
      left.push(e.name);
      io.out(`  Skipped (set ${e.name} in ${envFile} later)`);
      continue;
    }
    await setEnvValue(envFile, e.name, v);
    io.out(`  ✓ Saved to ${envFile}`);
  }
  return left;
}
