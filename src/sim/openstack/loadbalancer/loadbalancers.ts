/** Load balancers: /v2/lbaas/loadbalancers with status, stats and failover. */
import { uuid } from '../core/ids.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { authorize, requireAdmin, targetProject, type Ctx } from './context.ts';
import { invalidSubresource, providerNotEnabled, validation } from './errors.ts';
import { flavorProvider } from './flavors.ts';
import { LISTENER_GRAPH_FIELDS, POOL_GRAPH_FIELDS, buildGraph, planGraph } from './graph.ts';
import { deleting } from './lifecycle.ts';
import { zeroStats } from './listeners.ts';
import { PROVISIONED_ATTRIBUTES } from './listing.ts';
import { newProvisioned, type LoadBalancerRecord } from './model.ts';
import { DEFAULT_PROVIDER, ProviderDriver, isEnabledProvider } from './providers.ts';
import { readHandlers } from './reads.ts';
import {
  bool,
  ip,
  mandatory,
  objList,
  parseRoot,
  str,
  strList,
  uuidField,
  type Fields,
  type Parsed,
} from './schema.ts';
import { allocateVip, releaseVip, resolveVip, type VipRequest } from './vip.ts';

const LB_PUT_FIELDS: Fields = {
  name: str(),
  description: str(),
  admin_state_up: bool(),
  vip_qos_policy_id: uuidField(),
  tags: strList(),
};

const ADDITIONAL_VIP_FIELDS: Fields = { subnet_id: mandatory(uuidField()), ip_address: ip() };

const LB_POST_FIELDS: Fields = {
  ...LB_PUT_FIELDS,
  vip_address: ip(),
  vip_port_id: uuidField(),
  vip_subnet_id: uuidField(),
  vip_network_id: uuidField(),
  additional_vips: objList(ADDITIONAL_VIP_FIELDS),
  project_id: str(),
  tenant_id: str(),
  provider: str(64),
  flavor_id: uuidField(),
  availability_zone: str(),
  listeners: objList(LISTENER_GRAPH_FIELDS),
  pools: objList(POOL_GRAPH_FIELDS),
};

export const LB_ATTRIBUTES: Readonly<Record<string, (lb: LoadBalancerRecord) => unknown>> = {
  ...PROVISIONED_ATTRIBUTES,
  name: (lb) => lb.name,
  description: (lb) => lb.description,
  vip_address: (lb) => lb.vip_address,
  vip_port_id: (lb) => lb.vip_port_id,
  vip_subnet_id: (lb) => lb.vip_subnet_id,
  vip_network_id: (lb) => lb.vip_network_id,
  vip_qos_policy_id: (lb) => lb.vip_qos_policy_id,
  provider: (lb) => lb.provider,
  flavor_id: (lb) => lb.flavor_id,
  availability_zone: (lb) => lb.availability_zone,
};

