/** What each collection can be filtered and sorted on (Zed's is_filter / is_sort_key attributes). */
import { canSeeNetwork, canSeeOwned, canSeePort, canSeeRule, canSeeSubnet } from './access.ts';
import { invalidInput, notFound } from './errors.ts';
import { canonicalIp, parseIp } from './ip.ts';
import type { FilterSpec, ListDef } from './listing.ts';
import type {
  FloatingIpRecord,
  NetworkRecord,
  PortRecord,
  RouterRecord,
  SecurityGroupRecord,
  SecurityGroupRuleRecord,
  SubnetPoolRecord,
  SubnetRecord,
  TrunkRecord,
} from './records.ts';
import { canSeeSubnetPool, subnetPoolNotFound } from './subnetpools.ts';
import type { Actor, NeutronState } from './state.ts';
import {
  floatingIpView,
  networkView,
  portView,
  routerView,
  ruleView,
  securityGroupView,
  subnetPoolView,
  subnetView,
  trunkView,
} from './views.ts';

const str = { kind: 'str', sort: true } as const;
const bool = { kind: 'bool', sort: true } as const;
const int = { kind: 'int', sort: true } as const;

/** Filters every standard-attribute resource has. */
const STANDARD = {
  id: str,
  description: str,
  revision_number: int,
  created_at: str,
  updated_at: str,
} as const;

function unionOf(index: { get(key: string): ReadonlySet<string> }, keys: string[]): string[] {
  const out: string[] = [];
  for (const k of keys) for (const id of index.get(k)) out.push(id);
  return out;
}

export function networkList(state: NeutronState, actor: Actor): ListDef<NetworkRecord> {
  const filters: Record<string, FilterSpec<NetworkRecord>> = {
    ...STANDARD,
    name: str,
    admin_state_up: bool,
    status: str,
    shared: bool,
    mtu: int,
    port_security_enabled: bool,
    'router:external': bool,
    is_default: bool,
    'provider:network_type': { ...str, admin: true },
    'provider:physical_network': { ...str, admin: true },
    'provider:segmentation_id': { ...int, admin: true },
    availability_zone_hints: { kind: 'str', get: (n) => n.availability_zone_hints.join(',') },
  };
  return {
    collection: 'networks',
    source: state.networks,
    filters,
    visible: (n) => canSeeNetwork(actor, n),
    markerNotFound: notFound.network,
    render: (n) => networkView(state, actor, n),
    isAdmin: actor.isAdmin,
  };
}

export function subnetList(state: NeutronState, actor: Actor): ListDef<SubnetRecord> {
  return {
    collection: 'subnets',
    source: state.subnets,
    filters: {
      ...STANDARD,
      name: str,
      network_id: str,
      ip_version: int,
      subnetpool_id: str,
      enable_dhcp: bool,
      ipv6_ra_mode: str,
      ipv6_address_mode: str,
      gateway_ip: str,
      cidr: str,
      segment_id: { kind: 'str', get: () => null },
    },
    candidates: (f) => {
      const nets = f.get('network_id');
      return nets ? nets.flatMap((id) => state.networks.get(id)?.subnets ?? []) : undefined;
    },
    visible: (s) => canSeeSubnet(state, actor, s),
    markerNotFound: notFound.subnet,
    render: subnetView,
    isAdmin: actor.isAdmin,
  };
}

/** `fixed_ips=ip_address=X&fixed_ips=subnet_id=Y`: one allocation must satisfy every given key. */
function fixedIpsFilter(values: string[]): (p: PortRecord) => boolean {
  const ips = new Set<string>();
  const subnets = new Set<string>();
  const substrings: string[] = [];
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq < 0) throw invalidInput(`'${v}' is not of the form <key>=[value]`);
    const key = v.slice(0, eq);
    const value = v.slice(eq + 1);
    if (key === 'ip_address') ips.add(canonicalIp(value) ?? value);
    else if (key === 'subnet_id') subnets.add(value);
    else if (key === 'ip_address_substr') substrings.push(value);
  }
  return (p) =>
    p.fixed_ips.some(
      (f) =>
        (ips.size === 0 || ips.has(f.ip_address)) &&
        (subnets.size === 0 || subnets.has(f.subnet_id)) &&
        (substrings.length === 0 || substrings.some((s) => f.ip_address.includes(s))),
    );
}

/** Ports holding the addresses of `fixed_ips=ip_address=...` filters, found through IPAM, not a scan. */
function portsByAddress(state: NeutronState, values: string[]): string[] | undefined {
  const ips = values
    .filter((v) => v.startsWith('ip_address='))
    .map((v) => parseIp(v.slice('ip_address='.length)));
  if (ips.length === 0 || ips.some((ip) => !ip)) return undefined;
  const out: string[] = [];
  for (const alloc of state.allocators.values()) {
    for (const ip of ips) {
      if (ip!.version !== alloc.version) continue;
      const owner = alloc.owner(ip!.value);
      if (owner) out.push(owner);
    }
  }
  return out;
}

