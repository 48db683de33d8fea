/**
 * The contract of the shared server path (CAPO's OpenStackServer, the OpenStackMachine and bastion
 * through it, later MAPO): what a caller wants — a `ServerSpec` — what it records between calls —
 * a `ServerState` — and what one `ensure` or `remove` call reports back.
 *
 * The types know nothing of Kubernetes or of the CRDs: controllers translate their specs into these
 * plain shapes (defaulting the cluster network port, the managed security groups, the failure
 * domain) and store `ServerState` in their status (`status.resolved`, `status.resources`,
 * `status.instanceID`), so cleanup never depends on a spec that may have changed since.
 */
import type { Server, ServerStatus } from '../../compute/v2/servers.ts';

// ---------------------------------------------------------------- parameters (by id or by filter)

/** Neutron's tag filters (CAPO's FilterByNeutronTags). */
export interface NeutronTagFilter {
  /** Objects having all of these tags. */
  tags?: readonly string[] | undefined;
  /** Objects having any of these tags. */
  tagsAny?: readonly string[] | undefined;
  /** Objects not having all of these tags. */
  notTags?: readonly string[] | undefined;
  /** Objects having none of these tags. */
  notTagsAny?: readonly string[] | undefined;
}

/** A Glance image: by id, or a filter that must match exactly one image. */
export type ImageParam =
  { id: string } | { filter: { name?: string | undefined; tags?: readonly string[] | undefined } };

/** A Nova flavor by id or by (unique) name. */
export type FlavorParam = { id: string } | { name: string };

/** A Nova server group by id, or by a name that must match exactly one group. */
export type ServerGroupParam = { id: string } | { filter: { name: string } };

export interface NetworkFilter extends NeutronTagFilter {
  name?: string | undefined;
  description?: string | undefined;
  projectID?: string | undefined;
}

export type NetworkParam = { id: string } | { filter: NetworkFilter };

export type Ipv6Mode = 'slaac' | 'dhcpv6-stateful' | 'dhcpv6-stateless';

export interface SubnetFilter extends NeutronTagFilter {
  name?: string | undefined;
  description?: string | undefined;
  projectID?: string | undefined;
  ipVersion?: 4 | 6 | undefined;
  gatewayIP?: string | undefined;
  cidr?: string | undefined;
  ipv6AddressMode?: Ipv6Mode | undefined;
  ipv6RAMode?: Ipv6Mode | undefined;
}

/** A subnet of the port's network: by id, or a filter (applied within that network). */
export type SubnetParam = { id: string } | { filter: SubnetFilter };

export interface SecurityGroupFilter extends NeutronTagFilter {
  name?: string | undefined;
  description?: string | undefined;
  projectID?: string | undefined;
}

export type SecurityGroupParam = { id: string } | { filter: SecurityGroupFilter };

// ---------------------------------------------------------------- the spec

export interface FixedIPSpec {
  /** Allocate from this subnet (of the port's network). */
  subnet?: SubnetParam | undefined;
  ipAddress?: string | undefined;
}

export interface AddressPairSpec {
  ipAddress: string;
  macAddress?: string | undefined;
}

export interface BindingProfileSpec {
  /** `capabilities: ["switchdev"]` in the binding profile. */
  ovsHWOffload?: boolean | undefined;
  /** `trusted: true` in the binding profile (SR-IOV). */
  trustedVF?: boolean | undefined;
}

/** A Neutron extension attribute sent as given in the port create body (`{key: value}`). */
export interface ValueSpec {
  name: string;
  key: string;
  value: string;
}

export interface PortSpec {
  /**
   * The engine does not default the cluster network (the caller does); unset, the network is the
   * one of the fixed IPs' subnets (CAPO's rule), which must all be on it.
   */
  network?: NetworkParam | undefined;
  /** The port is named `<server>-<nameSuffix>`, else `<server>-<index>`. */
  nameSuffix?: string | undefined;
  description?: string | undefined;
  fixedIPs?: readonly FixedIPSpec[] | undefined;
  /** Added to the server-level `securityGroups`. */
  securityGroups?: readonly SecurityGroupParam[] | undefined;
  /** Added to the server-level `tags`; the trunk gets the same. */
  tags?: readonly string[] | undefined;
  /** Undefined: the server-level `trunk`. */
  trunk?: boolean | undefined;
  adminStateUp?: boolean | undefined;
  macAddress?: string | undefined;
  /** Dropped when port security is disabled (Neutron refuses them then). */
  allowedAddressPairs?: readonly AddressPairSpec[] | undefined;
  /** `binding:host_id` (admin only in Neutron's default policy). */
  hostID?: string | undefined;
  /** `binding:vnic_type`: normal, direct, macvtap, … */
  vnicType?: string | undefined;
  /** `binding:profile` (admin only in Neutron's default policy). */
  profile?: BindingProfileSpec | undefined;
  /** The port has no security groups and no address pairs. */
  disablePortSecurity?: boolean | undefined;
  propagateUplinkStatus?: boolean | undefined;
  valueSpecs?: readonly ValueSpec[] | undefined;
}

