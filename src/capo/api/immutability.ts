/**
 * Which spec changes CAPO v0.14 allows after creation, and how shiftstack enforces that.
 *
 * CAPO refuses the changes in validating webhooks (`pkg/webhooks/openstack*_webhook.go`) plus one
 * CEL transition rule (identityRef.region). shiftstack serves no webhook: it enforces the same rules
 * in the controllers, which works the same on any API server and needs no webhook certificate.
 *
 * - OpenStackServer: the whole spec is immutable.
 * - OpenStackMachine: immutable but for providerID and instanceID (each settable once) and
 *   identityRef (but not its region).
 * - OpenStackCluster: immutable but for identityRef (not its region); controlPlaneEndpoint until
 *   its host is set; apiServerFixedIP and apiServerPort once while the API floating IP is
 *   disabled; apiServerFloatingIP when it becomes the load balancer's IP; the bastion (which may
 *   only be removed once it was disabled with `enabled: false`); the managed security group rules
 *   and allowAllInClusterTraffic; dnsNameservers of the managed subnet; allowedCIDRs of the API
 *   load balancer; the control-plane availability zones; network and subnets moving from a filter
 *   to the ID the filter resolved to.
 * - OpenStackMachineTemplate, OpenStackClusterTemplate: spec.template.spec is immutable.
 *
 * The accepted spec is recorded in the object's status, `status.acceptedSpec` (the JSON of the
 * last spec the controller accepted) and `status.acceptedGeneration`, fields shiftstack adds to
 * the CRD schemas of OpenStackCluster, OpenStackMachine and OpenStackServer. Status rather than
 * an annotation: it is written in the status update the controller makes anyway, it survives
 * controller restarts, and `kubectl apply`/`edit` of the object cannot change it by accident (the
 * status subresource ignores status in writes to the object). Without a record (a new object, or
 * one restored without status) the current spec is the accepted one.
 *
 * `reviewSpec` is what the controllers call first on every reconcile: it says which spec to act on
 * and what, if anything, to refuse; a refusal is shown as condition SpecAccepted=False (reason
 * ImmutableFieldChanged or InvalidSpec) and a Warning Event, while the controller keeps acting on
 * the accepted spec.
 */
import { Conditions, Reasons } from './conditions.ts';
import type {
  OpenStackCluster,
  OpenStackClusterTemplate,
  OpenStackMachine,
  OpenStackMachineTemplate,
  OpenStackServer,
} from './kinds.ts';
import {
  formatProblems,
  type Problem,
  validateOpenStackClusterSpec,
  validateOpenStackMachineSpec,
  validateOpenStackServerSpec,
} from './validation.ts';

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a).filter((k) => present(a[k]));
    const kb = Object.keys(b).filter((k) => present(b[k]));
    if (ka.length !== kb.length) return false;
    return ka.every((k) => deepEqual(a[k], b[k]));
  }
  // Absent and null mean the same in a spec.
  return !present(a) && !present(b);
}

/** The paths where two JSON values differ: into objects and equal-length lists, else the whole value. */
export function changedPaths(a: unknown, b: unknown, path: string): string[] {
  if (deepEqual(a, b)) return [];
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedPaths(a[k], b[k], `${path}.${k}`));
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((x, i) => changedPaths(x, b[i], `${path}[${i}]`));
  }
  return [path];
}

function clone(v: unknown): Json {
  return isObj(v) ? structuredClone<Json>(v) : {};
}

/** identityRef may change, but not its region (CAPO's CEL transition rule), when both old and new have one. */
function regionChange(oldRef: unknown, newRef: unknown, path: string): Problem[] {
  if (!isObj(oldRef) || !isObj(newRef)) return [];
  if ((oldRef.region ?? '') === (newRef.region ?? '')) return [];
  return [
    {
      path: `${path}.region`,
      message: `region is immutable (was ${JSON.stringify(oldRef.region ?? '')})`,
      fix: `set region back to ${JSON.stringify(oldRef.region ?? '')}; a new region needs new objects`,
    },
  ];
}

function forbidden(paths: string[], message: string, fix: string): Problem[] {
  return paths.map((path) => ({ path, message, fix }));
}

