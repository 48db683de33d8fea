/**
 * Waiting for a volume: to reach a status (`available` after a create or extend, `in-use` after an
 * attach), or to be gone. Any `error*` status ends the wait at once.
 *
 * These block, so they are for scripts, tests and the CLI. A controller never waits inside a
 * reconcile: it reads the volume, and requeues while it is `creating`.
 */
import type { ServiceClient } from '../../core/service-client.ts';
import { waitFor, waitForDeletion, type WaiterOptions } from '../../core/wait.ts';
import { getVolume, type Volume, type VolumeStatus } from './volumes.ts';

export type { WaiterOptions };

/** A volume created from a large image copies it first. */
export const VOLUME_TIMEOUT_MS = 10 * 60_000;

const failed = (v: Volume) => (v.status.startsWith('error') ? { status: v.status } : undefined);

/** Polls until the volume has `status` and returns it. */
export function waitForVolumeStatus(
  sc: ServiceClient,
  id: string,
  status: VolumeStatus,
  options: WaiterOptions = {},
): Promise<Volume> {
  return waitFor<Volume>({
    get: (signal) => getVolume(sc, id, { signal }),
    done: (v) => v.status === status,
    failed: status.startsWith('error') ? undefined : failed,
    statusOf: (v) => v.status,
    describe: `volume ${id} to become ${status}`,
    resourceId: id,
    ...options,
    timeoutMs: options.timeoutMs ?? VOLUME_TIMEOUT_MS,
  });
}

/** `waitForVolumeStatus(…, 'available')`. */
export function waitForVolumeAvailable(
  sc: ServiceClient,
  id: string,
  options: WaiterOptions = {},
): Promise<Volume> {
  return waitForVolumeStatus(sc, id, 'available', options);
}

/** Polls until the volume answers 404; `error_deleting` ends the wait at once. */
export function waitForVolumeDeleted(
  sc: ServiceClient,
  id: string,
  options: WaiterOptions = {},
): Promise<void> {
  return waitForDeletion<Volume>({
    get: (signal) => getVolume(sc, id, { signal }),
    failed,
    statusOf: (v) => v.status,
    describe: `volume ${id} to be deleted`,
    resourceId: id,
    ...options,
    timeoutMs: options.timeoutMs ?? VOLUME_TIMEOUT_MS,
  });
}
