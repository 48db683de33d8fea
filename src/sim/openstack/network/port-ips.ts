/** A port's fixed IPs: explicit requests and automatic allocation, as Neutron's pluggable IPAM decides them. */
import type { FixedIp } from '../core/contracts.ts';
import {
  invalidInput,
  invalidIpForNetwork,
  invalidIpForSubnet,
  ipAlreadyAllocated,
  ipGenerationFailure,
  notFound,
} from './errors.ts';
import { eui64, formatIp, parseIp } from './ip.ts';
import type { SubnetAllocator } from './ipam.ts';
import { isRouterPort, type NetworkRecord, type SubnetRecord } from './records.ts';
import type { NeutronState } from './state.ts';
import { isAutoAddress, subnetCidr, subnetForIp, validSubnetIp } from './subnets.ts';

export interface IpRequest {
  subnet_id?: string;
  ip_address?: string;
}

export interface PortIdentity {
  id: string;
  deviceOwner: string;
  mac: string;
}

interface Taken {
  alloc: SubnetAllocator;
  value: bigint;
}

/**
 * Reserves addresses for `port` on `net`: the requested ones, or (when `requested` is undefined)
 * one IPv4 address, one stateful IPv6 address and every SLAAC address, as Neutron does.
 * All-or-nothing: on error nothing stays reserved.
 */
export function allocateIps(
  state: NeutronState,
  net: NetworkRecord,
  port: PortIdentity,
  requested: IpRequest[] | undefined,
): FixedIp[] {
  const taken: Taken[] = [];
  const out: FixedIp[] = [];
  const take = (subnet: SubnetRecord, alloc: SubnetAllocator, value: bigint) => {
    alloc.reserve(value, port.id);
    taken.push({ alloc, value });
    out.push({ subnet_id: subnet.id, ip_address: formatIp(subnet.ip_version, value) });
  };
  try {
    if (requested === undefined) allocateDefault(state, net, port, take);
    else for (const req of requested) allocateOne(state, net, port, req, take);
  } catch (e) {
    for (const t of taken) t.alloc.release(t.value);
    throw e;
  }
  return out;
}

type Take = (subnet: SubnetRecord, alloc: SubnetAllocator, value: bigint) => void;

function allocatorOf(state: NeutronState, subnet: SubnetRecord): SubnetAllocator {
  const alloc = state.allocators.get(subnet.id);
  if (!alloc) throw new Error(`no allocator for subnet ${subnet.id}`);
  return alloc;
}

/** Subnets restricted to some device owners (service_types) serve only those; others serve anyone. */
function serves(subnet: SubnetRecord, deviceOwner: string): boolean {
  return subnet.service_types.length === 0 || subnet.service_types.includes(deviceOwner);
}

function allocateDefault(state: NeutronState, net: NetworkRecord, port: PortIdentity, take: Take): void {
  const subnets = net.subnets
    .flatMap((id) => state.subnets.get(id) ?? [])
    .filter((s) => serves(s, port.deviceOwner));
  const v4 = subnets.filter((s) => s.ip_version === 4);
  const v6Stateful = subnets.filter((s) => s.ip_version === 6 && !isAutoAddress(s));
  const v6Auto = subnets.filter((s) => isAutoAddress(s));
  for (const family of [v4, v6Stateful]) {
    if (family.length === 0) continue;
    let done = false;
    for (const s of family) {
      const alloc = allocatorOf(state, s);
      const v = alloc.peek();
      if (v === undefined) continue;
      take(s, alloc, v);
      done = true;
      break;
    }
    if (!done) throw ipGenerationFailure(net.id);
  }
  if (isRouterPort(port.deviceOwner)) return;
  for (const s of v6Auto) {
    const alloc = allocatorOf(state, s);
    const v = eui64(subnetCidr(s).network, port.mac);
    const owner = alloc.owner(v);
    if (owner !== undefined && owner !== port.id) throw ipAlreadyAllocated(formatIp(6, v), s.id);
    take(s, alloc, v);
  }
}

function allocateOne(
  state: NeutronState,
  net: NetworkRecord,
  port: PortIdentity,
  req: IpRequest,
  take: Take,
): void {
  let subnet: SubnetRecord | undefined;
  if (req.subnet_id !== undefined) {
    subnet = state.subnets.get(req.subnet_id);
    if (!subnet) throw notFound.subnet(req.subnet_id);
    if (subnet.network_id !== net.id) {
      throw invalidInput(
        `Failed to create port on network ${net.id}, because fixed_ips included invalid subnet ${req.subnet_id}`,
      );
    }
  } else if (req.ip_address !== undefined) {
    subnet = subnetForIp(state, net.subnets, req.ip_address);
    if (!subnet) throw invalidIpForNetwork(req.ip_address);
  } else {
    throw invalidInput('IP allocation requires subnet_id or ip_address');
  }
  const alloc = allocatorOf(state, subnet);
  const auto = isAutoAddress(subnet) && !isRouterPort(port.deviceOwner);
  if (req.ip_address !== undefined) {
    const ip = parseIp(req.ip_address);
    if (!ip || ip.version !== subnet.ip_version || !validSubnetIp(subnet, ip.value, port.deviceOwner)) {
      throw invalidIpForSubnet(req.ip_address);
    }
    if (auto) {
      throw invalidInput(
        `IPv6 address ${req.ip_address} can not be directly assigned to a port on subnet ${subnet.id} since the subnet is configured for automatic addresses`,
      );
    }
    const owner = alloc.owner(ip.value);
    if (owner !== undefined && owner !== port.id)
      throw ipAlreadyAllocated(formatIp(ip.version, ip.value), subnet.id);
    take(subnet, alloc, ip.value);
    return;
  }
  if (auto) {
    const v = eui64(subnetCidr(subnet).network, port.mac);
    const owner = alloc.owner(v);
    if (owner !== undefined && owner !== port.id) throw ipAlreadyAllocated(formatIp(6, v), subnet.id);
    take(subnet, alloc, v);
    return;
  }
  const v = alloc.peek();
  if (v === undefined) throw ipGenerationFailure(net.id);
  take(subnet, alloc, v);
}