export function serverImmutableChanges(oldSpec: unknown, newSpec: unknown): Problem[] {
  return forbidden(
    changedPaths(oldSpec, newSpec, 'spec'),
    'OpenStackServer spec is immutable',
    'revert the change, or delete the OpenStackServer and create a new one',
  );
}

export function machineImmutableChanges(oldSpec: unknown, newSpec: unknown): Problem[] {
  const a = clone(oldSpec);
  const b = clone(newSpec);
  const problems = regionChange(a.identityRef, b.identityRef, 'spec.identityRef');
  // Set once: by the controller, when the server exists.
  for (const k of ['providerID', 'instanceID']) {
    if (!present(a[k])) {
      delete a[k];
      delete b[k];
    }
  }
  delete a.identityRef;
  delete b.identityRef;
  return [
    ...problems,
    ...forbidden(
      changedPaths(a, b, 'spec'),
      'cannot be modified: an OpenStackMachine spec is immutable but for identityRef',
      'revert the change; to change a machine, change its template so Cluster API replaces the machine',
    ),
  ];
}

/** What CAPO's OpenStackCluster webhook reads from the old object's status to allow some changes. */
export interface ClusterStatusContext {
  network?: { id?: string; subnets?: { id?: string; name?: string }[] } | undefined;
  apiServerLoadBalancer?: { ip?: string } | undefined;
}

/** spec.subnets may go from filters to the IDs they resolved to (status.network.subnets), nothing else. */
function subnetsFilterToID(oldSubnets: unknown, newSubnets: unknown, status: ClusterStatusContext): boolean {
  const known = status.network?.subnets ?? [];
  const a = Array.isArray(oldSubnets) ? oldSubnets : [];
  const b = Array.isArray(newSubnets) ? newSubnets : [];
  if (a.length !== b.length || known.length === 0) return false;
  return a.every((o, i) => {
    const n: unknown = b[i];
    if (!isObj(o) || !isObj(n)) return false;
    const oFilter = isObj(o.filter) ? o.filter : undefined;
    const nFilter = isObj(n.filter) ? n.filter : undefined;
    if (oFilter && present(n.id) && !nFilter) {
      if (!known.some((s) => s.name === oFilter.name && s.id === n.id)) return false;
    }
    if (present(o.id) && nFilter) return false;
    if (oFilter && nFilter && oFilter.name !== nFilter.name) return false;
    if (present(o.id) && present(n.id) && o.id !== n.id) return false;
    return true;
  });
}

