/**
 * What the Cluster API core controllers would do for an OpenStackMachine, for where none runs
 * (tests, the demo): the option `actAsClusterAPICore`. Off by default, because on a management
 * cluster Cluster API's own Machine controller does these writes and two writers would fight.
 *
 * - The Machine whose `spec.infrastructureRef` names the OpenStackMachine becomes its owner (and
 *   the OpenStackMachine gets the cluster-name label), as CAPI's machine controller does before an
 *   infrastructure provider can find its Machine.
 * - Once the OpenStackMachine is ready: `Machine.spec.providerID`, `status.addresses`,
 *   `status.infrastructureReady`, `status.bootstrapReady` and the phase (Provisioning,
 *   Provisioned; Running stays, it comes from a Node).
 */
import { CLUSTER_NAME_LABEL, type Machine, type OpenStackMachine } from '../api/index.ts';
import type { NodeAddress } from './state.ts';

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

/** The Machine as CAPI core would leave it given the infrastructure facts (a copy; the input is untouched). */
export function machineAsCore(machine: Machine, facts: MachineFacts): Machine {
  const next = structuredClone(machine);
  if (facts.providerID && !next.spec.providerID) next.spec.providerID = facts.providerID;
  const status = { ...next.status };
  status.bootstrapReady = Boolean(next.spec.bootstrap?.dataSecretName);
  status.infrastructureReady = facts.ready || status.infrastructureReady === true;
  if (facts.addresses.length > 0) status.addresses = facts.addresses.map((a) => ({ ...a }));
  if (status.phase !== 'Running' && status.phase !== 'Deleting' && status.phase !== 'Failed') {
    status.phase =
      status.infrastructureReady && next.spec.providerID
        ? 'Provisioned'
        : status.bootstrapReady
          ? 'Provisioning'
          : 'Pending';
  }
  next.status = status;
  return next;
}
