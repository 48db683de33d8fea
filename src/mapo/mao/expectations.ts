/**
 * What a MachineSet's last creates and deletes should look like in the cache, so a cache that has
 * not caught up yet never makes the controller act twice (the ReplicaSet controller's
 * `UIDTrackingControllerExpectations`). Upstream's MachineSet controller instead polls its cache
 * for up to 10 s after each write (`waitForMachineCreation`), holding a worker; here the reconcile
 * returns and the Machine events wake it again.
 *
 * Creations are tracked by the name the API server gave (`generateName`), deletions by uid. A
 * reconcile first `observe`s the Machines its cache holds: a created one seen, or a deleted one
 * gone or marked deleting, is settled. While anything is still pending the controller does not
 * scale. Expectations expire after `ttlMs` (ReplicaSet: 5 minutes), so an event the cache never
 * gets (a Machine created and deleted by someone else in between) cannot hold a set forever.
 */
import type { Clock } from '../../lib/clock.ts';
import type { Machine } from '../api/index.ts';

/** kube-controller-manager's ExpectationsTimeout. */
export const EXPECTATIONS_TTL_MS = 5 * 60_000;

interface Pending {
  creations: Set<string>;
  deletions: Set<string>;
  /** When the latest expectation was set. */
  sinceMs: number;
}

export class Expectations {
  private readonly pending = new Map<string, Pending>();
  private readonly clock: Clock;
  private readonly ttlMs: number;

  constructor(clock: Clock, ttlMs = EXPECTATIONS_TTL_MS) {
    this.clock = clock;
    this.ttlMs = ttlMs;
  }

  /** A Machine this set created, by the name the server gave it. */
  expectCreation(key: string, name: string): void {
    this.entry(key).creations.add(name);
  }

  /** A Machine this set asked to delete, by uid. */
  expectDeletion(key: string, uid: string): void {
    this.entry(key).deletions.add(uid);
  }

  /**
   * Settles what `cached` (the set's namespace as the cache has it) shows, and says whether the
   * cache can be trusted for scaling: nothing pending, or the expectations expired.
   */
  satisfied(key: string, cached: readonly Machine[]): boolean {
    const p = this.pending.get(key);
    if (!p) return true;
    const byName = new Map(cached.map((m) => [m.metadata?.name ?? '', m]));
    const byUid = new Map(cached.map((m) => [m.metadata?.uid ?? '', m]));
    for (const name of p.creations) if (byName.has(name)) p.creations.delete(name);
    for (const uid of p.deletions) {
      const m = byUid.get(uid);
      if (!m || m.metadata?.deletionTimestamp) p.deletions.delete(uid);
    }
    if (p.creations.size === 0 && p.deletions.size === 0) {
      this.pending.delete(key);
      return true;
    }
    if (this.clock.now() - p.sinceMs >= this.ttlMs) {
      this.pending.delete(key);
      return true;
    }
    return false;
  }

  /** How long until the pending expectations of `key` expire; 0 when none are pending. */
  expiresInMs(key: string): number {
    const p = this.pending.get(key);
    return p ? Math.max(0, p.sinceMs + this.ttlMs - this.clock.now()) : 0;
  }

  /** What is still pending, for a log line. */
  describe(key: string): { creations: number; deletions: number } {
    const p = this.pending.get(key);
    return { creations: p?.creations.size ?? 0, deletions: p?.deletions.size ?? 0 };
  }

  /** The set is gone. */
  forget(key: string): void {
    this.pending.delete(key);
  }

  private entry(key: string): Pending {
    let p = this.pending.get(key);
    if (!p) {
      p = { creations: new Set(), deletions: new Set(), sinceMs: this.clock.now() };
      this.pending.set(key, p);
    }
    p.sinceMs = this.clock.now();
    return p;
  }
}
