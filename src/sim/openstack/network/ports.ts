/**
 * Ports: creation (single and all-or-nothing bulk), updates, binding and deletion. The HTTP API and
 * the cross-service NetworkApi (Nova, Octavia) both come through here, so both get Neutron's rules.
 */
import type { FixedIp } from '../core/contracts.ts';
import { SimError } from '../core/errors.ts';
import { macAddress, uuid } from '../core/ids.ts';
import { canSeePort, checkAttributePolicy, getNetwork, getPort, getSecurityGroup } from './access.ts';
import {
  asText,
  httpBadRequest,
  invalidAttr,
  ipAlreadyAllocated,
  macInUse,
  policyNotAuthorized,
  pyRepr,
} from './errors.ts';
import { canonicalIp, parseCidr } from './ip.ts';
import { allocateIps, type IpRequest } from './port-ips.ts';
import {
  isNetworkOwned,
  isRouterPort,
  OWNER,
  type AddressPair,
  type ExtraDhcpOpt,
  type NetworkRecord,
  type PortRecord,
} from './records.ts';
import {
  checkBoolean,
  checkDict,
  checkFixedIps,
  checkMac,
  checkString,
  checkUuid,
  checkUuidList,
  checkValues,
  type AttrMap,
  type Body,
  type Check,
} from './schema.ts';
import { ensureDefaultGroup } from './security-groups.ts';
import type { Actor, NeutronState } from './state.ts';
import { isAutoAddress } from './subnets.ts';

const readOnly = { post: false, put: false };

export const VNIC_TYPES = [
  'normal',
  'direct',
  'macvtap',
  'baremetal',
  'direct-physical',
  'virtio-forwarder',
  'smart-nic',
  'vdpa',
  'accelerator-direct',
  'accelerator-direct-physical',
  'remote-managed',
];

const checkGroups: Check = (v, attr) => (v === null ? [] : checkUuidList(v, attr));

const checkAddressPairs: Check = (v) => {
  if (v === null) return [];
  if (!Array.isArray(v)) throw httpBadRequest('Allowed address pairs must be a list.');
  const seen = new Set<string>();
  return v.map((pair: unknown) => {
    if (typeof pair !== 'object' || pair === null || Array.isArray(pair)) {
      throw invalidAttr('allowed_address_pairs', `'${pyRepr(pair)}' is not a dictionary`);
    }
    const p = pair as Record<string, unknown>;
    if (p.ip_address === undefined) {
      throw new SimError(400, 'AllowedAddressPair must contain ip_address', {
        type: 'AllowedAddressPairsMissingIP',
      });
    }
    const extra = Object.keys(p).filter((k) => k !== 'ip_address' && k !== 'mac_address');
    if (extra.length > 0) throw httpBadRequest(`Unrecognized attribute(s) '${extra.join(', ')}'`);
    let mac: string | undefined;
    if (p.mac_address !== undefined && p.mac_address !== null)
      mac = checkMac(p.mac_address, 'mac_address') as string;
    const ip = asText(p.ip_address);
    if (ip.includes('/') ? !parseCidr(ip) : !canonicalIp(ip)) {
      throw httpBadRequest(
        ip.includes('/') ? `'${ip}' is not a valid IP subnet` : `'${ip}' is not a valid IP address`,
      );
    }
    const key = `${mac ?? ''} ${ip}`;
    if (seen.has(key)) {
      throw new SimError(
        400,
        `Request contains duplicate address pair: mac_address ${mac ?? 'None'} ip_address ${ip}.`,
        {
          type: 'DuplicateAddressPairInRequest',
        },
      );
    }
    seen.add(key);
    return mac === undefined ? { ip_address: ip } : { ip_address: ip, mac_address: mac };
  });
};

const checkDhcpOpts: Check = (v, attr) => {
  if (v === null) return [];
  if (!Array.isArray(v)) throw invalidAttr(attr, `'${pyRepr(v)}' is not a list`);
  return v.map((o: unknown) => {
    const opt = o as Record<string, unknown> | null;
    if (typeof opt !== 'object' || opt === null || typeof opt.opt_name !== 'string') {
      throw invalidAttr(attr, `'${pyRepr(o)}' is not a valid dhcp option`);
    }
    return {
      opt_name: opt.opt_name,
      opt_value: asText(opt.opt_value ?? ''),
      ip_version: Number(opt.ip_version ?? 4),
    };
  });
};

