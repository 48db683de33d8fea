/**
 * Neutron floating IPs. Association is an update of `port_id`; the port's network must reach the
 * floating network through a router with a gateway there, or Neutron answers 404
 * `ExternalGatewayForFloatingIPNotFound`. https://docs.openstack.org/api-ref/network/v2/#floating-ips-floatingips
 */
import type { ServiceClient } from '../../core/service-client.ts';
import { neutronResource, type ListParams, type RevisionOptions, type TagFilters } from './resource.ts';

export interface FloatingIp {
  id: string;
  project_id: string;
  floating_ip_address: string;
  floating_network_id: string;
  router_id: string | null;
  port_id: string | null;
  fixed_ip_address: string | null;
  /** `ACTIVE`, `DOWN` (no L3 agent, or not associated), `ERROR`. */
  status: string;
  description: string;
  /** The associated port's summary (the `fip-port-details` extension). */
  port_details?: {
    name: string;
    network_id: string;
    mac_address: string;
    admin_state_up: boolean;
    status: string;
    device_id: string;
    device_owner: string;
  } | null;
  dns_name?: string;
  dns_domain?: string;
  tags: string[];
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface FloatingIpCreateOpts {
  floating_network_id: string;
  /** A specific address; taken already is a 409 `IpAddressAlreadyAllocated`. */
  floating_ip_address?: string;
  subnet_id?: string;
  port_id?: string;
  fixed_ip_address?: string;
  description?: string;
  project_id?: string;
  [field: string]: unknown;
}

export interface FloatingIpUpdateOpts {
  /** A port to associate with, or null to disassociate. */
  port_id?: string | null;
  fixed_ip_address?: string | null;
  description?: string;
  [field: string]: unknown;
}

export interface FloatingIpListQuery extends ListParams, TagFilters {
  id?: string | readonly string[];
  floating_ip_address?: string | readonly string[];
  floating_network_id?: string;
  port_id?: string | readonly string[];
  fixed_ip_address?: string;
  router_id?: string;
  status?: string;
  project_id?: string;
  description?: string;
}

export const floatingIps = neutronResource<
  FloatingIp,
  FloatingIpCreateOpts,
  FloatingIpUpdateOpts,
  FloatingIpListQuery
>({
  path: 'floatingips',
  key: 'floatingip',
  collection: 'floatingips',
  label: 'floating_ip',
});

/** Points the floating IP at a port (and one of its addresses, when it has several). */
export function associateFloatingIp(
  sc: ServiceClient,
  id: string,
  portId: string,
  options: RevisionOptions & { fixedIpAddress?: string | undefined } = {},
): Promise<FloatingIp> {
  const update: FloatingIpUpdateOpts = { port_id: portId };
  if (options.fixedIpAddress !== undefined) update.fixed_ip_address = options.fixedIpAddress;
  return floatingIps.update(sc, id, update, options);
}

/** Detaches the floating IP from its port; the address stays allocated to the project. */
export function disassociateFloatingIp(
  sc: ServiceClient,
  id: string,
  options: RevisionOptions = {},
): Promise<FloatingIp> {
  return floatingIps.update(sc, id, { port_id: null }, options);
}