export function loadBalancerHandlers(ctx: Ctx) {
  const { store, life, views, cloud, status } = ctx;
  const attributes = {
    ...LB_ATTRIBUTES,
    operating_status: (lb: LoadBalancerRecord) => status.loadbalancer(lb),
  };

  return {
    ...readHandlers({
      collection: 'loadbalancers',
      item: 'loadbalancer',
      records: store.loadbalancers,
      param: 'loadbalancer_id',
      find: (id) => store.loadbalancer(id),
      view: (lb) => views.loadbalancer(lb),
      attributes,
    }),

    create: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'loadbalancer', LB_POST_FIELDS);
      const projectId = targetProject(req, body);
      const network = cloud.network;
      const vipRequest = body as VipRequest;
      const resolved = resolveVip(network, vipRequest);
      const additional = (body.additional_vips as Parsed[] | null | undefined) ?? [];
      for (const extra of additional) {
        const subnet = network.getSubnet(extra.subnet_id as string);
        if (!subnet) throw invalidSubresource('Subnet', extra.subnet_id as string);
        if (resolved.networkId && subnet.network_id !== resolved.networkId) {
          throw validation('All VIP subnets must belong to the same network.');
        }
      }
      const asked = (body.provider as string | null | undefined) ?? undefined;
      const flavorId = (body.flavor_id as string | null | undefined) ?? undefined;
      // A flavor decides the provider (and must agree with one asked for), as Octavia's _get_provider.
      const byFlavor = flavorId ? flavorProvider(ctx, flavorId, asked) : undefined;
      // No availability zone is defined in this cloud, so any reference is invalid.
      if (body.availability_zone) throw validation('Invalid availability zone.');
      const providerName = asked ?? byFlavor ?? DEFAULT_PROVIDER;
      if (!isEnabledProvider(providerName)) throw providerNotEnabled(providerName);
      const driver = new ProviderDriver(providerName);
      const plan = planGraph(
        (body.listeners as Parsed[] | null | undefined) ?? [],
        (body.pools as Parsed[] | null | undefined) ?? [],
        driver,
      );

      const id = uuid();
      const vip = allocateVip(network, driver, id, projectId, vipRequest, resolved, additional);
      const lb: LoadBalancerRecord = {
        ...newProvisioned(body, projectId, id),
        description: (body.description as string | null) ?? '',
        vip_address: vip.vip_address,
        vip_port_id: vip.vip_port_id,
        vip_subnet_id: vip.vip_subnet_id,
        vip_network_id: vip.vip_network_id,
        vip_qos_policy_id: (body.vip_qos_policy_id as string | null) ?? null,
        additional_vips: vip.additional_vips,
        provider: providerName,
        flavor_id: flavorId ?? null,
        availability_zone: null,
        listener_ids: [],
        pool_ids: [],
        _vip_port_owned: vip.owned,
        _epoch: 0,
      };
      store.addLoadBalancer(lb);
      const faults = life.createFaults('loadbalancer');
      // Production behaviour: the worker deploys the whole tree, so children settle with the LB.
      const changes = buildGraph(store, lb, plan, faults.final);
      life.begin({
        lb,
        lbPending: 'PENDING_CREATE',
        lbFinal: faults.final,
        changes,
        key: 'octavia.loadbalancer.create',
        stuck: faults.stuck,
      });
      return { status: 201, body: { loadbalancer: views.loadbalancerFull(lb) } };
    },

    update: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'loadbalancer', LB_PUT_FIELDS);
      const lb = store.loadbalancer(req.params.loadbalancer_id!);
      authorize(req, lb.project_id);
      life.assertLbWritable(lb, 'update');
      if ('name' in body) lb.name = (body.name as string | null) ?? '';
      if ('description' in body) lb.description = (body.description as string | null) ?? '';
      if ('admin_state_up' in body) lb.admin_state_up = (body.admin_state_up as boolean | null) ?? true;
      if ('vip_qos_policy_id' in body)
        lb.vip_qos_policy_id = (body.vip_qos_policy_id as string | null) ?? null;
      if ('tags' in body) lb.tags = (body.tags as string[] | null) ?? [];
      life.write(lb, [], [], 'octavia.loadbalancer.update');
      return { status: 200, body: { loadbalancer: views.loadbalancer(lb) } };
    },

    remove: (req: SimRequest): SimResponse => {
      const lb = store.loadbalancer(req.params.loadbalancer_id!);
      authorize(req, lb.project_id);
      const cascade = ['true', '1', 'yes', 'on', 't', 'y'].includes(
        (req.query.get('cascade') ?? '').toLowerCase(),
      );
      if ((lb.listener_ids.length > 0 || lb.pool_ids.length > 0) && !cascade) {
        throw validation(`Cannot delete Load Balancer ${lb.id} - it has children`);
      }
      life.assertLbWritable(lb, 'delete');
      // removeLoadBalancer unlinks the whole tree once the load balancer is gone.
      const changes = store
        .tree(lb)
        .filter((r) => r !== lb)
        .map((record) => deleting(record));
      const portId = lb.vip_port_id;
      const owned = lb._vip_port_owned;
      life.begin({
        lb,
        lbPending: 'PENDING_DELETE',
        lbFinal: 'DELETED',
        changes,
        key: 'octavia.loadbalancer.delete',
        afterDelete: () => releaseVip(cloud.network, portId, owned),
      });
      return { status: 204 };
    },

    status: (req: SimRequest): SimResponse => {
      const lb = store.loadbalancer(req.params.loadbalancer_id!);
      authorize(req, lb.project_id);
      return { status: 200, body: status.tree(lb) };
    },

    stats: (req: SimRequest): SimResponse => {
      const lb = store.loadbalancer(req.params.loadbalancer_id!);
      authorize(req, lb.project_id);
      return { status: 200, body: { stats: zeroStats() } };
    },

    failover: (req: SimRequest): SimResponse => {
      const lb = store.loadbalancer(req.params.loadbalancer_id!);
      requireAdmin(req);
      life.assertLbWritable(lb, 'failover');
      new ProviderDriver(lb.provider).failover();
      life.write(lb, [], [], 'octavia.loadbalancer.failover');
      return { status: 202 };
    },
  };
}
