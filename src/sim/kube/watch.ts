/**
 * Watches as the real watch cache serves them: newline-delimited `{"type","object"}` events over
 * one chunked response; synthetic ADDED events for the current state when no resourceVersion is
 * given (or `sendInitialEvents`), a replay of the history after a given one, an ERROR event with
 * 410 Expired when that history is gone, BOOKMARK events when asked for, and selectors that
 * turn a MODIFIED into ADDED/DELETED as objects enter or leave them. A watch ends at its
 * server-side timeout (`timeoutSeconds`, or 30–60 minutes like the real `--min-request-timeout`
 * spread), when its reader stops reading, and when the emulator stops.
 */
import { apiErrors, StatusError } from './errors.ts';
import { metaOf, type Obj } from './json.ts';
import { matches, type Filter } from './rest.ts';
import type { Store, StoreEvent } from './store.ts';
import { apiVersionOf, type ResourceDef } from './types.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchSink {
  /** Sends one chunk; the sink buffers what the reader has not taken yet. */
  write(chunk: string): void;
  end(): void;
  /** Bytes written and not yet flushed to the reader. */
  buffered(): number;
  /** Registers the callback for the reader going away. */
  onClose(cb: () => void): void;
}

export interface WatchRequest {
  def: ResourceDef;
  filter: Filter;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: boolean;
  allowBookmarks: boolean;
  /** Server-side timeout of this watch. */
  timeoutMs: number;
  /**
   * Renders an event's object in the requested form (the object, or a Table row); a promise when
   * the object goes through a conversion webhook first.
   */
  render(type: WatchEventType, object: Obj): Obj | Promise<Obj>;
  /**
   * Set when `render` gives every watcher asking this way the same object (the JSON object or its
   * metadata, no conversion webhook, no Table): one event's line is then serialised once for all
   * of them, as the real watch cache encodes an event once per encoding.
   */
  renderKey?: string;
}

const eventLine = (type: WatchEventType, object: Obj): string => `${JSON.stringify({ type, object })}\n`;

export interface WatchOptions {
  bookmarkIntervalMs: number;
  /** A reader this far behind is cut off, as the real server drops slow watchers. */
  maxBufferedBytes: number;
}

/** 30–60 minutes, as the real server spreads watch timeouts over [min-request-timeout, 2×). */
export function defaultWatchTimeoutMs(): number {
  return (1800 + Math.floor(Math.random() * 1800)) * 1000;
}

class WatchSession {
  private closed = false;
  private timers: NodeJS.Timeout[] = [];
  /**
   * Events waiting for a conversion, in order: once one is asynchronous, everything after it
   * (bookmarks included) waits its turn, so the stream keeps the store's order.
   */
  private chain: Promise<void> | undefined;
  private queued = 0;
  private readonly req: WatchRequest;
  private readonly sink: WatchSink;
  private readonly hub: WatchHub;

  constructor(hub: WatchHub, req: WatchRequest, sink: WatchSink) {
    this.hub = hub;
    this.req = req;
    this.sink = sink;
  }

  get storageKey(): string {
    return this.req.def.storageKey;
  }

  begin(store: Store, options: WatchOptions): void {
    const { req } = this;
    const rv = req.resourceVersion ?? '';
    const initial = req.sendInitialEvents ?? (rv === '' || rv === '0');
    if (initial) {
      // The current state as ADDED events, then (watch-list) a bookmark marking its end.
      for (const key of store.keys(req.def.storageKey, req.filter.namespace)) {
        const o = store.get(req.def.storageKey, key);
        if (o && matches(req.def, req.filter, o)) this.send('ADDED', o);
      }
      if (req.sendInitialEvents) this.bookmark(store.currentRv(), true);
    } else {
      let events: StoreEvent[];
      try {
        events = store.since(Number(rv), req.def.storageKey);
      } catch (err) {
        if (err instanceof StatusError) {
          this.sendRaw('ERROR', err.status as unknown as Obj);
          this.close();
          return;
        }
        throw err;
      }
      for (const e of events) this.deliver(e);
    }
    if (this.closed) return;
    this.timers.push(setTimeout(() => this.close(), req.timeoutMs));
    if (req.allowBookmarks) {
      this.timers.push(
        setInterval(() => this.bookmark(store.currentRv(), false), options.bookmarkIntervalMs),
      );
    }
    for (const t of this.timers) t.unref();
    this.sink.onClose(() => this.close());
  }

  /** Turns a store change into what this watcher sees through its namespace and selectors. */
  deliver(e: StoreEvent): void {
    if (this.closed || e.storageKey !== this.req.def.storageKey) return;
    const ns = this.req.filter.namespace;
    if (ns !== undefined && (metaOf(e.object).namespace ?? '') !== ns) return;
    const now = e.type !== 'DELETED' && matches(this.req.def, this.req.filter, e.object);
    const before = e.prev !== undefined && matches(this.req.def, this.req.filter, e.prev);
    if (e.type === 'ADDED') {
      if (now) this.send('ADDED', e.object);
    } else if (e.type === 'MODIFIED') {
      if (now && before) this.send('MODIFIED', e.object);
      else if (now) this.send('ADDED', e.object);
      else if (before) this.send('DELETED', e.object);
    } else if (before) {
      this.send('DELETED', e.object);
    }
  }

