/**
 * A Node's addresses from its Nova server and Neutron ports, exactly as OCCM's nodeAddresses
 * (`pkg/openstack/instances_addresses.go`, v1.28+) builds them, because kubelets, CNIs and
 * certificates depend on the order and types it produces:
 *
 * 1. the fixed IPs of the server's ACTIVE ports, in Neutron's port order → InternalIP;
 * 2. accessIPv4, then accessIPv6 → ExternalIP;
 * 3. server metadata `hostname` → Hostname;
 * 4. `server.addresses` plus the fixed IPs of trunk subports (added under their network's name), by
 *    network name in byte order: floating → ExternalIP; a `public-network-name` network → ExternalIP,
 *    removing the same address listed as anything else; else InternalIP when `internal-network-name`
 *    is empty or lists the network, otherwise the address is dropped everywhere;
 * 5. IPv6 is left out at each step when `ipv6-support-disabled` (accessIPv4 is never checked);
 * 6. `address-sort-order`: a stable sort by the first CIDR each address falls in, addresses of one
 *    CIDR ordered by their bytes, the others keeping their place after them.
 *
 * A (type, address) pair appears once; the same address may appear with two types.
 */
import { cidrContains, compareIps, isIPv6Like, parseCidr, parseIp, type Cidr } from '../lib/cidr.ts';
import type { NetworkingOptions } from './config/types.ts';
import type { Server } from '../openstack/compute/v2/servers.ts';
import type { Network } from '../openstack/network/v2/networks.ts';
import type { FixedIp, Port } from '../openstack/network/v2/ports.ts';
import type { CallOptions } from '../openstack/core/call-options.ts';

export type NodeAddressType = 'InternalIP' | 'ExternalIP' | 'Hostname';

/** The shape of a V1NodeAddress. */
export interface NodeAddress {
  type: NodeAddressType;
  address: string;
}

/** The `metadata` key whose value becomes a Hostname address. */
export const HOSTNAME_METADATA_KEY = 'hostname';

export type ServerForAddresses = Pick<Server, 'addresses' | 'accessIPv4' | 'accessIPv6' | 'metadata'>;
export type PortForAddresses = Pick<Port, 'status' | 'fixed_ips'>;

/** A trunk subport's fixed IPs and the name of its network, in the order of the parent's sub_ports. */
export interface SubportAddresses {
  networkName: string;
  fixedIps: readonly Pick<FixedIp, 'ip_address'>[];
}

export interface AddressSources {
  server: ServerForAddresses;
  /** The server's ports (`GET /ports?device_id=<server>`), in the order Neutron lists them. */
  ports: readonly PortForAddresses[];
  subports: readonly SubportAddresses[];
}

export function nodeAddresses(sources: AddressSources, networking: NetworkingOptions): NodeAddress[] {
  const { server } = sources;
  const keep = (address: string) => !networking.ipv6SupportDisabled || !isIPv6Like(address);
  const addrs: NodeAddress[] = [];

  for (const port of sources.ports) {
    if (port.status !== 'ACTIVE') continue;
    for (const ip of port.fixed_ips) {
      if (keep(ip.ip_address)) add(addrs, { type: 'InternalIP', address: ip.ip_address });
    }
  }

  if (server.accessIPv4) add(addrs, { type: 'ExternalIP', address: server.accessIPv4 });
  if (server.accessIPv6 && !networking.ipv6SupportDisabled) {
    add(addrs, { type: 'ExternalIP', address: server.accessIPv6 });
  }
  const hostname = server.metadata?.[HOSTNAME_METADATA_KEY];
  if (hostname) add(addrs, { type: 'Hostname', address: hostname });

  const byNetwork = new Map<string, { floating: boolean; address: string }[]>();
  for (const [network, list] of Object.entries(server.addresses ?? {})) {
    byNetwork.set(
      network,
      list.map((a) => ({ floating: a['OS-EXT-IPS:type'] === 'floating', address: a.addr })),
    );
  }
  for (const sub of sources.subports) {
    for (const ip of sub.fixedIps) {
      if (!keep(ip.ip_address)) continue;
      byNetwork.set(sub.networkName, [
        ...(byNetwork.get(sub.networkName) ?? []),
        { floating: false, address: ip.ip_address },
      ]);
    }
  }

  for (const network of [...byNetwork.keys()].sort(byteOrder)) {
    for (const { floating, address } of byNetwork.get(network)!) {
      let type: NodeAddressType;
      if (floating) {
        type = 'ExternalIP';
      } else if (networking.publicNetworkNames.includes(network)) {
        type = 'ExternalIP';
        remove(addrs, address);
      } else if (
        networking.internalNetworkNames.length === 0 ||
        networking.internalNetworkNames.includes(network)
      ) {
        type = 'InternalIP';
      } else {
        remove(addrs, address);
        continue;
      }
      if (keep(address)) add(addrs, { type, address });
    }
  }

  return networking.addressSortOrder.length > 0
    ? sortNodeAddresses(addrs, networking.addressSortOrder)
    : addrs;
}

