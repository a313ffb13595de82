import { existsSync, promises as fsp, readFileSync, realpathSync } from "node:fs";
import { basename, join } from "node:path";
import type { LockEventHook } from "../contracts/lock.js";
import { diagnostic, type Diagnostic } from "../core/errors.js";
import { SourceDoc } from "../core/yaml-source.js";
import type { IntegrityCache } from "./integrity-cache.js";

/** Handler module names, in the order a folder is searched. */
const HANDLERS = ["handler.js", "handler.mjs"] as const;

export interface EventHookScan {
  hooks: LockEventHook[];
  diagnostics: Diagnostic[];
  /** Folders and files read, for the no-op check (an edited handler or HOOK.yaml recompiles). */
  watch: { dirs: string[]; files: string[] };
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** One folder: HOOK.yaml with a non-empty `events` list and a handler module, or why it is skipped. */
async function readEventHook(
  dir: string,
  source: LockEventHook["source"],
  cache: IntegrityCache,
): Promise<LockEventHook | string | undefined> {
  const yamlFile = join(dir, "HOOK.yaml");
  const handler = HANDLERS.find((h) => existsSync(join(dir, h)));
  // As in the original, a folder without both files is not a hook and is passed over quietly.
  if (!existsSync(yamlFile) || !handler) return source === "spec" ? "needs HOOK.yaml and handler.js" : undefined;
  const doc = new SourceDoc(readFileSync(yamlFile, "utf8"), yamlFile);
  if (!doc.ok || !isMapping(doc.value)) return "HOOK.yaml is not a YAML mapping";
  const m = doc.value;
  const events = Array.isArray(m.events) ? m.events.filter((e): e is string => typeof e === "string" && !!e) : [];
  if (!events.length) return "HOOK.yaml has no `events` list";
  const real = realpathSync(dir);
  const { integrity } = await cache.integrity(real);
  return {
    name: typeof m.name === "string" && m.name.trim() ? m.name.trim() : basename(dir),
    path: real,
    handler,
    events: [...new Set(events)].sort(),
    description: typeof m.description === "string" ? m.description : "",
    integrity,
    source,
  };
}

/**
 * The gateway event hooks of a home: every folder of `<home>/hooks/`, then the folders the deploy spec
 * declares. A folder that is not a usable hook is skipped with W_EVENT_HOOK_SKIPPED; a second hook of
 * one name is skipped too, so the lock never holds two.
 */
export async function scanEventHooks(
  home: string,
  specDirs: readonly string[],
  cache: IntegrityCache,
): Promise<EventHookScan> {
  const root = join(home, "hooks");
  const scan: EventHookScan = { hooks: [], diagnostics: [], watch: { dirs: [], files: [] } };
  const entries = await fsp.readdir(root, { withFileTypes: true }).catch(() => []);
  // Watched even when absent (recorded as such): a hooks/ folder made later must recompile.
  scan.watch.dirs.push(root);
  const dirs: Array<[string, LockEventHook["source"]]> = [
    ...entries
      .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && !e.name.startsWith("."))
      .map((e) => [join(root, e.name), "home"] as [string, LockEventHook["source"]])
      .sort(([a], [b]) => (a < b ? -1 : 1)),
    ...specDirs.map((d) => [d, "spec"] as [string, LockEventHook["source"]]),
  ];
  for (const [dir, source] of dirs) {
    scan.watch.dirs.push(dir);
    for (const f of ["HOOK.yaml", ...HANDLERS]) if (existsSync(join(dir, f))) scan.watch.files.push(join(dir, f));
    let hook: LockEventHook | string | undefined;
    try {
      hook = await readEventHook(dir, source, cache);
    } catch (e) {
      hook = (e as Error).message;
    }
    if (hook === undefined) continue;
    const found = hook;
    if (typeof found !== "string" && scan.hooks.some((h) => h.name === found.name))
      hook = `another event hook is already named '${found.name}'`;
    if (typeof hook === "string") {
      scan.diagnostics.push(diagnostic("W_EVENT_HOOK_SKIPPED", `event hook ${dir}: ${hook}; skipped`, { file: dir }));
      continue;
    }
    scan.hooks.push(hook);
  }
  scan.hooks.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scan;
}
