/**
 * The Neutron ports behind route nexthops, and the podCIDRs in their allowed address pairs
 * (OCCM's routes.go: without the pair, port security drops the pods' packets leaving the node).
 *
 * A Node's port is found among its server's ports (one list for up to 40 servers, rather than
 * OCCM's one port search per route per period); a nexthop with no Node behind it is searched by
 * fixed IP on the router's networks, as OCCM's getPortByIP does.
 *
 * Pair changes read, change and write the list back with `If-Match` on the port's revision when
 * Neutron has `revision-if-match`, re-reading after a 412, so a pair someone else adds meanwhile
 * (a VIP, another controller's) is never dropped.
 */
import { isPreconditionFailed } from '../../openstack/core/errors.ts';
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';
import type { AllowedAddressPair, Port } from '../../openstack/network/v2/ports.ts';
import { formatCidr, formatIp, parseCidr, parseIp } from '../../lib/cidr.ts';

/** Server ids per port list: keeps the query string well under URL limits. */
const SERVERS_PER_LIST = 40;
/** Pair writes tried before giving up on a port that keeps changing. */
const MAX_PAIR_WRITES = 3;

/** Every port of these servers. */
export async function portsOfServers(
  network: NetworkV2,
  serverIds: readonly string[],
  signal: AbortSignal,
): Promise<Port[]> {
  const ids = [...new Set(serverIds)];
  const out: Port[] = [];
  for (let i = 0; i < ids.length; i += SERVERS_PER_LIST) {
    const chunk = ids.slice(i, i + SERVERS_PER_LIST);
    out.push(...(await network.ports.list({ device_id: chunk }, { signal }).all({ signal })));
  }
  return out;
}

/** The networks the router has a port on: where a nexthop's port can be. */
export async function routerNetworkIds(
  network: NetworkV2,
  routerId: string,
  signal: AbortSignal,
): Promise<string[]> {
  const ports = await network.ports.list({ device_id: routerId }, { signal }).all({ signal });
  return [...new Set(ports.map((p) => p.network_id))];
}

/** The one port on those networks with this fixed IP; undefined for none or several. */
export async function portWithIp(
  network: NetworkV2,
  ip: string,
  networkIds: readonly string[],
  signal: AbortSignal,
): Promise<Port | undefined> {
  if (networkIds.length === 0) return undefined;
  const ports = await network.ports
    .list({ fixed_ips: [{ ip_address: ip }], network_id: networkIds }, { signal })
    .all({ signal });
  return ports.length === 1 ? ports[0] : undefined;
}

/** Whether a port has this fixed IP (compared canonically: `fd00::0001` is `fd00::1`). */
export function hasFixedIp(port: Port, ip: string): boolean {
  const want = canonicalIp(ip);
  return port.fixed_ips.some((f) => canonicalIp(f.ip_address) === want);
}

function canonicalIp(text: string): string {
  const ip = parseIp(text);
  return ip ? formatIp(ip) : text;
}

/** A pair address in canonical form: a CIDR as its network, a plain address as itself. */
export function pairKey(address: string): string {
  if (address.includes('/')) {
    const c = parseCidr(address);
    return c ? formatCidr(c) : address;
  }
  return canonicalIp(address);
}

export function hasPair(port: Port, cidr: string): boolean {
  const want = pairKey(cidr);
  return port.allowed_address_pairs.some((p) => pairKey(p.ip_address) === want);
}

/**
 * Adds the `add` CIDRs to the port's allowed address pairs and takes the `remove` ones out,
 * leaving every other pair as it is. No write when nothing changes.
 */
export async function updatePairs(
  network: NetworkV2,
  port: Port,
  change: { add?: readonly string[]; remove?: readonly string[] },
  opts: { ifMatch: boolean; signal: AbortSignal },
): Promise<void> {
  const drop = new Set((change.remove ?? []).map(pairKey));
  let current = port;
  for (let attempt = 0; attempt < MAX_PAIR_WRITES; attempt++) {
    const kept = current.allowed_address_pairs.filter((p) => !drop.has(pairKey(p.ip_address)));
    const have = new Set(kept.map((p) => pairKey(p.ip_address)));
    const added: AllowedAddressPair[] = (change.add ?? [])
      .filter((c) => !have.has(pairKey(c)))
      .map((c) => ({ ip_address: c }));
    if (added.length === 0 && kept.length === current.allowed_address_pairs.length) return;
    try {
      await network.ports.update(
        current.id,
        { allowed_address_pairs: [...kept, ...added] },
        { signal: opts.signal, ...(opts.ifMatch ? { ifRevision: current.revision_number } : {}) },
      );
      return;
    } catch (err) {
      if (!isPreconditionFailed(err)) throw err;
      current = await network.ports.get(current.id, { signal: opts.signal });
    }
  }
  throw new Error(
    `port ${port.id} changed under every one of ${MAX_PAIR_WRITES} allowed address pair writes; trying again next period`,
  );
}
