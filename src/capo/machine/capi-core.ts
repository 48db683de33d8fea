/**
 * What the Cluster API core controllers would do for an OpenStackMachine and its Cluster, for
 * where none runs (tests, the demo): the option `actAsClusterAPICore`. Off by default, because on
 * a management cluster Cluster API's own controllers do these writes and two writers would fight.
 * Pure functions over objects the caller has read; the controllers are in
 * controllers/capi-core.ts.
 *
 * - The Machine whose `spec.infrastructureRef` names the OpenStackMachine becomes its owner (and
 *   the OpenStackMachine gets the cluster-name label), as CAPI's machine controller does before an
 *   infrastructure provider can find its Machine.
 * - From the OpenStackMachine: `Machine.spec.providerID`, `status.addresses`,
 *   `status.infrastructureReady`, the failure reason and message, the InfrastructureReady
 *   condition (a mirror of the OpenStackMachine's Ready); from the bootstrap data Secret's name:
 *   `status.bootstrapReady` and BootstrapReady.
 * - From the Node whose `spec.providerID` is the Machine's: `status.nodeRef`, `status.nodeInfo`
 *   and NodeHealthy.
 * - The phase as CAPI's `reconcilePhase` derives it (Pending → Provisioning → Provisioned →
 *   Running, Failed, Deleting), and `lastUpdated` when it changes.
 * - The Cluster's phase (Pending → Provisioning → Provisioned), `controlPlaneReady` once a
 *   control-plane Machine runs (a machine-based control plane has no control-plane provider to
 *   say so), ControlPlaneInitialized, ControlPlaneReady, InfrastructureReady and Ready.
 */
import type { V1Node } from '@kubernetes/client-node';
import { metaTime } from '../../kube/index.ts';
import {
  CLUSTER_NAME_LABEL,
  Conditions,
  type CapiCondition,
  type Cluster,
  type Machine,
  type OpenStackMachine,
} from '../api/index.ts';
import { getCapiCondition, markFalse, markTrue, markUnknown, mirror, setSummary } from './conditions.ts';
import { isControlPlaneMachine } from './owners.ts';
import type { NodeAddress } from './state.ts';

/** cluster.x-k8s.io/v1beta1 condition types and reasons CAPI core sets (CamelCase, as CAPI's). */
export const CoreConditions = {
  InfrastructureReady: 'InfrastructureReady',
  BootstrapReady: 'BootstrapReady',
  NodeHealthy: 'NodeHealthy',
  ControlPlaneInitialized: 'ControlPlaneInitialized',
  ControlPlaneReady: 'ControlPlaneReady',
} as const;

export const CoreReasons = {
  WaitingForInfrastructure: 'WaitingForInfrastructure',
  WaitingForDataSecret: 'WaitingForDataSecret',
  WaitingForNodeRef: 'WaitingForNodeRef',
  NodeProvisioning: 'NodeProvisioning',
  NodeNotFound: 'NodeNotFound',
  NodeConditionsFailed: 'NodeConditionsFailed',
  WaitingForControlPlane: 'WaitingForControlPlane',
  WaitingForControlPlaneProviderInitialized: 'WaitingForControlPlaneProviderInitialized',
} as const;

export type MachinePhase = 'Pending' | 'Provisioning' | 'Provisioned' | 'Running' | 'Deleting' | 'Failed';
export type ClusterPhase = 'Pending' | 'Provisioning' | 'Provisioned' | 'Deleting' | 'Failed';

/** The Machine that names this OpenStackMachine as its infrastructure, among `machines`. */
export function machineReferencing(osm: OpenStackMachine, machines: readonly Machine[]): Machine | undefined {
  return machines.find((m) => {
    const ref = m.spec.infrastructureRef;
    return (
      ref?.name === osm.metadata?.name &&
      (ref.kind === undefined || ref.kind === 'OpenStackMachine') &&
      (ref.namespace === undefined || ref.namespace === osm.metadata?.namespace) &&
      m.metadata?.deletionTimestamp === undefined
    );
  });
}

