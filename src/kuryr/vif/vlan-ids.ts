/**
 * VLAN ids on one trunk (kuryr.lib's segmentation driver, without its process-global state). The
 * trunk's own `sub_ports` are the truth: a restart reads them again, so an id is never given twice
 * across restarts. Ids handed to a batch still on its way to `add_subports` are held here, so two
 * batches for one trunk (two pools of one node) never pick the same ones; a racing writer elsewhere
 * is caught by Neutron's 409 and retried.
 */

/** 802.1Q's usable ids: 0 and 4095 are reserved, and Neutron refuses them. */
export const VLAN_MIN = 1;
export const VLAN_MAX = 4094;

/**
 * Up to `count` ids in 1..4094 that are neither in `inUse` nor in `held`, lowest first (so a trunk
 * whose pods come and go reuses low ids, as upstream's driver does). Fewer when the trunk is full.
 */
export function freeVlanIds(inUse: Iterable<number>, held: Iterable<number>, count: number): number[] {
  const taken = new Set<number>(inUse);
  for (const id of held) taken.add(id);
  const out: number[] = [];
  for (let id = VLAN_MIN; id <= VLAN_MAX && out.length < count; id++) {
    if (!taken.has(id)) out.push(id);
  }
  return out;
}

/** The ids this process has handed out per trunk and not yet seen on the trunk or given back. */
export class VlanReservations {
  private readonly byTrunk = new Map<string, Set<number>>();

  /** Picks and holds up to `count` free ids of `trunkId` given what the trunk carries now. */
  reserve(trunkId: string, inUse: Iterable<number>, count: number): number[] {
    const held = this.byTrunk.get(trunkId) ?? new Set<number>();
    const ids = freeVlanIds(inUse, held, count);
    for (const id of ids) held.add(id);
    if (held.size > 0) this.byTrunk.set(trunkId, held);
    return ids;
  }

  /** Gives ids back: they are on the trunk now (its sub_ports hold them), or their batch failed. */
  release(trunkId: string, ids: Iterable<number>): void {
    const held = this.byTrunk.get(trunkId);
    if (!held) return;
    for (const id of ids) held.delete(id);
    if (held.size === 0) this.byTrunk.delete(trunkId);
  }

  held(trunkId: string): number {
    return this.byTrunk.get(trunkId)?.size ?? 0;
  }
}
