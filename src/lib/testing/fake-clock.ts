/**
 * Clocks for tests. FakeClock moves only when a test says so: timers and sleeps fire in due order
 * inside `advance`, each seeing `now()` at its own due time, as on a real clock. SkewedClock is
 * the real clock with a `now()` a test can move forward.
 */
import { abortReason, systemClock, type Clock } from '../clock.ts';

interface Timer {
  due: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];
  /** Values `random()` returns, in turn; 0 when exhausted (no jitter). */
  randoms: number[] = [];

  constructor(startMs = Date.UTC(2025, 0, 1)) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  random(): number {
    return this.randoms.shift() ?? 0;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer: Timer = { due: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const cancel = this.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = () => {
        cancel();
        reject(abortReason(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Pending timers (tests assert that nothing is left scheduled). */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward, firing every timer due on the way; awaits promise reactions between them. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flushMicrotasks();
      this.timers.sort((a, b) => a.due - b.due || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.due > end) break;
      this.timers.shift();
      this.t = next.due;
      next.fn();
    }
    this.t = end;
    await flushMicrotasks();
  }
}

/** Lets queued promise reactions run (a few rounds, for chains of awaits). */
export async function flushMicrotasks(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/**
 * A real clock whose `now()` a test can move forward: timers and sleeps keep real time, so a
 * whole process (informers, queues, clients) runs on it, while a wait measured on `now()` (a
 * recreate window, an age) can be made to pass without waiting it out.
 */
export class SkewedClock implements Clock {
  private offsetMs = 0;

  now(): number {
    return systemClock.now() + this.offsetMs;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }

  setTimer(ms: number, fn: () => void): () => void {
    return systemClock.setTimer(ms, fn);
  }

  random(): number {
    return systemClock.random();
  }

  /** Moves `now()` forward by `ms`. */
  jump(ms: number): void {
    this.offsetMs += ms;
  }
}
