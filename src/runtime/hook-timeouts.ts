/**
 * The bookkeeping behind `plugins.hook_callback_timeout`: which bounded callbacks are running, suppressed
 * or hung, and one timer for the whole bus that expires late calls. A callback that returns a value
 * costs nothing here; one that returns a promise costs a map lookup, a clock read and a set entry, never
 * a timer or a race of its own (bench/runtime.bench.mjs: hook dispatch, 10 async callbacks).
 */

/** Callback identity, never its name: two anonymous callbacks of one plugin are different callbacks. */
type Callback = (payload: Record<string, unknown>) => unknown;

const SUPPRESS_MS = 60_000;
const ABANDONED_CAP = 3;

/** Per callback: running calls (usually none or one), suppression per hook, abandoned calls still running. */
interface CallbackState {
  running: PendingCall[];
  suppressedUntil: Map<string, number> | undefined;
  abandoned: number;
}

/** One pending call of a bounded callback, from its promise to its settlement or its deadline. */
export interface PendingCall {
  readonly cb: Callback;
  readonly hook: string;
  readonly gateKey: string;
  readonly deadline: number;
  /** The state it was started under (clear() replaces states; the on-time path may use a stale one). */
  readonly st: CallbackState;
  /** Set once the deadline passed: a later settlement is abandoned, not used. */
  expired: boolean;
  /** What the dispatch does when the deadline passes first (the bookkeeping is already done). */
  readonly onExpire: () => void;
  // The watched list is intrusive: no hashing and no allocation per call.
  prev: PendingCall | undefined;
  next: PendingCall | undefined;
}

export class HookTimeouts {
  private readonly state = new Map<Callback, CallbackState>();
  /** Pending calls in start order; one timer, armed for the earliest deadline, serves them all. */
  private head: PendingCall | undefined;
  private tail: PendingCall | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;

  /** Why a bounded callback is skipped on this call, or undefined when it may run. */
  skipReason(cb: Callback, hook: string, gateKey: string): string | undefined {
    const st = this.state.get(cb);
    if (st === undefined) return undefined;
    const until = st.suppressedUntil?.get(hook) ?? 0;
    if (isRunning(st, gateKey) || (until > 0 && until > Date.now()))
      return "skipped after previous timeout or while still running";
    if (st.abandoned >= ABANDONED_CAP)
      return `skipped: ${st.abandoned} abandoned call(s) still running — the plugin is hung`;
    return undefined;
  }

  /** A bounded callback returned a promise: gate its call identity and watch its deadline. */
  start(cb: Callback, hook: string, gateKey: string, ms: number, onExpire: () => void): PendingCall {
    const st = this.stateOf(cb);
    const deadline = Date.now() + ms;
    const call: PendingCall = {
      cb,
      hook,
      gateKey,
      deadline,
      st,
      expired: false,
      onExpire,
      prev: this.tail,
      next: undefined,
    };
    st.running.push(call);
    const wasIdle = this.head === undefined;
    if (this.tail) this.tail.next = call;
    else this.head = call;
    this.tail = call;
    if (this.timer === undefined) this.arm(deadline);
    else if (deadline < this.timerAt) {
      clearTimeout(this.timer);
      this.arm(deadline);
    } else if (wasIdle) this.timer.ref();
    return call;
  }

  /** The call's promise settled: true when in time (use the result), false when it was abandoned. */
  settle(call: PendingCall): boolean {
    if (call.expired) {
      // The abandoned call kept its gate until now; from now on it stops counting.
      const st = this.stateOf(call.cb);
      dropRunning(call.st, call);
      st.abandoned = Math.max(0, st.abandoned - 1);
      return false;
    }
    dropRunning(call.st, call);
    this.unlink(call);
    // The timer stays armed for the next pending call; unref'd, it keeps no idle process alive.
    if (this.head === undefined) this.timer?.unref();
    return true;
  }

  /** Unload: forget running, suppressed and abandoned calls (pending ones still expire). */
  clear(): void {
    this.state.clear();
  }

  private stateOf(cb: Callback): CallbackState {
    let st = this.state.get(cb);
    if (st === undefined) this.state.set(cb, (st = { running: [], suppressedUntil: undefined, abandoned: 0 }));
    return st;
  }

  private unlink(call: PendingCall): void {
    if (call.prev) call.prev.next = call.next;
    else this.head = call.next;
    if (call.next) call.next.prev = call.prev;
    else this.tail = call.prev;
    call.prev = call.next = undefined;
  }

  private arm(at: number): void {
    this.timerAt = at;
    this.timer = setTimeout(this.fire, Math.max(1, at - Date.now()));
  }

  /** Expire every call past its deadline, re-arm for the earliest one left, then let the dispatches go on. */
  private readonly fire = (): void => {
    this.timer = undefined;
    const now = Date.now();
    const expired: PendingCall[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (let call = this.head; call !== undefined; call = call.next) {
      if (call.deadline <= now) expired.push(call);
      else if (call.deadline < next) next = call.deadline;
    }
    for (const call of expired) {
      this.unlink(call);
      call.expired = true;
      const st = this.stateOf(call.cb);
      if (!st.suppressedUntil) st.suppressedUntil = new Map();
      st.suppressedUntil.set(call.hook, now + SUPPRESS_MS);
      st.abandoned++;
    }
    if (this.head !== undefined) this.arm(next);
    for (const call of expired) call.onExpire();
  };
}

function isRunning(st: CallbackState, gateKey: string): boolean {
  for (const c of st.running) if (c.gateKey === gateKey) return true;
  return false;
}

function dropRunning(st: CallbackState, call: PendingCall): void {
  const i = st.running.indexOf(call);
  if (i < 0) return;
  st.running[i] = st.running[st.running.length - 1]!;
  st.running.pop();
}