export function portList(state: NeutronState, actor: Actor): ListDef<PortRecord> {
  return {
    collection: 'ports',
    source: state.ports,
    filters: {
      ...STANDARD,
      name: str,
      network_id: str,
      mac_address: { kind: 'str', sort: true, get: (p) => p.mac_address },
      admin_state_up: bool,
      status: str,
      device_id: str,
      device_owner: str,
      port_security_enabled: bool,
      'binding:host_id': { ...str, admin: true },
      'binding:vnic_type': str,
      'binding:vif_type': { ...str, admin: true },
    },
    special: {
      fixed_ips: fixedIpsFilter,
      security_groups: (values) => (p) => p.security_groups.some((g) => values.includes(g)),
      mac_address: (values) => {
        const wanted = new Set(values.map((v) => v.toLowerCase()));
        return (p) => wanted.has(p.mac_address);
      },
    },
    candidates: (f) => {
      const nets = f.get('network_id');
      const devices = f.get('device_id');
      const names = f.get('name');
      const fixed = f.get('fixed_ips');
      const options: string[][] = [];
      if (nets) options.push(unionOf(state.portsByNetwork, nets));
      if (names) options.push(unionOf(state.portsByName, names));
      if (devices && !devices.includes('')) options.push(unionOf(state.portsByDevice, devices));
      if (fixed) {
        const byIp = portsByAddress(state, fixed);
        if (byIp) options.push(byIp);
      }
      return options.sort((a, b) => a.length - b.length)[0];
    },
    visible: (p) => canSeePort(state, actor, p),
    markerNotFound: notFound.port,
    render: (p) => portView(state, actor, p),
    isAdmin: actor.isAdmin,
  };
}

export function securityGroupList(state: NeutronState, actor: Actor): ListDef<SecurityGroupRecord> {
  return {
    collection: 'security_groups',
    source: state.securityGroups,
    filters: { ...STANDARD, name: str, stateful: bool, shared: bool },
    visible: (g) => canSeeOwned(actor, g),
    markerNotFound: notFound.securityGroup,
    render: (g) => securityGroupView(state, g),
    isAdmin: actor.isAdmin,
  };
}

export function ruleList(state: NeutronState, actor: Actor): ListDef<SecurityGroupRuleRecord> {
  const { description: _d, ...standard } = STANDARD;
  return {
    collection: 'security_group_rules',
    source: state.rules,
    filters: {
      ...standard,
      description: str,
      security_group_id: str,
      direction: str,
      ethertype: str,
      protocol: str,
      port_range_min: int,
      port_range_max: int,
      remote_ip_prefix: str,
      remote_group_id: str,
      remote_address_group_id: str,
      normalized_cidr: str,
    },
    candidates: (f) => {
      const groups = f.get('security_group_id');
      return groups ? unionOf(state.rulesByGroup, groups) : undefined;
    },
    visible: (r) => canSeeRule(state, actor, r),
    markerNotFound: notFound.securityGroupRule,
    render: (r) => ruleView(r),
    isAdmin: actor.isAdmin,
  };
}

export function routerList(state: NeutronState, actor: Actor): ListDef<RouterRecord> {
  return {
    collection: 'routers',
    source: state.routers,
    filters: {
      ...STANDARD,
      name: str,
      admin_state_up: bool,
      status: str,
      flavor_id: str,
      distributed: { ...bool, admin: true },
      ha: { ...bool, admin: true },
    },
    visible: (r) => canSeeOwned(actor, r),
    markerNotFound: notFound.router,
    render: (r) => routerView(state, actor, r),
    isAdmin: actor.isAdmin,
  };
}

export function floatingIpList(state: NeutronState, actor: Actor): ListDef<FloatingIpRecord> {
  return {
    collection: 'floatingips',
    source: state.floatingIps,
    filters: {
      ...STANDARD,
      floating_ip_address: str,
      floating_network_id: str,
      router_id: str,
      port_id: str,
      fixed_ip_address: str,
      status: str,
    },
    candidates: (f) => {
      const ports = f.get('port_id');
      return ports ? unionOf(state.fipsByPort, ports) : undefined;
    },
    visible: (f) => canSeeOwned(actor, f),
    markerNotFound: notFound.floatingip,
    render: (f) => floatingIpView(state, f),
    isAdmin: actor.isAdmin,
  };
}

export function trunkList(state: NeutronState, actor: Actor): ListDef<TrunkRecord> {
  return {
    collection: 'trunks',
    source: state.trunks,
    filters: { ...STANDARD, name: str, admin_state_up: bool, status: str, port_id: str },
    visible: (t) => canSeeOwned(actor, t),
    markerNotFound: notFound.trunk,
    render: trunkView,
    isAdmin: actor.isAdmin,
  };
}

export function subnetPoolList(state: NeutronState, actor: Actor): ListDef<SubnetPoolRecord> {
  return {
    collection: 'subnetpools',
    source: state.subnetPools,
    filters: {
      ...STANDARD,
      name: str,
      ip_version: int,
      is_default: bool,
      shared: bool,
      address_scope_id: str,
      default_prefixlen: int,
      min_prefixlen: int,
      max_prefixlen: int,
      default_quota: int,
    },
    visible: (p) => canSeeSubnetPool(actor, p),
    markerNotFound: subnetPoolNotFound,
    render: (p) => subnetPoolView(p),
    isAdmin: actor.isAdmin,
  };
}
