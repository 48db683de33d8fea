/**
 * Cinder v3 as a namespace bound to one ServiceClient: `client.blockStorage.volumes.create({ size: 1 }, { signal })`.
 * The first call negotiates the microversion (3.42, or the cloud's maximum if lower). The functions
 * are exported too, for code that holds a ServiceClient.
 */
import { formatApiVersion } from '../../core/api-version.ts';
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { listVolumeAvailabilityZones } from './availability-zones.ts';
import { blockStorageMicroversion } from './microversion.ts';
import { getVolumeType, listVolumeTypes } from './volume-types.ts';
import {
  createVolume,
  deleteVolume,
  extendVolume,
  getVolume,
  listVolumes,
  updateVolume,
  type VolumeCreateOpts,
  type VolumeListQuery,
  type VolumeStatus,
  type VolumeUpdateOpts,
} from './volumes.ts';
import {
  waitForVolumeAvailable,
  waitForVolumeDeleted,
  waitForVolumeStatus,
  type WaiterOptions,
} from './waiters.ts';

export * from './availability-zones.ts';
export * from './microversion.ts';
export * from './volume-types.ts';
export * from './volumes.ts';
export * from './waiters.ts';

export function blockStorageV3(sc: ServiceClient) {
  return {
    client: sc,
    /** The microversion calls use, negotiated on first use: `'3.42'`, or the cloud's maximum if lower. */
    microversion: async (o?: CallOptions) => formatApiVersion(await blockStorageMicroversion(sc, o?.signal)),
    volumes: {
      create: (volume: VolumeCreateOpts, o?: CallOptions) => createVolume(sc, volume, o),
      get: (id: string, o?: CallOptions) => getVolume(sc, id, o),
      /** `GET /volumes/detail`. */
      list: (query?: VolumeListQuery, o?: CallOptions) => listVolumes(sc, query, o),
      update: (id: string, update: VolumeUpdateOpts, o?: CallOptions) => updateVolume(sc, id, update, o),
      delete: (id: string, o?: CallOptions & { cascade?: boolean | undefined }) => deleteVolume(sc, id, o),
      /** Grows the volume to `newSize` GiB. */
      extend: (id: string, newSize: number, o?: CallOptions) => extendVolume(sc, id, newSize, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForStatus: (id: string, status: VolumeStatus, o?: WaiterOptions) =>
        waitForVolumeStatus(sc, id, status, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForAvailable: (id: string, o?: WaiterOptions) => waitForVolumeAvailable(sc, id, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForDeleted: (id: string, o?: WaiterOptions) => waitForVolumeDeleted(sc, id, o),
    },
    volumeTypes: {
      list: (o?: CallOptions) => listVolumeTypes(sc, o),
      get: (id: string, o?: CallOptions) => getVolumeType(sc, id, o),
    },
    availabilityZones: {
      list: (o?: CallOptions) => listVolumeAvailabilityZones(sc, o),
    },
  };
}

export type BlockStorageV3 = ReturnType<typeof blockStorageV3>;
