/**
 * The emulated Octavia v2 API on `/load-balancer`: load balancers with their listeners, pools,
 * members, health monitors and L7 policies, Octavia's PENDING_* state machine and providers.
 */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import { capabilities, emptyList, missing, providers, v2Root, versions } from './catalog.ts';
import type { Ctx } from './context.ts';
import { renderOctaviaError } from './errors.ts';
import { flavorHandlers } from './flavors.ts';
import { healthMonitorHandlers } from './healthmonitors.ts';
import { l7Handlers } from './l7policies.ts';
import { Lifecycle } from './lifecycle.ts';
import { listenerHandlers } from './listeners.ts';
import { loadBalancerHandlers } from './loadbalancers.ts';
import { memberHandlers } from './members.ts';
import {
  OPERATING_STATUSES,
  PROVISIONING_STATUSES,
  type MemberRecord,
  type OperatingStatus,
  type ProvisioningStatus,
  type Provisioned,
} from './model.ts';
import { poolHandlers } from './pools.ts';
import { OperatingStatuses } from './status.ts';
import { OctaviaStore } from './store.ts';
import { Views } from './views.ts';

type Handler = (req: SimRequest) => SimResponse;

export function registerOctavia(cloud: EmulatedCloud): OctaviaStore {
  const store = new OctaviaStore();
  const status = new OperatingStatuses(store);
  const ctx: Ctx = {
    cloud,
    store,
    life: new Lifecycle(cloud, store),
    status,
    views: new Views(store, status),
  };

  const lbs = loadBalancerHandlers(ctx);
  const listeners = listenerHandlers(ctx);
  const pools = poolHandlers(ctx);
  const members = memberHandlers(ctx);
  const hms = healthMonitorHandlers(ctx);
  const l7 = l7Handlers(ctx);
  const flavors = flavorHandlers(ctx);

  const resources: [string, Handler][] = [
    ['GET /loadbalancers', lbs.list],
    ['POST /loadbalancers', lbs.create],
    ['GET /loadbalancers/{loadbalancer_id}', lbs.get],
    ['PUT /loadbalancers/{loadbalancer_id}', lbs.update],
    ['DELETE /loadbalancers/{loadbalancer_id}', lbs.remove],
    ['GET /loadbalancers/{loadbalancer_id}/status', lbs.status],
    ['GET /loadbalancers/{loadbalancer_id}/statuses', lbs.status],
    ['GET /loadbalancers/{loadbalancer_id}/stats', lbs.stats],
    ['PUT /loadbalancers/{loadbalancer_id}/failover', lbs.failover],
    ['GET /listeners', listeners.list],
    ['POST /listeners', listeners.create],
    ['GET /listeners/{listener_id}', listeners.get],
    ['PUT /listeners/{listener_id}', listeners.update],
    ['DELETE /listeners/{listener_id}', listeners.remove],
    ['GET /listeners/{listener_id}/stats', listeners.stats],
    ['GET /pools', pools.list],
    ['POST /pools', pools.create],
    ['GET /pools/{pool_id}', pools.get],
    ['PUT /pools/{pool_id}', pools.update],
    ['DELETE /pools/{pool_id}', pools.remove],
    ['GET /pools/{pool_id}/members', members.list],
    ['POST /pools/{pool_id}/members', members.create],
    ['PUT /pools/{pool_id}/members', members.batch],
    ['GET /pools/{pool_id}/members/{member_id}', members.get],
    ['PUT /pools/{pool_id}/members/{member_id}', members.update],
    ['DELETE /pools/{pool_id}/members/{member_id}', members.remove],
    ['GET /healthmonitors', hms.list],
    ['POST /healthmonitors', hms.create],
    ['GET /healthmonitors/{healthmonitor_id}', hms.get],
    ['PUT /healthmonitors/{healthmonitor_id}', hms.update],
    ['DELETE /healthmonitors/{healthmonitor_id}', hms.remove],
    ['GET /l7policies', l7.list],
    ['POST /l7policies', l7.create],
    ['GET /l7policies/{l7policy_id}', l7.get],
    ['PUT /l7policies/{l7policy_id}', l7.update],
    ['DELETE /l7policies/{l7policy_id}', l7.remove],
    ['GET /l7policies/{l7policy_id}/rules', l7.listRules],
    ['POST /l7policies/{l7policy_id}/rules', l7.createRule],
    ['GET /l7policies/{l7policy_id}/rules/{l7rule_id}', l7.getRule],
    ['PUT /l7policies/{l7policy_id}/rules/{l7rule_id}', l7.updateRule],
    ['DELETE /l7policies/{l7policy_id}/rules/{l7rule_id}', l7.removeRule],
    ['GET /providers', providers],
    ['GET /providers/{provider}/flavor_capabilities', capabilities('flavor_capabilities')],
    [
      'GET /providers/{provider}/availability_zone_capabilities',
      capabilities('availability_zone_capabilities'),
    ],
    ['GET /flavors', flavors.listFlavors],
    ['POST /flavors', flavors.createFlavor],
    ['GET /flavors/{flavor_id}', flavors.getFlavor],
    ['PUT /flavors/{flavor_id}', flavors.updateFlavor],
    ['DELETE /flavors/{flavor_id}', flavors.removeFlavor],
    ['GET /flavorprofiles', flavors.listProfiles],
    ['POST /flavorprofiles', flavors.createProfile],
    ['GET /flavorprofiles/{flavorprofile_id}', flavors.getProfile],
    ['PUT /flavorprofiles/{flavorprofile_id}', flavors.updateProfile],
    ['DELETE /flavorprofiles/{flavorprofile_id}', flavors.removeProfile],
    ['GET /availabilityzones', emptyList('availability_zones')],
    [
      'GET /availabilityzones/{availability_zone_name}',
      missing('Availability Zone', 'availability_zone_name'),
    ],
    ['GET /availabilityzoneprofiles', emptyList('availability_zone_profiles', true)],
    [
      'GET /availabilityzoneprofiles/{availability_zone_profile_id}',
      missing('Availability Zone Profile', 'availability_zone_profile_id', true),
    ],
  ];

  const routes: Route[] = [
    { method: 'GET', template: '', handler: versions, public: true },
    { method: 'GET', template: '/v2', handler: v2Root, public: true },
    { method: 'GET', template: '/v2.0', handler: v2Root, public: true },
    { method: 'GET', template: '/v2/lbaas', handler: v2Root },
    { method: 'GET', template: '/v2.0/lbaas', handler: v2Root },
  ];
  // Octavia mounts the same controller at /v2 and /v2.0 (the LBaaS v2 path python-octaviaclient
  // uses), and serves every collection both under .../lbaas and directly below.
  for (const base of ['/v2/lbaas', '/v2', '/v2.0/lbaas', '/v2.0']) {
    for (const [key, handler] of resources) {
      const [method, path] = key.split(' ') as [string, string];
      routes.push({ method, template: `${base}${path}`, handler });
    }
  }

  cloud.register(
    {
      name: 'octavia',
      type: 'load-balancer',
      prefix: '/load-balancer',
      catalogPath: '',
      routes,
      renderError: renderOctaviaError,
    },
    {
      persistent: store,
      setState: (resource, id, fields) => forceState(ctx, resource, id, fields),
    },
  );
  return store;
}

