/**
 * Which of our cloud objects nothing refers to any more (`shiftstack kuryr gc`), pure: the cloud's
 * objects carrying our tags on one side, what the cluster's Kuryr objects name on the other.
 *
 * Ours means every owner tag (ownerTags(options)); nothing untagged is ever an orphan. Referenced
 * means: a port named in a KuryrPort's VIFs or sitting on a trunk that still exists (a pool's
 * port, or a pod's: kuryr-pods' to recycle, or CAPO's to delete with the trunk — never ours to
 * fight over); a network or subnet in a KuryrNetwork's status (or a network holding one of those
 * subnets); a load balancer in a KuryrLoadBalancer's status. Objects changed within `minAgeMs`
 * are left alone, as upstream's ZOMBIE_AGE does, so a create not yet recorded is never taken for
 * an orphan. A subnet on an orphaned network goes with its network and is not listed twice.
 */
export interface CloudObject {
  id: string;
  name: string;
  tags?: readonly string[] | undefined;
  /** RFC 3339; undefined or unparsable counts as old. */
  updated_at?: string | null | undefined;
}

export interface CloudPort extends CloudObject {
  network_id: string;
  device_owner: string;
  /** For a subport, the trunk's id. */
  device_id: string;
}

export interface CloudSubnet extends CloudObject {
  network_id: string;
}

export interface CloudInventory {
  ports: readonly CloudPort[];
  networks: readonly CloudObject[];
  subnets: readonly CloudSubnet[];
  loadBalancers: readonly CloudObject[];
  /** Ids of every trunk that exists, and the ports they carry. */
  trunkSubports: ReadonlySet<string>;
}

export interface References {
  ports: ReadonlySet<string>;
  networks: ReadonlySet<string>;
  subnets: ReadonlySet<string>;
  loadBalancers: ReadonlySet<string>;
}

export interface Orphan {
  kind: 'port' | 'network' | 'subnet' | 'loadbalancer';
  id: string;
  name: string;
  /** Why it is an orphan, for the listing. */
  reason: string;
}

export interface OrphanOptions {
  tags: readonly string[];
  nowMs: number;
  /** Objects updated more recently than this are skipped (default 600 s, upstream's ZOMBIE_AGE). */
  minAgeMs?: number | undefined;
}

export const ZOMBIE_AGE_MS = 600_000;

export function isOurs(obj: { tags?: readonly string[] | undefined }, tags: readonly string[]): boolean {
  return tags.length > 0 && tags.every((t) => (obj.tags ?? []).includes(t));
}

function oldEnough(obj: CloudObject, opts: OrphanOptions): boolean {
  const t = obj.updated_at ? Date.parse(obj.updated_at) : NaN;
  if (Number.isNaN(t)) return true;
  return opts.nowMs - t >= (opts.minAgeMs ?? ZOMBIE_AGE_MS);
}

export function findOrphans(cloud: CloudInventory, refs: References, opts: OrphanOptions): Orphan[] {
  const out: Orphan[] = [];
  const candidate = (o: CloudObject) => isOurs(o, opts.tags) && oldEnough(o, opts);

  const referencedNets = new Set(refs.networks);
  for (const s of cloud.subnets) if (refs.subnets.has(s.id)) referencedNets.add(s.network_id);
  const orphanNets = new Set<string>();
  for (const n of cloud.networks) {
    if (!candidate(n) || referencedNets.has(n.id)) continue;
    orphanNets.add(n.id);
    out.push({ kind: 'network', id: n.id, name: n.name, reason: 'tagged ours, in no KuryrNetwork' });
  }
  for (const s of cloud.subnets) {
    if (!candidate(s) || refs.subnets.has(s.id) || orphanNets.has(s.network_id)) continue;
    out.push({ kind: 'subnet', id: s.id, name: s.name, reason: 'tagged ours, in no KuryrNetwork' });
  }
  for (const p of cloud.ports) {
    if (!candidate(p) || refs.ports.has(p.id) || cloud.trunkSubports.has(p.id)) continue;
    if (p.device_owner.startsWith('network:')) continue;
    out.push({
      kind: 'port',
      id: p.id,
      name: p.name,
      reason: 'tagged ours, in no KuryrPort and on no trunk',
    });
  }
  for (const lb of cloud.loadBalancers) {
    if (!candidate(lb) || refs.loadBalancers.has(lb.id)) continue;
    out.push({
      kind: 'loadbalancer',
      id: lb.id,
      name: lb.name,
      reason: 'tagged ours, in no KuryrLoadBalancer',
    });
  }
  return out;
}
