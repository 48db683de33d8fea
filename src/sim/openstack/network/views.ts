/**
 * Views share the records' arrays and objects rather than copying them: core serialises a response
 * as soon as the handler returns, and 10k-port lists must stay cheap.
 *
 * Wire shapes of each resource, key for key as Zed returns them (see openstack-samples), including
 * what only admins see (provider attributes, port bindings) and the quirks (is_default on create).
 */
import { portDetails } from './floating-ips.ts';
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
import { rulesOf } from './security-groups.ts';
import type { Actor, NeutronState } from './state.ts';

export type View = Record<string, unknown>;

const tagsOf = (rec: { tags: string[] }) => (rec.tags.length < 2 ? rec.tags : [...rec.tags].sort());

export function networkView(_state: NeutronState, actor: Actor, n: NetworkRecord, created = false): View {
  const v: View = {
    id: n.id,
    name: n.name,
    tenant_id: n.project_id,
    admin_state_up: n.admin_state_up,
    mtu: n.mtu,
    status: n.status,
    subnets: n.subnets,
    shared: n.shared,
    availability_zone_hints: n.availability_zone_hints,
    availability_zones: [],
    ipv4_address_scope: null,
    ipv6_address_scope: null,
    'router:external': n['router:external'],
    description: n.description,
    port_security_enabled: n.port_security_enabled,
    tags: tagsOf(n),
    created_at: n.created_at,
    updated_at: n.updated_at,
    revision_number: n.revision_number,
    project_id: n.project_id,
  };
  if (actor.isAdmin) {
    v['provider:network_type'] = n['provider:network_type'];
    v['provider:physical_network'] = n['provider:physical_network'];
    v['provider:segmentation_id'] = n['provider:segmentation_id'];
  }
  // auto-allocated-topology only extends external networks, but the create path always sets it.
  if (created || n['router:external']) v.is_default = n.is_default;
  return v;
}

export function subnetView(s: SubnetRecord): View {
  return {
    id: s.id,
    name: s.name,
    tenant_id: s.project_id,
    network_id: s.network_id,
    ip_version: s.ip_version,
    subnetpool_id: s.subnetpool_id,
    enable_dhcp: s.enable_dhcp,
    ipv6_ra_mode: s.ipv6_ra_mode,
    ipv6_address_mode: s.ipv6_address_mode,
    gateway_ip: s.gateway_ip,
    cidr: s.cidr,
    allocation_pools: s.allocation_pools,
    host_routes: s.host_routes,
    dns_nameservers: s.dns_nameservers,
    description: s.description,
    service_types: s.service_types,
    tags: tagsOf(s),
    created_at: s.created_at,
    updated_at: s.updated_at,
    revision_number: s.revision_number,
    project_id: s.project_id,
  };
}

/**
 * Zed answers a subnet pool's create, show and list with its prefix lengths as JSON strings
 * (`"24"`, read back from the database) and an update with numbers (the request's values): recorded
 * from the real service, and gophercloud reads both.
 */
export function subnetPoolView(p: SubnetPoolRecord, lengths: 'strings' | 'numbers' = 'strings'): View {
  const length = (n: number) => (lengths === 'strings' ? String(n) : n);
  return {
    id: p.id,
    name: p.name,
    tenant_id: p.project_id,
    prefixes: p.prefixes,
    min_prefixlen: length(p.min_prefixlen),
    max_prefixlen: length(p.max_prefixlen),
    default_prefixlen: length(p.default_prefixlen),
    ip_version: p.ip_version,
    is_default: p.is_default,
    default_quota: p.default_quota,
    address_scope_id: p.address_scope_id,
    shared: p.shared,
    description: p.description,
    tags: tagsOf(p),
    created_at: p.created_at,
    updated_at: p.updated_at,
    revision_number: p.revision_number,
    project_id: p.project_id,
  };
}

export function portView(state: NeutronState, actor: Actor, p: PortRecord): View {
  const v: View = {
    id: p.id,
    name: p.name,
    network_id: p.network_id,
    tenant_id: p.project_id,
    mac_address: p.mac_address,
    admin_state_up: p.admin_state_up,
    status: p.status,
    device_id: p.device_id,
    device_owner: p.device_owner,
    fixed_ips: p.fixed_ips,
    allowed_address_pairs: p.allowed_address_pairs,
    extra_dhcp_opts: p.extra_dhcp_opts,
    security_groups: p.security_groups,
    description: p.description,
    'binding:vnic_type': p['binding:vnic_type'],
  };
  if (actor.isAdmin) {
    v['binding:profile'] = p['binding:profile'];
    v['binding:host_id'] = p['binding:host_id'];
    v['binding:vif_type'] = p['binding:vif_type'];
    v['binding:vif_details'] = p['binding:vif_details'];
  }
  v.port_security_enabled = p.port_security_enabled;
  const trunkId = state.trunkByParent.get(p.id);
  const trunk = trunkId ? state.trunks.get(trunkId) : undefined;
  if (trunk) {
    v.trunk_details = {
      trunk_id: trunk.id,
      sub_ports: trunk.sub_ports.map((sp) => ({
        segmentation_id: sp.segmentation_id,
        segmentation_type: sp.segmentation_type,
        port_id: sp.port_id,
        mac_address: state.ports.get(sp.port_id)?.mac_address ?? null,
      })),
    };
  }
  v.tags = tagsOf(p);
  v.created_at = p.created_at;
  v.updated_at = p.updated_at;
  v.revision_number = p.revision_number;
  v.project_id = p.project_id;
  return v;
}

