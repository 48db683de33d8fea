/**
 * The `namespace` SubnetsDriver (upstream's NamespacePodSubnetDriver, `[kubernetes]
 * pod_subnets_driver = namespace`): a pod's port goes on its namespace's subnet, which the
 * namespace's KuryrNetwork records.
 *
 * As OpenShift since 4.10, the KuryrNetwork is made when the namespace's first pod needs it: a pod
 * in a namespace without one creates it here (named as the namespace, in it; the finalizer on from
 * the start, so nothing the kuryrnetwork controller makes can outlive it; an owner reference to the
 * Namespace carrying its uid), and gets a Pending until the kuryrnetwork controller has recorded the
 * subnet. A namespace being deleted gets no new network.
 *
 * The subnet's gateway and its network's MTU are read from Neutron once per subnet, then kept.
 */
import type { V1Namespace, V1Pod } from '@kubernetes/client-node';
import { isAlreadyExists, kinds, ownerReference, type Manager } from '../../kube/index.ts';
import { Finalizers, kuryrKinds, type KuryrNetwork } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { pending, type Pending, type PodSubnet, type SubnetsDriver } from '../drivers.ts';

/** How soon a pod waiting for its namespace's subnet looks again. */
export const NAMESPACE_SUBNET_RETRY_MS = 1_000;

/** The namespace's labels as a KuryrNetwork's nsLabels (upstream copies them whole). */
export function nsLabelsOf(ns: V1Namespace): Record<string, string> {
  return { ...(ns.metadata?.labels ?? {}) };
}

/** The KuryrNetwork a namespace gets: named as it, in it, owned by it, finalizer on. */
export function kuryrNetworkFor(ns: V1Namespace, projectId: string): KuryrNetwork {
  const name = ns.metadata?.name ?? '';
  return {
    apiVersion: kuryrKinds.KuryrNetwork.apiVersion,
    kind: kuryrKinds.KuryrNetwork.kind,
    metadata: {
      name,
      namespace: name,
      finalizers: [Finalizers.KuryrNetwork],
      ownerReferences: [
        ownerReference(
          { ...ns, apiVersion: 'v1', kind: 'Namespace' },
          { blockOwnerDeletion: false, controller: false },
        ),
      ],
    },
    spec: { nsName: name, projectId, nsLabels: nsLabelsOf(ns) },
  };
}

export function namespaceSubnets(mgr: Manager, ctx: KuryrContext): SubnetsDriver {
  const known = new Map<string, Promise<PodSubnet>>();

  const describe = (kns: KuryrNetwork, signal: AbortSignal): Promise<PodSubnet> => {
    const subnetId = kns.status!.subnetId!;
    let p = known.get(subnetId);
    if (!p) {
      p = (async () => {
        const subnet = await ctx.os.network.subnets.get(subnetId, { signal });
        const network = await ctx.os.network.networks.get(subnet.network_id, { signal });
        return {
          networkId: subnet.network_id,
          subnetId: subnet.id,
          cidr: subnet.cidr,
          ...(subnet.gateway_ip ? { gateway: subnet.gateway_ip } : {}),
          ...(typeof network.mtu === 'number' ? { mtu: network.mtu } : {}),
        };
      })();
      p.catch(() => known.delete(subnetId));
      known.set(subnetId, p);
    }
    return p;
  };

  const forNamespace = async (namespace: string, signal: AbortSignal): Promise<PodSubnet | Pending> => {
    const key = { namespace, name: namespace };
    let kns = await mgr.client.get(kuryrKinds.KuryrNetwork, key, { signal });
    if (!kns) {
      const ns = await mgr.client.get(kinds.Namespace, { name: namespace }, { signal });
      if (!ns) return pending(`namespace ${namespace} not found`, NAMESPACE_SUBNET_RETRY_MS);
      if (ns.metadata?.deletionTimestamp) {
        return pending(
          `namespace ${namespace} is being deleted: no network is made for it`,
          NAMESPACE_SUBNET_RETRY_MS,
        );
      }
      try {
        kns = await mgr.api.create(kuryrKinds.KuryrNetwork, kuryrNetworkFor(ns, ctx.projectId), { signal });
        ctx.log.info(
          { namespace },
          `created KuryrNetwork ${namespace}/${namespace} for the namespace's first pod`,
        );
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      return pending(`KuryrNetwork ${namespace}/${namespace}: network being made`, NAMESPACE_SUBNET_RETRY_MS);
    }
    if (kns.metadata?.deletionTimestamp) {
      return pending(`KuryrNetwork ${namespace}/${namespace} is being deleted`, NAMESPACE_SUBNET_RETRY_MS);
    }
    // Ready once routed: a pod on a subnet not yet on the router could not reach the cluster.
    if (!kns.status?.subnetId || !kns.status.netId || !kns.status.routerId) {
      return pending(
        `KuryrNetwork ${namespace}/${namespace}: subnet not made yet`,
        NAMESPACE_SUBNET_RETRY_MS,
      );
    }
    return describe(kns, signal);
  };

  return {
    name: 'namespace',
    forPod: (pod: V1Pod, signal: AbortSignal) => forNamespace(pod.metadata?.namespace ?? 'default', signal),
    forNamespace,
  };
}
