/**
 * What a migration is judged by, watched as it happens: every version of every Service, Node and
 * Lease the API server hands out (watches from a list, so no intermediate state is missed), and the
 * OpenStack emulator's journal of requests with who made them. Shared by the migration tests and
 * `bench:migration`.
 */
import type { V1Lease, V1Node, V1Service } from '@kubernetes/client-node';
import { kinds, type KubeClient, type KubernetesObject, type ResourceType } from '../../../kube/index.ts';
import type { RequestRecord, Stats } from '../../../sim/openstack/core/stats.ts';

/** A Service that had an external address and was then seen without it, or with another one. */
export interface LostAddress {
  service: string;
  had: string;
  saw: string | undefined;
  at: number;
}

/** A Node whose addresses changed once set. */
export interface AddressFlap {
  node: string;
  had: string;
  saw: string;
  at: number;
}

/** A Lease's holder from `at` on. */
export interface HolderChange {
  lease: string;
  holder: string | undefined;
  /** The holder's own `acquireTime` (epoch ms): it may act from then on. */
  acquiredAt: number | undefined;
  at: number;
}

const addressOf = (s: V1Service) => s.status?.loadBalancer?.ingress?.[0]?.ip;
const addressesOf = (n: V1Node) =>
  (n.status?.addresses ?? [])
    .map((a) => `${a.type}=${a.address}`)
    .sort()
    .join(',');
const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class ClusterObserver {
  readonly lostAddresses: LostAddress[] = [];
  readonly flaps: AddressFlap[] = [];
  readonly holders: HolderChange[] = [];
  private readonly serviceAddress = new Map<string, string>();
  private readonly nodeAddresses = new Map<string, string>();
  private readonly holder = new Map<string, string | undefined>();
  private readonly stopper = new AbortController();
  private readonly watches: Promise<void>[] = [];
  private readonly api: KubeClient;

  private constructor(api: KubeClient) {
    this.api = api;
  }

  /** Lists, then watches from the list's version until stopped. */
  static async start(api: KubeClient, leaseNamespace = 'kube-system'): Promise<ClusterObserver> {
    const o = new ClusterObserver(api);
    await Promise.all([
      o.follow(kinds.Service, {}, (s) => o.service(s)),
      o.follow(kinds.Node, {}, (n) => o.node(n)),
      o.follow(kinds.Lease, { namespace: leaseNamespace }, (l) => o.lease(l)),
    ]);
    return o;
  }

  /** The holders of `lease` in order, consecutive repeats and releases (no holder) left out. */
  holdersOf(lease: string): string[] {
    const out: string[] = [];
    for (const h of this.holders)
      if (h.lease === lease && h.holder && out.at(-1) !== h.holder) out.push(h.holder);
    return out;
  }

  /** When `holder` acquired `lease`, as it wrote it (the first such record). */
  acquiredAt(lease: string, holder: string): number | undefined {
    return this.holders.find((h) => h.lease === lease && h.holder === holder)?.acquiredAt;
  }

  async stop(): Promise<void> {
    this.stopper.abort(new Error('observer stopped'));
    await Promise.allSettled(this.watches);
  }

  private async follow<T extends KubernetesObject>(
    type: ResourceType<T>,
    scope: { namespace?: string },
    see: (o: T) => void,
  ): Promise<void> {
    const first = await this.api.list(type, scope);
    for (const o of first.items) see(o);
    const signal = this.stopper.signal;
    const watch = async () => {
      let rv = first.resourceVersion;
      // Re-opened when the server ends a watch; bounded by the observer's life.
      while (!signal.aborted) {
        try {
          for await (const e of this.api.watch(type, { ...scope, resourceVersion: rv, signal })) {
            if (e.type === 'BOOKMARK') {
              rv = e.resourceVersion;
              continue;
            }
            rv = e.object.metadata?.resourceVersion ?? rv;
            if (e.type === 'DELETED') this.forget(type, e.object);
            else see(e.object);
          }
        } catch (err) {
          if (signal.aborted) return;
          throw err;
        }
      }
    };
    this.watches.push(watch());
  }

  private forget(type: ResourceType, o: KubernetesObject): void {
    if (type === kinds.Service) this.serviceAddress.delete(keyOf(o));
    if (type === kinds.Node) this.nodeAddresses.delete(keyOf(o));
  }

  private service(s: V1Service): void {
    const key = keyOf(s);
    const had = this.serviceAddress.get(key);
    const saw = addressOf(s);
    // A Service on its way out, or no longer of type LoadBalancer, gives its address back.
    if (s.metadata?.deletionTimestamp || s.spec?.type !== 'LoadBalancer') {
      this.serviceAddress.delete(key);
      return;
    }
    if (had !== undefined && saw !== had) this.lostAddresses.push({ service: key, had, saw, at: Date.now() });
    if (saw) this.serviceAddress.set(key, saw);
  }

  private node(n: V1Node): void {
    const key = keyOf(n);
    const had = this.nodeAddresses.get(key);
    const saw = addressesOf(n);
    if (had && saw !== had) this.flaps.push({ node: key, had, saw, at: Date.now() });
    if (saw) this.nodeAddresses.set(key, saw);
  }

  private lease(l: V1Lease): void {
    const name = l.metadata?.name ?? '';
    const holder = l.spec?.holderIdentity || undefined;
    if (this.holder.has(name) && this.holder.get(name) === holder) return;
    this.holder.set(name, holder);
    const acquire = l.spec?.acquireTime as unknown as string | Date | undefined;
    this.holders.push({
      lease: name,
      holder,
      acquiredAt: acquire ? new Date(acquire).getTime() : undefined,
      at: Date.now(),
    });
  }
}

/** The OpenStack writes (Keystone's token requests left out) of `callers` after `since`. */
export function cloudWrites(stats: Stats, since: number, callers: readonly string[]): RequestRecord[] {
  return stats
    .requests(since, { writes: true })
    .requests.filter((r) => r.service !== 'keystone' && callers.includes(r.caller));
}

/** One holder's turn at a Lease: from its acquireTime to the next holder's (or its release). */
export interface Turn {
  holder: string;
  from: number;
  to: number;
}

/**
 * The turns of `lease` from the observed holders. A release writes no holder and the time of the
 * release as `acquireTime`, so it ends a turn like the next holder's acquisition does.
 */
export function turnsOf(observer: ClusterObserver, lease: string): Turn[] {
  const records = observer.holders.filter((h) => h.lease === lease && h.acquiredAt !== undefined);
  const turns: Turn[] = [];
  records.forEach((r, i) => {
    if (!r.holder) return;
    const next = records.slice(i + 1).find((n) => n.holder !== r.holder);
    turns.push({ holder: r.holder, from: r.acquiredAt!, to: next?.acquiredAt ?? Infinity });
  });
  return turns;
}

/**
 * Writes made outside their maker's turn at the migration Lease, i.e. while another controller
 * manager held it: `callerOf` names the User-Agent of each holder identity. Empty when, at no
 * moment, two controllers acted on the cloud.
 */
export function writesOutOfTurn(
  writes: readonly RequestRecord[],
  turns: readonly Turn[],
  callerOf: ReadonlyMap<string, string>,
): RequestRecord[] {
  return writes.filter(
    (w) => !turns.some((t) => callerOf.get(t.holder) === w.caller && w.at >= t.from && w.at <= t.to),
  );
}
