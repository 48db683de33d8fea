/**
 * Waiting for a server: to reach a status (ACTIVE after a boot, SHUTOFF after a stop), or to be gone.
 * ERROR ends the wait at once with the server's `fault.message`, Nova's account of what failed.
 *
 * These block, so they are for scripts, tests and the CLI. A controller never waits inside a
 * reconcile: it reads the server, and requeues while it is BUILD.
 */
import type { ServiceClient } from '../../core/service-client.ts';
import { waitFor, waitForDeletion, type WaiterOptions } from '../../core/wait.ts';
import { getServer, type Server, type ServerStatus } from './servers.ts';

export type { WaiterOptions };

/** A boot includes scheduling, the image download to the host and the port binding. */
export const SERVER_TIMEOUT_MS = 10 * 60_000;

const failed = (s: Server) =>
  s.status === 'ERROR' ? { status: s.status, fault: s.fault?.message } : undefined;

/** Polls until the server has `status` and returns it; ERROR ends the wait with ResourceErrorStateError. */
export function waitForServerStatus(
  sc: ServiceClient,
  id: string,
  status: ServerStatus,
  options: WaiterOptions = {},
): Promise<Server> {
  return waitFor<Server>({
    get: (signal) => getServer(sc, id, { signal }),
    done: (s) => s.status === status,
    failed: status === 'ERROR' ? undefined : failed,
    statusOf: (s) => s.status,
    describe: `server ${id} to become ${status}`,
    resourceId: id,
    ...options,
    timeoutMs: options.timeoutMs ?? SERVER_TIMEOUT_MS,
  });
}

/** `waitForServerStatus(…, 'ACTIVE')`. */
export function waitForServerActive(
  sc: ServiceClient,
  id: string,
  options: WaiterOptions = {},
): Promise<Server> {
  return waitForServerStatus(sc, id, 'ACTIVE', options);
}

/**
 * Polls until the server answers 404. A server in ERROR is still deleted by Nova, so ERROR does not
 * end this wait. With soft delete on (`reclaim_instance_interval`) a server stays SOFT_DELETED and
 * this times out: such clouds need a force delete first.
 */
export function waitForServerDeleted(
  sc: ServiceClient,
  id: string,
  options: WaiterOptions = {},
): Promise<void> {
  return waitForDeletion<Server>({
    get: (signal) => getServer(sc, id, { signal }),
    statusOf: (s) => s.status,
    describe: `server ${id} to be deleted`,
    resourceId: id,
    ...options,
    timeoutMs: options.timeoutMs ?? SERVER_TIMEOUT_MS,
  });
}
