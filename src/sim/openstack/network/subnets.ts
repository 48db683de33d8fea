/** Subnets: CIDR, gateway and allocation pool rules of Neutron's db_base_plugin and IPAM. */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import { checkAttributePolicy, getNetwork, getSubnet, requireOwner } from './access.ts';
import { badRequest, invalidAttr, invalidInput, pyRepr, subnetInUse } from './errors.ts';
import {
  cidrContains,
  cidrsOverlap,
  eui64,
  formatCidr,
  formatIp,
  parseCidr,
  parseIp,
  type Cidr,
} from './ip.ts';
import { SubnetAllocator, type Range } from './ipam.ts';
import { isRouterPort, OWNER, type AllocationPool, type PortRecord, type SubnetRecord } from './records.ts';
import {
  checkBoolean,
  checkIntRange,
  checkIp,
  checkList,
  checkRoutes,
  checkString,
  checkStringList,
  checkUuid,
  checkValues,
  nullable,
  type AttrMap,
  type Body,
  type Check,
} from './schema.ts';
import type { Actor, NeutronState } from './state.ts';
import { allocateFromPool, poolForSubnet } from './subnetpools.ts';

const readOnly = { post: false, put: false };
const IPV6_MODES = ['slaac', 'dhcpv6-stateful', 'dhcpv6-stateless', null];

const checkPools: Check = (v, attr) => {
  if (!Array.isArray(v)) throw invalidAttr(attr, `Invalid data format for IP pool: '${pyRepr(v)}'`);
  return v.map((p: unknown) => {
    const pool = p as Record<string, unknown> | null;
    if (
      typeof pool !== 'object' ||
      pool === null ||
      typeof pool.start !== 'string' ||
      typeof pool.end !== 'string'
    ) {
      throw invalidAttr(attr, `Invalid data format for IP pool: '${pyRepr(p)}'`);
    }
    for (const k of ['start', 'end'] as const) {
      if (!parseIp(pool[k] as string))
        throw invalidAttr(attr, `'${String(pool[k])}' is not a valid IP address`);
    }
    return { start: pool.start, end: pool.end };
  });
};

export const SUBNET_ATTRS: AttrMap = {
  id: readOnly,
  name: { post: true, put: true, check: checkString(255) },
  ip_version: {
    post: true,
    put: false,
    required: true,
    check: (v, a) => checkValues([4, 6] as never)(typeof v === 'string' ? Number(v) : v, a),
  },
  network_id: { post: true, put: false, required: true, check: checkUuid },
  subnetpool_id: { post: true, put: false, check: nullable(checkUuid) },
  prefixlen: { post: true, put: false, check: checkIntRange(0, 128) },
  cidr: { post: true, put: false, check: checkString() },
  gateway_ip: { post: true, put: true, check: nullable(checkIp) },
  allocation_pools: { post: true, put: true, check: checkPools },
  dns_nameservers: { post: true, put: true, check: checkList(checkIp) },
  host_routes: { post: true, put: true, check: checkRoutes },
  enable_dhcp: { post: true, put: true, check: checkBoolean },
  ipv6_ra_mode: { post: true, put: false, check: checkValues(IPV6_MODES) },
  ipv6_address_mode: { post: true, put: false, check: checkValues(IPV6_MODES) },
  use_default_subnetpool: { post: true, put: false, check: checkBoolean },
  service_types: { post: true, put: true, check: checkStringList },
  description: { post: true, put: true, check: checkString(255) },
  tags: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

export function subnetCidr(s: SubnetRecord): Cidr {
  const c = parseCidr(s.cidr);
  if (!c) throw new Error(`subnet ${s.id} has a bad cidr ${s.cidr}`);
  return c;
}

/** SLAAC and DHCPv6-stateless subnets give ports EUI-64 addresses rather than pool addresses. */
export function isAutoAddress(s: SubnetRecord): boolean {
  return (
    s.ip_version === 6 && (s.ipv6_address_mode === 'slaac' || s.ipv6_address_mode === 'dhcpv6-stateless')
  );
}

/** neutron ipam_utils.check_subnet_ip: the IPv4 network and broadcast addresses are never port addresses. */
export function validSubnetIp(s: SubnetRecord, value: bigint, deviceOwner: string): boolean {
  const c = subnetCidr(s);
  if (value < c.network || value > c.last) return false;
  if (c.version === 6) return value !== c.network || isRouterPort(deviceOwner) || deviceOwner === '';
  if (c.prefixlen >= 31) return true;
  return value !== c.network && value !== c.last;
}

const rangeText = (v: 4 | 6, r: Range) => `${formatIp(v, r.start)}-${formatIp(v, r.end)}`;

function toRanges(pools: readonly AllocationPool[]): Range[] {
  return pools.map((p) => ({ start: parseIp(p.start)!.value, end: parseIp(p.end)!.value }));
}

/** Whole CIDR minus network, broadcast (IPv4) and gateway, as Neutron's default pools. */
function defaultPools(c: Cidr, gateway: bigint | undefined): Range[] {
  let first = c.network + 1n;
  let last = c.version === 4 ? c.last - 1n : c.last;
  if (c.version === 4 && c.prefixlen >= 31) {
    first = c.network;
    last = c.last;
  }
  if (first > last) return [];
  if (gateway === undefined || gateway < first || gateway > last) return [{ start: first, end: last }];
  const out: Range[] = [];
  if (gateway > first) out.push({ start: first, end: gateway - 1n });
  if (gateway < last) out.push({ start: gateway + 1n, end: last });
  return out;
}

function validatePools(c: Cidr, pools: Range[], gateway: bigint | undefined): void {
  const cidrText = formatCidr(c);
  for (const p of pools) {
    if (p.start > p.end) {
      throw new SimError(400, `The allocation pool ${rangeText(c.version, p)} is not valid.`, {
        type: 'InvalidAllocationPool',
      });
    }
    if (p.start < c.network || p.end > c.last) {
      throw new SimError(
        400,
        `The allocation pool ${rangeText(c.version, p)} spans beyond the subnet cidr ${cidrText}.`,
        {
          type: 'OutOfBoundsAllocationPool',
        },
      );
    }
  }
  const sorted = [...pools].sort((a, b) => (a.start < b.start ? -1 : 1));
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    if (b.start <= a.end) {
      throw new SimError(
        409,
        `Found overlapping allocation pools: ${rangeText(c.version, a)} ${rangeText(c.version, b)} for subnet ${cidrText}.`,
        {
          type: 'OverlappingAllocationPools',
        },
      );
    }
  }
  if (gateway !== undefined) {
    const hit = pools.find((p) => gateway >= p.start && gateway <= p.end);
    if (hit) {
      throw new SimError(
        409,
        `Gateway ip ${formatIp(c.version, gateway)} conflicts with allocation pool ${rangeText(c.version, hit)}`,
        {
          type: 'GatewayConflictWithAllocationPools',
        },
      );
    }
  }
}

