/**
 * One Nova list for all the servers an identity has building, instead of one GET per server.
 *
 * A server in BUILD is looked at again after a wait that grows with its age (wait-by-age: half of
 * it, capped at 10 s), so a 10 s build is seen ACTIVE up to ~3 s late, and 1,000 building servers
 * cost hundreds of GETs a minute. The OpenStackServer controller instead hands each building
 * server here and asks for its own look only at the cap (CAPO's 10 s, the safety net); every
 * `intervalMs` this poller sends, per identity that has servers building, one
 * `GET /servers/detail?changes-since=<last look − 1 s>`: Nova answers with the servers whose state
 * changed since, whatever the number building, and each watched one no longer in BUILD wakes its
 * object at once. The poll budget is therefore flat: 60 lists per identity per minute at 1 s,
 * plus ≤ 6 GETs per building server per minute (the safety net), as many as CAPO sends.
 *
 * Nothing is remembered that a restart needs: a watch is renewed by every reconcile that sees the
 * server building, and one not renewed for `forgetAfterMs` is dropped (a deleted object, a
 * controller that moved on).
 */
import { systemClock, type Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { Runnable } from '../../kube/index.ts';
import type { IdentityRef } from '../api/index.ts';
import type { ScopeCache } from '../identity.ts';

export interface BuildPollerOptions {
  /** Between two lists of one identity; default 1 s. */
  intervalMs?: number;
  /** A watch not renewed for this long is dropped; default 60 s. */
  forgetAfterMs?: number;
  clock?: Clock;
  log?: Logger;
}

/** The object to wake (`namespace/name` parts). */
export interface WatchedObject {
  namespace: string;
  name: string;
}

interface Watch {
  object: WatchedObject;
  renewedAt: number;
}

interface IdentityWatches {
  namespace: string;
  identityRef: IdentityRef;
  /** instance id → its object. */
  servers: Map<string, Watch>;
  /** When the last list of this identity was sent (ms since the epoch). */
  listedAt: number | undefined;
}

/** Nova's changes-since takes an ISO time; its own times are to the second. */
const isoSeconds = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString();

export class BuildPoller implements Runnable {
  readonly name = 'openstackserver-build-poller';
  readonly intervalMs: number;
  private readonly forgetAfterMs: number;
  private readonly clock: Clock;
  private readonly log: Logger | undefined;
  private readonly scopes: ScopeCache;
  private readonly wake: (object: WatchedObject) => void;
  /** By identity (its namespace for a Secret, name, cloud, region). */
  private readonly identities = new Map<string, IdentityWatches>();
  /** Lists sent (tests and the bench's poll budget). */
  lists = 0;

  constructor(scopes: ScopeCache, wake: (object: WatchedObject) => void, opts: BuildPollerOptions = {}) {
    this.scopes = scopes;
    this.wake = wake;
    this.intervalMs = Math.max(1, opts.intervalMs ?? 1_000);
    this.forgetAfterMs = Math.max(this.intervalMs, opts.forgetAfterMs ?? 60_000);
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log;
  }

  /** Servers watched now. */
  get size(): number {
    let n = 0;
    for (const w of this.identities.values()) n += w.servers.size;
    return n;
  }

  /** Watches (or renews) a building server of `object`, reached with `identityRef` from `namespace`. */
  watch(namespace: string, identityRef: IdentityRef, instanceID: string, object: WatchedObject): void {
    const key = JSON.stringify([
      identityRef.type ?? 'Secret',
      identityRef.type === 'ClusterIdentity' ? '' : namespace,
      identityRef.name,
      identityRef.cloudName,
      identityRef.region ?? null,
    ]);
    let w = this.identities.get(key);
    if (!w) {
      w = { namespace, identityRef, servers: new Map(), listedAt: undefined };
      this.identities.set(key, w);
    }
    w.servers.set(instanceID, { object, renewedAt: this.clock.now() });
  }

  /** Stops watching a server (ready, failed, deleted). */
  forget(instanceID: string): void {
    for (const [key, w] of this.identities) {
      w.servers.delete(instanceID);
      if (w.servers.size === 0) this.identities.delete(key);
    }
  }

  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.clock.sleep(this.intervalMs, signal);
      } catch {
        return;
      }
      await this.pollOnce(signal);
    }
  }

  /** One list per identity with servers watched; wakes those Nova shows out of BUILD. */
  async pollOnce(signal?: AbortSignal): Promise<void> {
    const now = this.clock.now();
    for (const [key, w] of [...this.identities]) {
      for (const [id, s] of w.servers) if (now - s.renewedAt > this.forgetAfterMs) w.servers.delete(id);
      if (w.servers.size === 0) {
        this.identities.delete(key);
        continue;
      }
      // From the last look (or the oldest watch) less a second: Nova's times are to the second.
      const oldest = Math.min(...[...w.servers.values()].map((s) => s.renewedAt));
      const since = isoSeconds((w.listedAt ?? oldest) - 1_000);
      const startedAt = this.clock.now();
      try {
        const changed = await this.scopes.use(
          { namespace: w.namespace, identityRef: w.identityRef, signal },
          (scope) => scope.client.compute.servers.list({ 'changes-since': since }, { signal }).all(),
        );
        this.lists++;
        w.listedAt = startedAt;
        for (const server of changed) {
          const watched = w.servers.get(server.id);
          if (!watched || server.status === 'BUILD') continue;
          w.servers.delete(server.id);
          this.wake(watched.object);
        }
      } catch (err) {
        if (signal?.aborted) return;
        // The safety net (each server's own look at the cap) still runs; say why this one did not.
        this.log?.warn(
          { err, identity: w.identityRef.name },
          'build poll failed; servers keep their own looks',
        );
      }
    }
  }
}
