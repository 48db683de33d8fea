/** Neutron v2.0's HTTP surface: request parsing and status codes around the resource modules. */
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import {
  getFloatingIp,
  getNetwork,
  getPort,
  getRouter,
  getRule,
  getSecurityGroup,
  getSubnet,
  getTrunk,
} from './access.ts';
import { apiRoot, listExtensions, showExtension, versions } from './extensions.ts';
import { createFloatingIp, deleteFloatingIp, FLOATING_IP_ATTRS, updateFloatingIp } from './floating-ips.ts';
import { listResponse } from './listing.ts';
import {
  floatingIpList,
  networkList,
  portList,
  routerList,
  ruleList,
  securityGroupList,
  subnetList,
  subnetPoolList,
  trunkList,
} from './lists.ts';
import { createNetwork, deleteNetwork, NETWORK_ATTRS, updateNetwork } from './networks.ts';
import { createPorts, deletePort, PORT_ATTRS, removePort, updatePort, type PortInput } from './ports.ts';
import {
  callerProject,
  defaultQuota,
  listIpAvailability,
  listQuotas,
  quotaDetails,
  resetQuota,
  showIpAvailability,
  showQuota,
  updateQuota,
} from './quotas.ts';
import {
  addInterface,
  changeExtraRoutes,
  createRouter,
  deleteRouter,
  removeInterface,
  ROUTER_ATTRS,
  updateRouter,
} from './routers.ts';
import { parseCreate, parseUpdate, type AttrMap, type Body } from './schema.ts';
import {
  createRule,
  createSecurityGroup,
  deleteRuleById,
  deleteSecurityGroup,
  ensureDefaultGroup,
  RULE_ATTRS,
  SECURITY_GROUP_ATTRS,
  updateSecurityGroup,
} from './security-groups.ts';
import type { PortRecord } from './records.ts';
import { actorOf, type Actor, type NeutronState } from './state.ts';
import {
  createSubnetPool,
  deleteSubnetPool,
  getSubnetPool,
  SUBNETPOOL_ATTRS,
  updateSubnetPool,
} from './subnetpools.ts';
import { createSubnet, deleteSubnet, SUBNET_ATTRS, updateSubnet } from './subnets.ts';
import { addTag, clearTags, getTags, hasTag, removeTag, replaceTags } from './tags.ts';
import { addSubports, createTrunk, deleteTrunk, removeSubports, TRUNK_ATTRS, updateTrunk } from './trunks.ts';
import {
  floatingIpView,
  networkView,
  pickFields,
  portView,
  routerView,
  ruleView,
  securityGroupView,
  subnetPoolView,
  subnetView,
  trunkView,
  type View,
} from './views.ts';

type Handler = (req: SimRequest, actor: Actor) => SimResponse;

const ifMatch = (req: SimRequest): string | undefined => {
  const h = req.headers['if-match'];
  return Array.isArray(h) ? h.join(',') : h;
};

const one = (req: SimRequest, key: string, view: View, status = 200): SimResponse => ({
  status,
  body: { [key]: pickFields(view, req.query) },
});

interface CrudSpec<T> {
  collection: string;
  resource: string;
  param: string;
  attrs: AttrMap;
  bulk: boolean;
  /** Absent when the resource has its own POST (ports). */
  create?: (actor: Actor, body: Body) => T;
  /** Undoes one create of a failed bulk request. */
  undo(rec: T): void;
  get(actor: Actor, id: string): T;
  /** Absent when the resource cannot be updated (security group rules). */
  update?: (actor: Actor, id: string, body: Body, ifMatch: string | undefined) => T;
  remove(actor: Actor, id: string, ifMatch: string | undefined): void;
  view(actor: Actor, rec: T, created: boolean): View;
  /** The view a PUT answers with, where Neutron renders it differently from a GET (subnet pools). */
  updated?: (actor: Actor, rec: T) => View;
  list(req: SimRequest, actor: Actor): SimResponse;
}

