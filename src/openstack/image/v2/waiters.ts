/**
 * Waiting for an image: `active` once its data is in, or gone after a delete. `killed` (an upload
 * that failed) ends the wait at once.
 *
 * These block, so they are for scripts, tests and the CLI. A controller never waits inside a
 * reconcile: it reads the image, and requeues while it is not active.
 */
import type { ServiceClient } from '../../core/service-client.ts';
import { waitFor, waitForDeletion, type WaiterOptions } from '../../core/wait.ts';
import { getImage, type Image } from './images.ts';

export type { WaiterOptions };

/** Imports (web-download, conversion) of large images take minutes. */
export const IMAGE_TIMEOUT_MS = 10 * 60_000;

const failed = (i: Image) => (i.status === 'killed' ? { status: i.status } : undefined);

/** Polls until the image is `active` and returns it. */
export function waitForImageActive(
  sc: ServiceClient,
  id: string,
  options: WaiterOptions = {},
): Promise<Image> {
  return waitFor<Image>({
    get: (signal) => getImage(sc, id, { signal }),
    done: (i) => i.status === 'active',
    failed,
    statusOf: (i) => i.status,
    describe: `image ${id} to become active`,
    resourceId: id,
    ...options,
    timeoutMs: options.timeoutMs ?? IMAGE_TIMEOUT_MS,
  });
}

/** Polls until the image answers 404. */
export function waitForImageDeleted(
  sc: ServiceClient,
  id: string,
  options: WaiterOptions = {},
): Promise<void> {
  return waitForDeletion<Image>({
    get: (signal) => getImage(sc, id, { signal }),
    statusOf: (i) => i.status,
    describe: `image ${id} to be deleted`,
    resourceId: id,
    ...options,
    timeoutMs: options.timeoutMs ?? IMAGE_TIMEOUT_MS,
  });
}