export const PORT_ATTRS: AttrMap = {
  id: readOnly,
  name: { post: true, put: true, check: checkString(255) },
  network_id: { post: true, put: false, required: true, check: checkUuid },
  admin_state_up: { post: true, put: true, check: checkBoolean },
  mac_address: { post: true, put: true, check: checkMac },
  fixed_ips: { post: true, put: true, check: checkFixedIps },
  device_id: { post: true, put: true, check: checkString(255) },
  device_owner: { post: true, put: true, check: checkString(255) },
  status: readOnly,
  security_groups: { post: true, put: true, check: checkGroups },
  description: { post: true, put: true, check: checkString(255) },
  port_security_enabled: { post: true, put: true, check: checkBoolean },
  allowed_address_pairs: { post: true, put: true, check: checkAddressPairs },
  extra_dhcp_opts: { post: true, put: true, check: checkDhcpOpts },
  'binding:host_id': { post: true, put: true, check: checkString(255) },
  'binding:profile': { post: true, put: true, check: (v, a) => (v === null ? {} : checkDict(v, a)) },
  'binding:vnic_type': { post: true, put: true, check: checkValues(VNIC_TYPES) },
  'binding:vif_type': readOnly,
  'binding:vif_details': readOnly,
  trunk_details: readOnly,
  tags: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

/**
 * vif_details as the reference cloud shows them: `port_filter` once bound, plus `bound_drivers`
 * once the binding is committed. (ML2/OVS adds connectivity, bridge_name... which the samples lack.)
 */
const BOUND_VIF_DETAILS = { port_filter: true };
const WIRED_VIF_DETAILS = { port_filter: true, bound_drivers: { '0': 'openvswitch' } };

/** What other services may ask of createPort: Neutron's request attributes plus the owner project. */
export interface PortInput extends Body {
  network_id: string;
}

// ---------------------------------------------------------------- policy

function guardPortAttrs(
  actor: Actor,
  net: NetworkRecord,
  action: 'create_port' | 'update_port',
  body: Body,
): void {
  if (actor.isAdmin) return;
  const admin = ['binding:host_id', 'binding:profile'];
  if (action === 'update_port') admin.push('mac_address');
  checkAttributePolicy(false, action, body, admin);
  if (net.project_id === actor.projectId) return;
  const owner: string[] = [];
  if (action === 'create_port' && body.mac_address !== undefined) owner.push('mac_address');
  const fixed = body.fixed_ips as IpRequest[] | undefined;
  if (fixed?.some((f) => f.ip_address !== undefined)) owner.push('fixed_ips:ip_address');
  if (body.port_security_enabled !== undefined) owner.push('port_security_enabled');
  if (body.allowed_address_pairs !== undefined) owner.push('allowed_address_pairs');
  if (typeof body.device_owner === 'string' && isNetworkOwned(body.device_owner)) owner.push('device_owner');
  checkAttributePolicy(false, action, Object.fromEntries(owner.map((k) => [k, true])), owner);
}

// ---------------------------------------------------------------- create

/** A unique MAC on the network: Neutron's base_mac fa:16:3e plus random bytes. */
function freshMac(state: NeutronState, networkId: string): string {
  for (;;) {
    const mac = macAddress();
    if (!state.macs.has(`${networkId} ${mac}`)) return mac;
  }
}

function resolveGroups(
  state: NeutronState,
  actor: Actor,
  project: string,
  body: Body,
  portSecurity: boolean,
  deviceOwner: string,
): string[] {
  const requested = body.security_groups as string[] | undefined;
  if (requested !== undefined) {
    for (const id of requested)
      getSecurityGroup(state, actor.isAdmin ? actor : { ...actor, projectId: project }, id);
    if (requested.length > 0 && !portSecurity) {
      throw new SimError(
        400,
        'Port security must be enabled and port must have an IP address in order to use security groups.',
        { type: 'PortSecurityAndIPRequiredForSecurityGroups' },
      );
    }
    return [...requested];
  }
  // Neutron trusts its own network:* ports and gives them no group.
  if (!portSecurity || isNetworkOwned(deviceOwner)) return [];
  const def = ensureDefaultGroup(state, project);
  return def ? [def] : [];
}

function addressPairs(body: Body, mac: string, portSecurity: boolean): AddressPair[] {
  const pairs =
    (body.allowed_address_pairs as { ip_address: string; mac_address?: string }[] | undefined) ?? [];
  if (pairs.length > 0 && !portSecurity) {
    throw new SimError(
      409,
      'Port Security must be enabled in order to have allowed address pairs on a port.',
      {
        type: 'AddressPairAndPortSecurityRequired',
      },
    );
  }
  return pairs.map((p) => ({ ip_address: p.ip_address, mac_address: p.mac_address ?? mac }));
}

/**
 * Creates one port. `actor` is the caller (its project owns the port unless an admin says otherwise);
 * `trusted` skips attribute policies, for other services acting inside the cloud.
 */
export function createPort(state: NeutronState, actor: Actor, body: PortInput, trusted = false): PortRecord {
  const net = getNetwork(state, actor, body.network_id);
  if (!trusted) guardPortAttrs(actor, net, 'create_port', body);
  const project = trusted
    ? ((body.project_id as string | undefined) ?? actor.projectId)
    : state.ownerFor(actor, body.project_id, 'create_port');
  state.checkQuota('port', project);
  ensureDefaultGroup(state, project);
  let mac = body.mac_address as string | undefined;
  if (mac !== undefined) {
    if (state.macs.has(`${net.id} ${mac}`)) throw macInUse(net.id, mac);
  } else {
    mac = freshMac(state, net.id);
  }
  const deviceOwner = (body.device_owner as string | undefined) ?? '';
  const portSecurity = (body.port_security_enabled as boolean | undefined) ?? net.port_security_enabled;
  const groups = resolveGroups(state, actor, project, body, portSecurity, deviceOwner);
  const pairs = addressPairs(body, mac, portSecurity);
  const id = uuid();
  const fixedIps = allocateIps(
    state,
    net,
    { id, deviceOwner, mac },
    body.fixed_ips as IpRequest[] | undefined,
  );
  const first = fixedIps[0];
  if (first && state.cloud.faults.take('ip-conflict', 'neutron', 'port')) {
    state.releaseIps(fixedIps);
    throw ipAlreadyAllocated(first.ip_address, first.subnet_id);
  }
  const port: PortRecord = {
    ...state.standard(id, project, (body.description as string | undefined) ?? ''),
    name: (body.name as string | undefined) ?? '',
    network_id: net.id,
    mac_address: mac,
    admin_state_up: (body.admin_state_up as boolean | undefined) ?? true,
    status: 'DOWN',
    device_id: (body.device_id as string | undefined) ?? '',
    device_owner: deviceOwner,
    fixed_ips: fixedIps,
    allowed_address_pairs: pairs,
    extra_dhcp_opts: (body.extra_dhcp_opts as ExtraDhcpOpt[] | undefined) ?? [],
    security_groups: groups,
    port_security_enabled: portSecurity,
    'binding:vnic_type': (body['binding:vnic_type'] as string | undefined) ?? 'normal',
    'binding:profile': (body['binding:profile'] as Record<string, unknown> | undefined) ?? {},
    'binding:host_id': '',
    'binding:vif_type': 'unbound',
    'binding:vif_details': {},
  };
  // The IPAM and port rows are written in separate steps, hence revision 1 on a new port.
  port.revision_number = 1;
  state.addPort(port);
  const host = (body['binding:host_id'] as string | undefined) ?? '';
  if (host) bind(state, port, host);
  state.changed();
  return port;
}

/**
 * Creates several ports, all or nothing: if one fails nothing created by the request is left.
 * Zed fails bulk creates on networks with SLAAC subnets (TypeError in the EUI-64 path): so do we.
 */
export function createPorts(
  state: NeutronState,
  actor: Actor,
  items: PortInput[],
  bulk: boolean,
): PortRecord[] {
  if (bulk) {
    for (const item of items) {
      const net = state.networks.get(item.network_id);
      if (
        net?.subnets.some((sid) => {
          const s = state.subnets.get(sid);
          return s !== undefined && isAutoAddress(s);
        })
      ) {
        throw new SimError(500, 'Request Failed: internal server error while processing your request.', {
          type: 'HTTPInternalServerError',
        });
      }
    }
  }
  const created: PortRecord[] = [];
  try {
    for (const item of items) created.push(createPort(state, actor, item));
  } catch (e) {
    for (const p of created) state.dropPort(p);
    if (created.length > 0) state.changed();
    throw e;
  }
  return created;
}

// ---------------------------------------------------------------- binding and status

/** Binds a port to a host: ML2/OVS answers at once; the agent then wires it and it turns ACTIVE. */
export function bind(state: NeutronState, port: PortRecord, host: string): void {
  port['binding:host_id'] = host;
  if (!host) {
    port['binding:vif_type'] = 'unbound';
    port['binding:vif_details'] = {};
    state.cancelPending(port.id);
    setStatus(state, port, 'DOWN');
    return;
  }
  if (state.cloud.faults.take('error-on-create', 'neutron', 'binding', port.id)) {
    port['binding:vif_type'] = 'binding_failed';
    port['binding:vif_details'] = {};
    state.cancelPending(port.id);
    setStatus(state, port, 'DOWN');
    return;
  }
  port['binding:vif_type'] = 'ovs';
  port['binding:vif_details'] = structuredClone(BOUND_VIF_DETAILS);
  scheduleWiring(state, port);
}

/** A bound, enabled port with a device becomes ACTIVE once the L2 agent has wired it. */
export function scheduleWiring(state: NeutronState, port: PortRecord): void {
  const host = port['binding:host_id'];
  if (!host || port['binding:vif_type'] !== 'ovs' || !port.device_owner || !port.admin_state_up) return;
  if (port.status === 'ACTIVE') return;
  if (
    state.cloud.faults.isStuck('neutron', 'port', port.id) ||
    state.cloud.faults.take('stuck', 'neutron', 'port', port.id)
  )
    return;
  state.schedule(port.id, state.cloud.timing.transition('neutron.port.bind'), () => {
    const p = state.ports.get(port.id);
    if (
      !p ||
      p['binding:host_id'] !== host ||
      p['binding:vif_type'] !== 'ovs' ||
      !p.admin_state_up ||
      !p.device_owner
    )
      return;
    if (state.cloud.faults.isStuck('neutron', 'port', p.id)) return;
    p['binding:vif_details'] = structuredClone(WIRED_VIF_DETAILS);
    setStatus(state, p, 'ACTIVE');
    state.changed();
  });
}

/** Sets a port's status; a trunk follows its parent port, and the subports follow the trunk. */
export function setStatus(state: NeutronState, port: PortRecord, status: string): void {
  if (port.status !== status) {
    port.status = status;
    state.cloud.statuses.record('neutron', 'port', port.id, status);
    state.bump(port);
  }
  const trunkId = state.trunkByParent.get(port.id);
  if (trunkId) syncTrunk(state, trunkId);
}

export function syncTrunk(state: NeutronState, trunkId: string): void {
  const trunk = state.trunks.get(trunkId);
  const parent = trunk && state.ports.get(trunk.port_id);
  if (!trunk || !parent) return;
  const active = parent.status === 'ACTIVE' && trunk.admin_state_up;
  const status = active ? 'ACTIVE' : 'DOWN';
  if (trunk.status !== status) {
    trunk.status = status;
    state.bump(trunk);
  }
  for (const sp of trunk.sub_ports) {
    const sub = state.ports.get(sp.port_id);
    if (!sub) continue;
    const host = active ? parent['binding:host_id'] : '';
    if (sub['binding:host_id'] !== host) {
      sub['binding:host_id'] = host;
      sub['binding:vif_type'] = host ? 'ovs' : 'unbound';
      sub['binding:vif_details'] = host ? structuredClone(WIRED_VIF_DETAILS) : {};
      state.bump(sub);
    }
    if (!active) {
      state.cancelPending(sub.id);
      if (sub.status !== 'DOWN') {
        sub.status = 'DOWN';
        state.bump(sub);
      }
    } else if (sub.status !== 'ACTIVE') {
      scheduleSubportWiring(state, trunk.id, sub);
    }
  }
}

/**
 * A subport of an ACTIVE trunk turns ACTIVE once the agent has wired its VLAN, as its own port
 * binding does (`neutron.port.bind` later), not the moment it is added: a client waiting for it
 * (Kuryr's activation) sees it DOWN first. A `stuck` fault on the port keeps it DOWN.
 */
function scheduleSubportWiring(state: NeutronState, trunkId: string, sub: PortRecord): void {
  if (state.cloud.faults.isStuck('neutron', 'port', sub.id)) return;
  state.schedule(sub.id, state.cloud.timing.transition('neutron.port.bind'), () => {
    const trunk = state.trunks.get(trunkId);
    const p = state.ports.get(sub.id);
    if (!trunk || !p || trunk.status !== 'ACTIVE' || state.trunkBySubport.get(p.id) !== trunkId) return;
    if (state.cloud.faults.isStuck('neutron', 'port', p.id) || p.status === 'ACTIVE') return;
    p.status = 'ACTIVE';
    state.bump(p);
    state.changed();
  });
}

// ---------------------------------------------------------------- update

function sameIp(a: FixedIp, b: FixedIp): boolean {
  return a.subnet_id === b.subnet_id && a.ip_address === b.ip_address;
}

/** New fixed IPs: kept ones stay, a bare subnet_id keeps the port's address on it, the rest is allocated. */
function reallocate(
  state: NeutronState,
  net: NetworkRecord,
  port: PortRecord,
  requested: IpRequest[],
): FixedIp[] {
  const kept: FixedIp[] = [];
  const fresh: IpRequest[] = [];
  for (const req of requested) {
    const match = port.fixed_ips.find(
      (f) =>
        !kept.some((k) => sameIp(k, f)) &&
        (req.ip_address === undefined || f.ip_address === req.ip_address) &&
        (req.subnet_id === undefined || f.subnet_id === req.subnet_id),
    );
    if (match && (req.ip_address !== undefined || req.subnet_id !== undefined)) kept.push(match);
    else fresh.push(req);
  }
  const added = allocateIps(
    state,
    net,
    { id: port.id, deviceOwner: port.device_owner, mac: port.mac_address },
    fresh,
  );
  const removed = port.fixed_ips.filter((f) => !kept.some((k) => sameIp(k, f)));
  state.releaseIps(removed);
  return [...kept, ...added];
}

export function updatePort(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: Body,
  options: { ifMatch?: string; trusted?: boolean } = {},
): PortRecord {
  const port = getPort(state, actor, id);
  const net = state.networks.get(port.network_id)!;
  if (!options.trusted) {
    if (!actor.isAdmin && port.project_id !== actor.projectId && net.project_id !== actor.projectId) {
      throw policyNotAuthorized('rule:update_port');
    }
    guardPortAttrs(actor, net, 'update_port', body);
  }
  state.checkRevision(port, options.ifMatch);
  const before = JSON.stringify(port);
  const revision = port.revision_number;

  const portSecurity = (body.port_security_enabled as boolean | undefined) ?? port.port_security_enabled;
  const groups = body.security_groups as string[] | undefined;
  if (!portSecurity) {
    const remaining = groups ?? port.security_groups;
    if (remaining.length > 0) {
      if (groups !== undefined) {
        throw new SimError(
          400,
          'Port security must be enabled and port must have an IP address in order to use security groups.',
          {
            type: 'PortSecurityAndIPRequiredForSecurityGroups',
          },
        );
      }
      throw new SimError(
        409,
        'Port has security group associated. Cannot disable port security or IP address until security group is removed',
        {
          type: 'PortSecurityPortHasSecurityGroup',
        },
      );
    }
    const pairs = (body.allowed_address_pairs as unknown[] | undefined) ?? port.allowed_address_pairs;
    if (pairs.length > 0) {
      throw new SimError(
        409,
        'Port Security must be enabled in order to have allowed address pairs on a port.',
        {
          type: 'AddressPairAndPortSecurityRequired',
        },
      );
    }
  }
  if (groups !== undefined) {
    for (const g of groups)
      getSecurityGroup(state, actor.isAdmin || options.trusted ? { isAdmin: true, projectId: '' } : actor, g);
  }
  if (body.mac_address !== undefined && body.mac_address !== port.mac_address) {
    const mac = body.mac_address as string;
    if (port['binding:vif_type'] !== 'unbound' && port['binding:host_id']) {
      throw new SimError(
        409,
        `Unable to complete operation on port ${port.id}, port is already bound, port type: ${port['binding:vif_type']}, old_mac ${port.mac_address}, new_mac ${mac}.`,
        { type: 'PortBound' },
      );
    }
    if (state.macs.has(`${net.id} ${mac}`)) throw macInUse(net.id, mac);
  }
  if (body.fixed_ips !== undefined) {
    port.fixed_ips = reallocate(state, net, port, body.fixed_ips as IpRequest[]);
  }
  if (body.mac_address !== undefined && body.mac_address !== port.mac_address)
    state.setMac(port, body.mac_address as string);
  if (groups !== undefined) state.setGroups(port, [...groups]);
  if (body.allowed_address_pairs !== undefined) {
    port.allowed_address_pairs = addressPairs(body, port.mac_address, portSecurity);
  }
  port.port_security_enabled = portSecurity;
  if (body.name !== undefined) state.rename(port, body.name as string);
  for (const k of [
    'description',
    'admin_state_up',
    'extra_dhcp_opts',
    'binding:vnic_type',
    'binding:profile',
  ] as const) {
    if (body[k] !== undefined) (port as unknown as Record<string, unknown>)[k] = body[k];
  }
  if (body.device_id !== undefined || body.device_owner !== undefined) {
    state.setDevice(
      port,
      (body.device_id as string | undefined) ?? port.device_id,
      (body.device_owner as string | undefined) ?? port.device_owner,
    );
  }
  if (body.status !== undefined) port.status = body.status as string;
  const host = body['binding:host_id'] as string | undefined;
  if (host !== undefined && host !== port['binding:host_id']) bind(state, port, host);
  if (port.admin_state_up === false) {
    state.cancelPending(port.id);
    if (port.status !== 'DOWN') setStatus(state, port, 'DOWN');
  } else {
    scheduleWiring(state, port);
  }
  // One update is one revision, however many fields (status included) it changed.
  port.revision_number = revision;
  if (JSON.stringify(port) !== before) {
    state.bump(port);
    const trunkId = state.trunkByParent.get(port.id);
    if (trunkId) syncTrunk(state, trunkId);
    state.changed();
  }
  return port;
}

// ---------------------------------------------------------------- delete

/** Neutron refuses to delete ports that L3 owns (`l3_port_check`), and trunk members. */
export function deletePort(
  state: NeutronState,
  actor: Actor,
  id: string,
  options: { ifMatch?: string; l3Check?: boolean } = {},
): void {
  const port = getPort(state, actor, id);
  const net = state.networks.get(port.network_id);
  if (!actor.isAdmin && port.project_id !== actor.projectId && net?.project_id !== actor.projectId) {
    throw policyNotAuthorized('rule:delete_port');
  }
  state.checkRevision(port, options.ifMatch);
  const parentOf = state.trunkByParent.get(port.id);
  if (parentOf) {
    throw new SimError(409, `Port ${port.id} is currently a parent port for trunk ${parentOf}.`, {
      type: 'PortInUseAsTrunkParent',
    });
  }
  const subOf = state.trunkBySubport.get(port.id);
  if (subOf) {
    throw new SimError(409, `Port ${port.id} is currently a subport for trunk ${subOf}.`, {
      type: 'PortInUseAsSubPort',
    });
  }
  if (
    (options.l3Check ?? true) &&
    (isRouterPort(port.device_owner) || port.device_owner === OWNER.floatingIp)
  ) {
    const deviceExists = state.routers.has(port.device_id) || state.floatingIps.has(port.device_id);
    if (deviceExists) {
      throw new SimError(
        409,
        `Port ${port.id} cannot be deleted directly via the port API: has device owner ${port.device_owner}.`,
        {
          type: 'ServicePortInUse',
        },
      );
    }
  }
  removePort(state, port);
  state.changed();
}

/** Drops a port and what hangs on it: floating IPs are disassociated, as Neutron does on port delete. */
export function removePort(state: NeutronState, port: PortRecord): void {
  for (const fid of [...state.fipsByPort.get(port.id)]) {
    const fip = state.floatingIps.get(fid);
    if (!fip) continue;
    fip.port_id = null;
    fip.fixed_ip_address = null;
    fip.router_id = null;
    state.cancelPending(fip.id);
    fip.status = 'DOWN';
    state.bump(fip);
    state.fipsByPort.delete(port.id, fid);
  }
  state.dropPort(port);
}

export function visiblePorts(state: NeutronState, actor: Actor, ids: Iterable<string>): PortRecord[] {
  const out: PortRecord[] = [];
  for (const id of ids) {
    const p = state.ports.get(id);
    if (p && canSeePort(state, actor, p)) out.push(p);
  }
  return out;
}
