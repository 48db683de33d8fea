/**
 * The Cinder volumes a server boots from or carries (`<server>-root`, `<server>-<device>`), made
 * before the server and handed to Nova with delete_on_termination, so Nova deletes them with it.
 * They are found by name (a crash between a create and its answer leaves no id), and each name is
 * recorded in `resources.volumes` before its create, or when a volume of that name is adopted;
 * `deleteVolumes` sweeps exactly those when no server took them along (the create failed, or the
 * process died before it). A server that never got a volume needs no block storage to go away.
 */
import type { Volume, VolumeStatus } from '../../blockstorage/v3/volumes.ts';
import { EndpointNotFoundError, isNotFound, OpenStackHttpError } from '../../core/errors.ts';
import { volumeWait } from './backoff.ts';
import type { StepContext } from './context.ts';
import { StepFailure, type Wait } from './outcome.ts';
import { defined } from './resolve.ts';
import type { ResolvedVolumeSpec, ServerResources } from './types.ts';

async function volumesNamed(ctx: StepContext, name: string): Promise<Volume[]> {
  const found = await ctx.api.blockStorage.volumes.list({ name }, { signal: ctx.signal }).all();
  return found.filter((v) => v.name === name);
}

/** The spec fields that ask for these volumes, for a message: `rootVolume`, `additionalBlockDevices[data]`. */
function fieldsOf(specs: readonly ResolvedVolumeSpec[]): string {
  return specs.map((v) => (v.root ? 'rootVolume' : `additionalBlockDevices[${v.tag ?? v.name}]`)).join(', ');
}

/**
 * No block storage in the catalog: said as what is missing and which field needs it (not as a
 * failure of the credentials, which worked: the catalog came with a token). Not terminal: the
 * cloud's operator may add the service.
 */
function noBlockStorage(err: EndpointNotFoundError, specs: readonly ResolvedVolumeSpec[]): StepFailure {
  const fields = fieldsOf(specs);
  return new StepFailure(
    'EndpointNotFound',
    `${fields} ${specs.length > 1 ? 'need' : 'needs'} block storage, but the cloud's catalog has no block-storage (volumev3) endpoint` +
      ` (interface ${err.interface}${err.region ? `, region ${err.region}` : ''}; the catalog has: ${err.available.join('; ') || 'nothing'})` +
      `; remove ${fields} to boot from the image on the hypervisor's disk, or use a region or cloud with Cinder`,
    false,
  );
}

/** Records a volume name before anything of that name may exist because of us; whether it was new. */
export function rememberVolume(resources: ServerResources, name: string): boolean {
  const recorded = (resources.volumes ??= []);
  if (recorded.some((v) => v.name === name)) return false;
  recorded.push({ name });
  return true;
}

/** Cinder is still working on these; they may end `available`. */
const BUSY: ReadonlySet<VolumeStatus> = new Set([
  'creating',
  'downloading',
  'reserved',
  'attaching',
  'detaching',
  'deleting',
  'extending',
  'retyping',
]);

/** Cinder has these volumes' contents still to make; nothing has attached them yet. */
const MAKING: ReadonlySet<VolumeStatus> = new Set(['creating', 'downloading']);

/** Each volume of `specs` listed by name (its lookups said as a missing block storage when it is). */
async function listByName(
  ctx: StepContext,
  specs: readonly ResolvedVolumeSpec[],
): Promise<Map<string, Volume[]>> {
  const found = new Map<string, Volume[]>();
  for (const spec of specs) {
    try {
      found.set(spec.name, await volumesNamed(ctx, spec.name));
    } catch (err) {
      if (EndpointNotFoundError.is(err)) throw noBlockStorage(err, specs);
      throw err;
    }
  }
  return found;
}

/**
 * The volumes listed by name, or a Wait when every port and volume has been made and a volume is
 * still being made (`creating`, `downloading`) with the others `available` or being made too: no
 * server of ours can hold them yet (one is created only once all are available), so nothing else
 * needs reading until Cinder is done.
 */
export async function listVolumes(
  ctx: StepContext,
  specs: readonly ResolvedVolumeSpec[],
  resources: ServerResources,
  portsMade: boolean,
): Promise<{ found: Map<string, Volume[]> } | Wait> {
  if (specs.length === 0) return { found: new Map() };
  const found = await listByName(ctx, specs);
  if (!portsMade) return { found };
  const volumes = specs.map((s) => found.get(s.name) ?? []);
  if (volumes.some((v) => v.length !== 1)) return { found };
  const one = volumes.map((v) => v[0]!);
  const making = one.filter((v) => MAKING.has(v.status));
  if (making.length === 0 || !one.every((v) => MAKING.has(v.status) || v.status === 'available'))
    return { found };
  if (!specs.every((s) => resources.volumes?.some((v) => v.name === s.name))) return { found };
  return creating(ctx, making, specs.length);
}