/** Where a volume lives: the server's zone (`Machine`, the default) or a named Cinder zone. */
export type VolumeAvailabilityZone = { from: 'Machine' } | { from: 'Name'; name: string };

export interface RootVolumeSpec {
  sizeGiB: number;
  /** A Cinder volume type; the cloud's default when absent. */
  type?: string | undefined;
  availabilityZone?: VolumeAvailabilityZone | undefined;
}

export interface BlockDeviceSpec {
  /** The volume is named `<server>-<name>`; `root` is reserved. */
  name: string;
  sizeGiB: number;
  storage:
    | { type: 'Local' }
    | {
        type: 'Volume';
        volume?:
          { type?: string | undefined; availabilityZone?: VolumeAvailabilityZone | undefined } | undefined;
      };
}

/** A scheduler hint beside `group`: Nova's filters read them (`query`, `different_host`, custom ones). */
export type SchedulerHintValue = boolean | string | number;

export interface ServerSpec {
  /** The server's name, and the stem of its ports' and volumes' names. */
  name: string;
  image: ImageParam;
  flavor: FlavorParam;
  serverGroup?: ServerGroupParam | undefined;
  availabilityZone?: string | undefined;
  sshKeyName?: string | undefined;
  /** The bootstrap data itself (cloud-init), not encoded: the client base64s it for Nova. */
  userData?: string | undefined;
  metadata?: Readonly<Record<string, string>> | undefined;
  /** Nova tags (microversion 2.52); also put on every port and trunk. */
  tags?: readonly string[] | undefined;
  configDrive?: boolean | undefined;
  /** Boot from a volume made from the image, named `<server>-root`. */
  rootVolume?: RootVolumeSpec | undefined;
  additionalBlockDevices?: readonly BlockDeviceSpec[] | undefined;
  /** Sent in `os:scheduler_hints` beside `group` (the server group). */
  schedulerHints?: Readonly<Record<string, SchedulerHintValue>> | undefined;
  /** The default of the ports' `trunk`. */
  trunk?: boolean | undefined;
  /** Put on every port that has port security. */
  securityGroups?: readonly SecurityGroupParam[] | undefined;
  /** At least one. */
  ports: readonly PortSpec[];
}

// ---------------------------------------------------------------- what is recorded

export interface ResolvedFixedIP {
  subnet?: string | undefined;
  ipAddress?: string | undefined;
}

/** A port with every lookup done: what `ensurePort` creates and `adoptPorts` finds (CAPO's ResolvedPortSpec). */
export interface ResolvedPortSpec {
  name: string;
  description?: string | undefined;
  networkID: string;
  tags: string[];
  trunk: boolean;
  fixedIPs: ResolvedFixedIP[];
  /** Ids. */
  securityGroups: string[];
  adminStateUp?: boolean | undefined;
  macAddress?: string | undefined;
  allowedAddressPairs?: AddressPairSpec[] | undefined;
  hostID?: string | undefined;
  vnicType?: string | undefined;
  profile?: BindingProfileSpec | undefined;
  disablePortSecurity?: boolean | undefined;
  propagateUplinkStatus?: boolean | undefined;
  valueSpecs?: ValueSpec[] | undefined;
}

/** A Cinder volume the engine is to make before the server (the plan; `resources.volumes` says what may exist). */
export interface ResolvedVolumeSpec {
  /** `<server>-root` or `<server>-<device name>`. */
  name: string;
  /** The root volume boots (index 0) and is made from the image. */
  root: boolean;
  sizeGiB: number;
  type?: string | undefined;
  availabilityZone?: string | undefined;
  /** Nova's block device tag (the additional device's name); none on the root volume. */
  tag?: string | undefined;
}

/**
 * Every lookup, done once before anything is created and recorded (CAPO's ResolvedServerSpec, plus
 * the volumes): ports and volumes are found and deleted from this, never from the spec.
 */
export interface ResolvedServerSpec {
  imageID: string;
  flavorID: string;
  serverGroupID?: string | undefined;
  ports: ResolvedPortSpec[];
  /**
   * The volumes to make (root first). Absent in a state recorded by CAPO itself: then ensure
   * derives them from the spec. Removal never reads this: it deletes `resources.volumes`.
   */
  volumes?: ResolvedVolumeSpec[] | undefined;
}

/** What exists because of the engine, by id (CAPO's ServerResources). `ports[i]` is `resolved.ports[i]`. */
export interface ServerResources {
  ports: { id: string }[];
  /**
   * Ports that were subports of one of the server's trunks, recorded by remove() before it detaches
   * them: once detached nothing points at them any more, so a process that died right after the
   * detach would otherwise leak them. remove() deletes them (gone already is fine) and drops the
   * field once none is left. Not CAPO's; absent in a state CAPO recorded.
   */
  subports?: { id: string }[] | undefined;
  /**
   * Volumes that may exist because of the engine, by name (they are found by name: a crash between
   * a create and its answer leaves no id): each recorded before its create, or when one of that name
   * is adopted. remove() deletes these and derives no name, so a server that never got a volume
   * needs no block-storage service to go away. Not CAPO's; absent in a state CAPO recorded.
   */
  volumes?: { name: string }[] | undefined;
}

