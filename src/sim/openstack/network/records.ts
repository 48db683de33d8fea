/**
 * Neutron objects as the emulator stores them: the wire fields (snake_case, Neutron's names) plus
 * a few internal links. Views pick the wire fields; records are never sent as they are.
 */
import type { FixedIp } from '../core/contracts.ts';

/** Neutron's standard attributes: every resource with tags, revisions and timestamps has them. */
export interface StandardAttrs {
  id: string;
  project_id: string;
  description: string;
  tags: string[];
  created_at: string;
  updated_at: string;
  revision_number: number;
  /** Row id in Neutron's standardattributes table; leaks into embedded security group rules. */
  standard_attr_id: number;
}

export interface NetworkRecord extends StandardAttrs {
  name: string;
  admin_state_up: boolean;
  mtu: number;
  status: string;
  subnets: string[];
  shared: boolean;
  port_security_enabled: boolean;
  'router:external': boolean;
  is_default: boolean;
  availability_zone_hints: string[];
  'provider:network_type': string;
  'provider:physical_network': string | null;
  'provider:segmentation_id': number | null;
}

export interface AllocationPool {
  start: string;
  end: string;
}

export interface HostRoute {
  destination: string;
  nexthop: string;
}

export interface SubnetRecord extends StandardAttrs {
  name: string;
  network_id: string;
  ip_version: 4 | 6;
  subnetpool_id: string | null;
  enable_dhcp: boolean;
  ipv6_ra_mode: string | null;
  ipv6_address_mode: string | null;
  gateway_ip: string | null;
  cidr: string;
  allocation_pools: AllocationPool[];
  host_routes: HostRoute[];
  dns_nameservers: string[];
  service_types: string[];
}

/** A subnet pool: prefixes subnets are carved from, with the prefix-length bounds Neutron enforces. */
export interface SubnetPoolRecord extends StandardAttrs {
  name: string;
  ip_version: 4 | 6;
  /** Compacted CIDRs, lowest address first (netaddr.IPSet's order). */
  prefixes: string[];
  default_prefixlen: number;
  min_prefixlen: number;
  max_prefixlen: number;
  is_default: boolean;
  shared: boolean;
  /** Per-project quota in /32 (IPv4) or /64 (IPv6) units; null is unlimited. */
  default_quota: number | null;
  address_scope_id: string | null;
}

export interface AddressPair {
  ip_address: string;
  mac_address: string;
}

export interface ExtraDhcpOpt {
  opt_name: string;
  opt_value: string;
  ip_version: number;
}

export interface PortRecord extends StandardAttrs {
  name: string;
  network_id: string;
  mac_address: string;
  admin_state_up: boolean;
  status: string;
  device_id: string;
  device_owner: string;
  fixed_ips: FixedIp[];
  allowed_address_pairs: AddressPair[];
  extra_dhcp_opts: ExtraDhcpOpt[];
  security_groups: string[];
  port_security_enabled: boolean;
  'binding:vnic_type': string;
  'binding:profile': Record<string, unknown>;
  'binding:host_id': string;
  'binding:vif_type': string;
  'binding:vif_details': Record<string, unknown>;
}

export interface SecurityGroupRecord extends StandardAttrs {
  name: string;
  stateful: boolean;
  shared: boolean;
}

export interface SecurityGroupRuleRecord extends Omit<StandardAttrs, 'description' | 'tags'> {
  /** Rules Neutron creates itself (default egress, default group) carry a null description. */
  description: string | null;
  security_group_id: string;
  ethertype: string;
  direction: string;
  protocol: string | null;
  port_range_min: number | null;
  port_range_max: number | null;
  remote_ip_prefix: string | null;
  remote_address_group_id: string | null;
  normalized_cidr: string | null;
  remote_group_id: string | null;
}

export interface GatewayInfo {
  network_id: string;
  enable_snat: boolean;
  external_fixed_ips: FixedIp[];
}

export interface RouterRecord extends StandardAttrs {
  name: string;
  admin_state_up: boolean;
  status: string;
  external_gateway_info: GatewayInfo | null;
  routes: HostRoute[];
  availability_zone_hints: string[];
  distributed: boolean;
  ha: boolean;
  flavor_id: string | null;
  /** The router:gateway port on the external network. */
  gw_port_id: string | null;
}

export interface FloatingIpRecord extends StandardAttrs {
  floating_ip_address: string;
  floating_network_id: string;
  router_id: string | null;
  port_id: string | null;
  fixed_ip_address: string | null;
  status: string;
  /** The network:floatingip port holding the address on the external network. */
  fip_port_id: string;
}

export interface SubPort {
  port_id: string;
  segmentation_type: string;
  segmentation_id: number;
}

export interface TrunkRecord extends StandardAttrs {
  name: string;
  admin_state_up: boolean;
  status: string;
  port_id: string;
  sub_ports: SubPort[];
}

export interface QuotaLimits {
  network: number;
  subnet: number;
  subnetpool: number;
  port: number;
  router: number;
  floatingip: number;
  rbac_policy: number;
  security_group: number;
  security_group_rule: number;
  trunk: number;
}

/** Device owners Neutron itself gives to infrastructure ports. */
export const OWNER = {
  routerInterface: 'network:router_interface',
  routerGateway: 'network:router_gateway',
  floatingIp: 'network:floatingip',
  dhcp: 'network:dhcp',
  trunkSubport: 'trunk:subport',
} as const;

/** Owners whose ports get no security groups and no SLAAC addresses on other subnets. */
export function isNetworkOwned(deviceOwner: string): boolean {
  return deviceOwner.startsWith('network:');
}

export function isRouterPort(deviceOwner: string): boolean {
  return (
    deviceOwner === OWNER.routerInterface ||
    deviceOwner === OWNER.routerGateway ||
    deviceOwner === 'network:router_interface_distributed' ||
    deviceOwner === 'network:ha_router_replicated_interface' ||
    deviceOwner === 'network:router_centralized_snat'
  );
}
