/**
 * The in-tree OpenStack provider's load balancer for a Service (k8s.io/legacy-cloud-providers
 * `openstack/openstack_loadbalancer.go`, the last release before its removal in 1.26), spelled as
 * the shared engine's desired state, so the stand-in drives the same Octavia path as the CCM:
 *
 * - names: the load balancer `a<uid>` (dashes out, 32 bytes, cloudprovider.DefaultLoadBalancerName),
 *   `listener_<lb>_<i>`, `pool_<lb>_<i>`, `member_<lb>_<i>_<node>`, `monitor_<lb>_<i>`; description
 *   `Kubernetes external service <lb>`; no tags; floating IPs without a description;
 * - every object its own call (serial), TCP only, members on the VIP subnet, the monitor of
 *   `create-monitor` with the port's protocol as its type;
 * - refusals with the in-tree provider's error texts (the service controller puts them in a
 *   SyncLoadBalancerFailed Event).
 *
 * Pure: the VIP subnet and the floating network are looked up by the caller.
 */
import type { V1Node, V1Service } from '@kubernetes/client-node';
import type { LoadBalancerOptions } from '../../ccm/config/types.ts';
import { memberAddress } from '../../ccm/members.ts';
import { FLOATING_IP_MARKER, legacyLoadBalancerName, parseLoadBalancerName } from '../../ccm/naming.ts';
import { Annotation } from '../../ccm/service/annotations.ts';
import { sourceRanges } from '../../ccm/service/source-ranges.ts';
import type { DesiredLoadBalancer, DesiredMember } from '../../openstack/services/loadbalancer/index.ts';

export const listenerName = (lb: string, i: number) => `listener_${lb}_${i}`;
export const poolName = (lb: string, i: number) => `pool_${lb}_${i}`;
export const memberName = (lb: string, i: number, node: string) => `member_${lb}_${i}_${node}`;
export const monitorName = (lb: string, i: number) => `monitor_${lb}_${i}`;
export const description = (lb: string) => `Kubernetes external service ${lb}`;

/** The in-tree provider's refusal of a protocol other than TCP, word for word. */
export const ONLY_TCP = 'only TCP LoadBalancer is supported for openstack load balancers';

/** What EnsureLoadBalancer reads before it looks anything up in OpenStack. */
export interface InTreeIntent {
  lbName: string;
  internal: boolean;
  /** The floating network the Service or cloud.conf names; the caller autodetects without. */
  floatingNetworkId?: string | undefined;
  /** The VIP subnet the Service or cloud.conf names; the caller autodetects without. */
  subnetId?: string | undefined;
}

export type Refusal = { ok: false; message: string };

/** The checks EnsureLoadBalancer makes first, in its order, with its messages. */
export function inTreeIntent(
  svc: V1Service,
  nodes: readonly V1Node[],
  opts: LoadBalancerOptions,
): { ok: true; intent: InTreeIntent } | Refusal {
  const ns = svc.metadata?.namespace ?? 'default';
  const name = svc.metadata?.name ?? '';
  const annotations = svc.metadata?.annotations ?? {};
  if (nodes.length === 0)
    return refuse(`there are no available nodes for LoadBalancer service ${ns}/${name}`);
  const ports = svc.spec?.ports ?? [];
  if (ports.length === 0) return refuse('no ports provided to openstack load balancer');
  // An annotation present but empty still wins, as getStringFromServiceAnnotation does.
  const subnetId = annotations[Annotation.SubnetId] ?? opts.subnetId;
  const floatingNetworkId = annotations[Annotation.FloatingNetworkId] ?? opts.floatingNetworkId;
  const internalText = annotations[Annotation.Internal] ?? 'false';
  if (internalText !== 'true' && internalText !== 'false') {
    return refuse(`unknown ${Annotation.Internal} annotation: ${internalText}, specify "true" or "false" `);
  }
  for (const p of ports) if ((p.protocol ?? 'TCP') !== 'TCP') return refuse(ONLY_TCP);
  const ranges = sourceRanges(
    svc.spec?.loadBalancerSourceRanges,
    annotations['service.beta.kubernetes.io/load-balancer-source-ranges'],
    undefined,
  );
  if (!ranges.ok) {
    return refuse(
      `failed to get source ranges for loadbalancer service ${ns}/${name}: ${ranges.invalid.join(', ')} is not a CIDR`,
    );
  }
  const allowAll = !ranges.set || ranges.ranges.some((r) => r === '0.0.0.0/0' || r === '::/0');
  if (!allowAll && !opts.manageSecurityGroups)
    return refuse(
      'source range restrictions are not supported for openstack load balancers without managing security groups',
    );
  const affinity = svc.spec?.sessionAffinity ?? 'None';
  if (affinity !== 'None' && affinity !== 'ClientIP')
    return refuse(`unsupported load balancer affinity: ${affinity}`);
  return {
    ok: true,
    intent: {
      lbName: legacyLoadBalancerName(svc.metadata?.uid ?? ''),
      internal: internalText === 'true',
      ...(subnetId ? { subnetId } : {}),
      ...(floatingNetworkId ? { floatingNetworkId } : {}),
    },
  };
}