export function clusterImmutableChanges(
  oldSpec: unknown,
  newSpec: unknown,
  oldStatus: ClusterStatusContext = {},
): Problem[] {
  const a = clone(oldSpec);
  const b = clone(newSpec);
  const problems = regionChange(a.identityRef, b.identityRef, 'spec.identityRef');
  delete a.identityRef;
  delete b.identityRef;

  // controlPlaneEndpoint may be filled in until it has a host, and its port while it has none.
  const endpoint = a.controlPlaneEndpoint;
  const next = b.controlPlaneEndpoint;
  if (!present(endpoint)) delete b.controlPlaneEndpoint;
  else if (isObj(endpoint) && !endpoint.host) {
    delete a.controlPlaneEndpoint;
    delete b.controlPlaneEndpoint;
  } else if (isObj(endpoint) && !present(endpoint.port) && isObj(next) && next.host === endpoint.host) {
    delete a.controlPlaneEndpoint;
    delete b.controlPlaneEndpoint;
  }

  if (a.disableAPIServerFloatingIP === true) {
    if (!a.apiServerFixedIP) {
      delete a.apiServerFixedIP;
      delete b.apiServerFixedIP;
    }
    if (!present(a.apiServerPort) && present(b.apiServerPort)) delete b.apiServerPort;
  }

  const oldBastion = a.bastion;
  if (!present(b.bastion) && isObj(oldBastion) && oldBastion.enabled !== false) {
    problems.push({
      path: 'spec.bastion',
      message: 'cannot be removed before disabling it',
      fix: 'set spec.bastion.enabled: false first, wait until the bastion is deleted, then remove spec.bastion',
    });
  }
  delete a.bastion;
  delete b.bastion;

  if (isObj(b.managedSecurityGroups)) {
    const oldGroups = isObj(a.managedSecurityGroups) ? a.managedSecurityGroups : {};
    a.managedSecurityGroups = oldGroups;
    for (const groups of [oldGroups, b.managedSecurityGroups]) {
      delete groups.allNodesSecurityGroupRules;
      delete groups.controlPlaneNodesSecurityGroupRules;
      delete groups.workerNodesSecurityGroupRules;
      delete groups.allowAllInClusterTraffic;
    }
  }

  if (Array.isArray(a.managedSubnets) && Array.isArray(b.managedSubnets)) {
    const oldSubnets = a.managedSubnets as unknown[];
    const newSubnets = b.managedSubnets as unknown[];
    if (oldSubnets.length !== newSubnets.length) {
      problems.push({
        path: 'spec.managedSubnets',
        message: 'cannot add or remove subnets',
        fix: 'restore the list of managed subnets; only dnsNameservers may change',
      });
      delete a.managedSubnets;
      delete b.managedSubnets;
    } else {
      const byCidr = new Map(oldSubnets.filter(isObj).map((s) => [s.cidr, s]));
      newSubnets.forEach((n, i) => {
        if (!isObj(n)) return;
        const o = byCidr.get(n.cidr);
        if (!o) {
          problems.push({
            path: `spec.managedSubnets[${i}].cidr`,
            message: `cannot change the subnet CIDR to ${JSON.stringify(n.cidr)}`,
            fix: 'restore the CIDR; a new CIDR needs a new cluster',
          });
          return;
        }
        delete o.dnsNameservers;
        delete n.dnsNameservers;
      });
      if (problems.some((p) => p.path.startsWith('spec.managedSubnets'))) {
        delete a.managedSubnets;
        delete b.managedSubnets;
      }
    }
  }

  if (isObj(a.apiServerLoadBalancer) && isObj(b.apiServerLoadBalancer)) {
    delete a.apiServerLoadBalancer.allowedCIDRs;
    delete b.apiServerLoadBalancer.allowedCIDRs;
  }

  for (const k of ['controlPlaneAvailabilityZones', 'controlPlaneOmitAvailabilityZone']) {
    delete a[k];
    delete b[k];
  }

  const lbIP = oldStatus.apiServerLoadBalancer?.ip;
  if (lbIP !== undefined && (b.apiServerFloatingIP ?? '') === lbIP) {
    delete a.apiServerFloatingIP;
    delete b.apiServerFloatingIP;
  }

  const network = oldStatus.network;
  if (isObj(a.network) && isObj(b.network) && network) {
    if (subnetsFilterToID(a.subnets, b.subnets, oldStatus)) {
      delete a.subnets;
      delete b.subnets;
    }
    if ((b.network.id ?? '') === network.id) {
      delete a.network;
      delete b.network;
    }
  }

  return [
    ...problems,
    ...forbidden(
      changedPaths(a, b, 'spec'),
      'cannot be modified once the cluster exists',
      'revert the change; a different network, load balancer or endpoint needs a new cluster',
    ),
  ];
}

function templateImmutableChanges(kind: string, oldSpec: unknown, newSpec: unknown): Problem[] {
  const inner = (s: unknown) => (isObj(s) && isObj(s.template) ? s.template.spec : undefined);
  return forbidden(
    changedPaths(inner(oldSpec), inner(newSpec), 'spec.template.spec'),
    `${kind} spec.template.spec is immutable`,
    `create a new ${kind} and point its users at it`,
  );
}

export interface ImmutableSpecs {
  OpenStackServer: OpenStackServer['spec'];
  OpenStackMachine: OpenStackMachine['spec'];
  OpenStackCluster: OpenStackCluster['spec'];
  OpenStackMachineTemplate: OpenStackMachineTemplate['spec'];
  OpenStackClusterTemplate: OpenStackClusterTemplate['spec'];
}

