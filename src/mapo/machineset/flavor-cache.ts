/**
 * MAPO's flavor cache (`pkg/machineset/flavorcache`): the flavor a MachineSet names, looked up at
 * most once per 5 minutes while found and once per minute while missing, so MachineSets that share
 * a flavor, and the resyncs of each, cost one Nova list between them. Keyed by identity and flavor
 * name (MAPO keys by name alone, so two clouds with one flavor name would share an entry). A
 * lookup that fails (Nova unreachable, credentials refused) is not cached: the caller's queue backs
 * off. Concurrent lookups of one key share one call.
 */
import type { Clock } from '../../lib/clock.ts';
import type { Flavor } from '../../openstack/compute/v2/flavors.ts';

/** MAPO's StaledTime: a found flavor is looked up again after this. */
export const FLAVOR_TTL_MS = 300_000;
/** MAPO's RefreshFailureTime: a missing flavor is looked up again after this. */
export const MISSING_FLAVOR_TTL_MS = 60_000;
/** Entries kept; the oldest go first (each is a few numbers: a bound, not a tuning knob). */
export const FLAVOR_CACHE_MAX_ENTRIES = 1_000;

/** What the autoscaler needs of a flavor. */
export interface FlavorCapacity {
  name: string;
  vcpus: number;
  /** MiB. */
  ramMiB: number;
}

export interface FlavorLookup {
  /** Undefined: Nova has no flavor of that name (for this identity). */
  flavor: FlavorCapacity | undefined;
  /** When it was looked up (the clock's milliseconds). */
  at: number;
}

export class FlavorCache {
  private readonly clock: Pick<Clock, 'now'>;
  private readonly entries = new Map<string, FlavorLookup>();
  private readonly inflight = new Map<string, Promise<FlavorLookup>>();

  constructor(clock: Pick<Clock, 'now'>) {
    this.clock = clock;
  }

  /**
   * The flavor `name` for `identity` (any string naming the credentials), from the cache while it
   * is fresh, else from `lookup` (which resolves undefined for a flavor that does not exist).
   */
  async get(
    identity: string,
    name: string,
    lookup: () => Promise<Flavor | undefined>,
  ): Promise<FlavorLookup> {
    const key = JSON.stringify([identity, name]);
    const cached = this.entries.get(key);
    if (cached && this.fresh(cached)) return cached;
    const running = this.inflight.get(key);
    if (running) return running;
    const call = (async () => {
      const found = await lookup();
      const entry: FlavorLookup = {
        flavor: found && { name: found.name, vcpus: found.vcpus, ramMiB: found.ram },
        at: this.clock.now(),
      };
      this.entries.delete(key);
      this.entries.set(key, entry);
      while (this.entries.size > FLAVOR_CACHE_MAX_ENTRIES) {
        this.entries.delete(this.entries.keys().next().value!);
      }
      return entry;
    })().finally(() => this.inflight.delete(key));
    this.inflight.set(key, call);
    return call;
  }

  /** When the entry for a missing flavor will be looked up again, in ms from now (for the requeue). */
  retryInMs(entry: FlavorLookup): number {
    return Math.max(0, entry.at + MISSING_FLAVOR_TTL_MS - this.clock.now());
  }

  private fresh(entry: FlavorLookup): boolean {
    const age = this.clock.now() - entry.at;
    return age < (entry.flavor ? FLAVOR_TTL_MS : MISSING_FLAVOR_TTL_MS);
  }
}