/** The OpenStackMachine's metadata with the Machine as owner and the cluster label, as CAPI sets them. */
export function adoptedMetadata(osm: OpenStackMachine, machine: Machine): OpenStackMachine['metadata'] {
  const meta = structuredClone(osm.metadata ?? {});
  const refs = meta.ownerReferences ?? [];
  if (!refs.some((r) => r.kind === 'Machine' && r.uid === machine.metadata?.uid)) {
    refs.push({
      apiVersion: machine.apiVersion ?? 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      name: machine.metadata?.name ?? '',
      uid: machine.metadata?.uid ?? '',
    });
  }
  meta.ownerReferences = refs;
  const cluster = machine.metadata?.labels?.[CLUSTER_NAME_LABEL] ?? machine.spec.clusterName;
  if (cluster && !meta.labels?.[CLUSTER_NAME_LABEL])
    meta.labels = { ...meta.labels, [CLUSTER_NAME_LABEL]: cluster };
  return meta;
}

export interface MachineFacts {
  ready: boolean;
  providerID: string | undefined;
  addresses: readonly NodeAddress[];
}

/**
 * The Machine as CAPI core would leave it given the infrastructure facts (a copy; the input is
 * untouched). The nodeRef is the Machine's own: the OpenStackMachine controller, which calls
 * this, does not look at Nodes; `machineStatusAsCore` does.
 */
export function machineAsCore(machine: Machine, facts: MachineFacts, now = Date.now()): Machine {
  const next = structuredClone(machine);
  copyInfrastructure(next, facts);
  setPhase(next, machine, now);
  return next;
}

/** What the Machine controller stand-in knows of one Machine: its infrastructure and its Node. */
export interface MachineWorld {
  /** The OpenStackMachine `spec.infrastructureRef` names; undefined while it does not exist. */
  infra: OpenStackMachine | undefined;
  /**
   * The Nodes whose `spec.providerID` is the Machine's (none, one, or — a misconfiguration —
   * several), and the Node `status.nodeRef` names if it is not among them.
   */
  nodes: readonly V1Node[];
  nodeByRef?: V1Node | undefined;
}

/** The Machine as CAPI core's Machine controller would write it (a copy). */
export function machineStatusAsCore(machine: Machine, world: MachineWorld, now = Date.now()): Machine {
  const next = structuredClone(machine);
  const infra = world.infra;
  copyInfrastructure(next, {
    ready: infra?.status?.ready === true,
    providerID: infra?.spec.providerID,
    addresses: infra?.status?.addresses ?? [],
  });
  const status = (next.status ??= {});
  // capierrors: the infrastructure's terminal failure becomes the Machine's (and its phase Failed).
  if (infra?.status?.failureReason) status.failureReason = infra.status.failureReason;
  if (infra?.status?.failureMessage) status.failureMessage = infra.status.failureMessage;

  const conditions = structuredClone(status.conditions ?? []);
  bootstrapCondition(conditions, next, now);
  infrastructureCondition(conditions, next, infra, now);
  linkNode(next, conditions, world, now);
  setSummary(conditions, [CoreConditions.InfrastructureReady, CoreConditions.BootstrapReady], now);
  status.conditions = conditions;
  if (next.metadata?.generation !== undefined) status.observedGeneration = next.metadata.generation;
  setPhase(next, machine, now);
  return next;
}

/** machine_controller_phases.go `reconcilePhase`, on the Machine as it is about to be written. */
export function machinePhase(m: Machine): MachinePhase {
  let phase = (m.status?.phase as MachinePhase | undefined) || 'Pending';
  if (m.status?.bootstrapReady && !m.status.infrastructureReady) phase = 'Provisioning';
  if (m.spec.providerID) phase = 'Provisioned';
  if (m.status?.nodeRef && m.status.infrastructureReady) phase = 'Running';
  if (m.status?.failureReason || m.status?.failureMessage) phase = 'Failed';
  if (m.metadata?.deletionTimestamp) phase = 'Deleting';
  return phase;
}

/** The nodeRef CAPI writes: `{ apiVersion: v1, kind: Node, name, uid }`. */
export function nodeRefOf(node: V1Node): NonNullable<NonNullable<Machine['status']>['nodeRef']> {
  return { apiVersion: 'v1', kind: 'Node', name: node.metadata?.name ?? '', uid: node.metadata?.uid ?? '' };
}