export interface InTreeInputs {
  svc: V1Service;
  intent: InTreeIntent;
  nodes: readonly V1Node[];
  opts: LoadBalancerOptions;
  /** The VIP subnet, given or found from the first node's port. */
  subnetId: string;
  /** The floating network, given or autodetected; undefined for an internal Service. */
  floatingNetworkId?: string | undefined;
}

/**
 * The whole load balancer as the in-tree provider builds it, for the engine in serial mode. Going
 * back to a load balancer the CCM made, it is found by the Service's `load-balancer-id` annotation
 * under the CCM's name for this Service (any cluster name): the in-tree provider never read that
 * annotation, but without it the stand-in would make a second load balancer beside the CCM's.
 */
export function inTreeLoadBalancer(input: InTreeInputs): DesiredLoadBalancer {
  const { svc, intent, opts, subnetId } = input;
  const lb = intent.lbName;
  const ns = svc.metadata?.namespace ?? 'default';
  const svcName = svc.metadata?.name ?? '';
  const recorded = svc.metadata?.annotations?.[Annotation.LoadBalancerId];
  const persistence = svc.spec?.sessionAffinity === 'ClientIP' ? { type: 'SOURCE_IP' as const } : null;
  const addresses = input.nodes.flatMap((n) => {
    const address = memberAddress(n, undefined);
    return address ? [{ node: n.metadata?.name ?? '', address }] : [];
  });
  return {
    identity: {
      name: lb,
      description: description(lb),
      tagless: true,
      ...(recorded ? { id: recorded } : {}),
      alsoNamed: (name) => {
        const parsed = parseLoadBalancerName(name);
        return parsed?.namespace === ns && parsed.name === svcName;
      },
    },
    vip: {
      subnetId,
      ...(intent.internal && svc.spec?.loadBalancerIP ? { address: svc.spec.loadBalancerIP } : {}),
    },
    ...(opts.lbProvider ? { provider: opts.lbProvider } : {}),
    listeners: (svc.spec?.ports ?? []).map((p, i) => ({
      name: listenerName(lb, i),
      protocol: 'TCP' as const,
      port: p.port,
      pool: {
        name: poolName(lb, i),
        protocol: 'TCP' as const,
        algorithm: opts.lbMethod,
        sessionPersistence: persistence,
        members: addresses.map((a): DesiredMember => ({
          name: memberName(lb, i, a.node),
          address: a.address,
          port: p.nodePort ?? 0,
          subnetId,
        })),
        ...(opts.createMonitor
          ? {
              healthMonitor: {
                name: monitorName(lb, i),
                type: 'TCP' as const,
                delay: opts.monitorDelay,
                timeout: opts.monitorTimeout,
                maxRetries: opts.monitorMaxRetries,
              },
            }
          : {}),
      },
    })),
    floatingIp: {
      external: !intent.internal && input.floatingNetworkId !== undefined,
      ...(input.floatingNetworkId ? { networkId: input.floatingNetworkId } : {}),
      ...(!intent.internal && svc.spec?.loadBalancerIP ? { address: svc.spec.loadBalancerIP } : {}),
      // The in-tree provider wrote no description and deleted the address of its load balancer,
      // whoever made it; ours too deletes its own and the CCM's, and only detaches anyone else's.
      description: '',
      ownedMarker: FLOATING_IP_MARKER,
      ownsUndescribed: true,
    },
    serialApiCalls: true,
  };
}

function refuse(message: string): Refusal {
  return { ok: false, message };
}
