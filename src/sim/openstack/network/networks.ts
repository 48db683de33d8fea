/** Networks: ML2 with flat, vlan and vxlan type drivers (tenant networks are vxlan), as the Zed reference cloud. */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import { checkAttributePolicy, getNetwork, requireOwner } from './access.ts';
import { invalidInput, networkInUse } from './errors.ts';
import { OWNER, type NetworkRecord } from './records.ts';
import {
  checkBoolean,
  checkIntRange,
  checkString,
  checkStringList,
  type AttrMap,
  type Body,
} from './schema.ts';
import { ensureDefaultGroup } from './security-groups.ts';
import type { Actor, NeutronState } from './state.ts';
import { deleteSubnetRecord } from './subnets.ts';

const readOnly = { post: false, put: false };

export const NETWORK_ATTRS: AttrMap = {
  id: readOnly,
  name: { post: true, put: true, check: checkString(255) },
  subnets: readOnly,
  admin_state_up: { post: true, put: true, check: checkBoolean },
  status: readOnly,
  shared: { post: true, put: true, check: checkBoolean },
  description: { post: true, put: true, check: checkString(255) },
  mtu: { post: true, put: true, check: checkIntRange(68, 65535) },
  port_security_enabled: { post: true, put: true, check: checkBoolean },
  'router:external': { post: true, put: true, check: checkBoolean },
  is_default: { post: true, put: true, check: checkBoolean },
  'provider:network_type': { post: true, put: true, check: checkString(255) },
  'provider:physical_network': { post: true, put: true, check: checkString(64) },
  'provider:segmentation_id': { post: true, put: true, check: checkIntRange(0, 16777215) },
  availability_zone_hints: { post: true, put: false, check: checkStringList },
  availability_zones: readOnly,
  ipv4_address_scope: readOnly,
  ipv6_address_scope: readOnly,
  tags: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

/** Only admins may set these (Zed default policy). */
const ADMIN_ONLY = [
  'shared',
  'router:external',
  'is_default',
  'provider:network_type',
  'provider:physical_network',
  'provider:segmentation_id',
];

const TYPES = ['flat', 'vlan', 'vxlan'];
/** `[ml2_type_vlan] network_vlan_ranges = physnet1:100:199`: where vlan tenant segments come from. */
const VLAN_RANGE = { physnet: 'physnet1', min: 100, max: 199 };
const VXLAN_MAX = 16_777_215;
/** VXLAN's 50-byte overhead on a 1500 MTU underlay. */
const MTU = { vxlan: 1450, flat: 1500, vlan: 1500 } as Record<string, number>;

interface Segment {
  type: string;
  physnet: string | null;
  id: number | null;
}

function allocateSegment(state: NeutronState, body: Body): Segment {
  const type = body['provider:network_type'] as string | undefined;
  const physnet = body['provider:physical_network'] as string | undefined;
  const segId = body['provider:segmentation_id'] as number | undefined;
  if (type === undefined && (physnet !== undefined || segId !== undefined)) {
    throw invalidInput('network_type required');
  }
  const t = type ?? 'vxlan';
  if (!TYPES.includes(t)) throw invalidInput(`network_type value '${t}' not supported`);
  if (t === 'flat') {
    if (segId !== undefined) throw invalidInput('segmentation_id specified for flat provider network');
    if (!physnet) throw invalidInput('physical_network required for flat provider network');
    if (state.flatNets.has(physnet)) {
      throw new SimError(409, `Unable to create the flat network. Physical network ${physnet} is in use.`, {
        type: 'FlatNetworkInUse',
      });
    }
    state.flatNets.add(physnet);
    return { type: t, physnet, id: null };
  }
  if (t === 'vlan') {
    const net = physnet ?? VLAN_RANGE.physnet;
    if (segId !== undefined) {
      if (segId < 1 || segId > 4094) throw invalidInput('segmentation_id out of range (1 through 4094)');
      if (state.vlanIds.has(`${net} ${segId}`)) {
        throw new SimError(
          409,
          `Unable to create the network. The VLAN ${segId} on physical network ${net} is in use.`,
          { type: 'VlanIdInUse' },
        );
      }
      state.vlanIds.add(`${net} ${segId}`);
      return { type: t, physnet: net, id: segId };
    }
    if (net === VLAN_RANGE.physnet) {
      for (let v = VLAN_RANGE.min; v <= VLAN_RANGE.max; v++) {
        if (!state.vlanIds.has(`${net} ${v}`)) {
          state.vlanIds.add(`${net} ${v}`);
          return { type: t, physnet: net, id: v };
        }
      }
    }
    throw noNetworkAvailable();
  }
  if (physnet !== undefined) throw invalidInput('provider:physical_network specified for VXLAN network');
  if (segId !== undefined) {
    if (segId < 1 || segId > VXLAN_MAX)
      throw invalidInput(`segmentation_id out of range (1 through ${VXLAN_MAX})`);
    if (state.vxlanIds.has(segId)) {
      throw new SimError(409, `Unable to create the network. The tunnel ID ${segId} is in use.`, {
        type: 'TunnelIdInUse',
      });
    }
    state.vxlanIds.add(segId);
    return { type: t, physnet: null, id: segId };
  }
  while (state.vxlanCursor <= VXLAN_MAX && state.vxlanIds.has(state.vxlanCursor)) state.vxlanCursor++;
  if (state.vxlanCursor > VXLAN_MAX) throw noNetworkAvailable();
  state.vxlanIds.add(state.vxlanCursor);
  return { type: t, physnet: null, id: state.vxlanCursor };
}

function noNetworkAvailable(): SimError {
  return new SimError(503, 'Unable to create the network. No tenant network is available for allocation.', {
    type: 'NoNetworkAvailable',
  });
}

export function releaseSegment(state: NeutronState, n: NetworkRecord): void {
  const type = n['provider:network_type'];
  const id = n['provider:segmentation_id'];
  const physnet = n['provider:physical_network'];
  if (type === 'flat' && physnet) state.flatNets.delete(physnet);
  else if (type === 'vlan' && id !== null) state.vlanIds.delete(`${physnet} ${id}`);
  else if (type === 'vxlan' && id !== null) {
    state.vxlanIds.delete(id);
    if (id < state.vxlanCursor) state.vxlanCursor = id;
  }
}

export function reserveSegment(state: NeutronState, n: NetworkRecord): void {
  const type = n['provider:network_type'];
  const id = n['provider:segmentation_id'];
  const physnet = n['provider:physical_network'];
  if (type === 'flat' && physnet) state.flatNets.add(physnet);
  else if (type === 'vlan' && id !== null) state.vlanIds.add(`${physnet} ${id}`);
  else if (type === 'vxlan' && id !== null) state.vxlanIds.add(id);
}

export function createNetwork(state: NeutronState, actor: Actor, body: Body): NetworkRecord {
  checkAttributePolicy(actor.isAdmin, 'create_network', body, ADMIN_ONLY);
  const project = state.ownerFor(actor, body.project_id, 'create_network');
  state.checkQuota('network', project);
  const type = (body['provider:network_type'] as string | undefined) ?? 'vxlan';
  const maxMtu = MTU[type] ?? 1500;
  const mtu = (body.mtu as number | undefined) ?? maxMtu;
  if (mtu > maxMtu) throw invalidInput(`Requested MTU is too big, maximum is ${maxMtu}`);
  const segment = allocateSegment(state, body);
  ensureDefaultGroup(state, project);
  const net: NetworkRecord = {
    ...state.standard(uuid(), project, (body.description as string | undefined) ?? ''),
    name: (body.name as string | undefined) ?? '',
    admin_state_up: (body.admin_state_up as boolean | undefined) ?? true,
    mtu,
    status: 'ACTIVE',
    subnets: [],
    shared: (body.shared as boolean | undefined) ?? false,
    port_security_enabled: (body.port_security_enabled as boolean | undefined) ?? true,
    'router:external': (body['router:external'] as boolean | undefined) ?? false,
    is_default: (body.is_default as boolean | undefined) ?? false,
    availability_zone_hints: (body.availability_zone_hints as string[] | undefined) ?? [],
    'provider:network_type': segment.type,
    'provider:physical_network': segment.physnet,
    'provider:segmentation_id': segment.id,
  };
  net.revision_number = 1;
  state.networks.insert(net);
  state.changed();
  return net;
}

export function updateNetwork(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: Body,
  ifMatch?: string,
): NetworkRecord {
  const net = getNetwork(state, actor, id);
  requireOwner(actor, net, 'update_network');
  checkAttributePolicy(actor.isAdmin, 'update_network', body, ADMIN_ONLY);
  state.checkRevision(net, ifMatch);
  for (const attr of ['provider:network_type', 'provider:physical_network', 'provider:segmentation_id']) {
    if (body[attr] !== undefined && body[attr] !== net[attr as keyof NetworkRecord]) {
      throw invalidInput('Plugin does not support updating provider attributes');
    }
  }
  if (body.mtu !== undefined) {
    const max = MTU[net['provider:network_type']] ?? 1500;
    if ((body.mtu as number) > max) throw invalidInput(`Requested MTU is too big, maximum is ${max}`);
  }
  if (body['router:external'] === false && net['router:external']) {
    const infra = [...state.portsByNetwork.get(net.id)].some((pid) => {
      const owner = state.ports.get(pid)?.device_owner;
      return owner === OWNER.routerGateway || owner === OWNER.floatingIp;
    });
    if (infra) {
      throw new SimError(
        409,
        `External network ${net.id} cannot be updated to be made non-external, since it has existing gateway ports.`,
        {
          type: 'ExternalNetworkInUse',
        },
      );
    }
  }
  if (body.shared === false && net.shared) {
    const others = [...state.portsByNetwork.get(net.id)].some((pid) => {
      const p = state.ports.get(pid);
      return p !== undefined && p.project_id !== net.project_id && p.project_id !== '';
    });
    if (others) {
      throw new SimError(
        409,
        `Unable to reconfigure sharing settings for network ${net.id}. Multiple tenants are using it.`,
        {
          type: 'InvalidSharedSetting',
        },
      );
    }
  }
  const writable = [
    'name',
    'description',
    'admin_state_up',
    'shared',
    'mtu',
    'port_security_enabled',
    'router:external',
    'is_default',
  ] as const;
  const target = net as unknown as Record<string, unknown>;
  for (const k of writable) if (body[k] !== undefined) target[k] = body[k];
  state.bump(net);
  state.changed();
  return net;
}

export function deleteNetwork(state: NeutronState, actor: Actor, id: string, ifMatch?: string): void {
  const net = getNetwork(state, actor, id);
  requireOwner(actor, net, 'delete_network');
  state.checkRevision(net, ifMatch);
  const blocking = [...state.portsByNetwork.get(net.id)]
    .filter((pid) => state.ports.get(pid)?.device_owner !== OWNER.dhcp)
    .sort();
  if (blocking.length > 0) throw networkInUse(net.id, blocking);
  for (const pid of [...state.portsByNetwork.get(net.id)]) {
    const p = state.ports.get(pid);
    if (p) state.dropPort(p);
  }
  for (const sid of [...net.subnets]) deleteSubnetRecord(state, sid);
  releaseSegment(state, net);
  state.networks.remove(net.id);
  state.changed();
}

/** The network's subnets in creation order, skipping any that vanished. */
export function subnetsOf(state: NeutronState, net: NetworkRecord) {
  return net.subnets.flatMap((id) => state.subnets.get(id) ?? []);
}
