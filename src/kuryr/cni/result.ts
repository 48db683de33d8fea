/**
 * The result of a successful ADD (CNI spec "Success"): one interface, in the sandbox, with its
 * addresses (each pointing at it by index 0), its routes and DNS, in the version the runtime's
 * configuration asked for.
 */
import { ipVersion } from '../../lib/cidr.ts';
import type { PodInterface } from './binding/types.ts';
import { versionAtLeast, type CniResult } from './spec.ts';

export function cniResult(iface: PodInterface, netns: string, cniVersion: string): CniResult {
  // 0.3.x and 0.4.0 name each address's family; 1.0.0 dropped the field.
  const withFamily = !versionAtLeast(cniVersion, '1.0.0');
  return {
    cniVersion,
    interfaces: [{ name: iface.ifname, mac: iface.mac, sandbox: netns }],
    ips: iface.addresses.map((a) => ({
      ...(withFamily ? { version: ipVersion(a.ip) === 6 ? ('6' as const) : ('4' as const) } : {}),
      address: `${a.ip}/${a.prefixLength}`,
      ...(a.gateway ? { gateway: a.gateway } : {}),
      interface: 0,
    })),
    routes: iface.routes.map((r) => ({ dst: r.dst, ...(r.gw ? { gw: r.gw } : {}) })),
    dns: iface.dns.nameservers.length > 0 ? { nameservers: [...iface.dns.nameservers] } : {},
  };
}
