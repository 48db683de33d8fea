/**
 * The stand-in of kube-controller-manager's EndpointSlice controller, which the emulated world
 * lacks: Kuryr (and anything else that follows a Service's backends) reads discovery.k8s.io/v1
 * EndpointSlices, and in a real cluster kube-controller-manager writes them. This one writes them
 * the way upstream does, for the parts a load balancer reads:
 *
 * - every Service with a selector (not ExternalName) gets slices of the pods its selector matches
 *   in its namespace that have an IP and are not finished (Succeeded, Failed); each endpoint carries
 *   the pod IP of the slice's family, `conditions.ready` (the pod's Ready condition, false while it
 *   terminates; always true with `publishNotReadyAddresses`), `serving` and `terminating`, the
 *   pod as `targetRef` and its `nodeName`;
 * - ports are resolved per pod: a numeric targetPort as it is, a named one against the pod's
 *   container ports of that protocol (a port the pod lacks is left out of its endpoint's slice, as
 *   upstream does), so pods whose named ports differ end up in different slices; at most 100
 *   endpoints a slice;
 * - the labels `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by:
 *   endpointslice-controller.k8s.io`, the Service as controlling owner (the garbage collector removes
 *   them with it), and the Service's labels copied, as upstream;
 * - a Service that selects no pod has one empty slice (upstream's placeholder);
 * - a Service whose selector goes away (or that becomes ExternalName) loses the slices this
 *   controller made; slices anyone else made are never touched.
 *
 * Unlike upstream's generateName, a slice is named from what it holds (`<service>-<hash>`), so a
 * restart finds its slices again and writes nothing when nothing changed.
 *
 * It is emulation: tests and the demo start it explicitly (`registerEndpointSliceController`);
 * nothing in src/kuryr imports it.
 */
import { createHash } from 'node:crypto';
import type {
  V1Endpoint,
  DiscoveryV1EndpointPort,
  V1EndpointSlice,
  V1Pod,
  V1Service,
} from '@kubernetes/client-node';
import {
  clone,
  ignoreNotFound,
  isAlreadyExists,
  kinds,
  matchesLabelSelector,
  objectKey,
  ownerReference,
  type Manager,
  type Request,
  type Result,
} from '../kube/index.ts';
import { ipVersion } from '../lib/cidr.ts';

export const ENDPOINTSLICE_STANDIN_CONTROLLER = 'demo-endpointslice';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
/** kube-controller-manager's value: readers that look for "the controller's slices" find these. */
export const MANAGED_BY = 'endpointslice-controller.k8s.io';
/** Upstream's `--max-endpoints-per-slice` default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

type AddressType = 'IPv4' | 'IPv6';

/** The slices a Service should have, without metadata beyond name and labels: pure. */
export interface DesiredSlice {
  name: string;
  addressType: AddressType;
  ports: DiscoveryV1EndpointPort[];
  endpoints: V1Endpoint[];
}

export function registerEndpointSliceController(mgr: Manager, opts: { workers?: number } = {}): void {
  const services = mgr.informers.informerFor(kinds.Service);
  const slices = mgr.informers.informerFor(kinds.EndpointSlice);
  // A pod concerns the Services whose selector matches it now, and those whose slices still list it
  // (its labels changed, or it is gone).
  const servicesOf = (pod: V1Pod): Request[] => {
    const ns = pod.metadata?.namespace;
    const uid = pod.metadata?.uid;
    const matching = services
      .list()
      .filter((s) => s.metadata?.namespace === ns && selects(s, pod))
      .map((s) => objectKey(s));
    const listed = slices
      .list()
      .filter(
        (es) =>
          es.metadata?.namespace === ns &&
          es.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY &&
          (es.endpoints ?? []).some((e) => e.targetRef?.uid === uid),
      )
      .map((es) => ({ namespace: ns, name: es.metadata?.labels?.[SERVICE_NAME_LABEL] ?? '' }));
    return [...matching, ...listed];
  };
  mgr
    .controller(ENDPOINTSLICE_STANDIN_CONTROLLER)
    .for(kinds.Service)
    .owns(kinds.EndpointSlice)
    .watches(kinds.Pod, servicesOf)
    .withOptions({ maxConcurrentReconciles: opts.workers ?? 2 })
    .complete((req, signal) => reconcile(mgr, req, signal));
}

function hasSelector(svc: V1Service): boolean {
  return Object.keys(svc.spec?.selector ?? {}).length > 0 && svc.spec?.type !== 'ExternalName';
}

