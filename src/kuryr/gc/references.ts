/**
 * The cluster side of `shiftstack kuryr gc`: every cloud id a Kuryr object names — the ports of
 * KuryrPorts' VIFs, the network and subnet of KuryrNetworks, the load balancer of
 * KuryrLoadBalancers — read from the API server (not a cache: a CLI run is one look).
 */
import type { KubeClient } from '../../kube/index.ts';
import { kuryrKinds } from '../api/kinds.ts';
import { readVif } from '../api/vif.ts';
import type { References } from './orphans.ts';

export async function readReferences(kube: KubeClient, signal: AbortSignal): Promise<References> {
  const [kps, kns, klbs] = await Promise.all([
    kube.listAll(kuryrKinds.KuryrPort, { signal }),
    kube.listAll(kuryrKinds.KuryrNetwork, { signal }),
    kube.listAll(kuryrKinds.KuryrLoadBalancer, { signal }),
  ]);
  const ports = new Set<string>();
  for (const kp of kps.items) {
    for (const entry of Object.values(kp.status?.vifs ?? {})) {
      const vif = readVif(entry.vif);
      if (vif) ports.add(vif.id);
    }
  }
  const networks = new Set<string>();
  const subnets = new Set<string>();
  for (const n of kns.items) {
    if (n.status?.netId) networks.add(n.status.netId);
    if (n.status?.subnetId) subnets.add(n.status.subnetId);
  }
  const loadBalancers = new Set<string>();
  for (const lb of klbs.items) {
    const id = lb.status?.loadbalancer?.id;
    if (id) loadBalancers.add(id);
  }
  return { ports, networks, subnets, loadBalancers };
}