function checkIpv6Modes(version: number, body: Body, c: Cidr): void {
  const ra = body.ipv6_ra_mode as string | null | undefined;
  const addr = body.ipv6_address_mode as string | null | undefined;
  if (version === 4) {
    if (ra) throw invalidInput('ipv6_ra_mode is not valid when ip_version is 4');
    if (addr) throw invalidInput('ipv6_address_mode is not valid when ip_version is 4');
    return;
  }
  if (ra && addr && ra !== addr) {
    throw invalidInput(
      `ipv6_ra_mode set to '${ra}' with ipv6_address_mode set to '${addr}' is not valid. If both attributes are set, they must be the same value`,
    );
  }
  if (body.enable_dhcp === false && (ra || addr)) {
    throw invalidInput('ipv6_ra_mode or ipv6_address_mode cannot be set when enable_dhcp is set to False');
  }
  if ((addr === 'slaac' || addr === 'dhcpv6-stateless') && c.prefixlen !== 64) {
    throw invalidInput(
      `Invalid CIDR ${formatCidr(c)} for IPv6 address mode. OpenStack uses the EUI-64 address format, which requires the prefix to be /64`,
    );
  }
}

export function createSubnet(state: NeutronState, actor: Actor, body: Body): SubnetRecord {
  checkAttributePolicy(actor.isAdmin, 'create_subnet', body, ['service_types']);
  const net = getNetwork(state, actor, body.network_id as string);
  if (!actor.isAdmin && net.project_id !== actor.projectId) throw badRequestPolicy();
  const project = state.ownerFor(actor, body.project_id, 'create_subnet');
  if (body.cidr !== undefined && body.prefixlen !== undefined) {
    throw badRequest('subnets', 'cidr and prefixlen must not be supplied together');
  }
  const pool = poolForSubnet(state, actor, body);
  if (!pool && body.cidr === undefined) {
    throw badRequest('subnets', 'a subnetpool must be specified in the absence of a cidr');
  }
  const version = body.ip_version as 4 | 6;
  if (pool && body.cidr === undefined && body.allocation_pools !== undefined) {
    throw badRequest('subnets', 'allocation_pools allowed only for specific subnet requests.');
  }
  if (pool && pool.ip_version !== version) {
    throw badRequest(
      'subnets',
      `Cannot allocate IPv${version} subnet from IPv${pool.ip_version} subnet pool`,
    );
  }
  let c: Cidr;
  if (body.cidr === undefined) {
    c = allocateFromPool(state, pool!, project, { prefixlen: body.prefixlen as number | undefined });
  } else {
    const text = body.cidr as string;
    const loose = parseCidr(text);
    if (!loose) throw invalidAttr('cidr', `'${text}' is not a valid IP subnet`);
    const strict = parseCidr(text, true);
    if (!strict)
      throw invalidAttr(
        'cidr',
        `'${text}' isn't a recognized IP subnet cidr, '${formatCidr(loose)}' is recommended`,
      );
    if (strict.version !== version) throw invalidInput(`Cidr ${text} does not match ip_version ${version}`);
    c = pool ? allocateFromPool(state, pool, project, { cidr: strict }) : strict;
  }
  for (const other of net.subnets) {
    const s = state.subnets.get(other);
    if (s && s.ip_version === version && s.subnetpool_id !== (pool?.id ?? null)) {
      throw new SimError(
        400,
        'Subnets hosted on the same network must be allocated from the same subnet pool.',
        { type: 'NetworkSubnetPoolAffinityError' },
      );
    }
  }
  checkIpv6Modes(version, body, c);
  for (const other of net.subnets) {
    const s = state.subnets.get(other);
    if (s && cidrsOverlap(subnetCidr(s), c)) {
      throw invalidInput(
        `Requested subnet with cidr: ${formatCidr(c)} for network: ${net.id} overlaps with another subnet`,
      );
    }
  }
  let gateway: bigint | undefined;
  if (body.gateway_ip === undefined) {
    // A subnet carved from a pool gets the block's first host as gateway, in both families.
    if (pool && body.cidr === undefined) gateway = c.network + 1n;
    else if (version === 6) gateway = c.network;
    else if (c.prefixlen < 31) gateway = c.network + 1n;
  } else if (body.gateway_ip !== null) {
    const g = parseIp(body.gateway_ip as string)!;
    if (g.version !== version)
      throw invalidInput(`Gateway IP version inconsistent with allocation pool version`);
    gateway = g.value;
  }
  const pools = body.allocation_pools
    ? toRanges(body.allocation_pools as AllocationPool[])
    : defaultPools(c, gateway);
  if (body.allocation_pools) {
    for (const p of body.allocation_pools as AllocationPool[]) {
      if (parseIp(p.start)!.version !== version || parseIp(p.end)!.version !== version) {
        throw invalidInput(`Gateway IP version inconsistent with allocation pool version`);
      }
    }
    validatePools(c, pools, gateway);
  }
  const nameservers = (body.dns_nameservers as string[] | undefined) ?? [];
  const dup = nameservers.find((n, i) => nameservers.indexOf(n) !== i);
  if (dup) throw invalidAttr('dns_nameservers', `Duplicate nameserver '${dup}'`);
  state.checkQuota('subnet', project);

  const subnet: SubnetRecord = {
    ...state.standard(uuid(), project, (body.description as string | undefined) ?? ''),
    name: (body.name as string | undefined) ?? '',
    network_id: net.id,
    ip_version: version,
    subnetpool_id: pool?.id ?? null,
    enable_dhcp: (body.enable_dhcp as boolean | undefined) ?? true,
    ipv6_ra_mode: (body.ipv6_ra_mode as string | null | undefined) ?? null,
    ipv6_address_mode: (body.ipv6_address_mode as string | null | undefined) ?? null,
    gateway_ip: gateway === undefined ? null : formatIp(version, gateway),
    cidr: formatCidr(c),
    allocation_pools: pools.map((p) => ({
      start: formatIp(version, p.start),
      end: formatIp(version, p.end),
    })),
    host_routes: (body.host_routes as SubnetRecord['host_routes'] | undefined) ?? [],
    dns_nameservers: nameservers,
    service_types: (body.service_types as string[] | undefined) ?? [],
  };
  state.subnets.insert(subnet);
  state.allocators.set(subnet.id, new SubnetAllocator(version, pools));
  net.subnets.push(subnet.id);
  state.bump(net);
  if (isAutoAddress(subnet)) addAutoAddresses(state, subnet);
  state.changed();
  return subnet;
}

