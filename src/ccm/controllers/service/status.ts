/**
 * What a Ready load balancer is reported as: `status.loadBalancer.ingress` and the two annotations
 * OCCM writes back (load-balancer-id, load-balancer-address), as OCCM's EnsureLoadBalancer step 11.
 */
import type { V1LoadBalancerIngress } from '@kubernetes/client-node';
import type { LoadBalancerOptions } from '../../config/types.ts';
import type { LoadBalancerSpec } from '../../service/types.ts';

export function ingressFor(
  address: string,
  spec: LoadBalancerSpec,
  opts: Pick<LoadBalancerOptions, 'enableIngressHostname' | 'ingressHostnameSuffix'>,
): V1LoadBalancerIngress[] {
  if (spec.hostname) return [{ hostname: spec.hostname }];
  if (spec.proxyProtocol) {
    // With PROXY the client address must reach the pod through the load balancer, never short-cut by
    // kube-proxy: a hostname (the old workaround) or ipMode Proxy (KEP-1860).
    if (opts.enableIngressHostname) return [{ hostname: `${address}.${opts.ingressHostnameSuffix}` }];
    return [{ ip: address, ipMode: 'Proxy' }];
  }
  return [{ ip: address, ipMode: 'VIP' }];
}

export function sameIngress(
  a: readonly V1LoadBalancerIngress[] | undefined,
  b: readonly V1LoadBalancerIngress[],
): boolean {
  const norm = (l: readonly V1LoadBalancerIngress[] | undefined) =>
    JSON.stringify((l ?? []).map((i) => [i.ip ?? '', i.hostname ?? '', i.ipMode ?? '']));
  return norm(a) === norm(b);
}