function crud<T>(spec: CrudSpec<T>, wrap: (h: Handler) => Route['handler']): Route[] {
  const base = `/v2.0/${spec.collection}`;
  const item = `${base}/{${spec.param}}`;
  const plural = spec.resource === 'security_group_rule' ? 'security_group_rules' : `${spec.resource}s`;
  const id = (req: SimRequest) => req.params[spec.param] ?? '';
  const routes: Route[] = [
    { method: 'GET', template: base, handler: wrap((req, actor) => spec.list(req, actor)) },
    {
      method: 'GET',
      template: item,
      handler: wrap((req, actor) =>
        one(req, spec.resource, spec.view(actor, spec.get(actor, id(req)), false)),
      ),
    },
    {
      method: 'DELETE',
      template: item,
      handler: wrap((req, actor) => {
        spec.remove(actor, id(req), ifMatch(req));
        return { status: 204 };
      }),
    },
  ];
  const create = spec.create;
  if (create) {
    routes.push({
      method: 'POST',
      template: base,
      handler: wrap((req, actor) => {
        const { items, bulk } = parseCreate(req.body, spec.resource, plural, spec.attrs, spec.bulk);
        const created: T[] = [];
        try {
          for (const entry of items) created.push(create(actor, entry));
        } catch (e) {
          for (const rec of created.reverse()) spec.undo(rec);
          throw e;
        }
        if (!bulk) return one(req, spec.resource, spec.view(actor, created[0]!, true), 201);
        return {
          status: 201,
          body: { [plural]: created.map((r) => pickFields(spec.view(actor, r, true), req.query)) },
        };
      }),
    });
  }
  const update = spec.update;
  if (update) {
    routes.push({
      method: 'PUT',
      template: item,
      handler: wrap((req, actor) => {
        const body = parseUpdate(req.body, spec.resource, spec.attrs);
        const rec = update(actor, id(req), body, ifMatch(req));
        return one(req, spec.resource, spec.updated?.(actor, rec) ?? spec.view(actor, rec, false));
      }),
    });
  }
  return routes;
}

