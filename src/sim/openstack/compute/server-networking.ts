/**
 * Servers' Neutron side: the API-time checks of `networks`, the ports the compute host creates or
 * binds during the build, their release on delete, and the `addresses` and os-interface views,
 * always read from Neutron so floating IPs and port changes show at once.
 */
import { isIPv4 } from '../../../lib/cidr.ts';
import type { NetworkApi, PortView } from '../core/contracts.ts';
import { SimError } from '../core/errors.ts';
import type { NetworkRequest, ServerPort, ServerRecord } from './server-store.ts';

/**
 * What Nova asks Neutron about security groups. NetworkApi does not carry it (yet); when the
 * emulated Neutron offers these methods they are used, otherwise names resolve only to `default`.
 */
interface SecurityGroupLookup {
  findSecurityGroups?(projectId: string, nameOrId: string): { id: string; name: string }[];
  getSecurityGroup?(id: string): { id: string; name: string } | undefined;
}

const lookup = (network: NetworkApi): SecurityGroupLookup => network as NetworkApi & SecurityGroupLookup;

export const portNotFound = (id: string) => new SimError(400, `Port id ${id} could not be found.`);
export const portInUse = (id: string) => new SimError(409, `Port ${id} is still in use.`);

export interface Requester {
  projectId: string;
  isAdmin: boolean;
}

/** API.validate_networks: the checks nova-api makes before answering 202. */
export function validateNetworks(
  network: NetworkApi,
  who: Requester,
  requests: NetworkRequest[],
  count: number,
): void {
  for (const r of requests) {
    if (r.port_id !== undefined) {
      const port = network.getPort(r.port_id);
      if (!port || (!who.isAdmin && port.project_id !== who.projectId)) throw portNotFound(r.port_id);
      if (port.device_id) throw portInUse(r.port_id);
      if (port.fixed_ips.length === 0)
        throw new SimError(400, `Port ${r.port_id} requires a FixedIP in order to be used.`);
      if (count > 1) {
        throw new SimError(
          400,
          'Failed to launch instances: Unable to launch multiple instances with a single configured port ID. Please launch your instance one by one with different ports.',
        );
      }
      continue;
    }
    const id = r.network_id!;
    const net = network.getNetwork(id);
    if (!net) throw new SimError(400, `Network ${id} could not be found.`);
    if (net['router:external'] && !who.isAdmin) {
      throw new SimError(403, `It is not allowed to create an interface on external network ${id}`);
    }
    if (net.subnets.length === 0)
      throw new SimError(400, `Network ${id} requires a subnet in order to boot instances on.`);
    if (r.fixed_ip !== undefined && count > 1) {
      throw new SimError(
        400,
        'Failed to launch instances: max_count cannot be greater than 1 if an fixed_ip is specified.',
      );
    }
  }
}

/** SecurityGroupNotFound at the API, when Neutron offers a lookup; otherwise Neutron checks names at port create. */
export function validateSecurityGroups(network: NetworkApi, projectId: string, names: string[]): void {
  const sg = lookup(network);
  if (!sg.findSecurityGroups) return;
  for (const name of names) {
    const found = sg.findSecurityGroups(projectId, name);
    if (found.length > 1) {
      throw new SimError(
        409,
        `Multiple security_group matches found for name '${name}', use an ID to be more specific.`,
      );
    }
    if (found.length === 0) throw new SimError(400, `Security group ${name} not found.`);
  }
}

/** Names go to Neutron as Nova passes them; only `default` is left to Neutron's own default. */
function groupsForPorts(names: string[]): string[] | undefined {
  return names.length === 0 || names.every((n) => n === 'default') ? undefined : names;
}

/** Creates or binds the server's ports on its host (the compute manager's allocate_for_instance). */
export function allocatePorts(network: NetworkApi, s: ServerRecord, requests: NetworkRequest[]): void {
  const host = s.host ?? '';
  const owner = `compute:${s.availability_zone ?? 'nova'}`;
  const done: ServerPort[] = [];
  try {
    const groups = groupsForPorts(s.security_groups);
    for (const r of requests) {
      if (r.port_id !== undefined) {
        const port = network.getPort(r.port_id);
        if (!port) throw portNotFound(r.port_id);
        if (port.device_id && port.device_id !== s.id) throw portInUse(r.port_id);
        network.updatePort(r.port_id, { device_id: s.id, device_owner: owner, 'binding:host_id': host });
        done.push({ port_id: r.port_id, created_by_nova: false, tag: r.tag });
        continue;
      }
      const port = network.createPort({
        network_id: r.network_id!,
        project_id: s.project_id,
        ...(r.fixed_ip !== undefined ? { fixed_ips: [{ ip_address: r.fixed_ip }] } : {}),
        ...(groups ? { security_groups: groups } : {}),
        device_id: s.id,
        device_owner: owner,
        'binding:host_id': host,
      });
      done.push({ port_id: port.id, created_by_nova: true, tag: r.tag });
    }
  } catch (err) {
    releasePorts(network, done, s.id);
    throw err;
  }
  s.ports.push(...done);
}

