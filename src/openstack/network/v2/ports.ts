/**
 * Neutron ports. https://docs.openstack.org/api-ref/network/v2/#ports
 * Without an L2 agent a port stays `DOWN`; binding it to a host nobody serves gives
 * `binding:vif_type: binding_failed` with a 200 (see ../shared/openstack-real/NOTES.md).
 */
import { listQuery } from '../../core/resource.ts';
import type { Query } from '../../core/url.ts';
import { neutronResource, type ListParams, type TagFilters } from './resource.ts';
import type { SubPort } from './trunks.ts';

export interface FixedIp {
  subnet_id: string;
  ip_address: string;
}

export interface AllowedAddressPair {
  ip_address: string;
  mac_address?: string;
}

export interface Port {
  id: string;
  name: string;
  description: string;
  project_id: string;
  network_id: string;
  mac_address: string;
  admin_state_up: boolean;
  /** `DOWN`, `ACTIVE` (bound and wired), `BUILD`. */
  status: string;
  /** The server (or router, DHCP agent, load balancer) using the port; empty when free. */
  device_id: string;
  /** `compute:<az>`, `network:router_interface`, `Octavia`, …; empty when free. */
  device_owner: string;
  fixed_ips: FixedIp[];
  security_groups: string[];
  allowed_address_pairs: AllowedAddressPair[];
  port_security_enabled?: boolean;
  'binding:host_id'?: string;
  'binding:vnic_type'?: string;
  /** `unbound`, `ovs`, `binding_failed`, …: admin only. */
  'binding:vif_type'?: string;
  'binding:vif_details'?: Record<string, unknown>;
  'binding:profile'?: Record<string, unknown>;
  extra_dhcp_opts?: { opt_name: string; opt_value: string; ip_version?: number }[];
  dns_name?: string;
  /** Present on the parent port of a trunk (the `trunk-details` extension). */
  trunk_details?: { trunk_id: string; sub_ports: (SubPort & { mac_address?: string })[] };
  tags: string[];
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

/** A fixed IP to ask for: an address, a subnet to allocate from, or both. */
export interface FixedIpRequest {
  subnet_id?: string;
  ip_address?: string;
}

interface PortWritable {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  fixed_ips?: FixedIpRequest[];
  security_groups?: string[];
  allowed_address_pairs?: AllowedAddressPair[];
  port_security_enabled?: boolean;
  device_id?: string;
  device_owner?: string;
  'binding:host_id'?: string;
  'binding:vnic_type'?:
    | 'normal'
    | 'direct'
    | 'macvtap'
    | 'baremetal'
    | 'direct-physical'
    | 'virtio-forwarder'
    | 'smart-nic'
    | 'remote-managed';
  'binding:profile'?: Record<string, unknown>;
  extra_dhcp_opts?: { opt_name: string; opt_value: string; ip_version?: number }[];
  dns_name?: string;
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface PortCreateOpts extends PortWritable {
  network_id: string;
  mac_address?: string;
  project_id?: string;
  /**
   * Needs the `tag-ports-during-bulk-creation` extension (an ML2 extension driver many clouds, Zed's
   * defaults included, do not enable; without it a 400): check `extensions.has()`, or tag after create.
   */
  tags?: string[];
  [field: string]: unknown;
}

export interface PortUpdateOpts extends PortWritable {
  mac_address?: string;
  [field: string]: unknown;
}

/** One `fixed_ips` filter: a port matches when one of its addresses satisfies every key given. */
export interface FixedIpFilter {
  ip_address?: string;
  subnet_id?: string;
  /** Substring match (the `ip-substring-filtering` extension). */
  ip_address_substr?: string;
}

export interface PortListQuery extends ListParams, TagFilters {
  id?: string | readonly string[];
  name?: string | readonly string[];
  network_id?: string | readonly string[];
  project_id?: string;
  device_id?: string | readonly string[];
  device_owner?: string | readonly string[];
  mac_address?: string | readonly string[];
  status?: string;
  admin_state_up?: boolean;
  security_groups?: string | readonly string[];
  'binding:host_id'?: string;
  description?: string;
  /** Each filter becomes one `fixed_ips=ip_address=…` style parameter; several must all match. */
  fixed_ips?: readonly FixedIpFilter[];
}

/** `fixed_ips` filters in Neutron's `fixed_ips=<key>=<value>` form, the rest as `listQuery` does. */
export function portQuery(query: PortListQuery): Query {
  const { fixed_ips, ...rest } = query;
  const out = { ...listQuery(rest) };
  if (fixed_ips && fixed_ips.length > 0) {
    out.fixed_ips = fixed_ips.flatMap((f) =>
      Object.entries(f)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${String(v)}`),
    );
  }
  return out;
}

export const ports = neutronResource<Port, PortCreateOpts, PortUpdateOpts, PortListQuery>({
  path: 'ports',
  key: 'port',
  collection: 'ports',
  label: 'port',
  query: portQuery,
});