function creating(ctx: StepContext, busy: readonly Volume[], of: number): Wait {
  const oldest = busy.map((v) => v.created_at).sort()[0];
  const now = ctx.now();
  return {
    reason: 'VolumeCreating',
    retryAfterMs: volumeWait(oldest, now, ctx.policy),
    since: now,
    message: `${busy.length} of ${of} volumes are not available yet`,
  };
}

/**
 * Whether one of these volumes is missing or still being made (`listed`: by name). A server is
 * created only once all its volumes are available and holds them while it lives, so then no
 * server of ours exists to be adopted.
 */
export function volumesUnfinished(
  specs: readonly ResolvedVolumeSpec[],
  listed: ReadonlyMap<string, readonly Volume[]>,
): boolean {
  return specs.some((s) => {
    const named = listed.get(s.name) ?? [];
    return named.length === 0 || (named.length === 1 && MAKING.has(named[0]!.status));
  });
}

/**
 * Gets or creates every volume; their ids by name once all are `available`, else a Wait (creating)
 * or a StepFailure (`error`, several of one name, or taken by another server). `listed`: the
 * volumes this call already listed by name.
 */
export async function ensureVolumes(
  ctx: StepContext,
  specs: readonly ResolvedVolumeSpec[],
  imageID: string,
  resources: ServerResources,
  record: () => Promise<void>,
  listed?: Map<string, Volume[]>,
): Promise<{ ids: Map<string, string> } | Wait> {
  const { api, signal, journal } = ctx;
  const ids = new Map<string, string>();
  const busy: Volume[] = [];
  const found = listed ?? (await listByName(ctx, specs));
  // Every name recorded before any create (and adopted ones too), so a crash right after a create
  // leaves a name the removal deletes.
  let grew = false;
  for (const spec of specs) grew = rememberVolume(resources, spec.name) || grew;
  if (grew) await record();

  for (const spec of specs) {
    const named = found.get(spec.name) ?? [];
    if (named.length > 1)
      throw new StepFailure(
        'MultipleVolumes',
        `${named.length} volumes are named ${spec.name} (${named.map((v) => v.id).join(', ')}); delete the extra ones`,
        false,
      );
    let volume = named[0];
    if (!volume) {
      volume = await api.blockStorage.volumes.create(
        {
          name: spec.name,
          size: spec.sizeGiB,
          ...defined({ volume_type: spec.type, availability_zone: spec.availabilityZone }),
          ...(spec.root ? { imageRef: imageID } : {}),
        },
        { signal },
      );
      journal.actions.push({ verb: 'create', resource: 'volume', id: volume.id, name: spec.name });
    }
    switch (volume.status) {
      case 'available':
        ids.set(spec.name, volume.id);
        break;
      case 'error':
        throw new StepFailure(
          'VolumeError',
          `volume ${volume.id} (${spec.name}) is in error; delete it to have it made again`,
          false,
        );
      case 'in-use':
        throw new StepFailure(
          'VolumeError',
          `volume ${volume.id} (${spec.name}) is attached to ${volume.attachments.map((a) => a.server_id).join(', ') || 'another server'}`,
          false,
        );
      default:
        if (!BUSY.has(volume.status))
          throw new StepFailure(
            'VolumeError',
            `volume ${volume.id} (${spec.name}) is ${volume.status}`,
            false,
          );
        busy.push(volume);
    }
  }
  if (busy.length === 0) return { ids };
  return creating(ctx, busy, specs.length);
}

/**
 * Deletes the volumes of these names; undefined once none is left. Only used with no server left:
 * one being deleted may still hold them (Nova detaches, then deletes them itself), so attached and
 * busy volumes are waited for, not forced.
 */
export async function deleteVolumes(ctx: StepContext, names: readonly string[]): Promise<Wait | undefined> {
  const { api, signal, journal, policy } = ctx;
  const waiting: string[] = [];
  for (const name of names) {
    for (const volume of await volumesNamed(ctx, name)) {
      if (BUSY.has(volume.status) || volume.status === 'in-use') {
        waiting.push(`${name} is ${volume.status}`);
        continue;
      }
      try {
        await api.blockStorage.volumes.delete(volume.id, { signal });
        journal.actions.push({ verb: 'delete', resource: 'volume', id: volume.id, name });
        waiting.push(`${name} is deleting`);
      } catch (err) {
        if (isNotFound(err)) continue;
        // A 400 is Cinder's "status must be available or error": it changed since the read.
        if (OpenStackHttpError.is(err) && (err.status === 400 || err.status === 409)) {
          waiting.push(`${name}: ${err.serviceMessage}`);
          continue;
        }
        throw err;
      }
    }
  }
  if (waiting.length === 0) return undefined;
  return { reason: 'Deleting', retryAfterMs: policy.initialMs, message: `volumes: ${waiting.join('; ')}` };
}
