/**
 * What on the cluster's network and bastion is this cluster's to delete, and how to tell the user
 * about the rest. A cluster deletes only what its marks say it made: CAPO's description
 * (`Created by cluster-api-provider-openstack cluster <namespace>-<name>`, on the floating IPs this
 * controller creates and on the ports CAPO creates), or a bastion port's name
 * (`<cluster>-bastion[-<spec hash>]-<index|suffix>`). Ports of Neutron itself (DHCP, OVN metadata)
 * go with the network, a router's interfaces with the router. Anything else — a Nova server's,
 * Octavia's, a pod's or a user's port, a floating IP someone attached to the bastion — is foreign:
 * it is never deleted, and the deletion waits while it blocks, saying what it is and what to do.
 */
import type { FloatingIp } from '../../openstack/network/v2/floating-ips.ts';
import type { Port } from '../../openstack/network/v2/ports.ts';
import { bastionServerName, resourceDescription } from './names.ts';

/** A resource the cluster found in its way and leaves alone. */
export type ForeignResource = ForeignPort | ForeignFloatingIp;

export interface ForeignPort {
  kind: 'port';
  id: string;
  name: string;
  deviceOwner: string;
  deviceID: string;
}

export interface ForeignFloatingIp {
  kind: 'floating IP';
  id: string;
  address: string;
  description: string;
  portID: string;
}

/** A router's ports on the network: the router's interface, in its HA, DVR and SNAT forms. */
const ROUTER_OWNERS: ReadonlySet<string> = new Set([
  'network:router_interface',
  'network:router_interface_distributed',
  'network:ha_router_replicated_interface',
  'network:router_centralized_snat',
]);

export type PortOwnership =
  /** Ours (CAPO's description or a bastion port's name): deleted before the network. */
  | 'ours'
  /** Neutron's own (DHCP, OVN metadata) or a removed router's interface: goes with the network or the router. */
  | 'neutron'
  | 'foreign';

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|-]/g, '\\$&');
}

/** Sorts a port of the cluster network; `routerIDs` are the routers whose interfaces we removed. */
export function portOwnership(
  port: Pick<Port, 'name' | 'description' | 'device_owner' | 'device_id'>,
  marks: { resourceName: string; clusterName: string; routerIDs: ReadonlySet<string> },
): PortOwnership {
  const owner = port.device_owner;
  if (ROUTER_OWNERS.has(owner)) return marks.routerIDs.has(port.device_id) ? 'neutron' : 'foreign';
  if (owner.startsWith('network:')) return 'neutron';
  if (port.description === resourceDescription(marks.resourceName)) return 'ours';
  const bastionPort = new RegExp(
    `^${escapeRegExp(bastionServerName(marks.clusterName))}(-[0-9a-f]{10})?-.+$`,
  );
  return bastionPort.test(port.name) ? 'ours' : 'foreign';
}

/** A floating IP this controller created (its CAPO description); any other on the bastion is foreign. */
export function isOurFloatingIp(fip: Pick<FloatingIp, 'description'>, resourceName: string): boolean {
  return fip.description === resourceDescription(resourceName);
}

export function foreignPort(port: Port): ForeignPort {
  return {
    kind: 'port',
    id: port.id,
    name: port.name,
    deviceOwner: port.device_owner,
    deviceID: port.device_id,
  };
}

export function foreignFloatingIp(fip: FloatingIp): ForeignFloatingIp {
  return {
    kind: 'floating IP',
    id: fip.id,
    address: fip.floating_ip_address,
    description: fip.description,
    portID: fip.port_id ?? '',
  };
}

function describe(r: ForeignResource): string {
  if (r.kind === 'port') {
    const owner = r.deviceOwner
      ? `device_owner ${r.deviceOwner}${r.deviceID ? ` ${r.deviceID}` : ''}`
      : 'unused';
    return `port ${r.id} (${r.name ? `name ${r.name}` : 'no name'}, ${owner})`;
  }
  return `floating IP ${r.address} (id ${r.id}, ${r.description ? `description "${r.description}"` : 'no description'}) on port ${r.portID}`;
}

/**
 * One message for a condition and an Event: each resource by id, name and owner, why it is left,
 * and what the user can do. `where` names the place: `the cluster network <name> (<id>)` or `the
 * bastion's ports`.
 */
export function foreignMessage(where: string, resources: readonly ForeignResource[]): string {
  const listed = resources.map(describe).join('; ');
  const ports = resources.filter((r) => r.kind === 'port');
  const fips = resources.filter((r) => r.kind === 'floating IP');
  const fixes: string[] = [];
  if (ports.length > 0)
    fixes.push(
      `delete ${ports.length > 1 ? 'those ports' : 'that port'}, or what uses ${ports.length > 1 ? 'them' : 'it'} ` +
        `(openstack port delete ${ports.map((p) => p.id).join(' ')})`,
    );
  if (fips.length > 0)
    fixes.push(
      `detach ${fips.length > 1 ? 'those floating IPs' : 'that floating IP'} ` +
        `(${fips.map((f) => `openstack floating ip unset --port ${f.address}`).join('; ')})`,
    );
  return (
    `on ${where}: ${listed}, not made by this cluster and so not deleted. ` +
    `The deletion waits: ${fixes.join(', and ')}; it goes on by itself`
  );
}
