/** Routers: external gateways, interfaces, extra routes (l3_db behaviour with an L3 agent serving them). */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import { checkAttributePolicy, getNetwork, getPort, getRouter, getSubnet, requireOwner } from './access.ts';
import { badRequest, invalidAttr, portInUse, pyRepr } from './errors.ts';
import { cidrContains, cidrsOverlap, formatCidr, parseIp } from './ip.ts';
import { createPort } from './ports.ts';
import { OWNER, type HostRoute, type PortRecord, type RouterRecord } from './records.ts';
import {
  checkBoolean,
  checkFixedIps,
  checkRoutes,
  checkString,
  checkStringList,
  checkUuid,
  nullable,
  type AttrMap,
  type Body,
  type Check,
} from './schema.ts';
import type { Actor, NeutronState } from './state.ts';
import { subnetCidr } from './subnets.ts';

const readOnly = { post: false, put: false };

const checkGateway: Check = (v, attr) => {
  if (v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v))
    throw invalidAttr(attr, `'${pyRepr(v)}' is not a dictionary`);
  const info = v as Record<string, unknown>;
  // Neutron validates this attribute as dict_or_nodata: `{}` clears the gateway, as null does
  // (`openstack router unset --external-gateway` sends it).
  if (Object.keys(info).length === 0) return null;
  const extra = Object.keys(info).filter(
    (k) => !['network_id', 'enable_snat', 'external_fixed_ips'].includes(k),
  );
  if (extra.length > 0) throw invalidAttr(attr, `Unexpected keys supplied: ${extra.join(', ')}`);
  if (info.network_id === undefined) {
    throw invalidAttr(
      attr,
      `Validation of dictionary's keys failed. Expected keys: {'network_id'} Provided keys: {${Object.keys(
        info,
      )
        .map((k) => `'${k}'`)
        .join(', ')}}`,
    );
  }
  const out: Record<string, unknown> = { network_id: checkUuid(info.network_id, attr) };
  if (info.enable_snat !== undefined) out.enable_snat = checkBoolean(info.enable_snat, attr);
  if (info.external_fixed_ips !== undefined)
    out.external_fixed_ips = checkFixedIps(info.external_fixed_ips, attr);
  return out;
};

