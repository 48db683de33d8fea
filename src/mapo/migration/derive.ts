/**
 * The Cluster API side of a Machine API Machine, derived from what was built: its OpenStackServer's
 * spec (immutable, the ground truth of the server, its ports and volumes) — not the providerSpec,
 * which may have changed since (upstream's mapi2capi converts the providerSpec instead; here the
 * server exists and must be taken over as it is).
 *
 * - OpenStackMachine (infrastructure.cluster.x-k8s.io/v1beta1): flavor, image, the server's ports
 *   as explicit ports (so no cluster default port is ever added), security groups, tags, metadata,
 *   trunk, root volume, block devices, server group, key, config drive, identityRef, scheduler
 *   hints; `spec.providerID` the Machine's.
 * - Cluster API Machine (cluster.x-k8s.io/v1beta1): `clusterName` and the cluster-name label from
 *   the Machine's `machine.openshift.io/cluster-api-cluster`, `infrastructureRef` the
 *   OpenStackMachine, the server's `availabilityZone` as `failureDomain`, its `userDataRef` as
 *   `bootstrap.dataSecretName`, `providerID`.
 *
 * Both carry the Machine's labels. The derived OpenStackMachine is checked with CAPO's published
 * validation; a field that does not carry over refuses the switch, naming it. Pure: owner
 * references and the pause annotation, which need the live objects, are the controller's.
 */
import {
  capoKinds,
  CLUSTER_NAME_LABEL,
  formatProblem,
  validateOpenStackMachineSpec,
  type Machine as CapiMachine,
  type OpenStackMachine,
  type OpenStackMachineSpec,
  type OpenStackServer,
} from '../../capo/api/index.ts';
import type { Machine } from '../api/index.ts';
import { RefusalReasons, type RefusalReason } from './names.ts';

export interface Refusal {
  reason: RefusalReason;
  /** What is wrong and what to do, for the condition and the Event. */
  message: string;
}

export interface ClusterAPIMachine {
  machine: CapiMachine;
  openStackMachine: OpenStackMachine;
}

export type Derived = { ok: true; objects: ClusterAPIMachine } | { ok: false; refusal: Refusal };

export interface DeriveInput {
  machine: Machine;
  server: OpenStackServer;
  /** The Cluster API Cluster (the Machine's `machine.openshift.io/cluster-api-cluster`). */
  clusterName: string;
}

/** What to do about a field of the immutable OpenStackServer: the switch cannot happen with it. */
const STAY =
  'keep this Machine on the Machine API (set spec.authoritativeAPI back to MachineAPI), or replace it with a Machine whose providerSpec avoids this';

/** The OpenStackServer's fields an OpenStackMachine has under the same name. */
const SAME_NAME = [
  'flavor',
  'flavorID',
  'image',
  'sshKeyName',
  'ports',
  'securityGroups',
  'trunk',
  'tags',
  'serverMetadata',
  'configDrive',
  'rootVolume',
  'additionalBlockDevices',
  'serverGroup',
  'identityRef',
  'floatingIPPoolRef',
  'schedulerHintAdditionalProperties',
] as const satisfies readonly (keyof OpenStackMachineSpec & keyof OpenStackServer['spec'])[];

/** The providerID the Node carries: the Machine's, else the one MAPO writes from the instance. */
export function providerIDOf(machine: Machine, server: OpenStackServer): string | undefined {
  if (machine.spec?.providerID) return machine.spec.providerID;
  const id = server.status?.instanceID;
  return id ? `openstack:///${id}` : undefined;
}

export function deriveClusterAPIMachine(input: DeriveInput): Derived {
  const { machine, server, clusterName } = input;
  const name = machine.metadata?.name ?? '';
  const namespace = machine.metadata?.namespace ?? 'default';
  const where = `OpenStackServer ${name}`;

  const dataSecretName = server.spec.userDataRef?.name;
  if (!dataSecretName) {
    return refuse(
      `${where} has no spec.userDataRef: a Cluster API Machine needs a bootstrap data Secret (spec.bootstrap.dataSecretName) before CAPO acts on it. Fix: ${STAY} (providerSpec.value.userDataSecret)`,
    );
  }

  const spec = { image: structuredClone(server.spec.image) } as OpenStackMachineSpec;
  for (const key of SAME_NAME) {
    const v = server.spec[key];
    if (v !== undefined && v !== null) (spec as Record<string, unknown>)[key] = structuredClone(v);
  }
  if (server.spec.trunk !== true) delete spec.trunk;
  const providerID = providerIDOf(machine, server);
  if (providerID) spec.providerID = providerID;

  const problems = validateOpenStackMachineSpec(spec, 'spec');
  if (problems.length > 0) {
    return refuse(
      `the OpenStackMachine derived from ${where} would be invalid: ${problems
        .map((p) => `${formatProblem(p)} (the OpenStackServer's ${p.path}, which cannot change)`)
        .join('; ')}. Fix: ${STAY}`,
    );
  }

  const labels = { ...machine.metadata?.labels, [CLUSTER_NAME_LABEL]: clusterName };
  const capiMachine: CapiMachine = {
    apiVersion: capoKinds.Machine.apiVersion,
    kind: capoKinds.Machine.kind,
    metadata: { name, namespace, labels: { ...labels } },
    spec: {
      clusterName,
      bootstrap: { dataSecretName },
      infrastructureRef: {
        apiVersion: capoKinds.OpenStackMachine.apiVersion,
        kind: capoKinds.OpenStackMachine.kind,
        name,
        namespace,
      },
      ...(providerID ? { providerID } : {}),
      ...(server.spec.availabilityZone ? { failureDomain: server.spec.availabilityZone } : {}),
    },
  };
  const openStackMachine: OpenStackMachine = {
    apiVersion: capoKinds.OpenStackMachine.apiVersion,
    kind: capoKinds.OpenStackMachine.kind,
    metadata: { name, namespace, labels: { ...labels } },
    spec,
  };
  return { ok: true, objects: { machine: capiMachine, openStackMachine } };
}

function refuse(message: string): Derived {
  return { ok: false, refusal: { reason: RefusalReasons.FieldNotCarriedOver, message } };
}