/** What a caller stores between calls and passes back; the engine hands it to `record` whenever it grows. */
export interface ServerState {
  resolved?: ResolvedServerSpec | undefined;
  resources?: ServerResources | undefined;
  instanceID?: string | undefined;
}

export interface EnsureInput extends ServerState {
  spec: ServerSpec;
}

/** Removal needs the name (for derived names and adoption), never the spec. */
export interface RemoveInput extends ServerState {
  name: string;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /**
   * Persists the state (the status subresource) before the engine goes on: called with the whole
   * state once the spec is resolved, as soon as each port exists, once the server exists, and in
   * remove() before a trunk's subports are detached and once their ports are gone. A
   * rejection stops the call (nothing is created that the caller could not record). Without it the
   * engine still finds its work again by name, but a controller should always pass one.
   */
  record?: ((state: ServerState) => Promise<void>) | undefined;
  /**
   * The caller writes the result's `state` as soon as the call returns, before anything else (a
   * controller's status write at the end of its reconcile): a change the call would record and
   * then return at once (the server's id after its create) is left to that write — one status
   * write, not two, and the same crash window (a server whose id was not recorded is adopted by
   * name).
   */
  recordsResult?: boolean | undefined;
}

// ---------------------------------------------------------------- results

/** One write the engine made, for logs, Events and tests. */
export interface Action {
  verb: 'create' | 'delete' | 'tag' | 'detach';
  resource: 'port' | 'trunk' | 'subports' | 'volume' | 'server';
  id?: string | undefined;
  name?: string | undefined;
}

/** A server address as a Node would show it. */
export interface InstanceAddress {
  type: 'InternalIP' | 'ExternalIP';
  address: string;
  /** The Neutron network's name, as Nova keys `addresses`. */
  network: string;
}

interface Outcome {
  /** Writes made by this call, in order. */
  actions: Action[];
  /** The state as the engine left it (passed to `record`, but for the last change with `recordsResult`). */
  state: ServerState;
}

export interface Ready extends Outcome {
  phase: 'Ready';
  instanceID: string;
  instanceState: 'ACTIVE';
  server: Server;
  addresses: InstanceAddress[];
}

export type PendingReason =
  /** A volume is being created by Cinder. */
  | 'VolumeCreating'
  /** The server was just created. */
  | 'InstanceCreated'
  /** BUILD. */
  | 'InstanceBuilding'
  /** A state nobody here is changing (SHUTOFF, PAUSED, MIGRATING, …): CAPO's InstanceReady Unknown. */
  | 'InstanceNotReady'
  /** A write was refused with 409 or found a 404 (another writer, or a race Neutron resolves): re-read shortly. */
  | 'Conflict'
  /** 429 / 503 from the cloud. */
  | 'RateLimited'
  /** remove(): something is being deleted. */
  | 'Deleting';

export interface Pending extends Outcome {
  phase: 'Pending';
  reason: PendingReason;
  retryAfterMs: number;
  /**
   * When `retryAfterMs` began, on the engine's clock (`now`), when that is earlier than the call's
   * return: a volume's expected end counts from when it was read, and the call may go on (its
   * ports, its records) for a while after. Absent: from the return.
   */
  since?: number;
  message: string;
  instanceState?: ServerStatus | undefined;
  server?: Server | undefined;
}

export type FailedReason =
  /** A lookup of the spec failed (nothing or several matched, or the spec is invalid). */
  | 'DependencyError'
  | 'MultiplePorts'
  | 'MultipleVolumes'
  | 'MultipleServers'
  /** A recorded port was deleted behind the engine's back. */
  | 'PortNotFound'
  | 'VolumeError'
  /** Nova refused the create (NoValidHost as a 500, a 400, quota). Nothing leaks: ports stay recorded. */
  | 'InstanceCreateFailed'
  /** The server went to ERROR; the message is Nova's fault. */
  | 'InstanceError'
  /** The recorded server is gone. */
  | 'InstanceNotFound'
  /** The cloud's catalog has no endpoint for a service the spec needs (block storage for volumes). */
  | 'EndpointNotFound'
  /** The recorded server is DELETED or SOFT_DELETED. */
  | 'InstanceDeleted'
  | 'InvalidRequest'
  | 'Forbidden'
  /**
   * Neutron has no room: no free address on the subnet (IpAddressGenerationFailure) or the
   * project's quota is spent (OverQuota). Not terminal: a freed address or quota lets the next try
   * through, after the caller's back-off rather than at once.
   */
  | 'OutOfCapacity';

export interface Failed extends Outcome {
  phase: 'Failed';
  reason: FailedReason;
  message: string;
  /**
   * Nothing will change by calling again with the same spec (a 400, a server in ERROR): the caller
   * stops requeueing and shows the condition. Otherwise it retries with its error backoff.
   */
  terminal: boolean;
  instanceState?: ServerStatus | undefined;
}

export type EnsureResult = Ready | Pending | Failed;

/** remove(): the server, its volumes, ports and trunks are all gone; the finalizer may go. */
export interface Gone extends Outcome {
  phase: 'Ready';
}

export type RemoveResult = Gone | Pending | Failed;
