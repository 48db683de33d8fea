/**
 * VLAN ids on one trunk (kuryr.lib's segmentation driver, without its process-global state). The
 * trunk's own `sub_ports` are the truth: a restart reads them again, so an id is never given twice
 * across restarts. Within this process the driver attaches one batch per trunk at a time, so two
 * pools of one Node never pick the same ids; a racing writer elsewhere is caught by Neutron's 409
 * and retried.
 */

/** 802.1Q's usable ids: 0 and 4095 are reserved, and Neutron refuses them. */
export const VLAN_MIN = 1;
export const VLAN_MAX = 4094;

/**
 * Up to `count` ids in 1..4094 that are not in `inUse`, lowest first (so a trunk
 * whose pods come and go reuses low ids, as upstream's driver does). Fewer when the trunk is full.
 */
export function freeVlanIds(inUse: Iterable<number>, count: number): number[] {
  const taken = new Set<number>(inUse);
  const out: number[] = [];
  for (let id = VLAN_MIN; id <= VLAN_MAX && out.length < count; id++) {
    if (!taken.has(id)) out.push(id);
  }
  return out;
}