function selects(svc: V1Service, pod: V1Pod): boolean {
  return hasSelector(svc) && matchesLabelSelector({ matchLabels: svc.spec!.selector! }, pod.metadata?.labels);
}

async function reconcile(mgr: Manager, req: Request, signal: AbortSignal): Promise<Result> {
  const svc = await mgr.client.get(kinds.Service, req, { signal });
  // A deleted Service's slices go with it (owner references): nothing to do.
  if (!svc || svc.metadata?.deletionTimestamp) return {};
  const ns = req.namespace ?? 'default';
  const existing = (
    await mgr.client.list(kinds.EndpointSlice, {
      namespace: ns,
      labelSelector: { matchLabels: { [SERVICE_NAME_LABEL]: req.name, [MANAGED_BY_LABEL]: MANAGED_BY } },
      signal,
    })
  ).filter((es) => es.metadata?.ownerReferences?.some((r) => r.uid === svc.metadata?.uid));
  const pods = await mgr.client.list(kinds.Pod, { namespace: ns, signal });
  // No selector (or ExternalName): the slices are someone else's to write, ours go.
  const desired = hasSelector(svc)
    ? desiredSlices(
        svc,
        pods.filter((p) => selects(svc, p)),
      )
    : [];
  const wanted = new Set(desired.map((d) => d.name));
  for (const d of desired) {
    const current = existing.find((es) => es.metadata?.name === d.name);
    await writeSlice(mgr, svc, d, current, signal);
  }
  for (const es of existing) {
    if (!wanted.has(es.metadata?.name ?? '')) {
      await ignoreNotFound(
        mgr.api.delete(kinds.EndpointSlice, { namespace: ns, name: es.metadata?.name ?? '' }, { signal }),
      );
    }
  }
  return {};
}

async function writeSlice(
  mgr: Manager,
  svc: V1Service,
  d: DesiredSlice,
  current: V1EndpointSlice | undefined,
  signal: AbortSignal,
): Promise<void> {
  const labels = {
    ...(svc.metadata?.labels ?? {}),
    [SERVICE_NAME_LABEL]: svc.metadata?.name ?? '',
    [MANAGED_BY_LABEL]: MANAGED_BY,
  };
  if (current) {
    if (sameSlice(current, d, labels)) return;
    const next = clone(current);
    next.metadata = { ...next.metadata, labels };
    next.ports = d.ports;
    next.endpoints = d.endpoints;
    await mgr.api.update(kinds.EndpointSlice, next, { signal });
    return;
  }
  const slice: V1EndpointSlice = {
    apiVersion: kinds.EndpointSlice.apiVersion,
    kind: kinds.EndpointSlice.kind,
    metadata: {
      name: d.name,
      namespace: svc.metadata?.namespace ?? 'default',
      labels,
      ownerReferences: [
        ownerReference(
          { apiVersion: 'v1', kind: 'Service', metadata: svc.metadata ?? {} },
          { controller: true, blockOwnerDeletion: true },
        ),
      ],
    },
    addressType: d.addressType,
    ports: d.ports,
    endpoints: d.endpoints,
  };
  try {
    await mgr.api.create(kinds.EndpointSlice, slice, { signal });
  } catch (err) {
    // Someone else's slice under our name: left alone (the next change of the Service tries again).
    if (!isAlreadyExists(err)) throw err;
  }
}

function sameSlice(current: V1EndpointSlice, d: DesiredSlice, labels: Record<string, string>): boolean {
  const have = current.metadata?.labels ?? {};
  const labelsSame =
    Object.keys(have).length === Object.keys(labels).length &&
    Object.entries(labels).every(([k, v]) => have[k] === v);
  return (
    labelsSame &&
    canonical(current.ports ?? []) === canonical(d.ports) &&
    canonical(current.endpoints ?? []) === canonical(d.endpoints)
  );
}

/** JSON with keys sorted and undefined left out, as the API server stores it. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/**
 * The slices of a Service, given the pods its selector matches: grouped by address family and by
 * the ports each pod resolves to, at most `MAX_ENDPOINTS_PER_SLICE` endpoints a slice, endpoints
 * sorted by pod name so the result depends on nothing but its input.
 */
