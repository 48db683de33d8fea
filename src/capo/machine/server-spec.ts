/**
 * An OpenStackMachine (with its Machine and OpenStackCluster) → the spec of its OpenStackServer:
 * CAPO's `openStackMachineSpecToOpenStackServerSpec`. The OpenStackServer controller knows nothing
 * of clusters (design doc of CAPO PR #2021), so everything a machine inherits from its cluster is
 * spelled out here, once, when the OpenStackServer is created:
 *
 * - no `ports`: one port on the cluster network (`status.network.id`) with a fixed IP on each of
 *   the cluster subnets (`status.network.subnets`, the resolved `spec.subnets`); a port without a
 *   network gets the cluster network;
 * - a port without security groups gets the managed group of its role (control plane or worker)
 *   when the cluster manages security groups; the machine's `securityGroups` are appended to every
 *   port. A port with port security off (its own `disablePortSecurity`, or inherited from the
 *   cluster's) gets neither: Neutron refuses security groups on such a port;
 * - `availabilityZone` from `Machine.spec.failureDomain`, `userDataRef` from
 *   `Machine.spec.bootstrap.dataSecretName`;
 * - tags: the machine's and the cluster's, sorted and without duplicates (Nova refuses repeats);
 * - `identityRef`: the machine's, else the cluster's.
 *
 * Pure: the caller reads the objects, this decides.
 */
import type {
  Machine,
  NetworkParam,
  OpenStackCluster,
  OpenStackMachineSpec,
  OpenStackServerSpec,
  PortOpts,
  SecurityGroupParam,
  IdentityRef,
} from '../api/index.ts';
import { isControlPlaneMachine } from './owners.ts';

export interface ServerSpecInput {
  /** The accepted spec of the OpenStackMachine (see reviewSpec). */
  machineSpec: OpenStackMachineSpec;
  machine: Machine;
  cluster: OpenStackCluster;
}

export type ServerSpecResult =
  | { ok: true; spec: OpenStackServerSpec }
  /** The machine cannot get a server from this spec until the user changes it (InvalidMachineSpec). */
  | { ok: false; message: string };

/** The credentials of a machine: its own identityRef, else its cluster's. */
export function machineIdentityRef(
  machineSpec: OpenStackMachineSpec,
  cluster: OpenStackCluster,
): IdentityRef {
  const ref = machineSpec.identityRef ?? cluster.spec.identityRef;
  return { ...ref, type: ref.type ?? 'Secret' };
}

/** Machine tags ∪ cluster tags, sorted, each once. */
export function instanceTags(machineSpec: OpenStackMachineSpec, cluster: OpenStackCluster): string[] {
  return [...new Set([...(machineSpec.tags ?? []), ...(cluster.spec.tags ?? [])])].sort();
}

/** The managed security group of the machine's role, when the cluster manages groups and made it. */
export function managedSecurityGroupID(cluster: OpenStackCluster, machine: Machine): string | undefined {
  if (!cluster.spec.managedSecurityGroups) return undefined;
  const group = isControlPlaneMachine(machine)
    ? cluster.status?.controlPlaneSecurityGroup
    : cluster.status?.workerSecurityGroup;
  return group?.id || undefined;
}

function emptyNetwork(network: NetworkParam | undefined): boolean {
  return network === undefined || (network.id === undefined && network.filter === undefined);
}

/** Port security is off on this port: said on the port, else inherited from the cluster network. */
function portSecurityDisabled(port: PortOpts, cluster: OpenStackCluster): boolean {
  return port.disablePortSecurity ?? cluster.spec.disablePortSecurity ?? false;
}

function defaultPort(cluster: OpenStackCluster): PortOpts {
  const subnets = cluster.status?.network?.subnets ?? [];
  const fixedIPs =
    subnets.length > 0
      ? subnets.map((s) => ({ subnet: { id: s.id } }))
      : (cluster.spec.subnets ?? []).map((subnet) => ({ subnet: structuredClone(subnet) }));
  return fixedIPs.length > 0 ? { fixedIPs } : {};
}

export function openStackMachineSpecToOpenStackServerSpec(input: ServerSpecInput): ServerSpecResult {
  const { machineSpec, machine, cluster } = input;
  const defaultNetworkID = cluster.status?.network?.id || undefined;
  const given = machineSpec.ports ?? [];
  if (given.length === 0 && defaultNetworkID === undefined) {
    return {
      ok: false,
      message:
        'no network configured: the OpenStackCluster has no network in its status and the machine spec has no ports',
    };
  }
  const managedGroup = managedSecurityGroupID(cluster, machine);
  const machineGroups: SecurityGroupParam[] = machineSpec.securityGroups ?? [];
  const template = given.length > 0 ? given : [defaultPort(cluster)];
  const ports: PortOpts[] = [];
  for (const [i, original] of template.entries()) {
    const port = structuredClone(original);
    if (emptyNetwork(port.network)) {
      if (defaultNetworkID !== undefined) port.network = { id: defaultNetworkID };
      else if ((port.fixedIPs ?? []).length === 0) {
        return {
          ok: false,
          message: `ports[${i}] has neither a network nor fixed IPs, and the OpenStackCluster has no network in its status`,
        };
      } else delete port.network;
    }
    if (!portSecurityDisabled(port, cluster)) {
      const own = port.securityGroups ?? [];
      const groups = [
        ...(own.length === 0 && managedGroup ? [{ id: managedGroup }] : own),
        ...structuredClone(machineGroups),
      ];
      if (groups.length > 0) port.securityGroups = groups;
    }
    ports.push(port);
  }

  const spec: OpenStackServerSpec = {
    identityRef: machineIdentityRef(machineSpec, cluster),
    image: structuredClone(machineSpec.image),
    ports,
  };
  const copy = <K extends keyof OpenStackMachineSpec & keyof OpenStackServerSpec>(key: K): void => {
    const v = machineSpec[key];
    if (v !== undefined && v !== null) (spec as Record<string, unknown>)[key] = structuredClone(v);
  };
  copy('flavor');
  copy('flavorID');
  copy('sshKeyName');
  copy('configDrive');
  copy('rootVolume');
  copy('additionalBlockDevices');
  copy('serverMetadata');
  copy('serverGroup');
  copy('schedulerHintAdditionalProperties');
  copy('floatingIPPoolRef');
  if (machineSpec.trunk) spec.trunk = true;
  const tags = instanceTags(machineSpec, cluster);
  if (tags.length > 0) spec.tags = tags;
  const failureDomain = machine.spec.failureDomain;
  if (failureDomain) spec.availabilityZone = failureDomain;
  const dataSecretName = machine.spec.bootstrap?.dataSecretName;
  if (dataSecretName) spec.userDataRef = { name: dataSecretName };
  return { ok: true, spec };
}
