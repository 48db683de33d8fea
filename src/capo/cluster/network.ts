/**
 * The cluster network (CAPO's ReconcileNetwork / ReconcileSubnet / ReconcileRouter and
 * reconcilePreExistingNetworkComponents):
 *
 * - `managedSubnets`: the network, its subnet and a router named `k8s-clusterapi-cluster-<ns>-<name>`,
 *   each found by name (the subnet by network and CIDR) before it is created, so a restart adopts
 *   what an earlier run made; the router gets its gateway on the external network and an interface
 *   on the subnet. `spec.router` replaces the managed router by one of the user's (interface only).
 * - otherwise the user's network and subnets (by id or filter; all subnets of the network when none
 *   are named), and the user's router when named. Nothing of the user's is ever changed.
 *
 * One Neutron write per missing piece; a steady state reads and writes nothing new.
 */
import { parseCidr } from '../../lib/cidr.ts';
import type { Network } from '../../openstack/network/v2/networks.ts';
import type { Router } from '../../openstack/network/v2/routers.ts';
import type { Subnet } from '../../openstack/network/v2/subnets.ts';
import { DependencyError } from '../../openstack/services/server/index.ts';
import type { OpenStackClusterSpec, OpenStackClusterStatus } from '../api/index.ts';
import type { ClusterApi } from './api.ts';
import { networkName, resourceDescription } from './names.ts';
import { resolveNetwork, resolveRouter, resolveSubnet } from './params.ts';
import { sameTags } from './tags.ts';

export type NetworkStatusWithSubnets = NonNullable<OpenStackClusterStatus['network']>;
export type RouterStatus = NonNullable<OpenStackClusterStatus['router']>;

/** Which step failed, for CAPO's condition reasons. */
export type NetworkStep = 'network' | 'subnet' | 'router';