export function ruleView(r: SecurityGroupRuleRecord, embedded = false): View {
  const v: View = {
    id: r.id,
    tenant_id: r.project_id,
    security_group_id: r.security_group_id,
    ethertype: r.ethertype,
    direction: r.direction,
    protocol: r.protocol,
    port_range_min: r.port_range_min,
    port_range_max: r.port_range_max,
    remote_ip_prefix: r.remote_ip_prefix,
    remote_address_group_id: r.remote_address_group_id,
    normalized_cidr: r.normalized_cidr,
    remote_group_id: r.remote_group_id,
  };
  // Rules inside a group come straight from the DB dict, with columns the rule API hides.
  if (embedded) v.standard_attr_id = r.standard_attr_id;
  v.description = r.description;
  if (embedded) v.tags = [];
  v.created_at = r.created_at;
  v.updated_at = r.updated_at;
  v.revision_number = r.revision_number;
  v.project_id = r.project_id;
  return v;
}

export function securityGroupView(state: NeutronState, g: SecurityGroupRecord): View {
  return {
    id: g.id,
    name: g.name,
    stateful: g.stateful,
    tenant_id: g.project_id,
    description: g.description,
    shared: g.shared,
    security_group_rules: rulesOf(state, g.id).map((r) => ruleView(r, true)),
    tags: tagsOf(g),
    created_at: g.created_at,
    updated_at: g.updated_at,
    revision_number: g.revision_number,
    project_id: g.project_id,
  };
}

export function routerView(state: NeutronState, actor: Actor, r: RouterRecord): View {
  const gw = r.external_gateway_info;
  const gwPort = r.gw_port_id ? state.ports.get(r.gw_port_id) : undefined;
  const v: View = {
    id: r.id,
    name: r.name,
    tenant_id: r.project_id,
    admin_state_up: r.admin_state_up,
    status: r.status,
    external_gateway_info: gw
      ? {
          network_id: gw.network_id,
          external_fixed_ips: gwPort?.fixed_ips ?? gw.external_fixed_ips,
          enable_snat: gw.enable_snat,
        }
      : null,
    description: r.description,
    availability_zones: [],
    availability_zone_hints: r.availability_zone_hints,
    routes: r.routes,
    flavor_id: r.flavor_id,
  };
  if (actor.isAdmin) {
    v.distributed = r.distributed;
    v.ha = r.ha;
  }
  v.tags = tagsOf(r);
  v.created_at = r.created_at;
  v.updated_at = r.updated_at;
  v.revision_number = r.revision_number;
  v.project_id = r.project_id;
  return v;
}

export function floatingIpView(state: NeutronState, f: FloatingIpRecord): View {
  return {
    id: f.id,
    tenant_id: f.project_id,
    floating_ip_address: f.floating_ip_address,
    floating_network_id: f.floating_network_id,
    router_id: f.router_id,
    port_id: f.port_id,
    fixed_ip_address: f.fixed_ip_address,
    status: f.status,
    description: f.description,
    port_details: portDetails(state, f),
    tags: tagsOf(f),
    created_at: f.created_at,
    updated_at: f.updated_at,
    revision_number: f.revision_number,
    project_id: f.project_id,
  };
}

export function trunkView(t: TrunkRecord): View {
  return {
    admin_state_up: t.admin_state_up,
    id: t.id,
    project_id: t.project_id,
    name: t.name,
    port_id: t.port_id,
    status: t.status,
    sub_ports: t.sub_ports.map((sp) => ({
      port_id: sp.port_id,
      segmentation_type: sp.segmentation_type,
      segmentation_id: sp.segmentation_id,
    })),
    revision_number: t.revision_number,
    description: t.description,
    created_at: t.created_at,
    updated_at: t.updated_at,
    tenant_id: t.project_id,
    tags: tagsOf(t),
  };
}

/** Neutron's `fields=` (repeatable, never comma-split): only those keys, in the object's order. */
export function pickFields(v: View, query: URLSearchParams): View {
  const fields = query.getAll('fields').filter(Boolean);
  if (fields.length === 0) return v;
  const out: View = {};
  for (const k of Object.keys(v)) if (fields.includes(k)) out[k] = v[k];
  return out;
}