/** The Node a Machine stands for, by providerID: one match only (CAPI refuses a duplicate). */
export function nodeOf(world: Pick<MachineWorld, 'nodes'>): V1Node | undefined {
  return world.nodes.length === 1 ? world.nodes[0] : undefined;
}

/** cluster_controller_phases.go `reconcilePhase`, plus controlPlaneReady and the conditions. */
export function clusterAsCore(cluster: Cluster, machines: readonly Machine[], now = Date.now()): Cluster {
  const next = structuredClone(cluster);
  const status = (next.status ??= {});
  const conditions = structuredClone(status.conditions ?? []);

  if (status.infrastructureReady) markTrue(conditions, CoreConditions.InfrastructureReady, now);
  else if (next.spec?.infrastructureRef)
    markFalse(
      conditions,
      CoreConditions.InfrastructureReady,
      CoreReasons.WaitingForInfrastructure,
      'Info',
      '',
      now,
    );

  const ours = machines.filter(
    (m) => m.metadata?.namespace === next.metadata?.namespace && belongsTo(m, next.metadata?.name),
  );
  const controlPlane = ours.filter((m) => isControlPlaneMachine(m) && !m.metadata?.deletionTimestamp);
  // Without a control-plane provider, CAPI's cluster controller calls the control plane
  // initialized once a control-plane Machine has a Node; it stays so.
  if (controlPlane.some((m) => m.status?.nodeRef))
    markTrue(conditions, CoreConditions.ControlPlaneInitialized, now);
  else if (getCapiCondition(conditions, CoreConditions.ControlPlaneInitialized)?.status !== 'True')
    markFalse(
      conditions,
      CoreConditions.ControlPlaneInitialized,
      CoreReasons.WaitingForControlPlaneProviderInitialized,
      'Info',
      'Waiting for the first control plane machine to have its status.nodeRef set',
      now,
    );
  const running = controlPlane.filter((m) => m.status?.phase === 'Running').length;
  status.controlPlaneReady = running > 0;
  if (status.controlPlaneReady) markTrue(conditions, CoreConditions.ControlPlaneReady, now);
  else
    markFalse(
      conditions,
      CoreConditions.ControlPlaneReady,
      CoreReasons.WaitingForControlPlane,
      'Info',
      `${controlPlane.length} control plane machine${controlPlane.length === 1 ? '' : 's'}, none running`,
      now,
    );
  setSummary(conditions, [CoreConditions.ControlPlaneReady, CoreConditions.InfrastructureReady], now);
  status.conditions = conditions;
  if (next.metadata?.generation !== undefined) status.observedGeneration = next.metadata.generation;
  status.phase = clusterPhase(next);
  return next;
}

export function clusterPhase(c: Cluster): ClusterPhase {
  let phase = (c.status?.phase as ClusterPhase | undefined) || 'Pending';
  if (c.spec?.infrastructureRef || c.spec?.controlPlaneRef) phase = 'Provisioning';
  const endpoint = c.spec?.controlPlaneEndpoint;
  if (c.status?.infrastructureReady && endpoint?.host && endpoint.port) phase = 'Provisioned';
  if (c.status?.['failureReason'] || c.status?.['failureMessage']) phase = 'Failed';
  if (c.metadata?.deletionTimestamp) phase = 'Deleting';
  return phase;
}

/** Whether a Machine is one of the Cluster's: its label, else `spec.clusterName`. */
export function belongsTo(m: Machine, cluster: string | undefined): boolean {
  return (m.metadata?.labels?.[CLUSTER_NAME_LABEL] ?? m.spec.clusterName) === cluster;
}

/* ------------------------------------------------------------ internals */

function copyInfrastructure(next: Machine, facts: MachineFacts): void {
  const status = { ...next.status };
  status.bootstrapReady = Boolean(next.spec.bootstrap?.dataSecretName);
  status.infrastructureReady = facts.ready || status.infrastructureReady === true;
  next.status = status;
  // reconcileInfrastructure reads nothing more until the infrastructure is (or was) ready: a
  // providerID written before status.ready must not make the Machine Provisioned.
  if (!status.infrastructureReady) return;
  // CAPI's webhook makes spec.providerID immutable once set: only an empty one is filled.
  if (facts.providerID && !next.spec.providerID) next.spec.providerID = facts.providerID;
  if (facts.addresses.length > 0) status.addresses = facts.addresses.map((a) => ({ ...a }));
}

