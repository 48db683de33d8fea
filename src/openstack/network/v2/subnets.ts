/** Neutron subnets. https://docs.openstack.org/api-ref/network/v2/#subnets */
import { neutronResource, type ListParams, type TagFilters } from './resource.ts';

export interface AllocationPool {
  start: string;
  end: string;
}

export interface HostRoute {
  destination: string;
  nexthop: string;
}

export interface Subnet {
  id: string;
  name: string;
  description: string;
  project_id: string;
  network_id: string;
  ip_version: 4 | 6;
  cidr: string;
  gateway_ip: string | null;
  enable_dhcp: boolean;
  allocation_pools: AllocationPool[];
  dns_nameservers: string[];
  host_routes: HostRoute[];
  ipv6_ra_mode: string | null;
  ipv6_address_mode: string | null;
  subnetpool_id: string | null;
  service_types: string[];
  tags: string[];
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

interface SubnetWritable {
  name?: string;
  description?: string;
  /** `null` makes a subnet without a gateway. */
  gateway_ip?: string | null;
  enable_dhcp?: boolean;
  allocation_pools?: AllocationPool[];
  dns_nameservers?: string[];
  host_routes?: HostRoute[];
  service_types?: string[];
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface SubnetCreateOpts extends SubnetWritable {
  network_id: string;
  ip_version: 4 | 6;
  /** Required unless `subnetpool_id` is given. */
  cidr?: string;
  /** Carve the subnet from this pool: the next free block of `prefixlen` (the pool's default when absent). */
  subnetpool_id?: string;
  /** With `subnetpool_id` and no `cidr`: the block's length. */
  prefixlen?: number;
  /** The family's default pool instead of `subnetpool_id`. */
  use_default_subnetpool?: boolean;
  ipv6_ra_mode?: 'slaac' | 'dhcpv6-stateful' | 'dhcpv6-stateless';
  ipv6_address_mode?: 'slaac' | 'dhcpv6-stateful' | 'dhcpv6-stateless';
  project_id?: string;
  [field: string]: unknown;
}

export interface SubnetUpdateOpts extends SubnetWritable {
  [field: string]: unknown;
}

export interface SubnetListQuery extends ListParams, TagFilters {
  id?: string | readonly string[];
  name?: string | readonly string[];
  network_id?: string | readonly string[];
  project_id?: string;
  cidr?: string;
  ip_version?: 4 | 6;
  gateway_ip?: string;
  enable_dhcp?: boolean;
  subnetpool_id?: string;
  description?: string;
  ipv6_address_mode?: 'slaac' | 'dhcpv6-stateful' | 'dhcpv6-stateless';
  ipv6_ra_mode?: 'slaac' | 'dhcpv6-stateful' | 'dhcpv6-stateless';
}

export const subnets = neutronResource<Subnet, SubnetCreateOpts, SubnetUpdateOpts, SubnetListQuery>({
  path: 'subnets',
  key: 'subnet',
  collection: 'subnets',
  label: 'subnet',
});
