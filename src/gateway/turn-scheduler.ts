/** A turn could not be queued: the queue of waiting turns is full (HTTP 429). */
export class QueueFullError extends Error {
  constructor(
    readonly waiting: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`the service is busy: ${waiting} turn(s) are already waiting; retry after ${retryAfterSeconds} s`);
    this.name = "QueueFullError";
  }
}

export interface SchedulerLimits {
  /** Turns running at once across all sessions. */
  maxConcurrent: number;
  /** Turns waiting (for their session or for a free slot) before new ones are refused. */
  maxQueued: number;
}

/**
 * Turns of one session run one at a time in arrival order; sessions run side by side up to
 * `maxConcurrent`; beyond that turns wait, and past `maxQueued` waiting turns new ones are refused
 * at once (QueueFullError) instead of piling up.
 */
export class TurnScheduler {
  private running = 0;
  private waitingCount = 0;
  private readonly slots: Array<() => void> = [];
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly limits: SchedulerLimits) {}

  get active(): number {
    return this.running;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Whether a turn of `sessionId` would be refused now: it would have to wait, and the queue is full. */
  refuses(sessionId: string): boolean {
    const startsNow = this.running < this.limits.maxConcurrent && !this.tails.has(sessionId);
    return !startsNow && this.waitingCount >= this.limits.maxQueued;
  }

  /** Run `fn` as the next turn of `sessionId`; throws QueueFullError at once, queuing nothing, when full. */
  run<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    if (this.refuses(sessionId)) throw new QueueFullError(this.waitingCount, 1);
    const previous = this.tails.get(sessionId);
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = (previous ?? Promise.resolve()).then(() => mine);
    this.tails.set(sessionId, tail);
    const finish = () => {
      this.releaseSlot();
      release();
      if (this.tails.get(sessionId) === tail) this.tails.delete(sessionId);
    };
    // The slot is taken synchronously when free, so requests of one tick see each other.
    if (!previous && this.running < this.limits.maxConcurrent) {
      this.running++;
      return this.exec(fn, finish);
    }
    this.waitingCount++;
    return this.waitTurn(previous).then(() => this.exec(fn, finish));
  }

  private async waitTurn(previous: Promise<void> | undefined): Promise<void> {
    try {
      await previous;
      await this.acquire();
    } finally {
      this.waitingCount--;
    }
  }

  private async exec<T>(fn: () => Promise<T>, finish: () => void): Promise<T> {
    try {
      return await fn();
    } finally {
      finish();
    }
  }

  /** Resolves when no turn runs or waits (a graceful stop waits for this). */
  async idle(): Promise<void> {
    while (this.running || this.waitingCount) await Promise.all([...this.tails.values()]);
  }

  private acquire(): Promise<void> {
    if (this.running < this.limits.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((r) => this.slots.push(r));
  }

  private releaseSlot(): void {
    const next = this.slots.shift();
    // The slot passes straight to the next waiter, so `running` stays the same.
    if (next) next();
    else this.running--;
  }
}
