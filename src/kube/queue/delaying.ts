/**
 * `addAfter`: an item is added once its delay passes (client-go's delaying queue). Waiting items
 * sit in a min-heap by ready time under one clock timer for the earliest. An item already waiting
 * keeps the earlier of its two ready times, so a short requeueAfter is never pushed back by a
 * later, longer one.
 */
import { WorkQueue, type WorkQueueOptions } from './queue.ts';

interface Waiting<T> {
  item: T;
  readyAt: number;
  seq: number;
}

export class DelayingQueue<T> extends WorkQueue<T> {
  private heap: Waiting<T>[] = [];
  /** The live entry per item; heap entries not in here are superseded and skipped. */
  private readonly waiting = new Map<T, Waiting<T>>();
  private seq = 0;
  private cancelTimer: (() => void) | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(opts: WorkQueueOptions = {}) {
    super(opts);
  }

  addAfter(item: T, delayMs: number): void {
    if (this.shuttingDown()) return;
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waiting.get(item);
    if (existing && existing.readyAt <= readyAt) return;
    const entry: Waiting<T> = { item, readyAt, seq: this.seq++ };
    this.waiting.set(item, entry);
    heapPush(this.heap, entry);
    this.schedule();
  }

  /** Drops the item's delayed add, if one waits. */
  cancelAfter(item: T): void {
    this.waiting.delete(item);
  }

  /** Items waiting for their delay. */
  waitingCount(): number {
    return this.waiting.size;
  }

  override shutDown(): void {
    super.shutDown();
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.heap = [];
    this.waiting.clear();
  }

  private schedule(): void {
    this.dropSuperseded();
    const first = this.heap[0];
    if (!first || first.readyAt >= this.timerAt) return;
    this.cancelTimer?.();
    this.timerAt = first.readyAt;
    this.cancelTimer = this.clock.setTimer(first.readyAt - this.clock.now(), () => this.fire());
  }

  private fire(): void {
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (;;) {
      this.dropSuperseded();
      const first = this.heap[0];
      if (!first || first.readyAt > now) break;
      heapPop(this.heap);
      this.waiting.delete(first.item);
      this.add(first.item);
    }
    this.schedule();
  }

  private dropSuperseded(): void {
    for (;;) {
      const first = this.heap[0];
      if (!first || this.waiting.get(first.item) === first) return;
      heapPop(this.heap);
    }
  }
}

function less<T>(a: Waiting<T>, b: Waiting<T>): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}

function heapPush<T>(heap: Waiting<T>[], e: Waiting<T>): void {
  heap.push(e);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!less(heap[i] as Waiting<T>, heap[parent] as Waiting<T>)) break;
    [heap[i], heap[parent]] = [heap[parent] as Waiting<T>, heap[i] as Waiting<T>];
    i = parent;
  }
}

function heapPop<T>(heap: Waiting<T>[]): Waiting<T> | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length > 0 && last) {
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && less(heap[l] as Waiting<T>, heap[m] as Waiting<T>)) m = l;
      if (r < heap.length && less(heap[r] as Waiting<T>, heap[m] as Waiting<T>)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m] as Waiting<T>, heap[i] as Waiting<T>];
      i = m;
    }
  }
  return top;
}
