/**
 * The labels, annotations and finalizer of the Machine API (openshift/api
 * `machine/v1beta1/types_machine.go`, machine-api-operator's controllers, MAPO's actuator).
 */

export const Labels = {
  /** On every Machine and MachineSet of a cluster: the infrastructure name. Required by the machine controller. */
  Cluster: 'machine.openshift.io/cluster-api-cluster',
  MachineRole: 'machine.openshift.io/cluster-api-machine-role',
  MachineType: 'machine.openshift.io/cluster-api-machine-type',
  /** On a MachineSet's Machines: its name (the installer's selector). */
  MachineSet: 'machine.openshift.io/cluster-api-machineset',
  /** Set by the actuator from the instance: the printer columns' TYPE, REGION and ZONE. */
  InstanceType: 'machine.openshift.io/instance-type',
  Region: 'machine.openshift.io/region',
  Zone: 'machine.openshift.io/zone',
} as const;

export const Annotations = {
  /** Nova's status of the server (the printer column STATE, priority 1). */
  InstanceState: 'machine.openshift.io/instance-state',
  /** MAPO's record of the server id on the Machine. */
  ResourceID: 'openstack-resourceId',
  /** A Machine marked to go first when its MachineSet scales down. */
  DeleteMachine: 'machine.openshift.io/delete-machine',
  /** The Node is deleted without being drained. */
  ExcludeNodeDraining: 'machine.openshift.io/exclude-node-draining',
  /** On a Node: `<namespace>/<name>` of its Machine (nodelink). */
  Machine: 'machine.openshift.io/machine',
  /** On a MachineSet, from its flavor, for the cluster-autoscaler. */
  VCPU: 'machine.openshift.io/vCPU',
  MemoryMb: 'machine.openshift.io/memoryMb',
} as const;

/** The machine controller's finalizer (MachineFinalizer). */
export const MACHINE_FINALIZER = 'machine.machine.openshift.io';

/** Where the installer puts the Machine API's objects and the clouds secret. */
export const MACHINE_API_NAMESPACE = 'openshift-machine-api';