function badRequestPolicy(): SimError {
  return new SimError(403, 'rule:create_subnet is disallowed by policy', { type: 'PolicyNotAuthorized' });
}

/** Neutron gives existing ports an address on a new SLAAC subnet (router ports excepted). */
function addAutoAddresses(state: NeutronState, subnet: SubnetRecord): void {
  const c = subnetCidr(subnet);
  const alloc = state.allocators.get(subnet.id)!;
  for (const pid of state.portsByNetwork.get(subnet.network_id)) {
    const port = state.ports.get(pid);
    if (!port || isRouterPort(port.device_owner) || port.device_owner === OWNER.floatingIp) continue;
    const addr = eui64(c.network, port.mac_address);
    if (alloc.owner(addr) !== undefined) continue;
    alloc.reserve(addr, port.id);
    port.fixed_ips = [...port.fixed_ips, { subnet_id: subnet.id, ip_address: formatIp(6, addr) }];
    state.bump(port);
  }
}

export function updateSubnet(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: Body,
  ifMatch?: string,
): SubnetRecord {
  const subnet = getSubnet(state, actor, id);
  requireOwner(actor, subnet, 'update_subnet');
  checkAttributePolicy(actor.isAdmin, 'update_subnet', body, ['service_types']);
  state.checkRevision(subnet, ifMatch);
  const c = subnetCidr(subnet);
  let gateway = subnet.gateway_ip === null ? undefined : parseIp(subnet.gateway_ip)!.value;
  if (body.gateway_ip !== undefined) {
    if (body.gateway_ip === null) gateway = undefined;
    else {
      const g = parseIp(body.gateway_ip as string)!;
      if (g.version !== c.version)
        throw invalidInput('Gateway IP version inconsistent with allocation pool version');
      gateway = g.value;
    }
  }
  const pools = body.allocation_pools
    ? toRanges(body.allocation_pools as AllocationPool[])
    : toRanges(subnet.allocation_pools);
  if (body.allocation_pools !== undefined || body.gateway_ip !== undefined) validatePools(c, pools, gateway);
  if (body.allocation_pools !== undefined) {
    subnet.allocation_pools = pools.map((p) => ({
      start: formatIp(c.version, p.start),
      end: formatIp(c.version, p.end),
    }));
    state.allocators.get(subnet.id)?.setPools(pools);
  }
  if (body.gateway_ip !== undefined)
    subnet.gateway_ip = gateway === undefined ? null : formatIp(c.version, gateway);
  const target = subnet as unknown as Record<string, unknown>;
  for (const k of ['name', 'description', 'dns_nameservers', 'host_routes', 'enable_dhcp', 'service_types']) {
    if (body[k] !== undefined) target[k] = body[k];
  }
  state.bump(subnet);
  state.changed();
  return subnet;
}

