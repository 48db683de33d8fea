/**
 * The Nova server itself: found by name (adoption after a lost create answer), created with the
 * ports and volumes made before it, read for its state, deleted and awaited without sleeping.
 */
import { requireApiVersion } from '../../core/api-version.ts';
import { atLeast } from '../../compute/v2/microversion.ts';
import type {
  BlockDeviceMapping,
  SchedulerHints,
  Server,
  ServerCreateOpts,
  ServerStatus,
} from '../../compute/v2/servers.ts';
import { isNotFound } from '../../core/errors.ts';
import { waitHint } from './backoff.ts';
import type { StepContext } from './context.ts';
import { exactNameRegex } from './names.ts';
import { StepFailure, type Wait } from './outcome.ts';
import type { InstanceAddress, ResolvedServerSpec, ResolvedVolumeSpec, ServerSpec } from './types.ts';

/** A server in these states is gone for every purpose here (Nova's soft delete keeps it listed for a while). */
export const GONE_STATES: ReadonlySet<ServerStatus> = new Set(['DELETED', 'SOFT_DELETED']);

/** The one live server of this name, or undefined; several is a StepFailure (none is picked). */
export async function findServerByName(ctx: StepContext, name: string): Promise<Server | undefined> {
  const listed = await ctx.api.compute.servers
    .list({ name: exactNameRegex(name) }, { signal: ctx.signal })
    .all();
  const found = listed.filter((s) => s.name === name && !GONE_STATES.has(s.status));
  if (found.length > 1)
    throw new StepFailure(
      'MultipleServers',
      `${found.length} servers are named ${name} (${found.map((s) => s.id).join(', ')}); delete the extra ones — none is adopted`,
      false,
    );
  return found[0];
}

/** The server of this id, or undefined once Nova answers 404. */
export async function getServer(ctx: StepContext, id: string): Promise<Server | undefined> {
  try {
    return await ctx.api.compute.servers.get(id, { signal: ctx.signal });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * One step of a server's deletion: undefined once it is gone (404, DELETED, SOFT_DELETED — the
 * last two as CAPO since PR #2834, for clouds that reclaim later), else a Wait. The DELETE is sent
 * unless Nova already shows the delete under way.
 */
export async function deleteServer(ctx: StepContext, server: Server): Promise<Wait | undefined> {
  const { api, journal, policy, signal } = ctx;
  if (GONE_STATES.has(server.status)) return undefined;
  const deleting = server['OS-EXT-STS:task_state'] === 'deleting';
  if (!deleting) {
    try {
      await api.compute.servers.delete(server.id, { signal });
      journal.actions.push({ verb: 'delete', resource: 'server', id: server.id, name: server.name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return undefined;
    }
  }
  return {
    reason: 'Deleting',
    retryAfterMs: deleting ? waitHint(server.updated, ctx.now(), policy) : policy.initialMs,
    message: `server ${server.id} is being deleted`,
  };
}

export interface CreateRequest {
  server: ServerCreateOpts;
  schedulerHints?: SchedulerHints | undefined;
}

/**
 * Nova's create request. The root volume boots at index 0; without one, the image boots locally
 * (index 0 in the mapping when other devices are given, as Nova then wants the whole sequence).
 * Every volume goes with the server (delete_on_termination); local devices are ephemeral disks.
 */
export function serverCreateRequest(
  spec: ServerSpec,
  resolved: ResolvedServerSpec,
  portIDs: readonly string[],
  volumes: readonly ResolvedVolumeSpec[],
  volumeIDs: ReadonlyMap<string, string>,
  options: { deviceTags: boolean },
): CreateRequest {
  const root = volumes.find((v) => v.root);
  const bdms: BlockDeviceMapping[] = [];
  if (root) {
    bdms.push({
      source_type: 'volume',
      destination_type: 'volume',
      uuid: volumeIDs.get(root.name)!,
      boot_index: 0,
      delete_on_termination: true,
    });
  } else if ((spec.additionalBlockDevices?.length ?? 0) > 0) {
    bdms.push({
      source_type: 'image',
      destination_type: 'local',
      uuid: resolved.imageID,
      boot_index: 0,
      delete_on_termination: true,
    });
  }
  for (const bd of spec.additionalBlockDevices ?? []) {
    const tag = options.deviceTags ? { tag: bd.name } : {};
    if (bd.storage.type === 'Local') {
      bdms.push({
        source_type: 'blank',
        destination_type: 'local',
        volume_size: bd.sizeGiB,
        boot_index: -1,
        delete_on_termination: true,
        ...tag,
      });
      continue;
    }
    const volume = volumes.find((v) => !v.root && v.tag === bd.name);
    const id = volume && volumeIDs.get(volume.name);
    if (!id) continue;
    bdms.push({
      source_type: 'volume',
      destination_type: 'volume',
      uuid: id,
      boot_index: -1,
      delete_on_termination: true,
      ...tag,
    });
  }

  const server: ServerCreateOpts = {
    name: spec.name,
    flavorRef: resolved.flavorID,
    networks: portIDs.map((port) => ({ port })),
  };
  if (!root) server.imageRef = resolved.imageID;
  if (bdms.length > 0) server.block_device_mapping_v2 = bdms;
  if (spec.userData !== undefined) server.user_data = spec.userData;
  if (spec.metadata && Object.keys(spec.metadata).length > 0) server.metadata = { ...spec.metadata };
  if (spec.tags && spec.tags.length > 0) server.tags = [...new Set(spec.tags)];
  if (spec.configDrive !== undefined) server.config_drive = spec.configDrive;
  if (spec.availabilityZone) server.availability_zone = spec.availabilityZone;
  if (spec.sshKeyName) server.key_name = spec.sshKeyName;

  const hints: SchedulerHints = { ...spec.schedulerHints };
  if (resolved.serverGroupID) hints.group = resolved.serverGroupID;
  return { server, ...(Object.keys(hints).length > 0 ? { schedulerHints: hints } : {}) };
}

/** Creates the server; its id. Block device tags go only where the microversion takes them (2.42). */
export async function createServer(
  ctx: StepContext,
  spec: ServerSpec,
  resolved: ResolvedServerSpec,
  portIDs: readonly string[],
  volumes: readonly ResolvedVolumeSpec[],
  volumeIDs: ReadonlyMap<string, string>,
): Promise<string> {
  const { api, signal, journal } = ctx;
  const mv = requireApiVersion(await api.compute.microversion({ signal }));
  const request = serverCreateRequest(spec, resolved, portIDs, volumes, volumeIDs, {
    deviceTags: atLeast(mv, '2.42'),
  });
  const created = await api.compute.servers.create(request.server, {
    signal,
    schedulerHints: request.schedulerHints,
  });
  journal.actions.push({ verb: 'create', resource: 'server', id: created.id, name: spec.name });
  return created.id;
}

/** Fixed addresses as InternalIP, floating ones as ExternalIP, network by network, as Nova lists them. */
export function instanceAddresses(server: Server): InstanceAddress[] {
  const out: InstanceAddress[] = [];
  for (const [network, list] of Object.entries(server.addresses ?? {})) {
    for (const a of list) {
      out.push({
        type: a['OS-EXT-IPS:type'] === 'floating' ? 'ExternalIP' : 'InternalIP',
        address: a.addr,
        network,
      });
    }
  }
  return out;
}
