import { readTextIfExists, writeFileAtomic } from "../core/atomic-fs.js";
import { withFileLock } from "../core/file-lock.js";

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
