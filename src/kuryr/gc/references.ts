/**
 * The cluster side of `shiftstack kuryr gc`: every cloud id a Kuryr object names — the ports of
 * KuryrPorts' VIFs, the network and subnet of KuryrNetworks, the load balancer of
 * KuryrLoadBalancers — read from the API server (not a cache: a CLI run is one look).
 */
import type { KubeClient } from '../../kube/index.ts';
import { kuryrKinds, readVif } from '../api/index.ts';
import type { References } from './orphans.ts';

export async function readReferences(kube: KubeClient, signal: AbortSignal): Promise<References> {
  const [kps, kns, klbs] = await Promise.all([
    kube.listAll(kuryrKinds.KuryrPort, { signal }),
    kube.listAll(kuryrKinds.KuryrNetwork, { signal }),
    kube.listAll(kuryrKinds.KuryrLoadBalancer, { signal }),
  ]);
  const ports = new Set<string>();
  const unreadable: string[] = [];
  for (const kp of kps.items) {
    for (const [ifname, entry] of Object.entries(kp.status?.vifs ?? {})) {
      try {
        ports.add(readVif(entry.vif).id);
      } catch {
        unreadable.push(`${kp.metadata?.namespace ?? ''}/${kp.metadata?.name ?? ''} (${ifname})`);
      }
    }
  }
  // A VIF we cannot read may name any port: better no gc than one that deletes a pod's port.
  if (unreadable.length > 0) throw new UnreadableReferencesError(unreadable);
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

/** KuryrPorts whose VIF could not be read: which ports they name is unknown, so nothing may be taken. */
export class UnreadableReferencesError extends Error {
  override readonly name = 'UnreadableReferencesError';
  readonly kuryrPorts: readonly string[];
  constructor(kuryrPorts: readonly string[]) {
    super(
      `cannot read the VIF of KuryrPort ${kuryrPorts.join(', ')}: the ports it names are unknown, so nothing is collected. Fix: repair or delete that KuryrPort's status.vifs`,
    );
    this.kuryrPorts = kuryrPorts;
  }
}
