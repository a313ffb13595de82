import { scanEventHooks } from "../compile/event-hooks.js";
import { IntegrityCache } from "../compile/integrity-cache.js";
import { loadConfig } from "../config/config-file.js";
import { readShellHooks } from "../config/shell-hooks.js";
import { readLock, type LockEventHook } from "../contracts/lock.js";
import type { HomePaths } from "../core/paths.js";

/** One shell hook of config.yaml as `hermes hooks list` shows it. */
export interface ShellHookRow {
  hook: string;
  owner: string;
  command: string;
  matcher: string | null;
  timeout: number;
}

/**
 * One gateway event hook: `locked` when the lock holds it with the integrity its folder has now,
 * `changed` when the folder changed since (hermes serve refuses it), `not-compiled` when the lock lacks it.
 */
export interface EventHookRow extends Omit<LockEventHook, "integrity"> {
  integrity: string | null;
  state: "locked" | "changed" | "not-compiled";
}

export interface HooksListing {
  shell: ShellHookRow[];
  event: EventHookRow[];
  /** Why entries are not run or not loaded (W_SHELL_HOOK_SKIPPED, W_EVENT_HOOK_SKIPPED). */
  warnings: string[];
}

/** `hermes hooks list`: the config's shell hooks and the event hooks on disk and in the lock. */
export async function listHooks(paths: HomePaths): Promise<HooksListing> {
  const config = (await loadConfig(paths.config, { schema: false })).value;
  const shell = readShellHooks(config);
  const lock = await readLock(paths.lock).catch(() => undefined);
  const locked = lock?.event_hooks ?? [];
  // The spec's folders are known from the lock: hooks list never reads a deploy spec.
  const specDirs = locked.filter((h) => h.source === "spec").map((h) => h.path);
  const scan = await scanEventHooks(paths.home, specDirs, await IntegrityCache.open(paths.cache));
  const event: EventHookRow[] = scan.hooks.map((h) => {
    const l = locked.find((x) => x.name === h.name && x.path === h.path);
    return { ...h, state: !l ? "not-compiled" : l.integrity === h.integrity ? "locked" : "changed" };
  });
  for (const l of locked)
    if (!event.some((e) => e.name === l.name)) event.push({ ...l, integrity: null, state: "changed" });
  return {
    shell: shell.entries.map((e) => ({
      hook: e.hook,
      owner: `shell:${e.index}`,
      command: e.command,
      matcher: e.matcher?.source ?? null,
      timeout: e.timeoutSeconds,
    })),
    event,
    warnings: [...shell.problems, ...scan.diagnostics].map((d) => `${d.code}: ${d.message}`),
  };
}
