/** The admin API's `POST /_sim/state/neutron/{resource}/{id}`: force fields, e.g. a port to ERROR or DOWN. */
import type { NeutronState } from './state.ts';

/** Fields kept consistent with indexes (or IPAM) are refused rather than corrupting them. */
const PROTECTED = new Set([
  'id',
  'project_id',
  'tenant_id',
  'network_id',
  'fixed_ips',
  'mac_address',
  'security_groups',
  'sub_ports',
  'port_id',
]);

export function forceState(
  state: NeutronState,
  resource: string,
  id: string,
  fields: Record<string, unknown>,
): boolean {
  const collections: Record<string, { get(id: string): object | undefined }> = {
    port: state.ports,
    network: state.networks,
    subnet: state.subnets,
    router: state.routers,
    floatingip: state.floatingIps,
    trunk: state.trunks,
    security_group: state.securityGroups,
  };
  const rec = collections[resource]?.get(id) as Record<string, unknown> | undefined;
  if (!rec) return false;
  state.cancelPending(id);
  for (const [k, v] of Object.entries(fields)) {
    if (PROTECTED.has(k) || !(k in rec)) continue;
    // A port's indexed fields go through the state so its indexes follow.
    const port = resource === 'port' ? state.ports.get(id)! : undefined;
    if (port && k === 'device_id') {
      state.setDevice(port, String(v), port.device_owner);
    } else if (port && k === 'name') {
      state.rename(port, String(v));
    } else if (port && k === 'mac_address') {
      state.setMac(port, String(v));
    } else if (port && k === 'security_groups' && Array.isArray(v)) {
      state.setGroups(port, v.map(String));
    } else {
      rec[k] = v;
    }
  }
  state.bump(rec as { revision_number: number; updated_at: string });
  state.changed();
  return true;
}