export function neutronRoutes(state: NeutronState, ready: () => void): Route[] {
  const wrap =
    (h: Handler): Route['handler'] =>
    (req) => {
      ready();
      return h(req, actorOf(req.auth));
    };
  const ADMIN: Actor = { projectId: '', isAdmin: true };
  const routes: Route[] = [
    { method: 'GET', template: '', handler: versions, public: true },
    { method: 'GET', template: '/v2.0', handler: wrap((req) => apiRoot(req)) },
    { method: 'GET', template: '/v2.0/extensions', handler: wrap(() => listExtensions()) },
    { method: 'GET', template: '/v2.0/extensions/{alias}', handler: wrap((req) => showExtension(req)) },
  ];

  routes.push(
    ...crud(
      {
        collection: 'networks',
        resource: 'network',
        param: 'network_id',
        attrs: NETWORK_ATTRS,
        bulk: true,
        create: (a, b) => createNetwork(state, a, b),
        undo: (n) => deleteNetwork(state, ADMIN, n.id),
        get: (a, id) => getNetwork(state, a, id),
        update: (a, id, b, m) => updateNetwork(state, a, id, b, m),
        remove: (a, id, m) => deleteNetwork(state, a, id, m),
        view: (a, n, created) => networkView(state, a, n, created),
        list: (req, a) => listResponse(req, networkList(state, a)),
      },
      wrap,
    ),
    ...crud(
      {
        collection: 'subnets',
        resource: 'subnet',
        param: 'subnet_id',
        attrs: SUBNET_ATTRS,
        bulk: true,
        create: (a, b) => createSubnet(state, a, b),
        undo: (s) => deleteSubnet(state, ADMIN, s.id),
        get: (a, id) => getSubnet(state, a, id),
        update: (a, id, b, m) => updateSubnet(state, a, id, b, m),
        remove: (a, id, m) => deleteSubnet(state, a, id, m),
        view: (_a, s) => subnetView(s),
        list: (req, a) => listResponse(req, subnetList(state, a)),
      },
      wrap,
    ),
    ...crud(
      {
        collection: 'subnetpools',
        resource: 'subnetpool',
        param: 'subnetpool_id',
        attrs: SUBNETPOOL_ATTRS,
        bulk: true,
        create: (a, b) => createSubnetPool(state, a, b),
        undo: (p) => deleteSubnetPool(state, ADMIN, p.id),
        get: (a, id) => getSubnetPool(state, a, id),
        update: (a, id, b, m) => updateSubnetPool(state, a, id, b, m),
        remove: (a, id, m) => deleteSubnetPool(state, a, id, m),
        view: (_a, p) => subnetPoolView(p),
        updated: (_a, p) => subnetPoolView(p, 'numbers'),
        list: (req, a) => listResponse(req, subnetPoolList(state, a)),
      },
      wrap,
    ),
    ...crud(
      {
        collection: 'security-groups',
        resource: 'security_group',
        param: 'security_group_id',
        attrs: SECURITY_GROUP_ATTRS,
        bulk: true,
        create: (a, b) => createSecurityGroup(state, a, b),
        undo: (g) => deleteSecurityGroup(state, ADMIN, g.id),
        get: (a, id) => getSecurityGroup(state, a, id),
        update: (a, id, b, m) => updateSecurityGroup(state, a, id, b, m),
        remove: (a, id, m) => deleteSecurityGroup(state, a, id, m),
        view: (_a, g) => securityGroupView(state, g),
        list: (req, a) => {
          ensureDefaultGroup(state, a.projectId);
          return listResponse(req, securityGroupList(state, a));
        },
      },
      wrap,
    ),
    ...crud(
      {
        collection: 'security-group-rules',
        resource: 'security_group_rule',
        param: 'rule_id',
        attrs: RULE_ATTRS,
        bulk: true,
        create: (a, b) => createRule(state, a, b),
        undo: (r) => deleteRuleById(state, ADMIN, r.id),
        get: (a, id) => getRule(state, a, id),
        remove: (a, id) => deleteRuleById(state, a, id),
        view: (_a, r) => ruleView(r),
        list: (req, a) => listResponse(req, ruleList(state, a)),
      },
      wrap,
    ),
    ...crud(
      {
        collection: 'routers',
        resource: 'router',
        param: 'router_id',
        attrs: ROUTER_ATTRS,
        bulk: false,
        create: (a, b) => createRouter(state, a, b),
        undo: (r) => deleteRouter(state, ADMIN, r.id),
        get: (a, id) => getRouter(state, a, id),
        update: (a, id, b, m) => updateRouter(state, a, id, b, m),
        remove: (a, id, m) => deleteRouter(state, a, id, m),
        view: (a, r) => routerView(state, a, r),
        list: (req, a) => listResponse(req, routerList(state, a)),
      },
      wrap,
    ),
    ...crud(
      {
        collection: 'floatingips',
        resource: 'floatingip',
        param: 'floatingip_id',
        attrs: FLOATING_IP_ATTRS,
        bulk: false,
        create: (a, b) => createFloatingIp(state, a, b),
        undo: (f) => deleteFloatingIp(state, ADMIN, f.id),
        get: (a, id) => getFloatingIp(state, a, id),
        update: (a, id, b, m) => updateFloatingIp(state, a, id, b, m),
        remove: (a, id, m) => deleteFloatingIp(state, a, id, m),
        view: (_a, f) => floatingIpView(state, f),
        list: (req, a) => listResponse(req, floatingIpList(state, a)),
      },
      wrap,
    ),
    ...crud(
      {
        collection: 'trunks',
        resource: 'trunk',
        param: 'trunk_id',
        attrs: TRUNK_ATTRS,
        bulk: false,
        create: (a, b) => createTrunk(state, a, b),
        undo: (t) => deleteTrunk(state, ADMIN, t.id),
        get: (a, id) => getTrunk(state, a, id),
        update: (a, id, b, m) => updateTrunk(state, a, id, b, m),
        remove: (a, id, m) => deleteTrunk(state, a, id, m),
        view: (_a, t) => trunkView(t),
        list: (req, a) => listResponse(req, trunkList(state, a)),
      },
      wrap,
    ),
  );

  // Ports: bulk create is all-or-nothing with its own rules (and Zed's SLAAC bug), so not via crud().
  routes.push(
    ...crud<PortRecord>(
      {
        collection: 'ports',
        resource: 'port',
        param: 'port_id',
        attrs: PORT_ATTRS,
        bulk: false,
        undo: (p) => removePort(state, p),
        get: (a, id) => getPort(state, a, id),
        update: (a, id, b, m) => updatePort(state, a, id, b, m === undefined ? {} : { ifMatch: m }),
        remove: (a, id, m) => deletePort(state, a, id, m === undefined ? {} : { ifMatch: m }),
        view: (a, p) => portView(state, a, p),
        list: (req, a) => listResponse(req, portList(state, a)),
      },
      wrap,
    ),
    {
      method: 'POST',
      template: '/v2.0/ports',
      handler: wrap((req, actor) => {
        const { items, bulk } = parseCreate(req.body, 'port', 'ports', PORT_ATTRS, true);
        const ports = createPorts(state, actor, items as PortInput[], bulk);
        if (!bulk) return one(req, 'port', portView(state, actor, ports[0]!), 201);
        return {
          status: 201,
          body: { ports: ports.map((p) => pickFields(portView(state, actor, p), req.query)) },
        };
      }),
    },
  );

  const routerAction = (path: string, fn: (actor: Actor, id: string, body: unknown) => unknown): Route => ({
    method: 'PUT',
    template: `/v2.0/routers/{router_id}/${path}`,
    handler: wrap((req, actor) => ({ status: 200, body: fn(actor, req.params.router_id ?? '', req.body) })),
  });
  routes.push(
    routerAction('add_router_interface', (a, id, b) => addInterface(state, a, id, b)),
    routerAction('remove_router_interface', (a, id, b) => removeInterface(state, a, id, b)),
    routerAction('add_extraroutes', (a, id, b) => ({
      router: routerView(state, a, changeExtraRoutes(state, a, id, b, true)),
    })),
    routerAction('remove_extraroutes', (a, id, b) => ({
      router: routerView(state, a, changeExtraRoutes(state, a, id, b, false)),
    })),
  );

  const trunkId = (req: SimRequest) => req.params.trunk_id ?? '';
  routes.push(
    {
      method: 'PUT',
      template: '/v2.0/trunks/{trunk_id}/add_subports',
      handler: wrap((req, a) => ({
        status: 200,
        body: trunkView(addSubports(state, a, trunkId(req), req.body)),
      })),
    },
    {
      method: 'PUT',
      template: '/v2.0/trunks/{trunk_id}/remove_subports',
      handler: wrap((req, a) => ({
        status: 200,
        body: trunkView(removeSubports(state, a, trunkId(req), req.body)),
      })),
    },
    {
      method: 'GET',
      template: '/v2.0/trunks/{trunk_id}/get_subports',
      handler: wrap((req, a) => ({
        status: 200,
        body: { sub_ports: trunkView(getTrunk(state, a, trunkId(req))).sub_ports },
      })),
    },
  );

  const tagArgs = (req: SimRequest) => [req.params.collection ?? '', req.params.id ?? ''] as const;
  routes.push(
    {
      method: 'GET',
      template: '/v2.0/{collection}/{id}/tags',
      handler: wrap((req, a) => getTags(state, a, ...tagArgs(req))),
    },
    {
      method: 'PUT',
      template: '/v2.0/{collection}/{id}/tags',
      handler: wrap((req, a) => replaceTags(state, a, ...tagArgs(req), req.body)),
    },
    {
      method: 'DELETE',
      template: '/v2.0/{collection}/{id}/tags',
      handler: wrap((req, a) => clearTags(state, a, ...tagArgs(req))),
    },
    {
      method: 'GET',
      template: '/v2.0/{collection}/{id}/tags/{tag}',
      handler: wrap((req, a) => hasTag(state, a, ...tagArgs(req), req.params.tag ?? '')),
    },
    {
      method: 'PUT',
      template: '/v2.0/{collection}/{id}/tags/{tag}',
      handler: wrap((req, a) => addTag(state, a, ...tagArgs(req), req.params.tag ?? '')),
    },
    {
      method: 'DELETE',
      template: '/v2.0/{collection}/{id}/tags/{tag}',
      handler: wrap((req, a) => removeTag(state, a, ...tagArgs(req), req.params.tag ?? '')),
    },
  );

  const pid = (req: SimRequest) => req.params.project_id ?? '';
  routes.push(
    { method: 'GET', template: '/v2.0/quotas', handler: wrap((_req, a) => listQuotas(state, a)) },
    { method: 'GET', template: '/v2.0/quotas/tenant', handler: wrap((_req, a) => callerProject(a)) },
    { method: 'GET', template: '/v2.0/quotas/project', handler: wrap((_req, a) => callerProject(a)) },
    {
      method: 'GET',
      template: '/v2.0/quotas/{project_id}',
      handler: wrap((req, a) => showQuota(state, a, pid(req))),
    },
    {
      method: 'PUT',
      template: '/v2.0/quotas/{project_id}',
      handler: wrap((req, a) => updateQuota(state, a, pid(req), req.body)),
    },
    {
      method: 'DELETE',
      template: '/v2.0/quotas/{project_id}',
      handler: wrap((req, a) => resetQuota(state, a, pid(req))),
    },
    {
      method: 'GET',
      template: '/v2.0/quotas/{project_id}/default',
      handler: wrap((req, a) => defaultQuota(a, pid(req))),
    },
    {
      method: 'GET',
      template: '/v2.0/quotas/{project_id}/details',
      handler: wrap((req, a) => quotaDetails(state, a, pid(req))),
    },
    {
      method: 'GET',
      template: '/v2.0/quotas/{project_id}/details.json',
      handler: wrap((req, a) => quotaDetails(state, a, pid(req))),
    },
    {
      method: 'GET',
      template: '/v2.0/network-ip-availabilities',
      handler: wrap((req, a) => listIpAvailability(state, a, req.query)),
    },
    {
      method: 'GET',
      template: '/v2.0/network-ip-availabilities/{network_id}',
      handler: wrap((req, a) => showIpAvailability(state, a, req.params.network_id ?? '')),
    },
    {
      method: 'GET',
      template: '/v2.0/availability_zones',
      handler: wrap(() => ({
        status: 200,
        body: {
          availability_zones: [
            { name: 'nova', resource: 'network', state: 'available' },
            { name: 'nova', resource: 'router', state: 'available' },
          ],
        },
      })),
    },
  );
  return routes;
}
