/**
 * CAPO's params (`{id}` or `{filter}`) → the Neutron objects they name. A filter must match exactly
 * one object (CAPO's ErrFilterMatch); a failed lookup is the shared server path's DependencyError,
 * which the controller turns into a condition. Whole objects are returned, not ids: the cluster
 * status records names, CIDRs and tags.
 */
import { isNotFound } from '../../openstack/core/errors.ts';
import type { TagFilters } from '../../openstack/core/resource.ts';
import type { Network } from '../../openstack/network/v2/networks.ts';
import type { Router } from '../../openstack/network/v2/routers.ts';
import type { Subnet } from '../../openstack/network/v2/subnets.ts';
import { DependencyError } from '../../openstack/services/server/index.ts';
import type { NetworkParam, SubnetParam } from '../api/index.ts';
import type { ClusterApi } from './api.ts';

type Options = { signal?: AbortSignal | undefined };

interface NeutronFilter {
  name?: string | undefined;
  description?: string | undefined;
  projectID?: string | undefined;
  tags?: readonly string[] | undefined;
  tagsAny?: readonly string[] | undefined;
  notTags?: readonly string[] | undefined;
  notTagsAny?: readonly string[] | undefined;
}

export type RouterParam = { id?: string | undefined; filter?: NeutronFilter | undefined };

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function tagQuery(f: NeutronFilter): TagFilters {
  return defined({
    tags: f.tags?.length ? f.tags : undefined,
    'tags-any': f.tagsAny?.length ? f.tagsAny : undefined,
    'not-tags': f.notTags?.length ? f.notTags : undefined,
    'not-tags-any': f.notTagsAny?.length ? f.notTagsAny : undefined,
  });
}

function neutronQuery(f: NeutronFilter): Record<string, unknown> {
  return {
    ...defined({ name: f.name, description: f.description, project_id: f.projectID }),
    ...tagQuery(f),
  };
}

function describe(f: object): string {
  return `filter ${JSON.stringify(f)}`;
}

function exactlyOne<T extends { id: string }>(resource: string, what: string, found: readonly T[]): T {
  const id = DependencyError.exactlyOne(
    resource,
    what,
    found.map((o) => o.id),
  );
  return found.find((o) => o.id === id)!;
}

async function byId<T>(resource: string, id: string, get: () => Promise<T>): Promise<T> {
  try {
    return await get();
  } catch (err) {
    if (isNotFound(err)) throw new DependencyError(resource, 'NotFound', `no ${resource} has id ${id}`);
    throw err;
  }
}

export async function resolveNetwork(api: ClusterApi, param: NetworkParam, o: Options): Promise<Network> {
  if (param.id) {
    const id = param.id;
    return byId('network', id, () => api.network.networks.get(id, o));
  }
  const f = param.filter ?? {};
  const query = neutronQuery(f);
  if (Object.keys(query).length === 0)
    throw new DependencyError('network', 'Invalid', 'a network filter is empty; give a name, tags or an id');
  const found = await api.network.networks.list(query, o).all();
  return exactlyOne('network', describe(f), found);
}

function subnetQuery(f: NonNullable<SubnetParam['filter']>): Record<string, unknown> {
  return {
    ...neutronQuery(f),
    ...defined({
      ip_version: f.ipVersion,
      gateway_ip: f.gatewayIP,
      cidr: f.cidr,
      ipv6_address_mode: f.ipv6AddressMode,
      ipv6_ra_mode: f.ipv6RAMode,
    }),
  };
}

/** A subnet, within `networkID` when one is known (CAPO scopes subnet filters to the cluster network). */
export async function resolveSubnet(
  api: ClusterApi,
  param: SubnetParam,
  networkID: string | undefined,
  o: Options,
): Promise<Subnet> {
  if (param.id) {
    const id = param.id;
    const subnet = await byId('subnet', id, () => api.network.subnets.get(id, o));
    if (networkID !== undefined && subnet.network_id !== networkID)
      throw new DependencyError(
        'subnet',
        'Invalid',
        `subnet ${id} is on network ${subnet.network_id}, not on the cluster network ${networkID}`,
      );
    return subnet;
  }
  const f = param.filter ?? {};
  const query = subnetQuery(f);
  if (Object.keys(query).length === 0)
    throw new DependencyError('subnet', 'Invalid', 'a subnet filter is empty; give a name, a CIDR or an id');
  const found = await api.network.subnets
    .list({ ...query, ...(networkID !== undefined ? { network_id: networkID } : {}) }, o)
    .all();
  return exactlyOne(
    'subnet',
    `${describe(f)}${networkID !== undefined ? ` on network ${networkID}` : ''}`,
    found,
  );
}

export async function resolveRouter(api: ClusterApi, param: RouterParam, o: Options): Promise<Router> {
  if (param.id) {
    const id = param.id;
    return byId('router', id, () => api.network.routers.get(id, o));
  }
  const f = param.filter ?? {};
  const query = neutronQuery(f);
  if (Object.keys(query).length === 0)
    throw new DependencyError('router', 'Invalid', 'a router filter is empty; give a name, tags or an id');
  const found = await api.network.routers.list(query, o).all();
  return exactlyOne('router', describe(f), found);
}