export const ROUTER_ATTRS: AttrMap = {
  id: readOnly,
  name: { post: true, put: true, check: checkString(255) },
  admin_state_up: { post: true, put: true, check: checkBoolean },
  status: readOnly,
  external_gateway_info: { post: true, put: true, check: checkGateway },
  description: { post: true, put: true, check: checkString(255) },
  routes: { post: false, put: true, check: checkRoutes },
  availability_zone_hints: { post: true, put: false, check: checkStringList },
  availability_zones: readOnly,
  distributed: { post: true, put: true, check: checkBoolean },
  ha: { post: true, put: true, check: checkBoolean },
  flavor_id: { post: true, put: false, check: nullable(checkUuid) },
  tags: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

interface GatewayRequest {
  network_id: string;
  enable_snat?: boolean;
  external_fixed_ips?: { subnet_id?: string; ip_address?: string }[];
}

function guardGateway(actor: Actor, action: string, info: GatewayRequest | null | undefined): void {
  if (actor.isAdmin || !info) return;
  const attrs: string[] = [];
  if (info.enable_snat !== undefined) attrs.push('external_gateway_info:enable_snat');
  if (info.external_fixed_ips !== undefined) attrs.push('external_gateway_info:external_fixed_ips');
  checkAttributePolicy(false, action, Object.fromEntries(attrs.map((a) => [a, true])), attrs);
}

const ADMIN = { projectId: '', isAdmin: true };

function setGateway(state: NeutronState, actor: Actor, router: RouterRecord, info: GatewayRequest): void {
  const net = getNetwork(state, actor, info.network_id);
  if (!net['router:external']) throw badRequest('router', `Network ${net.id} is not an external network`);
  const port = createPort(
    state,
    ADMIN,
    {
      network_id: net.id,
      project_id: '',
      device_id: router.id,
      device_owner: OWNER.routerGateway,
      ...(info.external_fixed_ips ? { fixed_ips: info.external_fixed_ips } : {}),
    },
    true,
  );
  if (port.fixed_ips.length === 0) {
    state.dropPort(port);
    throw badRequest('router', `No IPs available for external network ${net.id}`);
  }
  port.status = 'ACTIVE';
  router.gw_port_id = port.id;
  router.external_gateway_info = {
    network_id: net.id,
    enable_snat: info.enable_snat ?? true,
    external_fixed_ips: port.fixed_ips,
  };
}

function clearGateway(state: NeutronState, router: RouterRecord): void {
  const info = router.external_gateway_info;
  if (!info) return;
  for (const fip of state.floatingIps.values()) {
    if (fip.router_id === router.id && fip.floating_network_id === info.network_id) {
      throw new SimError(
        409,
        `Gateway cannot be updated for router ${router.id}, since a gateway to external network ${info.network_id} is required by one or more floating IPs.`,
        { type: 'RouterExternalGatewayInUseByFloatingIp' },
      );
    }
  }
  const port = router.gw_port_id ? state.ports.get(router.gw_port_id) : undefined;
  if (port) state.dropPort(port);
  router.gw_port_id = null;
  router.external_gateway_info = null;
}

export function createRouter(state: NeutronState, actor: Actor, body: Body): RouterRecord {
  checkAttributePolicy(actor.isAdmin, 'create_router', body, ['distributed', 'ha']);
  const gw = body.external_gateway_info as GatewayRequest | null | undefined;
  guardGateway(actor, 'create_router', gw);
  const project = state.ownerFor(actor, body.project_id, 'create_router');
  state.checkQuota('router', project);
  const router: RouterRecord = {
    ...state.standard(uuid(), project, (body.description as string | undefined) ?? ''),
    name: (body.name as string | undefined) ?? '',
    admin_state_up: (body.admin_state_up as boolean | undefined) ?? true,
    status: 'ACTIVE',
    external_gateway_info: null,
    routes: [],
    availability_zone_hints: (body.availability_zone_hints as string[] | undefined) ?? [],
    distributed: (body.distributed as boolean | undefined) ?? false,
    ha: (body.ha as boolean | undefined) ?? false,
    flavor_id: (body.flavor_id as string | null | undefined) ?? null,
    gw_port_id: null,
  };
  router.revision_number = 1;
  if (gw) {
    setGateway(state, actor, router, gw);
    // Setting the gateway is two more writes of the router row in Neutron.
    router.revision_number += 2;
  }
  state.routers.insert(router);
  state.changed();
  return router;
}

/** Interface ports of a router, in id order. */
export function interfacesOf(state: NeutronState, routerId: string): PortRecord[] {
  return state
    .portsOf(routerId)
    .filter((p) => p.device_owner === OWNER.routerInterface)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

function checkRoutesConnected(state: NeutronState, router: RouterRecord, routes: HostRoute[]): void {
  const ports = [...interfacesOf(state, router.id)];
  if (router.gw_port_id) {
    const gw = state.ports.get(router.gw_port_id);
    if (gw) ports.push(gw);
  }
  const cidrs = ports
    .flatMap((p) => p.fixed_ips.flatMap((f) => state.subnets.get(f.subnet_id) ?? []))
    .map(subnetCidr);
  for (const r of routes) {
    const hop = parseIp(r.nexthop)!;
    if (!cidrs.some((c) => cidrContains(c, hop))) {
      throw new SimError(
        400,
        `Invalid format for routes: ${pyRepr(routes)}, the nexthop is not connected with router`,
        { type: 'InvalidRoutes' },
      );
    }
  }
}

export function updateRouter(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: Body,
  ifMatch?: string,
): RouterRecord {
  const router = getRouter(state, actor, id);
  requireOwner(actor, router, 'update_router');
  checkAttributePolicy(actor.isAdmin, 'update_router', body, ['distributed', 'ha']);
  state.checkRevision(router, ifMatch);
  if (body.external_gateway_info !== undefined) {
    const gw = body.external_gateway_info as GatewayRequest | null;
    guardGateway(actor, 'update_router', gw);
    const current = router.external_gateway_info;
    if (gw === null) {
      clearGateway(state, router);
    } else if (current && current.network_id === gw.network_id && gw.external_fixed_ips === undefined) {
      if (gw.enable_snat !== undefined) current.enable_snat = gw.enable_snat;
    } else {
      if (current) clearGateway(state, router);
      setGateway(state, actor, router, gw);
    }
  }
  if (body.routes !== undefined) {
    checkRoutesConnected(state, router, body.routes as HostRoute[]);
    router.routes = body.routes as HostRoute[];
  }
  for (const k of ['name', 'description', 'admin_state_up', 'distributed', 'ha'] as const) {
    if (body[k] !== undefined) (router as unknown as Record<string, unknown>)[k] = body[k];
  }
  state.bump(router);
  state.changed();
  return router;
}

/** extraroute-atomic: PUT add_extraroutes / remove_extraroutes with `{"router": {"routes": [...]}}`. */
export function changeExtraRoutes(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: unknown,
  add: boolean,
): RouterRecord {
  const router = getRouter(state, actor, id);
  requireOwner(actor, router, 'update_router');
  const inner = (body as { router?: { routes?: unknown } } | undefined)?.router;
  if (!inner || inner.routes === undefined) throw badRequest('router', 'Routes must be given');
  const routes = checkRoutes(inner.routes, 'routes') as HostRoute[];
  const same = (a: HostRoute, b: HostRoute) => a.destination === b.destination && a.nexthop === b.nexthop;
  if (add) {
    checkRoutesConnected(state, router, routes);
    router.routes = [...router.routes, ...routes.filter((r) => !router.routes.some((x) => same(x, r)))];
  } else {
    router.routes = router.routes.filter((x) => !routes.some((r) => same(x, r)));
  }
  state.bump(router);
  state.changed();
  return router;
}

export function deleteRouter(state: NeutronState, actor: Actor, id: string, ifMatch?: string): void {
  const router = getRouter(state, actor, id);
  requireOwner(actor, router, 'delete_router');
  state.checkRevision(router, ifMatch);
  const ifaces = interfacesOf(state, router.id);
  if (ifaces.length > 0) {
    throw new SimError(
      409,
      `Router ${router.id} has ports still attached: ${ifaces.map((p) => p.id).join(', ')}`,
      { type: 'RouterInUse' },
    );
  }
  clearGateway(state, router);
  state.routers.remove(router.id);
  state.changed();
}

export interface InterfaceInfo {
  id: string;
  tenant_id: string;
  port_id: string;
  network_id: string;
  subnet_id: string;
  subnet_ids: string[];
}

function interfaceInfo(router: RouterRecord, port: PortRecord): InterfaceInfo {
  const subnets = port.fixed_ips.map((f) => f.subnet_id);
  return {
    id: router.id,
    tenant_id: router.project_id,
    port_id: port.id,
    network_id: port.network_id,
    subnet_id: subnets[0] ?? '',
    subnet_ids: subnets,
  };
}

function interfaceBody(body: unknown): { subnet_id?: string; port_id?: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('router', 'Either subnet_id or port_id must be specified');
  }
  const b = body as Record<string, unknown>;
  const out: { subnet_id?: string; port_id?: string } = {};
  if (b.subnet_id !== undefined && b.subnet_id !== null)
    out.subnet_id = checkUuid(b.subnet_id, 'subnet_id') as string;
  if (b.port_id !== undefined && b.port_id !== null) out.port_id = checkUuid(b.port_id, 'port_id') as string;
  return out;
}

/** Refuses a second port on a subnet, or a subnet overlapping one already attached. */
function checkNewSubnets(state: NeutronState, router: RouterRecord, subnetIds: string[]): void {
  const attached = interfacesOf(state, router.id).flatMap((p) => p.fixed_ips.map((f) => f.subnet_id));
  for (const sid of subnetIds) {
    if (attached.includes(sid)) throw badRequest('router', `Router already has a port on subnet ${sid}`);
    const s = state.subnets.get(sid);
    if (!s) continue;
    for (const other of attached) {
      const o = state.subnets.get(other);
      if (o && cidrsOverlap(subnetCidr(o), subnetCidr(s))) {
        throw badRequest(
          'router',
          `Cidr ${formatCidr(subnetCidr(s))} of subnet ${sid} overlaps with cidr ${formatCidr(subnetCidr(o))} of subnet ${o.id}`,
        );
      }
    }
  }
}

export function addInterface(
  state: NeutronState,
  actor: Actor,
  routerId: string,
  body: unknown,
): InterfaceInfo {
  const router = getRouter(state, actor, routerId);
  requireOwner(actor, router, 'add_router_interface');
  const req = interfaceBody(body);
  if (req.subnet_id && req.port_id) throw badRequest('router', 'Cannot specify both subnet-id and port-id');
  let port: PortRecord;
  if (req.port_id) {
    port = getPort(state, actor, req.port_id);
    if (port.device_id) throw portInUse(port.id, port.network_id, port.device_id);
    if (port.fixed_ips.length === 0)
      throw badRequest('router', 'Router port must have at least one fixed IP');
    checkNewSubnets(
      state,
      router,
      port.fixed_ips.map((f) => f.subnet_id),
    );
    state.setDevice(port, router.id, OWNER.routerInterface);
    state.setGroups(port, []);
    port.status = 'ACTIVE';
    state.bump(port);
  } else if (req.subnet_id) {
    const subnet = getSubnet(state, actor, req.subnet_id);
    if (!subnet.gateway_ip) throw badRequest('router', 'Subnet for router interface must have a gateway IP');
    checkNewSubnets(state, router, [subnet.id]);
    port = createPort(
      state,
      ADMIN,
      {
        network_id: subnet.network_id,
        project_id: subnet.project_id,
        device_id: router.id,
        device_owner: OWNER.routerInterface,
        fixed_ips: [{ subnet_id: subnet.id, ip_address: subnet.gateway_ip }],
      },
      true,
    );
    port.status = 'ACTIVE';
  } else {
    throw badRequest('router', 'Either subnet_id or port_id must be specified');
  }
  state.bump(router);
  state.changed();
  return interfaceInfo(router, port);
}

export function removeInterface(
  state: NeutronState,
  actor: Actor,
  routerId: string,
  body: unknown,
): InterfaceInfo {
  const router = getRouter(state, actor, routerId);
  requireOwner(actor, router, 'remove_router_interface');
  const req = interfaceBody(body);
  const ifaces = interfacesOf(state, router.id);
  let port: PortRecord | undefined;
  if (req.port_id) {
    port = ifaces.find((p) => p.id === req.port_id);
    if (!port) {
      throw new SimError(404, `Router ${router.id} does not have an interface with id ${req.port_id}`, {
        type: 'RouterInterfaceNotFound',
      });
    }
    if (req.subnet_id && !port.fixed_ips.some((f) => f.subnet_id === req.subnet_id)) {
      throw new SimError(
        409,
        `Subnet on port ${port.id} does not match the requested subnet ${req.subnet_id}`,
        { type: 'SubnetMismatchForPort' },
      );
    }
  } else if (req.subnet_id) {
    getSubnet(state, actor, req.subnet_id);
    port = ifaces.find((p) => p.fixed_ips.some((f) => f.subnet_id === req.subnet_id));
    if (!port) {
      throw new SimError(404, `Router ${router.id} has no interface on subnet ${req.subnet_id}`, {
        type: 'RouterInterfaceNotFoundForSubnet',
      });
    }
  } else {
    throw badRequest('router', 'Either subnet_id or port_id must be specified');
  }
  const subnets = new Set(port.fixed_ips.map((f) => f.subnet_id));
  for (const fip of state.floatingIps.values()) {
    if (fip.router_id !== router.id || !fip.port_id) continue;
    const target = state.ports.get(fip.port_id);
    const hit = target?.fixed_ips.find(
      (f) => f.ip_address === fip.fixed_ip_address && subnets.has(f.subnet_id),
    );
    if (hit) {
      throw new SimError(
        409,
        `Router interface for subnet ${hit.subnet_id} on router ${router.id} cannot be deleted, as it is required by one or more floating IPs.`,
        { type: 'RouterInterfaceInUseByFloatingIP' },
      );
    }
  }
  const info = interfaceInfo(router, port);
  state.dropPort(port);
  state.bump(router);
  state.changed();
  return info;
}

/** The router that connects `subnetId` to external network `networkId`, as floating IPs need. */
export function routerFor(
  state: NeutronState,
  networkId: string,
  subnetId: string,
): RouterRecord | undefined {
  for (const router of state.routers.values()) {
    if (router.external_gateway_info?.network_id !== networkId) continue;
    if (interfacesOf(state, router.id).some((p) => p.fixed_ips.some((f) => f.subnet_id === subnetId)))
      return router;
  }
  return undefined;
}
