/**
 * Which Nodes become pool members and at which address, as the k8s.io/cloud-provider service
 * controller filters them and OCCM's nodeAddressForLB picks the address.
 */
import type { V1Node } from '@kubernetes/client-node';
import { parseIp } from '../lib/cidr.ts';
import type { NodeSelector } from './config/types.ts';
import { matchesNodeSelector } from './node-selector.ts';

/** Nodes with this label (any value) are never load balancer members. */
export const LABEL_EXCLUDE_FROM_LB = 'node.kubernetes.io/exclude-from-external-load-balancers';
/** The cluster autoscaler's taint on a node it is about to remove. */
export const TAINT_TO_BE_DELETED = 'ToBeDeletedByClusterAutoscaler';

/** The service controller's node predicates (no exclusion label, no autoscaler deletion taint), then the node selector. */
export function eligibleNodes(nodes: readonly V1Node[], selector: NodeSelector): V1Node[] {
  return nodes.filter(
    (n) =>
      n.metadata?.labels?.[LABEL_EXCLUDE_FROM_LB] === undefined &&
      !(n.spec?.taints ?? []).some((t) => t.key === TAINT_TO_BE_DELETED) &&
      matchesNodeSelector(n.metadata?.labels, selector),
  );
}

export type IpFamily = 'IPv4' | 'IPv6';

/**
 * nodeAddressForLB: the first InternalIP, else the first ExternalIP, of the Service's family (any
 * family when the Service names none). Undefined means OCCM skips the node with a warning.
 */
export function memberAddress(node: V1Node, family: IpFamily | undefined): string | undefined {
  // A cached Node is frozen and replaced on change: its address per family is worked out once, not
  // once per Service reconcile (5,000 Nodes × 1,000 Services parse 5 million addresses otherwise).
  if (!Object.isFrozen(node)) return addressOf(node, family);
  let known = memberAddresses.get(node);
  if (!known) memberAddresses.set(node, (known = new Map<IpFamily | 'any', string | undefined>()));
  const k = family ?? 'any';
  if (!known.has(k)) known.set(k, addressOf(node, family));
  return known.get(k);
}

const memberAddresses = new WeakMap<V1Node, Map<IpFamily | 'any', string | undefined>>();

function addressOf(node: V1Node, family: IpFamily | undefined): string | undefined {
  const addresses = node.status?.addresses ?? [];
  for (const type of ['InternalIP', 'ExternalIP']) {
    for (const a of addresses) {
      if (a.type !== type) continue;
      if (family === undefined) return a.address;
      const ip = parseIp(a.address);
      // k8s.io/utils/net IsIPv4String / IsIPv6String: an IPv4-mapped IPv6 address counts as IPv4.
      if (ip && (ip.family === 4) === (family === 'IPv4')) return a.address;
    }
  }
  return undefined;
}

/** OCCM's member identity when deciding whether a batch update is needed. */
export function memberKey(m: {
  name: string;
  address: string;
  protocolPort: number;
  monitorPort: number;
}): string {
  return `${m.name}-${m.address}-${m.protocolPort}-${m.monitorPort}`;
}
