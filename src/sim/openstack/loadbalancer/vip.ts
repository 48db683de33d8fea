/**
 * The VIP: validated against Neutron the way Octavia's API does (missing subnet/network/port is a
 * 400), then allocated as a real Neutron port, as the production network driver does, and
 * released with the load balancer when Octavia created it.
 */
import { cidrContains, ipVersion, parseCidr, parseIp } from '../../../lib/cidr.ts';
import type { NetworkApi, PortView } from '../core/contracts.ts';
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import { invalidSubresource, validation } from './errors.ts';
import type { ProviderDriver } from './providers.ts';

export interface VipRequest {
  vip_address?: string | null | undefined;
  vip_port_id?: string | null | undefined;
  vip_subnet_id?: string | null | undefined;
  vip_network_id?: string | null | undefined;
}

export interface ResolvedVip {
  subnetId: string | null;
  networkId: string | null;
  address: string | null;
  port: PortView | undefined;
}

export interface AdditionalVip {
  subnet_id: string;
  ip_address: string;
}

export interface AllocatedVip {
  additional_vips: AdditionalVip[];
  vip_address: string | null;
  vip_port_id: string | null;
  vip_subnet_id: string | null;
  vip_network_id: string | null;
  owned: boolean;
}

export function resolveVip(network: NetworkApi, vip: VipRequest): ResolvedVip {
  if (!vip.vip_port_id && !vip.vip_network_id && !vip.vip_subnet_id) {
    throw new SimError(
      400,
      'Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.',
    );
  }
  if (vip.vip_port_id) {
    const port = network.getPort(vip.vip_port_id);
    if (!port) throw invalidSubresource('Port', vip.vip_port_id);
    if (port.device_id) {
      throw validation(`Port ${port.id} is already used by device ${port.device_id} `);
    }
    let subnetId: string | null = null;
    let address = vip.vip_address ?? null;
    if (vip.vip_subnet_id) {
      if (!network.getSubnet(vip.vip_subnet_id)) throw invalidSubresource('Subnet', vip.vip_subnet_id);
      subnetId = vip.vip_subnet_id;
    } else if (address) {
      subnetId = port.fixed_ips.find((f) => f.ip_address === address)?.subnet_id ?? null;
      if (!subnetId) throw validation('Specified VIP address not found on the specified VIP port.');
    } else if (port.fixed_ips.length === 1) {
      subnetId = port.fixed_ips[0]!.subnet_id;
    } else {
      throw validation(
        "VIP port's subnet could not be determined. Please specify either a VIP subnet or address.",
      );
    }
    address ??= port.fixed_ips.find((f) => f.subnet_id === subnetId)?.ip_address ?? null;
    return { subnetId, networkId: port.network_id, address, port };
  }
  if (vip.vip_network_id) {
    const net = network.getNetwork(vip.vip_network_id);
    if (!net) throw invalidSubresource('Network', vip.vip_network_id);
    if (vip.vip_subnet_id) {
      if (!net.subnets.includes(vip.vip_subnet_id)) throw invalidSubresource('Subnet', vip.vip_subnet_id);
      return {
        subnetId: vip.vip_subnet_id,
        networkId: net.id,
        address: vip.vip_address ?? null,
        port: undefined,
      };
    }
    const subnets = net.subnets.flatMap((id) => network.getSubnet(id) ?? []);
    if (vip.vip_address) {
      const match = subnets.find((s) => ipInCidr(vip.vip_address!, s.cidr));
      if (!match) throw validation('Supplied network does not contain a subnet for VIP address specified.');
      return { subnetId: match.id, networkId: net.id, address: vip.vip_address, port: undefined };
    }
    // Octavia takes the first IPv4 subnet, or the first subnet when there is none.
    const chosen = subnets.find((s) => s.ip_version === 4) ?? subnets[0];
    if (!chosen) throw validation('Supplied network does not contain a subnet.');
    return { subnetId: chosen.id, networkId: net.id, address: null, port: undefined };
  }
  const subnet = network.getSubnet(vip.vip_subnet_id!);
  if (!subnet) throw invalidSubresource('Subnet', vip.vip_subnet_id!);
  return {
    subnetId: subnet.id,
    networkId: subnet.network_id,
    address: vip.vip_address ?? null,
    port: undefined,
  };
}

