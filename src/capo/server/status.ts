/**
 * The engine's recorded state in an OpenStackServer's status and back: `status.resolved` (CAPO's
 * ResolvedServerSpec), `status.resources.ports`, `status.instanceID`; and the server's addresses as
 * CAPO writes them.
 *
 * `status.resolved.volumes` (the volumes to make, names and sizes) is ours, not CAPO's. A status
 * written by CAPO has none; then the create path derives them from the spec.
 *
 * `status.resources.volumes` is ours too: the volumes that may exist because of the server, each
 * name written before its create. A delete removes these and nothing else: it derives no name, so a
 * server that never got a volume goes away without the block-storage service (a cloud without one).
 *
 * `status.resources.subports` is ours too: the ports a delete detached from the server's trunks,
 * written before the detach and dropped once they are deleted, so a controller killed in between
 * still deletes them after its restart (CAPO would leak them).
 */
import type {
  InstanceAddress,
  ResolvedPortSpec,
  ResolvedServerSpec,
  ResolvedVolumeSpec,
  ServerResources,
  ServerState,
} from '../../openstack/services/server/index.ts';
import type { OpenStackServerStatus } from '../api/index.ts';

type Status = OpenStackServerStatus;
type CrdResolved = NonNullable<Status['resolved']>;
type CrdResolvedPort = NonNullable<CrdResolved['ports']>[number];
type CrdResolvedVolume = NonNullable<CrdResolved['volumes']>[number];

/** The engine's state from a status (what was recorded by us, or by CAPO before us). */
export function stateFromStatus(status: Status | undefined): ServerState {
  const state: ServerState = {};
  const r = status?.resolved;
  if (r?.imageID && r.flavorID) {
    state.resolved = {
      imageID: r.imageID,
      flavorID: r.flavorID,
      ...(r.serverGroupID ? { serverGroupID: r.serverGroupID } : {}),
      ports: (r.ports ?? []).map(portFromStatus),
      // Absent (not empty) when CAPO wrote the status: the caller then derives the names.
      ...(r.volumes ? { volumes: r.volumes.map(volumeFromStatus) } : {}),
    };
  }
  if (status?.resources) {
    const { ports, subports, volumes } = status.resources;
    state.resources = {
      ports: (ports ?? []).map((p) => ({ id: p.id })),
      ...(subports?.length ? { subports: subports.map((p) => ({ id: p.id })) } : {}),
      ...(volumes?.length ? { volumes: volumes.map((v) => ({ name: v.name })) } : {}),
    };
  }
  if (status?.instanceID) state.instanceID = status.instanceID;
  return state;
}

/** The status fields of a recorded state (the rest of the status is left as it is). */
export function statusFromState(state: ServerState): Pick<Status, 'resolved' | 'resources' | 'instanceID'> {
  return {
    ...(state.resolved ? { resolved: resolvedToStatus(state.resolved) } : {}),
    ...(state.resources ? { resources: resourcesToStatus(state.resources) } : {}),
    ...(state.instanceID !== undefined ? { instanceID: state.instanceID } : {}),
  };
}

/** Without `subports` once none is left: the status patch then drops the field. */
function resourcesToStatus(r: ServerResources): NonNullable<Status['resources']> {
  return {
    ports: r.ports.map((p) => ({ id: p.id })),
    ...(r.subports?.length ? { subports: r.subports.map((p) => ({ id: p.id })) } : {}),
    ...(r.volumes?.length ? { volumes: r.volumes.map((v) => ({ name: v.name })) } : {}),
  };
}

function resolvedToStatus(r: ResolvedServerSpec): CrdResolved {
  return {
    imageID: r.imageID,
    flavorID: r.flavorID,
    ...(r.serverGroupID ? { serverGroupID: r.serverGroupID } : {}),
    ports: r.ports.map(portToStatus),
    ...(r.volumes ? { volumes: r.volumes.map((v) => dropUndefined({ ...v })) } : {}),
  };
}

function volumeFromStatus(v: CrdResolvedVolume): ResolvedVolumeSpec {
  return dropUndefined({ ...v });
}

function portToStatus(p: ResolvedPortSpec): CrdResolvedPort {
  return {
    ...dropUndefined({ ...p }),
    // Required by CAPO's schema, empty when the spec has none.
    description: p.description ?? '',
    tags: [...p.tags],
    fixedIPs: p.fixedIPs.map((ip) => dropUndefined({ ...ip })),
    securityGroups: [...p.securityGroups],
  };
}

function portFromStatus(p: CrdResolvedPort): ResolvedPortSpec {
  const { qosPolicyID: _qos, ...rest } = p;
  return {
    ...dropUndefined(rest),
    ...(p.description ? { description: p.description } : { description: undefined }),
    tags: [...(p.tags ?? [])],
    trunk: p.trunk ?? false,
    fixedIPs: (p.fixedIPs ?? []).map((ip) => ({ ...ip })),
    securityGroups: [...(p.securityGroups ?? [])],
  };
}

/** CAPO's status.addresses: one InternalIP or ExternalIP per Nova address. */
export function addressesOf(addresses: readonly InstanceAddress[]): { type: string; address: string }[] {
  return addresses.map((a) => ({ type: a.type, address: a.address }));
}

function dropUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}