export function deleteSubnet(state: NeutronState, actor: Actor, id: string, ifMatch?: string): void {
  const subnet = getSubnet(state, actor, id);
  requireOwner(actor, subnet, 'delete_subnet');
  state.checkRevision(subnet, ifMatch);
  const holders = portsOnSubnet(state, subnet.id);
  const auto = isAutoAddress(subnet);
  const blocking = holders.filter(
    (p) => p.device_owner !== OWNER.dhcp && (!auto || isRouterPort(p.device_owner)),
  );
  if (blocking.length > 0) throw subnetInUse(subnet.id);
  for (const p of holders) {
    p.fixed_ips = p.fixed_ips.filter((f) => f.subnet_id !== subnet.id);
    state.bump(p);
  }
  deleteSubnetRecord(state, subnet.id);
  const net = state.networks.get(subnet.network_id);
  if (net) state.bump(net);
  state.changed();
}

/** Removes a subnet and its IPAM without checks (network delete, after the port checks). */
export function deleteSubnetRecord(state: NeutronState, id: string): void {
  const subnet = state.subnets.remove(id);
  if (!subnet) return;
  state.allocators.delete(id);
  const net = state.networks.get(subnet.network_id);
  if (net) net.subnets = net.subnets.filter((s) => s !== id);
}

export function portsOnSubnet(state: NeutronState, subnetId: string): PortRecord[] {
  const subnet = state.subnets.get(subnetId);
  if (!subnet) return [];
  const out: PortRecord[] = [];
  for (const pid of state.portsByNetwork.get(subnet.network_id)) {
    const p = state.ports.get(pid);
    if (p?.fixed_ips.some((f) => f.subnet_id === subnetId)) out.push(p);
  }
  return out;
}

/** The subnet of `network_id` whose CIDR holds `ip`, if any. */
export function subnetForIp(
  state: NeutronState,
  subnetIds: readonly string[],
  ip: string,
): SubnetRecord | undefined {
  const addr = parseIp(ip);
  if (!addr) return undefined;
  for (const id of subnetIds) {
    const s = state.subnets.get(id);
    if (s && cidrContains(subnetCidr(s), addr)) return s;
  }
  return undefined;
}