function setPhase(next: Machine, before: Machine, now: number): void {
  const status = (next.status ??= {});
  status.phase = machinePhase(next);
  if (status.phase !== before.status?.phase) status['lastUpdated'] = metaTime(now);
}

function bootstrapCondition(conditions: CapiCondition[], m: Machine, now: number): void {
  if (m.status?.bootstrapReady) markTrue(conditions, CoreConditions.BootstrapReady, now);
  else
    markFalse(conditions, CoreConditions.BootstrapReady, CoreReasons.WaitingForDataSecret, 'Info', '', now);
}

/** conditions.SetMirror with a fallback: the infrastructure's Ready, else its `status.ready`. */
function infrastructureCondition(
  conditions: CapiCondition[],
  m: Machine,
  infra: OpenStackMachine | undefined,
  now: number,
): void {
  const ready = getCapiCondition(infra?.status?.conditions, Conditions.Ready);
  if (ready) mirror(conditions, ready, CoreConditions.InfrastructureReady, now);
  else if (m.status?.infrastructureReady) markTrue(conditions, CoreConditions.InfrastructureReady, now);
  else
    markFalse(
      conditions,
      CoreConditions.InfrastructureReady,
      CoreReasons.WaitingForInfrastructure,
      'Info',
      infra
        ? ''
        : `${m.spec.infrastructureRef.kind ?? 'infrastructure'} ${m.spec.infrastructureRef.name} not found`,
      now,
    );
}

/** machine_controller_noderef.go: the nodeRef by providerID, nodeInfo, NodeHealthy. */
function linkNode(next: Machine, conditions: CapiCondition[], world: MachineWorld, now: number): void {
  const status = (next.status ??= {});
  if (!next.spec.providerID) {
    markFalse(conditions, CoreConditions.NodeHealthy, CoreReasons.WaitingForNodeRef, 'Info', '', now);
    return;
  }
  const node = nodeOf(world) ?? world.nodeByRef;
  if (!node) {
    if (status.nodeRef) {
      markFalse(
        conditions,
        CoreConditions.NodeHealthy,
        CoreReasons.NodeNotFound,
        'Error',
        `Node ${status.nodeRef.name} is gone`,
        now,
      );
    } else {
      markFalse(
        conditions,
        CoreConditions.NodeHealthy,
        CoreReasons.NodeProvisioning,
        'Info',
        world.nodes.length > 1
          ? `${world.nodes.length} Nodes have providerID ${next.spec.providerID}`
          : 'Waiting for a node with matching ProviderID to exist',
        now,
      );
    }
    return;
  }
  status.nodeRef = nodeRefOf(node);
  if (node.status?.nodeInfo) status['nodeInfo'] = structuredClone(node.status.nodeInfo);
  nodeHealth(conditions, node, now);
}

const PRESSURE = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

/** summarizeNodeConditions: Ready True and no pressure → healthy. */
function nodeHealth(conditions: CapiCondition[], node: V1Node, now: number): void {
  const list = node.status?.conditions ?? [];
  const ready = list.find((c) => c.type === 'Ready');
  const pressed = list.filter((c) => PRESSURE.includes(c.type) && c.status === 'True').map((c) => c.type);
  if (ready?.status === 'True' && pressed.length === 0) {
    markTrue(conditions, CoreConditions.NodeHealthy, now);
    return;
  }
  if (ready?.status === 'False' || pressed.length > 0) {
    const why = [...(ready?.status === 'False' ? ['Node condition Ready is False'] : []), ...pressed];
    markFalse(
      conditions,
      CoreConditions.NodeHealthy,
      CoreReasons.NodeConditionsFailed,
      'Warning',
      why.join('; '),
      now,
    );
    return;
  }
  markUnknown(
    conditions,
    CoreConditions.NodeHealthy,
    CoreReasons.NodeConditionsFailed,
    'Node condition Ready is Unknown',
    now,
  );
}
