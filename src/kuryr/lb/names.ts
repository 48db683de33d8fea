/**
 * Upstream Kuryr's Octavia names (controller/drivers/lbaasv2.py), so a load balancer upstream made
 * is found and adopted, and ours read the same in `openstack loadbalancer list`:
 *
 *   load balancer  <namespace>/<service>
 *   listener       <load balancer>:<protocol>:<port>
 *   pool           the listener's name
 *   member         <pod namespace>/<pod name>:<target port>
 *
 * The CCM's are `kube_service_<cluster>_<namespace>_<service>` (and the in-tree `a<uid>`): no name
 * of one can be the other's, so neither ever finds, adopts or deletes the other's load balancers.
 */

export function loadBalancerName(namespace: string, service: string): string {
  return `${namespace}/${service}`;
}

export function listenerName(loadBalancer: string, protocol: string, port: number): string {
  return `${loadBalancer}:${protocol}:${port}`;
}

export function memberName(namespace: string, pod: string, port: number): string {
  return `${namespace}/${pod}:${port}`;
}

/** Written on the load balancers kuryr creates (upstream writes none; Octavia shows it). */
export function loadBalancerDescription(namespace: string, service: string): string {
  return `Kuryr load balancer of Service ${namespace}/${service}`;
}

/** The marker of the floating IPs kuryr allocates: only those are ever deleted. */
export const FLOATING_IP_MARKER = 'Floating IP for Kuryr service';

export function floatingIpDescription(namespace: string, service: string): string {
  return `${FLOATING_IP_MARKER} ${namespace}/${service}`;
}