/** Creates (or adopts) the VIP port; Neutron's own errors (IP in use, pool exhausted) pass through. */
export function allocateVip(
  network: NetworkApi,
  driver: ProviderDriver,
  lbId: string,
  projectId: string,
  requested: VipRequest,
  resolved: ResolvedVip,
  additional: readonly { subnet_id?: unknown; ip_address?: unknown }[],
): AllocatedVip {
  const portName = driver.vipPortName(lbId);
  const asked = additional.map((a) => ({
    subnet_id: a.subnet_id as string,
    ip_address: (a.ip_address as string | null | undefined) ?? '',
  }));
  if (portName === undefined) {
    // The noop provider answers with a made-up VIP and never touches Neutron.
    return {
      additional_vips: asked,
      vip_address: requested.vip_address ?? '198.0.2.5',
      vip_port_id: requested.vip_port_id ?? uuid(),
      vip_subnet_id: requested.vip_subnet_id ?? resolved.subnetId,
      vip_network_id: requested.vip_network_id ?? null,
      owned: false,
    };
  }
  if (resolved.port) {
    const fixed = resolved.port.fixed_ips;
    return {
      additional_vips: asked.map((a) => ({
        subnet_id: a.subnet_id,
        ip_address: a.ip_address || (fixed.find((f) => f.subnet_id === a.subnet_id)?.ip_address ?? ''),
      })),
      vip_address: resolved.address,
      vip_port_id: resolved.port.id,
      vip_subnet_id: resolved.subnetId,
      vip_network_id: resolved.networkId,
      owned: false,
    };
  }
  const fixedIp: { subnet_id?: string; ip_address?: string } = {};
  if (resolved.subnetId) fixedIp.subnet_id = resolved.subnetId;
  if (resolved.address) fixedIp.ip_address = resolved.address;
  let port: PortView;
  try {
    port = network.createPort({
      network_id: resolved.networkId!,
      project_id: projectId,
      name: portName,
      fixed_ips: [fixedIp, ...asked.map((a) => (a.ip_address ? a : { subnet_id: a.subnet_id }))],
      ...(driver.name === 'ovn'
        ? { admin_state_up: true }
        : { device_id: `lb-${lbId}`, device_owner: 'Octavia', admin_state_up: false }),
    });
  } catch (err) {
    // Octavia re-raises the Neutron error with its original code and message.
    if (SimError.is(err)) throw new SimError(err.status, err.message);
    throw err;
  }
  const ip = port.fixed_ips.find((f) => f.subnet_id === resolved.subnetId) ?? port.fixed_ips[0];
  const extra = port.fixed_ips.filter((f) => f !== ip);
  return {
    additional_vips: extra.map((f) => ({ subnet_id: f.subnet_id, ip_address: f.ip_address })),
    vip_address: ip?.ip_address ?? null,
    vip_port_id: port.id,
    vip_subnet_id: ip?.subnet_id ?? resolved.subnetId,
    vip_network_id: port.network_id,
    owned: true,
  };
}

export function releaseVip(network: NetworkApi | undefined, portId: string | null, owned: boolean): void {
  if (!owned || !portId || !network) return;
  try {
    if (network.getPort(portId)) network.deletePort(portId);
  } catch {
    // Octavia ignores a VIP port that is already gone.
  }
}

/** Octavia's `IPAddress(vip) in IPNetwork(subnet.cidr)`: written in the subnet's family, and inside it. */
function ipInCidr(address: string, cidr: string): boolean {
  const version = ipVersion(address);
  const ip = parseIp(address);
  const net = parseCidr(cidr);
  if (!ip || !net || version !== net.family) return false;
  // netaddr compares all the bits: an IPv4-mapped address is IPv6 here, not Go's IPv4.
  return cidrContains(net, { family: version, bytes: ip.bytes });
}
