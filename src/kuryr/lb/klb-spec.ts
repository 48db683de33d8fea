/**
 * A Service and its EndpointSlices → the KuryrLoadBalancer spec, as upstream's ServiceHandler and
 * EndpointsHandler write it (controller/handlers/lbaas.py). Pure: read once, never throw on user
 * input; what cannot be used is a problem for an Event.
 *
 * - Served: a Service with a selector, of type ClusterIP or LoadBalancer, with a clusterIP.
 *   Headless (`clusterIP: None`), ExternalName and NodePort Services, and those without a
 *   selector (no EndpointSlice controller writes their slices), are not.
 * - `ip` = the clusterIP, `subnet_id` = `[neutron_defaults] service_subnet`, `project_id` =
 *   `[neutron_defaults] project`, `provider` = `[kubernetes] endpoints_driver_octavia_provider`
 *   unless `default`, `lb_ip` = `spec.loadBalancerIP`.
 * - Listener timeouts: the annotations `openstack.org/kuryr-timeout-client-data` and
 *   `-member-data` (milliseconds, Yoga), else `[octavia_defaults] timeout_client_data` /
 *   `timeout_member_data` when not 0.
 * - `endpointSlices`: the Service's slices of the clusterIP's address family, their endpoints with
 *   addresses, ready, hostname and targetRef, and their ports.
 */
import { Finalizers } from '../api/index.ts';
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { ipVersion } from '../../lib/cidr.ts';
import type { KlbEndpointSlice, KlbSpec } from './klb.ts';

export const TIMEOUT_CLIENT_DATA_ANNOTATION = 'openstack.org/kuryr-timeout-client-data';
export const TIMEOUT_MEMBER_DATA_ANNOTATION = 'openstack.org/kuryr-timeout-member-data';
/** The label kube-controller-manager puts on a Service's EndpointSlices. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

const SERVED_TYPES: ReadonlySet<string> = new Set(['ClusterIP', 'LoadBalancer']);

/** The options the spec comes from (kuryr.conf). */
export interface KlbSpecOptions {
  /** `[neutron_defaults] service_subnet`. */
  serviceSubnetId: string;
  /** `[neutron_defaults] project`. */
  projectId: string;
  /** `[kubernetes] endpoints_driver_octavia_provider`: `default` = Octavia's own default. */
  provider: string;
  /** `[octavia_defaults] timeout_client_data` / `timeout_member_data`, ms; 0 = Octavia's. */
  timeoutClientData: number;
  timeoutMemberData: number;
}

export type SpecResult =
  | { kind: 'served'; spec: KlbSpec; problems: string[] }
  /** Not a Service kuryr serves: an existing KuryrLoadBalancer of it is deleted. */
  | { kind: 'skipped'; why: string };

/** The finalizer of Kubernetes' cloud service controller (the ccm, or the in-tree provider). */
export const CLOUD_PROVIDER_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';

export function servedReason(svc: V1Service): string | undefined {
  const spec = svc.spec ?? {};
  const type = spec.type ?? 'ClusterIP';
  if (!SERVED_TYPES.has(type)) return `type ${type} is not served (ClusterIP and LoadBalancer are)`;
  if (!spec.selector || Object.keys(spec.selector).length === 0) return 'no selector';
  if (!spec.clusterIP || spec.clusterIP === 'None') return 'headless';
  return cloudProviderOwned(svc);
}

/**
 * A Service whose load balancer the cloud provider's service controller already made (its finalizer
 * is on, kuryr's is not) is left to it: two controllers would each make a load balancer and a
 * floating IP for it. On a Kuryr cluster the ccm runs with `[LoadBalancer] enabled = false` and
 * never puts that finalizer on; where it did, the reason says so and how to hand the Service over.
 */
export function cloudProviderOwned(svc: V1Service): string | undefined {
  const finalizers = svc.metadata?.finalizers ?? [];
  if (!finalizers.includes(CLOUD_PROVIDER_FINALIZER) || finalizers.includes(Finalizers.Service))
    return undefined;
  return `its load balancer is the cloud provider's (finalizer ${CLOUD_PROVIDER_FINALIZER}); on a Kuryr cluster run the ccm with [LoadBalancer] enabled = false, and recreate the Service for kuryr to serve it`;
}

export function klbSpecFor(
  svc: V1Service,
  slices: readonly V1EndpointSlice[],
  options: KlbSpecOptions,
): SpecResult {
  const why = servedReason(svc);
  if (why) return { kind: 'skipped', why };
  const s = svc.spec!;
  const ip = s.clusterIP!;
  const problems: string[] = [];
  const annotations = svc.metadata?.annotations ?? {};
  const timeout = (key: string, fallback: number): number | undefined => {
    const raw = annotations[key];
    if (raw !== undefined) {
      if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
      problems.push(`${key}: ${JSON.stringify(raw)} is not a number of milliseconds; ignored`);
    }
    return fallback > 0 ? fallback : undefined;
  };
  const clientData = timeout(TIMEOUT_CLIENT_DATA_ANNOTATION, options.timeoutClientData);
  const memberData = timeout(TIMEOUT_MEMBER_DATA_ANNOTATION, options.timeoutMemberData);
  const family = ipVersion(ip) === 6 ? 'IPv6' : 'IPv4';
  const spec: KlbSpec = {
    ip,
    ports: (s.ports ?? []).map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      port: p.port,
      protocol: p.protocol ?? 'TCP',
      targetPort: String(p.targetPort ?? p.port),
    })),
    project_id: options.projectId,
    subnet_id: options.serviceSubnetId,
    type: s.type ?? 'ClusterIP',
    endpointSlices: slices
      .filter((es) => es.addressType === family)
      .sort((a, b) => cmp(a.metadata?.name ?? '', b.metadata?.name ?? ''))
      .map(sliceOf),
    ...(options.provider && options.provider !== 'default' ? { provider: options.provider } : {}),
    ...(s.loadBalancerIP ? { lb_ip: s.loadBalancerIP } : {}),
    ...(clientData !== undefined ? { timeout_client_data: clientData } : {}),
    ...(memberData !== undefined ? { timeout_member_data: memberData } : {}),
  };
  return { kind: 'served', spec, problems };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function sliceOf(es: V1EndpointSlice): KlbEndpointSlice {
  return {
    endpoints: (es.endpoints ?? []).map((e) => ({
      addresses: [...e.addresses],
      ...(e.conditions?.ready !== undefined ? { conditions: { ready: e.conditions.ready } } : {}),
      ...(e.hostname ? { hostname: e.hostname } : {}),
      ...(e.targetRef
        ? {
            targetRef: {
              ...(e.targetRef.kind ? { kind: e.targetRef.kind } : {}),
              ...(e.targetRef.name ? { name: e.targetRef.name } : {}),
              ...(e.targetRef.namespace ? { namespace: e.targetRef.namespace } : {}),
              ...(e.targetRef.uid ? { uid: e.targetRef.uid } : {}),
            },
          }
        : {}),
    })),
    ports: (es.ports ?? []).map((p) => ({
      ...(p.name !== undefined ? { name: p.name } : {}),
      port: p.port ?? 0,
      ...(p.protocol ? { protocol: p.protocol } : {}),
    })),
  };
}