function add(addrs: NodeAddress[], a: NodeAddress): void {
  if (!addrs.some((e) => e.address === a.address && e.type === a.type)) addrs.push(a);
}

/** Removes the address under every type (OCCM's removeFromNodeAddresses with an empty type). */
function remove(addrs: NodeAddress[], address: string): void {
  for (let i = addrs.length - 1; i >= 0; i--) if (addrs[i]!.address === address) addrs.splice(i, 1);
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * OCCM's sortNodeAddresses: priority = how early the first matching CIDR comes in the list (0 for
 * none, or a Hostname); higher priority first; equal non-zero priority by address bytes; the sort
 * is stable, so addresses outside every CIDR keep their relative order.
 */
export function sortNodeAddresses(
  addrs: readonly NodeAddress[],
  sortOrder: readonly string[],
): NodeAddress[] {
  const cidrs = sortOrder.map((c) => parseCidr(c)).filter((c): c is Cidr => c !== undefined);
  const priority = (address: string): number => {
    const ip = parseIp(address);
    if (!ip) return 0;
    const i = cidrs.findIndex((c) => cidrContains(c, ip));
    return i < 0 ? 0 : cidrs.length - i;
  };
  return addrs
    .map((a, index) => ({ a, index, p: priority(a.address) }))
    .sort((x, y) => {
      if (x.p > 0 && x.p === y.p) {
        const c = compareIps(parseIp(x.a.address)!, parseIp(y.a.address)!);
        if (c !== 0) return c;
      } else if (x.p !== y.p) {
        return y.p - x.p;
      }
      return x.index - y.index;
    })
    .map((e) => e.a);
}

/** What gathering the sources needs from the network client (`client.network`). */
export interface NetworkReader {
  ports: {
    list(query: { device_id: string }, options?: CallOptions): { all(): Promise<Port[]> };
    get(id: string, options?: CallOptions): Promise<Port>;
  };
  networks: { get(id: string, options?: CallOptions): Promise<Network> };
}

export interface GatheredSources extends AddressSources {
  /** Subports OCCM would log and skip: the port or its network could not be read. */
  skipped: { portId: string; error: unknown }[];
}

/**
 * The calls OCCM makes: the server's ports, then for each trunk subport its port and its network.
 * A failing subport read is skipped (and returned) rather than failing the Node, as upstream does.
 */
export async function gatherAddressSources(
  network: NetworkReader,
  server: ServerForAddresses & { id: string },
  options: CallOptions = {},
): Promise<GatheredSources> {
  const ports = await network.ports.list({ device_id: server.id }, options).all();
  const subports: SubportAddresses[] = [];
  const skipped: GatheredSources['skipped'] = [];
  for (const port of ports) {
    for (const sub of port.trunk_details?.sub_ports ?? []) {
      try {
        const p = await network.ports.get(sub.port_id, options);
        const n = await network.networks.get(p.network_id, options);
        subports.push({ networkName: n.name, fixedIps: p.fixed_ips });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        skipped.push({ portId: sub.port_id, error });
      }
    }
  }
  return { server, ports, subports, skipped };
}
