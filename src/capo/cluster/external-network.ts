/**
 * The external network of a cluster (CAPO's ReconcileExternalNetwork): the one `externalNetwork`
 * names; else, unless `disableExternalNetwork`, the only network with `router:external` — none is
 * fine (the cluster stays internal), several is an error because picking one would be a guess.
 * The router gateway and every floating IP come from this network.
 */
import type { Network } from '../../openstack/network/v2/networks.ts';
import { DependencyError } from '../../openstack/services/server/index.ts';
import type { OpenStackClusterSpec } from '../api/index.ts';
import type { ClusterApi } from './api.ts';
import { resolveNetwork } from './params.ts';

export interface NetworkStatus {
  id: string;
  name: string;
  tags?: string[];
}

export function networkStatus(n: Pick<Network, 'id' | 'name' | 'tags'>): NetworkStatus {
  return { id: n.id, name: n.name, ...(n.tags?.length ? { tags: [...n.tags] } : {}) };
}

/** Undefined: the cluster has no external network (disabled, or none exists). */
export async function reconcileExternalNetwork(
  api: ClusterApi,
  spec: OpenStackClusterSpec,
  signal: AbortSignal,
): Promise<NetworkStatus | undefined> {
  const o = { signal };
  if (spec.externalNetwork) {
    const network = await resolveNetwork(api, spec.externalNetwork, o);
    if (network['router:external'] === false)
      throw new DependencyError(
        'network',
        'Invalid',
        `network ${network.name || network.id} named by externalNetwork is not an external network (router:external is false)`,
      );
    return networkStatus(network);
  }
  if (spec.disableExternalNetwork) return undefined;
  const external = await api.network.networks.list({ 'router:external': true }, o).all();
  if (external.length === 0) return undefined;
  if (external.length > 1)
    throw new DependencyError(
      'network',
      'Ambiguous',
      `${external.length} external networks exist (${external.map((n) => n.name || n.id).join(', ')}); ` +
        'name one in spec.externalNetwork, or set spec.disableExternalNetwork',
      external.map((n) => n.id),
    );
  return networkStatus(external[0]!);
}