/**
 * The admin API's state hook: forces provisioning_status, operating_status (a member marked
 * ERROR is a member its health monitor sees down; null clears it) or admin_state_up.
 */
function forceState(ctx: Ctx, resource: string, id: string, fields: Record<string, unknown>): boolean {
  const { store } = ctx;
  const collections: Record<string, { get(id: string): Provisioned | undefined }> = {
    loadbalancer: store.loadbalancers,
    listener: store.listeners,
    pool: store.pools,
    member: { get: (id) => store.findMember(id) },
    healthmonitor: store.healthmonitors,
    l7policy: store.l7policies,
    l7rule: store.l7rules,
  };
  const kind = resource.replace(/ies$/, 'y').replace(/s$/, '').replace(/-/g, '').replace('_', '');
  const record = collections[kind]?.get(id);
  if (!record) return false;
  const prov = fields.provisioning_status;
  if (typeof prov === 'string' && PROVISIONING_STATUSES.includes(prov as ProvisioningStatus)) {
    record.provisioning_status = prov as ProvisioningStatus;
    // A forced load balancer state wins over any transition still under way.
    if (kind === 'loadbalancer') store.loadbalancer(id)._epoch++;
  }
  if ('operating_status' in fields) {
    const op = fields.operating_status;
    if (op === null) record._forced_operating_status = undefined;
    else if (typeof op === 'string' && OPERATING_STATUSES.includes(op as OperatingStatus)) {
      record._forced_operating_status = op as OperatingStatus;
    }
    if (kind === 'member') store.forcedChanged(record as MemberRecord);
  }
  if (typeof fields.admin_state_up === 'boolean') record.admin_state_up = fields.admin_state_up;
  ctx.cloud.changed();
  return true;
}
