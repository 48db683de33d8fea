/** Floating IPs: an address from an external network's IPv4 subnets, NATed by a router to a port. */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import {
  checkAttributePolicy,
  getFloatingIp,
  getNetwork,
  getPort,
  getSubnet,
  requireOwner,
} from './access.ts';
import { badRequest } from './errors.ts';
import { createPort } from './ports.ts';
import { OWNER, type FloatingIpRecord, type PortRecord } from './records.ts';
import { routerFor } from './routers.ts';
import { checkIp, checkString, checkUuid, nullable, type AttrMap, type Body } from './schema.ts';
import type { Actor, NeutronState } from './state.ts';

const readOnly = { post: false, put: false };

export const FLOATING_IP_ATTRS: AttrMap = {
  id: readOnly,
  floating_ip_address: { post: true, put: false, check: checkIp },
  subnet_id: { post: true, put: false, check: nullable(checkUuid) },
  floating_network_id: { post: true, put: false, required: true, check: checkUuid },
  router_id: readOnly,
  port_id: { post: true, put: true, check: nullable(checkUuid) },
  fixed_ip_address: { post: true, put: true, check: nullable(checkIp) },
  status: readOnly,
  description: { post: true, put: true, check: checkString(255) },
  port_details: readOnly,
  tags: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

const ADMIN = { projectId: '', isAdmin: true };

function isIpGenerationFailure(e: unknown): boolean {
  return SimError.is(e) && e.type === 'IpAddressGenerationFailure';
}

/** The network:floatingip port that holds the address (project-less, like Neutron's). */
function allocateAddress(state: NeutronState, fipId: string, body: Body, networkId: string): PortRecord {
  const net = state.networks.get(networkId)!;
  const base = { network_id: net.id, project_id: '', device_id: fipId, device_owner: OWNER.floatingIp };
  const subnetId = body.subnet_id as string | null | undefined;
  const address = body.floating_ip_address as string | undefined;
  if (subnetId) {
    const subnet = getSubnet(state, ADMIN, subnetId);
    if (subnet.network_id !== net.id || subnet.ip_version !== 4) {
      throw badRequest(
        'floatingip',
        `Subnet ${subnetId} is not on network ${net.id} or is not an IPv4 subnet`,
      );
    }
  }
  if (address !== undefined) {
    const fixed = subnetId ? [{ subnet_id: subnetId, ip_address: address }] : [{ ip_address: address }];
    return createPort(state, ADMIN, { ...base, fixed_ips: fixed }, true);
  }
  const candidates = subnetId
    ? [subnetId]
    : net.subnets.filter((id) => state.subnets.get(id)?.ip_version === 4);
  if (candidates.length === 0)
    throw badRequest('floatingip', `Network ${net.id} does not contain any IPv4 subnet`);
  for (const sid of candidates) {
    try {
      return createPort(state, ADMIN, { ...base, fixed_ips: [{ subnet_id: sid }] }, true);
    } catch (e) {
      if (!isIpGenerationFailure(e)) throw e;
    }
  }
  throw new SimError(400, `Unable to find any IP address on external network ${net.id}.`, {
    type: 'ExternalIpAddressExhausted',
  });
}

function associate(
  state: NeutronState,
  actor: Actor,
  fip: FloatingIpRecord,
  portId: string,
  fixedIp: string | null | undefined,
): void {
  const port = getPort(state, actor, portId);
  if (!actor.isAdmin && port.project_id !== fip.project_id) {
    throw badRequest(
      'floatingip',
      `Cannot create floating IP and bind it to Port ${port.id}, since that port is owned by a different tenant`,
    );
  }
  const v4 = port.fixed_ips.filter((f) => state.subnets.get(f.subnet_id)?.ip_version === 4);
  let entry;
  if (fixedIp) {
    entry = v4.find((f) => f.ip_address === fixedIp);
    if (!entry) throw badRequest('floatingip', `Port ${port.id} does not have fixed ip ${fixedIp}`);
  } else {
    if (v4.length === 0)
      throw badRequest(
        'floatingip',
        `Cannot add floating IP to port ${port.id} that has no global IPv4 address`,
      );
    if (v4.length > 1) {
      throw badRequest(
        'floatingip',
        `Port ${port.id} has multiple fixed IPv4 addresses.  Must provide a specific IPv4 address when assigning a floating IP`,
      );
    }
    entry = v4[0]!;
  }
  for (const otherId of state.fipsByPort.get(port.id)) {
    const other = state.floatingIps.get(otherId);
    if (
      other &&
      other.id !== fip.id &&
      other.fixed_ip_address === entry.ip_address &&
      other.floating_network_id === fip.floating_network_id
    ) {
      throw new SimError(
        409,
        `Cannot associate floating IP ${fip.floating_ip_address} (${fip.id}) with port ${port.id} using fixed IP ${entry.ip_address}, as that fixed IP already has a floating IP on external network ${fip.floating_network_id}.`,
        { type: 'FloatingIPPortAlreadyAssociated' },
      );
    }
  }
  const router = routerFor(state, fip.floating_network_id, entry.subnet_id);
  if (!router) {
    throw new SimError(
      404,
      `External network ${fip.floating_network_id} is not reachable from subnet ${entry.subnet_id}.  Therefore, cannot associate Port ${port.id} with a Floating IP.`,
      { type: 'ExternalGatewayForFloatingIPNotFound' },
    );
  }
  if (fip.port_id && fip.port_id !== port.id) state.fipsByPort.delete(fip.port_id, fip.id);
  fip.port_id = port.id;
  fip.fixed_ip_address = entry.ip_address;
  fip.router_id = router.id;
  state.fipsByPort.add(port.id, fip.id);
  scheduleActive(state, fip);
}

function disassociate(state: NeutronState, fip: FloatingIpRecord): void {
  if (fip.port_id) state.fipsByPort.delete(fip.port_id, fip.id);
  fip.port_id = null;
  fip.fixed_ip_address = null;
  fip.router_id = null;
  state.cancelPending(fip.id);
  fip.status = 'DOWN';
}

/** The L3 agent sets up the NAT shortly after: the floating IP then reports ACTIVE. */
function scheduleActive(state: NeutronState, fip: FloatingIpRecord): void {
  const portId = fip.port_id;
  state.schedule(fip.id, state.cloud.timing.transition('neutron.port.bind'), () => {
    const current = state.floatingIps.get(fip.id);
    if (!current || current.port_id !== portId || current.status === 'ACTIVE') return;
    current.status = 'ACTIVE';
    state.bump(current);
    state.changed();
  });
}

export function createFloatingIp(state: NeutronState, actor: Actor, body: Body): FloatingIpRecord {
  checkAttributePolicy(actor.isAdmin, 'create_floatingip', body, ['floating_ip_address']);
  const project = state.ownerFor(actor, body.project_id, 'create_floatingip');
  const net = getNetwork(state, actor, body.floating_network_id as string);
  if (!net['router:external'])
    throw badRequest('floatingip', `Network ${net.id} is not a valid external network`);
  state.checkQuota('floatingip', project);
  const id = uuid();
  const port = allocateAddress(state, id, body, net.id);
  port.status = 'N/A';
  const fip: FloatingIpRecord = {
    ...state.standard(id, project, (body.description as string | undefined) ?? ''),
    floating_ip_address: port.fixed_ips[0]!.ip_address,
    floating_network_id: net.id,
    router_id: null,
    port_id: null,
    fixed_ip_address: null,
    status: 'DOWN',
    fip_port_id: port.id,
  };
  try {
    if (body.port_id)
      associate(
        state,
        actor,
        fip,
        body.port_id as string,
        body.fixed_ip_address as string | null | undefined,
      );
  } catch (e) {
    state.dropPort(port);
    throw e;
  }
  state.floatingIps.insert(fip);
  state.changed();
  return fip;
}

export function updateFloatingIp(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: Body,
  ifMatch?: string,
): FloatingIpRecord {
  const fip = getFloatingIp(state, actor, id);
  requireOwner(actor, fip, 'update_floatingip');
  state.checkRevision(fip, ifMatch);
  if (body.port_id !== undefined) {
    if (body.port_id === null) disassociate(state, fip);
    else
      associate(
        state,
        actor,
        fip,
        body.port_id as string,
        body.fixed_ip_address as string | null | undefined,
      );
  } else if (body.fixed_ip_address !== undefined && fip.port_id) {
    associate(state, actor, fip, fip.port_id, body.fixed_ip_address as string | null);
  }
  if (body.description !== undefined) fip.description = body.description as string;
  state.bump(fip);
  state.changed();
  return fip;
}

export function deleteFloatingIp(state: NeutronState, actor: Actor, id: string, ifMatch?: string): void {
  const fip = getFloatingIp(state, actor, id);
  requireOwner(actor, fip, 'delete_floatingip');
  state.checkRevision(fip, ifMatch);
  disassociate(state, fip);
  const port = state.ports.get(fip.fip_port_id);
  if (port) state.dropPort(port);
  state.floatingIps.remove(fip.id);
  state.changed();
}

/** The few port fields a floating IP shows about its port (fip-port-details). */
export function portDetails(state: NeutronState, fip: FloatingIpRecord): Record<string, unknown> | null {
  const port = fip.port_id ? state.ports.get(fip.port_id) : undefined;
  if (!port) return null;
  return {
    name: port.name,
    network_id: port.network_id,
    mac_address: port.mac_address,
    admin_state_up: port.admin_state_up,
    status: port.status,
    device_id: port.device_id,
    device_owner: port.device_owner,
  };
}
