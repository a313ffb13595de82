import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Logger } from "pino";
import type { LockEventHook } from "../contracts/lock.js";

type Handle = (eventType: string, context: Record<string, unknown>) => unknown;

interface Loaded {
  hook: LockEventHook;
  handle: Handle;
}

/** `command:*` subscribes to every `command:` event; any other name matches itself only. */
export function eventMatches(subscribed: string, event: string): boolean {
  return subscribed.endsWith(":*") ? event.startsWith(subscribed.slice(0, -1)) : subscribed === event;
}

/**
 * The gateway event hooks a lock names, loaded once per lock: a folder that no longer hashes to its
 * locked integrity is refused (E_EVENT_HOOK_TAMPERED), as a tampered plugin is. Handlers run in name
 * order; whatever one throws is logged and never reaches the turn.
 */
export class GatewayEventHooks {
  private constructor(
    private readonly loaded: Loaded[],
    private readonly log: Logger,
  ) {}

  /** `integrityOf` hashes a folder as compile does (the gateway layer does not import compile). */
  static async load(
    hooks: readonly LockEventHook[],
    log: Logger,
    integrityOf: (dir: string) => Promise<string>,
  ): Promise<GatewayEventHooks> {
    const loaded: Loaded[] = [];
    for (const hook of hooks) {
      try {
        if ((await integrityOf(hook.path)) !== hook.integrity) {
          log.error(
            { code: "E_EVENT_HOOK_TAMPERED", hook: hook.name },
            `event hook ${hook.name} (${hook.path}) changed after the lock was compiled; not loaded ` +
              "(run hermes compile)",
          );
          continue;
        }
        // The integrity in the URL makes a recompiled handler a new module rather than the cached one.
        const url = `${pathToFileURL(join(hook.path, hook.handler)).href}?v=${hook.integrity.slice(-12)}`;
        const mod = (await import(url)) as { handle?: unknown; default?: { handle?: unknown } };
        const handle = typeof mod.handle === "function" ? mod.handle : mod.default?.handle;
        if (typeof handle !== "function") throw new Error(`${hook.handler} exports no handle() function`);
        loaded.push({ hook, handle: handle as Handle });
      } catch (e) {
        log.error(
          { code: "W_EVENT_HOOK_SKIPPED", hook: hook.name },
          `event hook ${hook.name} did not load: ${(e as Error).message}`,
        );
      }
    }
    return new GatewayEventHooks(loaded, log);
  }

  names(): string[] {
    return this.loaded.map((l) => l.hook.name);
  }

  /** Run every handler subscribed to `event`, awaited in turn; failures are logged only. */
  async emit(event: string, context: Record<string, unknown>): Promise<void> {
    for (const { hook, handle } of this.loaded) {
      if (!hook.events.some((s) => eventMatches(s, event))) continue;
      try {
        await handle(event, { ...context });
      } catch (e) {
        this.log.error(
          { hook: hook.name, event },
          `event hook ${hook.name} failed on ${event}: ${(e as Error)?.message ?? String(e)}`,
        );
      }
    }
  }
}