export function desiredSlices(svc: V1Service, pods: readonly V1Pod[]): DesiredSlice[] {
  const families = serviceFamilies(svc);
  const publishNotReady = svc.spec?.publishNotReadyAddresses === true;
  const groups = new Map<
    string,
    { addressType: AddressType; ports: DiscoveryV1EndpointPort[]; endpoints: V1Endpoint[] }
  >();
  const sorted = [...pods].sort((a, b) => cmp(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  for (const pod of sorted) {
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const ports = resolvePorts(svc, pod);
    for (const family of families) {
      const address = podAddress(pod, family);
      if (!address) continue;
      const key = `${family}|${canonical(ports)}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { addressType: family, ports, endpoints: [] }));
      g.endpoints.push(endpointOf(pod, address, publishNotReady));
    }
  }
  const out: DesiredSlice[] = [];
  const svcName = svc.metadata?.name ?? '';
  for (const [key, g] of [...groups.entries()].sort(([a], [b]) => cmp(a, b))) {
    for (let i = 0; i * MAX_ENDPOINTS_PER_SLICE < g.endpoints.length; i++) {
      out.push({
        name: sliceName(svcName, `${key}|${i}`),
        addressType: g.addressType,
        ports: g.ports,
        endpoints: g.endpoints.slice(i * MAX_ENDPOINTS_PER_SLICE, (i + 1) * MAX_ENDPOINTS_PER_SLICE),
      });
    }
  }
  // A Service selecting no pod still has one slice, empty, as upstream's placeholder.
  if (out.length === 0)
    out.push({
      name: sliceName(svcName, 'placeholder'),
      addressType: families[0]!,
      ports: [],
      endpoints: [],
    });
  return out;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `<service>-<hash>`, within the 63 characters of a DNS label as upstream's generated names. */
function sliceName(service: string, key: string): string {
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return `${service.slice(0, 63 - 9)}-${hash}`;
}

function serviceFamilies(svc: V1Service): AddressType[] {
  const declared = (svc.spec?.ipFamilies ?? []).filter((f): f is AddressType => f === 'IPv4' || f === 'IPv6');
  if (declared.length > 0) return declared;
  const ip = svc.spec?.clusterIP;
  if (ip && ip !== 'None') return [ipVersion(ip) === 6 ? 'IPv6' : 'IPv4'];
  return ['IPv4'];
}

function podAddress(pod: V1Pod, family: AddressType): string | undefined {
  const ips = [pod.status?.podIP, ...(pod.status?.podIPs ?? []).map((p) => p.ip)].filter((ip): ip is string =>
    Boolean(ip),
  );
  return ips.find((ip) => (ipVersion(ip) === 6 ? 'IPv6' : 'IPv4') === family);
}

function endpointOf(pod: V1Pod, address: string, publishNotReady: boolean): V1Endpoint {
  const terminating = Boolean(pod.metadata?.deletionTimestamp);
  const podReady = (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const e: V1Endpoint = {
    addresses: [address],
    conditions: {
      ready: publishNotReady || (podReady && !terminating),
      serving: podReady,
      terminating,
    },
    targetRef: {
      kind: 'Pod',
      namespace: pod.metadata?.namespace ?? 'default',
      name: pod.metadata?.name ?? '',
      uid: pod.metadata?.uid ?? '',
    },
  };
  if (pod.spec?.nodeName) e.nodeName = pod.spec.nodeName;
  return e;
}

/**
 * The Service's ports as this pod serves them. A named targetPort with no container port of that
 * name and protocol in the pod is left out for that pod, as upstream does: the pod lands in a slice
 * of the ports it has.
 */
function resolvePorts(svc: V1Service, pod: V1Pod): DiscoveryV1EndpointPort[] {
  const out: DiscoveryV1EndpointPort[] = [];
  for (const p of svc.spec?.ports ?? []) {
    const protocol = p.protocol ?? 'TCP';
    const target = p.targetPort ?? p.port;
    let port: number | undefined;
    if (typeof target === 'number') port = target;
    else if (/^\d+$/.test(target)) port = Number(target);
    else {
      for (const c of pod.spec?.containers ?? []) {
        const found = (c.ports ?? []).find((cp) => cp.name === target && (cp.protocol ?? 'TCP') === protocol);
        if (found) {
          port = found.containerPort;
          break;
        }
      }
    }
    if (port === undefined) continue;
    const ep: DiscoveryV1EndpointPort = { port, protocol };
    ep.name = p.name ?? '';
    if (p.appProtocol) ep.appProtocol = p.appProtocol;
    out.push(ep);
  }
  return out;
}
