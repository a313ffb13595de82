import type { Logger } from "pino";

/**
 * Every registration a plugin makes is a handle in its ledger. Disposal runs in
 * reverse order, is idempotent, and never throws: a failed `register()` leaves nothing callable.
 */
export interface Registration {
  readonly kind: string;
  readonly key: string;
  readonly plugin_key: string;
  readonly persistent: boolean;
  readonly active: boolean;
  dispose(): void;
}

export class RegistrationHandle implements Registration {
  private live = true;
  constructor(
    readonly kind: string,
    readonly key: string,
    readonly plugin_key: string,
    private readonly release: () => void,
    readonly persistent = false,
  ) {}

  get active(): boolean {
    return this.live;
  }

  dispose(): void {
    if (!this.live) return;
    this.live = false;
    this.release();
  }
}

export class Ledger {
  private readonly byPlugin = new Map<string, Registration[]>();

  constructor(private readonly log: Logger) {}

  add<R extends Registration>(r: R): R {
    const list = this.byPlugin.get(r.plugin_key) ?? [];
    list.push(r);
    this.byPlugin.set(r.plugin_key, list);
    return r;
  }

  of(pluginKey: string): readonly Registration[] {
    return this.byPlugin.get(pluginKey) ?? [];
  }

  /** Dispose a plugin's registrations newest first; errors are logged, never thrown. */
  disposePlugin(pluginKey: string): number {
    const list = this.byPlugin.get(pluginKey) ?? [];
    this.byPlugin.delete(pluginKey);
    for (let i = list.length - 1; i >= 0; i--) {
      try {
        list[i]!.dispose();
      } catch (e) {
        this.log.warn(
          { plugin: pluginKey, kind: list[i]!.kind, key: list[i]!.key, err: (e as Error).message },
          "disposing a registration failed",
        );
      }
    }
    return list.length;
  }

  plugins(): string[] {
    return [...this.byPlugin.keys()];
  }
}

/**
 * A named slot that a later registration may take over. Restore is identity-conditional: a
 * registration puts back what it displaced only while it is still the current holder, so a later
 * owner's entry is never clobbered by an earlier plugin's unload. Each slot keeps its holders as a
 * stack of leases: releasing a lease that is no longer current just removes it, so a plugin that
 * was unloaded earlier is never "restored" when the later holder goes.
 */
export class SlotMap<T> {
  private readonly slots = new Map<string, Array<{ value: T }>>();

  get(name: string): T | undefined {
    const stack = this.slots.get(name);
    return stack?.[stack.length - 1]?.value;
  }

  has(name: string): boolean {
    return this.slots.has(name);
  }

  entries(): Array<[string, T]> {
    return [...this.slots.entries()].map(([k, stack]) => [k, stack[stack.length - 1]!.value]);
  }

  values(): T[] {
    return [...this.slots.values()].map((stack) => stack[stack.length - 1]!.value);
  }

  /** Put `value` in the slot; the returned function restores the displaced entry (if still current). */
  lease(name: string, value: T): () => void {
    const token = { value };
    const stack = this.slots.get(name);
    if (stack) stack.push(token);
    else this.slots.set(name, [token]);
    return () => {
      const cur = this.slots.get(name);
      const i = cur ? cur.indexOf(token) : -1;
      if (i < 0) return;
      cur!.splice(i, 1);
      if (!cur!.length) this.slots.delete(name);
    };
  }

  clear(): void {
    this.slots.clear();
  }
}
