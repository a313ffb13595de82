import type { HookName } from "../contracts/hook-catalog.js";
import type { HookBus } from "../runtime/hooks.js";
import type { TimelineSink } from "./timeline.js";

/**
 * Every hook the agent fires goes through here, so the timeline shows each fire site in order,
 * with its owners, whether or not any plugin listens. With no callbacks nothing is copied or awaited.
 */
export class HookSite {
  constructor(
    private readonly hooks: HookBus,
    private readonly emit: TimelineSink,
  ) {}

  has(name: HookName): boolean {
    return this.hooks.has(name);
  }

  async fire(name: HookName, payload: Record<string, unknown>, detail?: string): Promise<unknown[]> {
    const owners = this.hooks.owners(name);
    this.emit({ type: "hook", name, owners, ...(detail ? { detail } : {}) });
    if (!owners.length) return [];
    return this.hooks.invoke(name, payload);
  }
}
