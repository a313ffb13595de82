/**
 * Callbacks per name (a hook, a middleware kind) in registration order, with their owning plugin.
 *
 * Dispatch walks a snapshot copied once after each change: a callback that registers or removes
 * others mid-dispatch cannot change the dispatch in flight, no dispatch copies the list, and
 * registering n callbacks stays linear (copying on every registration made startup quadratic).
 */
export class CallbackLists<E extends { owner: string }> {
  private readonly lists = new Map<string, E[]>();
  private readonly snapshots = new Map<string, readonly E[]>();

  /** Append; the returned function removes exactly this entry (once). */
  add(name: string, entry: E): () => void {
    let list = this.lists.get(name);
    if (!list) this.lists.set(name, (list = []));
    list.push(entry);
    this.snapshots.delete(name);
    return () => {
      const cur = this.lists.get(name);
      const i = cur ? cur.lastIndexOf(entry) : -1;
      if (i < 0) return;
      cur!.splice(i, 1);
      this.snapshots.delete(name);
    };
  }

  /** What a dispatch walks (do not mutate). */
  snapshot(name: string): readonly E[] {
    let list = this.snapshots.get(name);
    if (list === undefined) {
      list = [...(this.lists.get(name) ?? [])];
      this.snapshots.set(name, list);
    }
    return list;
  }

  has(name: string): boolean {
    return (this.lists.get(name)?.length ?? 0) > 0;
  }

  /** Owners in callback order, for `hermes plugins chain` and the lock order check. */
  owners(name: string): string[] {
    return (this.lists.get(name) ?? []).map((e) => e.owner);
  }

  /** Names with at least one callback, sorted. */
  names(): string[] {
    return [...this.lists.keys()].filter((n) => this.has(n)).sort();
  }
}