/**
 * The changes from `oldSpec` to `newSpec` that CAPO does not allow, one problem per changed path
 * (empty: the change is allowed). `oldStatus` is the OpenStackCluster's status, which decides a
 * few cluster changes.
 */
export function immutableChanges<K extends keyof ImmutableSpecs>(
  kind: K,
  oldSpec: ImmutableSpecs[K] | undefined,
  newSpec: ImmutableSpecs[K] | undefined,
  oldStatus?: ClusterStatusContext,
): Problem[] {
  switch (kind) {
    case 'OpenStackServer':
      return serverImmutableChanges(oldSpec, newSpec);
    case 'OpenStackMachine':
      return machineImmutableChanges(oldSpec, newSpec);
    case 'OpenStackCluster':
      return clusterImmutableChanges(oldSpec, newSpec, oldStatus);
    default:
      return templateImmutableChanges(kind, oldSpec, newSpec);
  }
}

/* ------------------------------------------------------ the accepted spec */

type Reviewed = OpenStackServer | OpenStackMachine | OpenStackCluster;
type ReviewedKind = 'OpenStackServer' | 'OpenStackMachine' | 'OpenStackCluster';
type SpecOf<O extends Reviewed> = O['spec'];

export interface SpecReview<S> {
  /** The spec to act on: the object's spec when accepted, else the last accepted one (undefined: none yet). */
  spec: S | undefined;
  /** Why the object's current spec is refused; empty when it is accepted. */
  refused: Problem[];
  /** The SpecAccepted condition to set. */
  condition: { type: string; status: 'True' | 'False'; reason: string; message: string };
  /**
   * The status fields to write when the object's spec is newly accepted (undefined: the record is
   * up to date, or the spec is refused).
   */
  record: { acceptedSpec: Record<string, unknown>; acceptedGeneration?: number } | undefined;
}

function validate(kind: ReviewedKind, spec: unknown): Problem[] {
  switch (kind) {
    case 'OpenStackServer':
      return validateOpenStackServerSpec(spec as OpenStackServer['spec']);
    case 'OpenStackMachine':
      return validateOpenStackMachineSpec(spec as OpenStackMachine['spec']);
    case 'OpenStackCluster':
      return validateOpenStackClusterSpec(spec as OpenStackCluster['spec']);
  }
}

/**
 * Decides which spec a controller acts on: the object's, if it is valid and differs from the
 * accepted spec only where CAPO allows; otherwise the accepted one, with the problems to report.
 */
export function reviewSpec<O extends Reviewed>(kind: ReviewedKind, obj: O): SpecReview<SpecOf<O>> {
  const current = obj.spec as SpecOf<O>;
  const status = obj.status as (Json & { acceptedSpec?: unknown; acceptedGeneration?: number }) | undefined;
  const accepted = isObj(status?.acceptedSpec) ? (status.acceptedSpec as SpecOf<O>) : undefined;
  const generation = obj.metadata?.generation;
  const invalid = validate(kind, current);
  const changes = accepted
    ? immutableChanges(kind, accepted as never, current as never, status as ClusterStatusContext | undefined)
    : [];
  const refused = [...changes, ...invalid];
  if (refused.length > 0) {
    const immutable = changes.length > 0;
    return {
      spec: accepted,
      refused,
      condition: {
        type: Conditions.SpecAccepted,
        status: 'False',
        reason: immutable ? Reasons.ImmutableFieldChanged : Reasons.InvalidSpec,
        message: `${immutable ? 'spec change refused' : 'spec is invalid'}${accepted ? ' (acting on the last accepted spec)' : ''}: ${formatProblems(refused)}`,
      },
      record: undefined,
    };
  }
  const upToDate =
    accepted !== undefined && deepEqual(accepted, current) && status?.acceptedGeneration === generation;
  return {
    spec: current,
    refused: [],
    condition: { type: Conditions.SpecAccepted, status: 'True', reason: Reasons.SpecAccepted, message: '' },
    record: upToDate
      ? undefined
      : {
          acceptedSpec: structuredClone(current),
          ...(generation !== undefined ? { acceptedGeneration: generation } : {}),
        },
  };
}
