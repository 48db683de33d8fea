/**
 * What an OpenStackMachine makes of its OpenStackServer (CAPO's `reconcileMachineState`), pure:
 *
 * - ACTIVE: InstanceReady, providerID `openstack://<region>/<instanceID>`, ready;
 * - BUILD or no state yet: wait (10 s in CAPO; the server's status changes wake us sooner);
 * - ERROR: InstanceReady False (InstanceStateError); terminal for a machine that never became a
 *   node (Cluster API then replaces it), retried for one that did (the error may pass);
 * - DELETED, SOFT_DELETED: InstanceReady False (InstanceDeleted), nothing more to do;
 * - any other state (SHUTOFF, MIGRATING, …): InstanceReady Unknown, look again later.
 *
 * Addresses are the server's plus its name as InternalDNS, which CSR approvers (OpenShift's
 * among them) match against the node name, as they did with the in-tree provider.
 */
import { Reasons, type OpenStackServer } from '../api/index.ts';

export interface NodeAddress {
  type: string;
  address: string;
}

export type MachineState =
  | { phase: 'Active'; instanceID: string }
  | { phase: 'Building' }
  | { phase: 'Error'; reason: string; message: string }
  | { phase: 'Deleted'; reason: string; message: string }
  | { phase: 'Other'; state: string };

/**
 * `openstack://<region>/<instanceID>`; with no region `openstack:///<instanceID>`, which is what
 * the cloud controller manager writes when it is not regional.
 */
export function providerID(region: string | undefined, instanceID: string): string {
  return `openstack://${region ?? ''}/${instanceID}`;
}

export function machineState(server: OpenStackServer): MachineState {
  const state = server.status?.instanceState ?? '';
  const instanceID = server.status?.instanceID;
  switch (state) {
    case 'ACTIVE':
      // The server controller sets both together; without an ID there is nothing to name yet.
      return instanceID ? { phase: 'Active', instanceID } : { phase: 'Building' };
    case 'BUILD':
    case '':
      return { phase: 'Building' };
    case 'ERROR':
      return {
        phase: 'Error',
        reason: Reasons.InstanceStateError,
        message: `instance state ${state} is unexpected`,
      };
    case 'DELETED':
    case 'SOFT_DELETED':
      return { phase: 'Deleted', reason: Reasons.InstanceDeleted, message: `instance state is ${state}` };
    default:
      return { phase: 'Other', state };
  }
}

/** The server's addresses, then its name as InternalDNS (once). */
export function machineAddresses(server: OpenStackServer): NodeAddress[] {
  const out: NodeAddress[] = (server.status?.addresses ?? []).map((a) => ({
    type: a.type,
    address: a.address,
  }));
  const name = server.metadata?.name;
  if (name && !out.some((a) => a.type === 'InternalDNS' && a.address === name)) {
    out.push({ type: 'InternalDNS', address: name });
  }
  return out;
}

/** The first InternalIP of the addresses (the address load balancers and the API endpoint use). */
export function internalIP(addresses: readonly NodeAddress[]): string | undefined {
  return addresses.find((a) => a.type === 'InternalIP')?.address;
}
