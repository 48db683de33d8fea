/**
 * A KuryrPort's VIF as the kernel is to see it: the pod interface a binding plugs and the CNI result
 * reports. Upstream's `_configure_l3`: each subnet's fixed IPs with the subnet's prefix length, the
 * subnet's routes, and a default route through the subnet's gateway on the default interface.
 */
import { readVif, type Vif } from '../api/vif.ts';
import { ipVersion, parseCidr } from '../../lib/cidr.ts';
import type { InterfaceRoute, PodInterface } from './binding/types.ts';

export function podInterfaceOf(vif: Vif, ifname: string, isDefaultGateway = true): PodInterface {
  const addresses: PodInterface['addresses'] = [];
  const routes: InterfaceRoute[] = [];
  const nameservers = new Set<string>();
  for (const subnet of vif.network.subnets) {
    const cidr = parseCidr(subnet.cidr);
    if (!cidr) throw new Error(`VIF ${vif.id}: subnet cidr "${subnet.cidr}" is not a CIDR`);
    for (const ip of subnet.ips) addresses.push({ ip, prefixLength: cidr.prefix, gateway: subnet.gateway });
    for (const r of subnet.routes) routes.push({ dst: r.cidr, gw: r.gateway });
    if (isDefaultGateway && subnet.gateway)
      routes.push({ dst: ipVersion(subnet.gateway) === 6 ? '::/0' : '0.0.0.0/0', gw: subnet.gateway });
    for (const d of subnet.dns) nameservers.add(d);
  }
  return {
    ifname,
    mac: vif.address.toLowerCase(),
    mtu: vif.network.mtu || undefined,
    vlanId: vif.vlanId,
    addresses,
    routes,
    dns: { nameservers: [...nameservers] },
  };
}

/** The same from the stored os-vif primitive (the daemon's answer to ADD). */
export function podInterface(primitive: unknown, ifname: string): PodInterface {
  return podInterfaceOf(readVif(primitive), ifname);
}
