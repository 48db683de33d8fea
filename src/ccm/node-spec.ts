/**
 * What the node controllers change on a Node, as k8s.io/cloud-provider's node controllers do it:
 * the taints they own, the labels written at initialization (GA and beta, as upstream still writes
 * both), and the status addresses (kubelet's Hostname kept, the provided node IP first).
 */
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import type { InstanceMetadata } from './instances.ts';
import type { NodeAddress } from './node-addresses.ts';
import { LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE } from './node-metadata.ts';

/** Put on Nodes by kubelet `--cloud-provider=external`; removed once initialized. */
export const TAINT_UNINITIALIZED = 'node.cloudprovider.kubernetes.io/uninitialized';
/** Put by the lifecycle controller while the server is SHUTOFF. */
export const TAINT_SHUTDOWN = 'node.cloudprovider.kubernetes.io/shutdown';
/** kubelet's `--node-ip` as it reaches the cloud provider (comma-separated for dual-stack). */
export const ANNOTATION_PROVIDED_NODE_IP = 'alpha.kubernetes.io/provided-node-ip';

export const LABEL_BETA_INSTANCE_TYPE = 'beta.kubernetes.io/instance-type';
export const LABEL_BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
export const LABEL_BETA_REGION = 'failure-domain.beta.kubernetes.io/region';

/** upstream labelReconcileInfo: the beta label is the source of truth, the GA one follows it. */
const LABEL_PAIRS: readonly [beta: string, ga: string][] = [
  [LABEL_BETA_ZONE, LABEL_ZONE],
  [LABEL_BETA_REGION, LABEL_REGION],
  [LABEL_BETA_INSTANCE_TYPE, LABEL_INSTANCE_TYPE],
];

/** Labels of kubernetes' own namespaces that a provider's additional labels may not set. */
const K8S_NAMESPACE = /(^|\.)(kubernetes|k8s)\.io\//;

export function hasTaint(node: V1Node, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key);
}

export function withoutTaint(taints: readonly V1Taint[] | undefined, key: string): V1Taint[] {
  return (taints ?? []).filter((t) => t.key !== key);
}

/**
 * getNodeModifiersFromCloudProvider plus the taint removal, on a draft: providerID only when
 * empty (it is immutable), instance type, zone and region labels in both spellings when known,
 * additional labels only when absent, then the uninitialized taint removed.
 */
export function initializeNode(draft: V1Node, meta: InstanceMetadata): void {
  draft.spec ??= {};
  if (!draft.spec.providerID && meta.providerId) draft.spec.providerID = meta.providerId;
  const labels = (draft.metadata!.labels ??= {});
  if (meta.instanceType) {
    labels[LABEL_BETA_INSTANCE_TYPE] = meta.instanceType;
    labels[LABEL_INSTANCE_TYPE] = meta.instanceType;
  }
  if (meta.zone) {
    labels[LABEL_BETA_ZONE] = meta.zone;
    labels[LABEL_ZONE] = meta.zone;
  }
  if (meta.region) {
    labels[LABEL_BETA_REGION] = meta.region;
    labels[LABEL_REGION] = meta.region;
  }
  for (const [k, v] of Object.entries(meta.additionalLabels)) {
    if (!K8S_NAMESPACE.test(k) && !(k in labels)) labels[k] = v;
  }
  draft.spec.taints = withoutTaint(draft.spec.taints, TAINT_UNINITIALIZED);
}

/**
 * On an initialized Node: reconcileNodeLabels (GA labels follow the beta ones) and updateNodeLabels
 * (additional labels set to the cloud's value). Changes the draft; the caller sends the difference.
 */
export function reconcileLabels(draft: V1Node, additional: Record<string, string>): void {
  const labels = (draft.metadata!.labels ??= {});
  for (const [beta, ga] of LABEL_PAIRS) {
    const value = labels[beta];
    if (value !== undefined && labels[ga] !== value) labels[ga] = value;
  }
  for (const [k, v] of Object.entries(additional)) {
    if (!K8S_NAMESPACE.test(k)) labels[k] = v;
  }
}

export class NodeIpError extends Error {
  override readonly name = 'NodeIpError';
}

/**
 * updateNodeAddress's list: the cloud's addresses, kubelet's Hostname entries added when the cloud
 * gave none, and with a provided node IP the matching addresses first (every node IP must be one
 * of the cloud's addresses, else the Node is not initialized: NodeIpError).
 */
export function desiredAddresses(node: V1Node, cloud: readonly NodeAddress[]): NodeAddress[] {
  let addrs = [...cloud];
  if (!addrs.some((a) => a.type === 'Hostname')) {
    for (const a of node.status?.addresses ?? []) {
      if (a.type === 'Hostname') addrs.push({ type: 'Hostname', address: a.address });
    }
  }
  const provided = node.metadata?.annotations?.[ANNOTATION_PROVIDED_NODE_IP];
  if (provided) {
    const ips = provided
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const ip of ips) {
      if (!addrs.some((a) => a.address === ip)) {
        throw new NodeIpError(`failed to get node address from cloud provider that matches ip: ${ip}`);
      }
    }
    const first = ips.flatMap((ip) => addrs.filter((a) => a.address === ip));
    addrs = [...first, ...addrs.filter((a) => !ips.includes(a.address))];
  }
  return addrs;
}

/** Same addresses in the same order: the order is meaningful to kubelet and CNIs. */
export function sameAddresses(
  current: readonly { type: string; address: string }[] | undefined,
  desired: readonly NodeAddress[],
): boolean {
  const c = current ?? [];
  return (
    c.length === desired.length &&
    c.every((a, i) => a.type === desired[i]!.type && a.address === desired[i]!.address)
  );
}
