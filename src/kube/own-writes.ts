/**
 * A controller's own writes to the objects it reconciles, so the update events they cause do not
 * wake it again: it already acted on what it wrote. controller-runtime has no such thing (its
 * users filter status writes with GenerationChanged); metadata a controller writes mid-reconcile
 * (an annotation, a finalizer) would otherwise cost one more reconcile each.
 *
 * An update event is dropped only when it is exactly one recorded write: the event goes from the
 * object the write was computed from to the version the write produced, and that version holds
 * what the write meant and nothing else. A write by anyone else before ours (seen by the watch,
 * or folded into one update by a relist) makes one of the two differ, and the event passes.
 * Status, resourceVersion, managedFields and generation are not compared. One tracker per kind.
 *
 * The watch and the write's answer come over different connections, in no set order: on a busy
 * process the update event is often handled before the answer is read. `write` announces the write
 * before sending it, so an event that is exactly it (from the object it was computed from, to what
 * it meant) is ours even then; `record` alone only knows a write once its answer is in.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Predicate } from './predicate.ts';
import { keyOf, type KubernetesObject } from './resource.ts';

interface Write {
  from: unknown;
  resourceVersion: string;
}

/** A write sent and not answered yet. */
interface Intent {
  from: unknown;
  to: unknown;
  /** The version its update event carried, when that came first. */
  seen?: string;
}

export interface OwnWritesOptions {
  /** Writes remembered per object (a reconcile makes a few); older ones are forgotten. Default 4. */
  perObject?: number;
  /** Objects remembered; the least recently written is forgotten first. Default 10 000. */
  maxObjects?: number;
}

export class OwnWrites<T extends KubernetesObject = KubernetesObject> {
  private readonly writes = new Map<string, Write[]>();
  private readonly intents = new Map<string, Intent[]>();
  private readonly perObject: number;
  private readonly maxObjects: number;

  constructor(opts: OwnWritesOptions = {}) {
    this.perObject = opts.perObject ?? 4;
    this.maxObjects = opts.maxObjects ?? 10_000;
  }

  /**
   * Records a write of ours: `before` the object it was computed from, `intended` that object
   * with the change applied, `result` what the server returned. Returns `result`. A result that
   * differs from the intent (the server merged someone else's change) is not recorded.
   */
  record<U extends T>(before: T, intended: T, result: U): U {
    const rv = result.metadata?.resourceVersion;
    // No write was needed (mergePatch hands back the original): nothing will come of it.
    if (!rv || rv === before.metadata?.resourceVersion) return result;
    if (!isDeepStrictEqual(comparable(result), comparable(intended))) return result;
    const key = keyOf(result);
    const list = this.writes.get(key) ?? [];
    this.writes.delete(key);
    list.push({ from: comparable(before), resourceVersion: rv });
    if (list.length > this.perObject) list.shift();
    this.writes.set(key, list);
    if (this.writes.size > this.maxObjects) {
      const oldest = this.writes.keys().next().value;
      if (oldest !== undefined) this.writes.delete(oldest);
    }
    return result;
  }

  /**
   * Sends a write of ours (`send`: `before` with the change applied, `intended`) and records it, as
   * `record` does; its update event is recognised even when it comes before the answer.
   */
  async write<U extends T>(before: T, intended: T, send: () => Promise<U>): Promise<U> {
    const key = keyOf(before);
    const intent: Intent = { from: comparable(before), to: comparable(intended) };
    const list = this.intents.get(key) ?? [];
    list.push(intent);
    this.intents.set(key, list);
    try {
      const result = await send();
      // Its event came first and was dropped then: nothing is left to expect.
      if (intent.seen !== undefined && intent.seen === result.metadata?.resourceVersion) return result;
      return this.record(before, intended, result);
    } finally {
      const left = (this.intents.get(key) ?? []).filter((i) => i !== intent);
      if (left.length > 0) this.intents.set(key, left);
      else this.intents.delete(key);
    }
  }

  /** Drops update events that are one of our recorded writes; forgets an object on its delete. */
  predicate(): Predicate<T> {
    return {
      update: (old, obj) => !this.consume(old, obj),
      delete: (obj) => {
        this.writes.delete(keyOf(obj));
        return true;
      },
    };
  }

  /** How many writes are remembered (tests). */
  get size(): number {
    let n = 0;
    for (const list of this.writes.values()) n += list.length;
    return n;
  }

  private consume(old: T, obj: T): boolean {
    const rv = obj.metadata?.resourceVersion;
    if (!rv || old.metadata?.resourceVersion === rv) return false;
    const key = keyOf(obj);
    const list = this.writes.get(key);
    const i = list?.findIndex((w) => w.resourceVersion === rv) ?? -1;
    if (!list || i < 0) return this.consumeIntent(key, rv, old, obj);
    const [write] = list.splice(i, 1);
    if (list.length === 0) this.writes.delete(key);
    return isDeepStrictEqual(write!.from, comparable(old));
  }

  /** An event ahead of its write's answer: exactly a write in flight, from what it was computed from. */
  private consumeIntent(key: string, rv: string, old: T, obj: T): boolean {
    const intent = this.intents
      .get(key)
      ?.find(
        (i) =>
          i.seen === undefined &&
          isDeepStrictEqual(i.from, comparable(old)) &&
          isDeepStrictEqual(i.to, comparable(obj)),
      );
    if (!intent) return false;
    intent.seen = rv;
    return true;
  }
}

/** What a write can mean to change: all but status, resourceVersion, managedFields, generation. */
function comparable(obj: KubernetesObject): unknown {
  const { status: _status, metadata, ...rest } = obj as KubernetesObject & { status?: unknown };
  if (!metadata) return rest;
  const { resourceVersion: _rv, managedFields: _mf, generation: _g, ...meta } = metadata;
  return { ...rest, metadata: meta };
}
