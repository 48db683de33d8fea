/**
 * How traffic to the API server reaches a control-plane machine (CAPO's
 * `reconcileAPIServerLoadBalancer`), and who does what here:
 *
 * - With the API load balancer, the OpenStackCluster controller owns the whole load balancer,
 *   members included: it watches the OpenStackMachines of its cluster and puts every control-plane
 *   machine's InternalIP in the pools with one batch update per change. This controller only
 *   publishes the addresses in status and reports, as condition APIServerIngressReadyCondition,
 *   whether the address is a member of every pool of the load balancer (read from Octavia).
 * - Without a load balancer but with the API floating IP (`disableAPIServerFloatingIP` false), the
 *   floating IP the cluster controller allocated (the endpoint host, or `apiServerFloatingIP`) is
 *   associated with the cluster-network port of the first control-plane machine that finds it
 *   free, as CAPO does. When that machine goes, its port goes and Neutron frees the address; the
 *   next control-plane machine's reconcile takes it. The floating IP itself belongs to the cluster:
 *   a machine never creates or deletes it (CAPO deleting it with the machine is a known oddity).
 * - Otherwise (a fixed IP, or an endpoint the user runs): nothing to do.
 */
import type { OpenStackCluster, OpenStackServer } from '../api/index.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { isPreconditionFailed } from '../../openstack/core/errors.ts';
import type { FloatingIp } from '../../openstack/network/v2/floating-ips.ts';

export type ApiIngress =
  | { mode: 'LoadBalancer'; loadBalancerID: string | undefined }
  | { mode: 'FloatingIP'; address: string | undefined }
  | { mode: 'None' };

/** Which of the three a cluster uses. */
export function apiIngress(cluster: OpenStackCluster): ApiIngress {
  const lb = cluster.spec.apiServerLoadBalancer;
  if (lb && lb.enabled !== false) {
    return { mode: 'LoadBalancer', loadBalancerID: cluster.status?.apiServerLoadBalancer?.id || undefined };
  }
  if (cluster.spec.disableAPIServerFloatingIP) return { mode: 'None' };
  const endpoint = cluster.spec.controlPlaneEndpoint;
  const address =
    endpoint?.host && endpoint.port ? endpoint.host : cluster.spec.apiServerFloatingIP || undefined;
  return { mode: 'FloatingIP', address };
}

/**
 * The server's port on the cluster network (CAPO's management port): the port whose resolved
 * network is the cluster's, by position in status.resolved.ports / status.resources.ports.
 */
export function managementPortID(server: OpenStackServer, cluster: OpenStackCluster): string | undefined {
  const networkID = cluster.status?.network?.id;
  const resolved = server.status?.resolved?.ports ?? [];
  const created = server.status?.resources?.ports ?? [];
  const i = networkID === undefined ? 0 : resolved.findIndex((p) => p.networkID === networkID);
  return i < 0 ? undefined : created[i]?.id;
}

type Api = Pick<OpenStackClient, 'network' | 'loadBalancer'>;

export type FloatingIPOutcome =
  | { result: 'Associated'; floatingIP: string; portID: string; changed: boolean }
  /** Held by another port (another control-plane machine): fine, CAPO leaves it there. */
  | { result: 'HeldElsewhere'; floatingIP: string; portID: string }
  | { result: 'NotFound'; floatingIP: string };

/**
 * Associates the API floating IP with `portID` unless a port already holds it. Two control-plane
 * machines may find it free at the same moment: the association is conditional on the revision
 * read (Neutron's revision-if-match), so the second writer gets a 412 and finds the first's port.
 */
export async function ensureAPIFloatingIP(
  api: Api,
  address: string,
  portID: string,
  signal: AbortSignal,
): Promise<FloatingIPOutcome> {
  const read = async () =>
    (await api.network.floatingIps.list({ floating_ip_address: address }, { signal }).all({ signal }))[0];
  const fip = await read();
  if (!fip) return { result: 'NotFound', floatingIP: address };
  const held = holder(fip, address, portID);
  if (held) return held;
  const guarded = await api.network.extensions.has('revision-if-match', { signal });
  try {
    await api.network.floatingIps.associate(fip.id, portID, {
      signal,
      ...(guarded ? { ifRevision: fip.revision_number } : {}),
    });
  } catch (err) {
    if (!isPreconditionFailed(err)) throw err;
    const now = await read();
    const after = now && holder(now, address, portID);
    if (after) return after;
    throw new Error(`floating IP ${address} changed while associating it; trying again`, { cause: err });
  }
  return { result: 'Associated', floatingIP: address, portID, changed: true };
}

function holder(fip: FloatingIp, address: string, portID: string): FloatingIPOutcome | undefined {
  if (fip.port_id === portID) return { result: 'Associated', floatingIP: address, portID, changed: false };
  if (fip.port_id) return { result: 'HeldElsewhere', floatingIP: address, portID: fip.port_id };
  return undefined;
}

/** Whether `address` is a member of every pool of the load balancer (false while it has no pool). */
export async function isLoadBalancerMember(
  api: Api,
  loadBalancerID: string,
  address: string,
  signal: AbortSignal,
): Promise<boolean> {
  const pools = await api.loadBalancer.pools
    .list({ loadbalancer_id: loadBalancerID }, { signal })
    .all({ signal });
  if (pools.length === 0) return false;
  for (const pool of pools) {
    const members = await api.loadBalancer.members.list(pool.id, { address }, { signal }).all({ signal });
    if (!members.some((m) => m.address === address)) return false;
  }
  return true;
}
