/**
 * Servers' Cinder side: block_device_mapping_v2 checks at the API, the volumes the compute host
 * creates and attaches during the build, their release on delete, and os-volume_attachments.
 */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { VolumeApi, VolumeView } from '../core/contracts.ts';
import { SimError } from '../core/errors.ts';
import type { ServerRecord, ServerVolume } from './server-store.ts';

export interface BlockDeviceRequest {
  source_type: 'image' | 'volume' | 'blank' | 'snapshot';
  destination_type: 'volume' | 'local';
  uuid: string | undefined;
  volume_size: number | undefined;
  boot_index: number | null;
  delete_on_termination: boolean;
  device_name: string | undefined;
  volume_type: string | undefined;
  tag: string | null;
}

const invalidBdm = (details: string) => new SimError(400, `Block Device Mapping is Invalid: ${details}`);

export function volumeUnavailable(v: VolumeView): SimError {
  return new SimError(
    400,
    `Invalid volume: volume '${v.id}' status must be 'available'. Currently in '${v.status}'`,
  );
}

/** The visible volume, or undefined (other projects' volumes are invisible to non-admins). */
export function visibleVolume(
  volumes: VolumeApi,
  id: string,
  projectId: string,
  isAdmin: boolean,
): VolumeView | undefined {
  const v = volumes.getVolume(id);
  return v && (isAdmin || v.project_id === projectId) ? v : undefined;
}

/** API-side checks of block_device_mapping_v2 (nova.compute.api._validate_bdm). */
export function validateBlockDevices(
  volumes: VolumeApi,
  bdms: BlockDeviceRequest[],
  who: { projectId: string; isAdmin: boolean },
  count: number,
): void {
  const bootable = bdms.filter((b) => b.boot_index !== null && b.boot_index >= 0);
  const indexes = bootable.map((b) => b.boot_index!).sort((a, b) => a - b);
  if (indexes.some((n, i) => n !== i)) {
    throw invalidBdm(
      'Boot sequence for the instance and image/block device mapping combination is not valid.',
    );
  }
  for (const b of bdms) {
    if (b.destination_type === 'local') continue;
    switch (b.source_type) {
      case 'image':
        if (!b.volume_size) {
          throw invalidBdm("Images with destination_type 'volume' need to have a non-zero size specified");
        }
        break;
      case 'blank':
        if (!b.volume_size) {
          throw invalidBdm("Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size");
        }
        break;
      case 'snapshot':
        throw invalidBdm(`failed to get snapshot ${b.uuid ?? ''}.`);
      case 'volume': {
        const v =
          b.uuid === undefined ? undefined : visibleVolume(volumes, b.uuid, who.projectId, who.isAdmin);
        if (!v) throw invalidBdm(`failed to get volume ${b.uuid ?? ''}.`);
        if (v.status !== 'available') throw volumeUnavailable(v);
        if (count > 1) {
          throw new SimError(
            400,
            'Failed to launch instances: Multiple instances cannot boot from the same volume.',
          );
        }
        break;
      }
    }
  }
}

const DEVICE_LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** The next free /dev/vdX on the server. */
export function nextDevice(s: ServerRecord): string {
  const used = new Set(s.volumes.map((v) => v.device));
  for (const l of DEVICE_LETTERS) {
    const d = `/dev/vd${l}`;
    if (!used.has(d)) return d;
  }
  return `/dev/vd${s.volumes.length}`;
}

/** The build's block_device_mapping step: Nova creates image/blank volumes, then attaches them all. */
export function createVolumes(volumes: VolumeApi, s: ServerRecord, bdms: BlockDeviceRequest[]): void {
  const ordered = [...bdms].sort((a, b) => (a.boot_index ?? 99) - (b.boot_index ?? 99));
  for (const b of ordered) {
    if (b.destination_type !== 'volume') continue;
    let id = b.uuid;
    if (b.source_type === 'image' || b.source_type === 'blank') {
      const v = volumes.createVolume({
        project_id: s.project_id,
        size: b.volume_size ?? 1,
        name: b.source_type === 'blank' ? `${s.id}-blank-vol` : '',
        ...(b.source_type === 'image' && b.uuid ? { imageRef: b.uuid } : {}),
        ...(b.volume_type ? { volume_type: b.volume_type } : {}),
      });
      id = v.id;
    }
    if (id === undefined) continue;
    const device = b.device_name ?? nextDevice(s);
    s.volumes.push({
      volume_id: id,
      device,
      delete_on_termination: b.delete_on_termination,
      boot_index: b.boot_index,
      tag: b.tag,
      attached: false,
    });
  }
}

/**
 * Attaches the volumes that Cinder finished creating. `waiting` while some are still creating;
 * throws when one failed, as Nova's wait for volume creation does.
 */
export function attachReadyVolumes(volumes: VolumeApi, s: ServerRecord): 'ready' | 'waiting' {
  let waiting = false;
  for (const sv of s.volumes) {
    if (sv.attached) continue;
    const v = volumes.getVolume(sv.volume_id);
    if (!v || v.status === 'error') {
      throw new SimError(
        500,
        `Volume ${sv.volume_id} did not finish being created even after we waited 0 seconds or 1 attempts. And its status is ${v?.status ?? 'deleted'}.`,
      );
    }
    if (v.status !== 'available') {
      waiting = true;
      continue;
    }
    volumes.attach(sv.volume_id, s.id, sv.device);
    sv.attached = true;
  }
  return waiting ? 'waiting' : 'ready';
}

/**
 * Detaches the server's volumes and deletes those marked delete_on_termination. Cinder may still
 * be detaching when the delete is asked, so the delete is retried a few times, as Nova's is.
 */
export function releaseVolumes(cloud: EmulatedCloud, list: ServerVolume[], serverId: string): void {
  for (const sv of list) {
    if (sv.attached) {
      try {
        cloud.volume.detach(sv.volume_id, serverId);
      } catch (err) {
        if (!(SimError.is(err) && err.status === 404))
          cloud.log?.warn({ err, volume: sv.volume_id }, 'nova: detach failed');
      }
    }
    if (sv.delete_on_termination) deleteWithRetry(cloud, sv.volume_id, 20);
  }
}

function deleteWithRetry(cloud: EmulatedCloud, volumeId: string, attempts: number): void {
  try {
    if (cloud.volume.getVolume(volumeId)) cloud.volume.deleteVolume(volumeId);
  } catch (err) {
    if (SimError.is(err) && err.status === 404) return;
    if (attempts <= 1) {
      cloud.log?.warn({ err, volume: volumeId }, 'nova: could not delete a delete_on_termination volume');
      return;
    }
    const delay = Math.max(5, cloud.timing.transition('cinder.volume.attach'));
    cloud.scheduler.schedule(delay, () => deleteWithRetry(cloud, volumeId, attempts - 1));
  }
}