  private send(type: WatchEventType, stored: Obj): void {
    if (this.closed) return;
    const key = this.req.renderKey;
    if (key !== undefined && !this.chain) {
      let line: string;
      try {
        line = this.hub.line(stored, `${type} ${key}`, () =>
          eventLine(type, this.req.render(type, stored) as Obj),
        );
      } catch (err) {
        this.fail(err);
        return;
      }
      this.write(line);
      return;
    }
    let rendered: Obj | Promise<Obj>;
    try {
      rendered = this.req.render(type, stored);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (!(rendered instanceof Promise) && !this.chain) {
      this.sendRaw(type, rendered);
      return;
    }
    // Handled here so a conversion failing while earlier ones are pending is not an unhandled
    // rejection; the step below still sees it.
    if (rendered instanceof Promise) rendered.catch(() => undefined);
    this.enqueue(async () => this.sendRaw(type, await rendered));
  }

  private enqueue(step: () => Promise<void>): void {
    this.queued++;
    const run = async () => {
      try {
        if (!this.closed) await step();
      } catch (err) {
        this.fail(err);
      } finally {
        if (--this.queued === 0) this.chain = undefined;
      }
    };
    this.chain = (this.chain ?? Promise.resolve()).then(run);
  }

  /** A conversion that failed ends the watch with an ERROR event, as a decode failure does. */
  private fail(err: unknown): void {
    if (this.closed) return;
    const status =
      err instanceof StatusError
        ? err.status
        : apiErrors.internal(err instanceof Error ? err.message : String(err)).status;
    this.sendRaw('ERROR', status as unknown as Obj);
    this.close();
  }

  private sendRaw(type: WatchEventType, object: Obj): void {
    if (this.closed) return;
    this.write(eventLine(type, object));
  }

  private write(line: string): void {
    this.sink.write(line);
    if (this.sink.buffered() > this.hub.options.maxBufferedBytes) this.close();
  }

  private bookmark(rv: number, initialEventsEnd: boolean): void {
    if (this.chain) {
      // After the events before it, so a bookmark never claims a resourceVersion not yet sent.
      this.enqueue(() => Promise.resolve(this.writeBookmark(rv, initialEventsEnd)));
      return;
    }
    this.writeBookmark(rv, initialEventsEnd);
  }

  private writeBookmark(rv: number, initialEventsEnd: boolean): void {
    const { def } = this.req;
    const metadata: Obj = { resourceVersion: String(rv), creationTimestamp: null };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    this.sendRaw('BOOKMARK', { kind: def.kind, apiVersion: apiVersionOf(def), metadata });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    this.hub.forget(this);
    this.sink.end();
  }
}

/** Every open watch of one emulator, fed synchronously by the store. */
export class WatchHub {
  readonly options: WatchOptions;
  private readonly store: Store;
  private readonly sessions = new Set<WatchSession>();
  private readonly unsubscribe: () => void;
  private lastObject: Obj | undefined;
  private readonly lastLines = new Map<string, string>();

  constructor(store: Store, options: WatchOptions) {
    this.store = store;
    this.options = options;
    this.unsubscribe = store.subscribe((e) => {
      for (const s of this.sessions) if (s.storageKey === e.storageKey) s.deliver(e);
    });
  }

  get count(): number {
    return this.sessions.size;
  }

  /**
   * `object`'s line rendered as `key`, made the first time it is asked for. A change reaches every
   * watcher synchronously (the store's subscriber below), so only the object of the last one is
   * kept: nothing is held for objects long sent.
   */
  line(object: Obj, key: string, make: () => string): string {
    if (object !== this.lastObject) {
      this.lastObject = object;
      this.lastLines.clear();
    }
    let line = this.lastLines.get(key);
    if (line === undefined) this.lastLines.set(key, (line = make()));
    return line;
  }

  /**
   * Starts a watch. Errors before the stream starts throw (a resourceVersion from the future:
   * 504 "Too large resource version"); an expired one arrives as an ERROR event instead.
   */
  start(req: WatchRequest, sink: WatchSink): void {
    const rv = req.resourceVersion ?? '';
    if (rv !== '' && rv !== '0') {
      const n = Number(rv);
      if (!Number.isInteger(n) || n < 0) throw apiErrors.badRequest(`invalid resource version: ${rv}`);
      if (n > this.store.currentRv()) {
        throw apiErrors.timeout(`Too large resource version: ${n}, current: ${this.store.currentRv()}`, 1);
      }
    }
    const session = new WatchSession(this, req, sink);
    this.sessions.add(session);
    session.begin(this.store, this.options);
  }

  forget(s: WatchSession): void {
    this.sessions.delete(s);
  }

  /** Ends every watch (emulator stop); readers see a clean end of stream. */
  closeAll(): void {
    for (const s of [...this.sessions]) s.close();
  }

  dispose(): void {
    this.closeAll();
    this.unsubscribe();
  }
}