/**
 * Deletes the ports Nova created and unbinds the ones the user brought. Best effort, as Nova's
 * cleanup: a port already gone is fine, and a failure is logged rather than failing the delete.
 */
export function releasePorts(
  network: NetworkApi,
  ports: ServerPort[],
  serverId: string,
  log?: { warn(obj: object, msg: string): void },
): void {
  for (const p of ports) {
    try {
      if (p.created_by_nova) {
        network.deletePort(p.port_id);
      } else if (network.getPort(p.port_id)?.device_id === serverId) {
        network.updatePort(p.port_id, {
          device_id: '',
          device_owner: '',
          'binding:host_id': '',
          status: 'DOWN',
        });
      }
    } catch (err) {
      if (!(SimError.is(err) && err.status === 404))
        log?.warn({ err, port: p.port_id }, 'nova: port cleanup failed');
    }
  }
}

export interface AddressEntry {
  version: number;
  addr: string;
  'OS-EXT-IPS:type'?: 'fixed' | 'floating';
  'OS-EXT-IPS-MAC:mac_addr'?: string;
}

function ipVersion(network: NetworkApi, subnetId: string, addr: string): number {
  return network.getSubnet(subnetId)?.ip_version ?? (isIPv4(addr) ? 4 : 6);
}

/** The server's ports as Nova's info cache lists them: attached ones that still exist, in order. */
export function serverPorts(network: NetworkApi, s: ServerRecord): PortView[] {
  const out: PortView[] = [];
  for (const p of s.ports) {
    const port = network.getPort(p.port_id);
    if (port) out.push(port);
  }
  return out;
}

/** `addresses`: per network name, each fixed IP followed by the floating IPs mapped to it. */
export function addressesOf(
  network: NetworkApi,
  s: ServerRecord,
  extended: boolean,
): Record<string, AddressEntry[]> {
  const out: Record<string, AddressEntry[]> = {};
  for (const port of serverPorts(network, s)) {
    const label = network.getNetwork(port.network_id)?.name ?? port.network_id;
    const list = (out[label] ??= []);
    const floating = network.floatingIpsForPort(port.id);
    for (const ip of port.fixed_ips) {
      const version = ipVersion(network, ip.subnet_id, ip.ip_address);
      list.push(
        extended
          ? {
              version,
              addr: ip.ip_address,
              'OS-EXT-IPS:type': 'fixed',
              'OS-EXT-IPS-MAC:mac_addr': port.mac_address,
            }
          : { version, addr: ip.ip_address },
      );
      for (const f of floating) {
        if (f.fixed_ip_address !== ip.ip_address) continue;
        list.push(
          extended
            ? {
                version: isIPv4(f.floating_ip_address) ? 4 : 6,
                addr: f.floating_ip_address,
                'OS-EXT-IPS:type': 'floating',
                'OS-EXT-IPS-MAC:mac_addr': port.mac_address,
              }
            : { version: isIPv4(f.floating_ip_address) ? 4 : 6, addr: f.floating_ip_address },
        );
      }
    }
  }
  return out;
}

/** Unique security group names over the server's ports, as `security_groups` lists them. */
export function securityGroupNames(network: NetworkApi, s: ServerRecord): string[] {
  const sg = lookup(network);
  const names: string[] = [];
  for (const port of serverPorts(network, s)) {
    for (const id of port.security_groups) {
      const name = sg.getSecurityGroup?.(id)?.name;
      if (name !== undefined && !names.includes(name)) names.push(name);
    }
  }
  if (names.length > 0 || sg.getSecurityGroup) return names;
  // Without a lookup, fall back on the names asked for at create (Nova-created ports carry them).
  return serverPorts(network, s).some((p) => p.security_groups.length > 0) ? [...s.security_groups] : [];
}

export function interfaceView(port: PortView, tag: string | null, withTag: boolean) {
  return {
    net_id: port.network_id,
    port_id: port.id,
    mac_addr: port.mac_address,
    port_state: port.status,
    fixed_ips: port.fixed_ips.map((f) => ({ subnet_id: f.subnet_id, ip_address: f.ip_address })),
    ...(withTag ? { tag } : {}),
  };
}