export class NetworkStepError extends Error {
  override readonly name = 'NetworkStepError';
  readonly step: NetworkStep;
  override readonly cause: unknown;
  constructor(step: NetworkStep, cause: unknown) {
    super(`${step}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.step = step;
    this.cause = cause;
  }
  static is(this: void, err: unknown): err is NetworkStepError {
    return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'NetworkStepError';
  }
}

export interface NetworkContext {
  api: ClusterApi;
  spec: OpenStackClusterSpec;
  /** `<namespace>-<name>`. */
  resourceName: string;
  externalNetworkID: string | undefined;
  signal: AbortSignal;
  /** Told of every create, for Events. */
  onCreate?: ((what: string, name: string, id: string) => void) | undefined;
}

export interface NetworkOutcome {
  network?: NetworkStatusWithSubnets | undefined;
  router?: RouterStatus | undefined;
}

export function subnetStatus(s: Subnet): NonNullable<NetworkStatusWithSubnets['subnets']>[number] {
  return { id: s.id, name: s.name, cidr: s.cidr, ...(s.tags?.length ? { tags: [...s.tags] } : {}) };
}

function withSubnets(n: Network, subnets: readonly Subnet[]): NetworkStatusWithSubnets {
  return {
    id: n.id,
    name: n.name,
    ...(n.tags?.length ? { tags: [...n.tags] } : {}),
    subnets: subnets.map(subnetStatus),
  };
}

function routerStatus(r: Router): RouterStatus {
  const ips = (r.external_gateway_info?.external_fixed_ips ?? []).flatMap((f) =>
    f.ip_address ? [f.ip_address] : [],
  );
  return {
    id: r.id,
    name: r.name,
    ...(r.tags?.length ? { tags: [...r.tags] } : {}),
    ...(ips.length ? { ips } : {}),
  };
}

async function step<T>(name: NetworkStep, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (NetworkStepError.is(err)) throw err;
    throw new NetworkStepError(name, err);
  }
}

export async function reconcileNetwork(ctx: NetworkContext): Promise<NetworkOutcome> {
  const managed = ctx.spec.managedSubnets ?? [];
  if (managed.length > 0) return reconcileManaged(ctx);
  return reconcilePreExisting(ctx);
}

/**
 * `spec.primarySubnet` first: the API load balancer's VIP and each machine's first fixed IP (its
 * InternalIP, the pool member address) are on the first subnet of `status.network.subnets`. The
 * primary subnet must be one of the cluster's subnets.
 */
async function primaryFirst(ctx: NetworkContext, network: Network, subnets: Subnet[]): Promise<Subnet[]> {
  const param = ctx.spec.primarySubnet;
  if (!param) return subnets;
  const primary = await resolveSubnet(ctx.api, param, network.id, { signal: ctx.signal });
  if (!subnets.some((s) => s.id === primary.id))
    throw new DependencyError(
      'subnet',
      'Invalid',
      `primarySubnet ${primary.name || primary.id} is not one of the cluster subnets; add it to spec.subnets`,
    );
  return [primary, ...subnets.filter((s) => s.id !== primary.id)];
}

async function reconcilePreExisting(ctx: NetworkContext): Promise<NetworkOutcome> {
  const { api, spec } = ctx;
  const o = { signal: ctx.signal };
  const outcome: NetworkOutcome = {};
  if (spec.network || (spec.subnets ?? []).length > 0) {
    await step('network', async () => {
      let network: Network | undefined = spec.network
        ? await resolveNetwork(api, spec.network, o)
        : undefined;
      const subnets: Subnet[] = [];
      for (const param of spec.subnets ?? []) {
        const subnet = await resolveSubnet(api, param, network?.id, o);
        // CAPO derives the network from the first subnet when only subnets are given.
        network ??= await api.network.networks.get(subnet.network_id, o);
        if (subnet.network_id !== network.id)
          throw new DependencyError(
            'subnet',
            'Invalid',
            `subnet ${subnet.name || subnet.id} is on network ${subnet.network_id}, not on ${network.id}`,
          );
        subnets.push(subnet);
      }
      if (!network) return;
      if (subnets.length === 0) {
        subnets.push(...(await api.network.subnets.list({ network_id: network.id }, o).all()));
      }
      if (subnets.length === 0)
        throw new DependencyError(
          'subnet',
          'NotFound',
          `network ${network.name || network.id} has no subnet`,
        );
      outcome.network = withSubnets(network, await primaryFirst(ctx, network, subnets));
    });
  }
  if (spec.router) {
    const param = spec.router;
    outcome.router = await step('router', async () => routerStatus(await resolveRouter(api, param, o)));
  }
  return outcome;
}

async function reconcileManaged(ctx: NetworkContext): Promise<NetworkOutcome> {
  const network = await step('network', () => ensureNetwork(ctx));
  const subnet = await step('subnet', () => ensureSubnet(ctx, network));
  const router = await step('router', () => ensureRouter(ctx, subnet));
  return { network: withSubnets(network, [subnet]), router: routerStatus(router) };
}

/** The one object named `name`, or undefined; several is an error: which to use would be a guess. */
function single<T extends { id: string }>(
  resource: string,
  name: string,
  found: readonly T[],
): T | undefined {
  if (found.length > 1)
    throw new DependencyError(
      resource,
      'Ambiguous',
      `${found.length} ${resource}s are named ${name} (${found.map((f) => f.id).join(', ')}); delete the extra ones`,
      found.map((f) => f.id),
    );
  return found[0];
}

async function ensureTags<T extends { id: string; tags: string[] }>(
  ctx: NetworkContext,
  resource: 'networks' | 'subnets' | 'routers',
  obj: T,
): Promise<T> {
  const want = ctx.spec.tags ?? [];
  if (sameTags(obj.tags, want)) return obj;
  await ctx.api.network.tags.replace(resource, obj.id, want, { signal: ctx.signal });
  return { ...obj, tags: [...want] };
}

async function ensureNetwork(ctx: NetworkContext): Promise<Network> {
  const { api, spec } = ctx;
  const o = { signal: ctx.signal };
  const name = networkName(ctx.resourceName);
  let network = single('network', name, await api.network.networks.list({ name }, o).all());
  if (!network) {
    network = await api.network.networks.create(
      {
        name,
        description: resourceDescription(ctx.resourceName),
        admin_state_up: true,
        ...(spec.disablePortSecurity ? { port_security_enabled: false } : {}),
        ...(spec.networkMTU !== undefined && spec.networkMTU > 0 ? { mtu: spec.networkMTU } : {}),
      },
      o,
    );
    ctx.onCreate?.('network', name, network.id);
  }
  return ensureTags(ctx, 'networks', network);
}

async function ensureSubnet(ctx: NetworkContext, network: Network): Promise<Subnet> {
  const { api } = ctx;
  const o = { signal: ctx.signal };
  const want = ctx.spec.managedSubnets![0]!;
  const name = networkName(ctx.resourceName);
  let subnet = single(
    'subnet',
    `${want.cidr} on ${name}`,
    await api.network.subnets.list({ network_id: network.id, cidr: want.cidr }, o).all(),
  );
  if (!subnet) {
    subnet = await api.network.subnets.create(
      {
        network_id: network.id,
        name,
        description: resourceDescription(ctx.resourceName),
        ip_version: parseCidr(want.cidr, { sloppy: true })?.family === 6 ? 6 : 4,
        cidr: want.cidr,
        ...(want.dnsNameservers?.length ? { dns_nameservers: [...want.dnsNameservers] } : {}),
        ...(want.allocationPools?.length
          ? { allocation_pools: want.allocationPools.map((p) => ({ start: p.start, end: p.end })) }
          : {}),
      },
      o,
    );
    ctx.onCreate?.('subnet', name, subnet.id);
  } else {
    // dnsNameservers is the one subnet field CAPO lets change after creation.
    const dns = want.dnsNameservers ?? [];
    if (JSON.stringify(subnet.dns_nameservers ?? []) !== JSON.stringify(dns))
      subnet = await api.network.subnets.update(subnet.id, { dns_nameservers: [...dns] }, o);
  }
  return ensureTags(ctx, 'subnets', subnet);
}

async function gatewayInfo(ctx: NetworkContext, externalNetworkID: string) {
  const ips = [];
  for (const e of ctx.spec.externalRouterIPs ?? []) {
    const subnet = await resolveSubnet(ctx.api, e.subnet, externalNetworkID, { signal: ctx.signal });
    ips.push({ subnet_id: subnet.id, ...(e.fixedIP ? { ip_address: e.fixedIP } : {}) });
  }
  return { network_id: externalNetworkID, ...(ips.length ? { external_fixed_ips: ips } : {}) };
}

async function ensureRouter(ctx: NetworkContext, subnet: Subnet): Promise<Router> {
  const { api, spec } = ctx;
  const o = { signal: ctx.signal };
  let router: Router;
  if (spec.router) {
    router = await resolveRouter(api, spec.router, o);
  } else {
    const name = networkName(ctx.resourceName);
    const found = single('router', name, await api.network.routers.list({ name }, o).all());
    const gateway = ctx.externalNetworkID ? await gatewayInfo(ctx, ctx.externalNetworkID) : undefined;
    if (!found) {
      router = await api.network.routers.create(
        {
          name,
          description: resourceDescription(ctx.resourceName),
          ...(gateway ? { external_gateway_info: gateway } : {}),
        },
        o,
      );
      ctx.onCreate?.('router', name, router.id);
    } else {
      router = found;
      if (gateway && router.external_gateway_info?.network_id !== gateway.network_id)
        router = await api.network.routers.setGateway(router.id, gateway, o);
    }
    router = await ensureTags(ctx, 'routers', router);
  }
  const interfaces = await api.network.ports
    .list({ device_id: router.id, network_id: subnet.network_id }, o)
    .all();
  const attached = interfaces.some(
    (p) =>
      p.device_owner.startsWith('network:router_interface') &&
      p.fixed_ips.some((f) => f.subnet_id === subnet.id),
  );
  if (!attached) await api.network.routers.addInterface(router.id, { subnet_id: subnet.id }, o);
  return router;
}
