/**
 * Removing a namespace's Neutron network (upstream's KuryrNetworkHandler.on_finalize with the
 * namespace subnet driver's `_delete_namespace_network_resources`): the pools of the network are
 * freed first (kuryr-pods' hook), then the subnet leaves the router and the network goes with its
 * subnet. Only what is ours: the network recorded in the status, or — when a crash came between
 * its create and the record — the one whose name carries this namespace's uid.
 *
 * Never waits: a network still holding ports is a `waiting` answer for the caller to requeue, after
 * our own leftover ports (tagged ours, in upstream's owners, referenced by no KuryrPort) are taken
 * off their trunk and deleted, as upstream does. A 404 anywhere is success: someone (CAPO deleting
 * a node's trunk, an operator) was there first.
 */
import { ignoreNotFound, isConflict, isNotFound } from '../../openstack/core/errors.ts';
import type { Network } from '../../openstack/network/v2/networks.ts';
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';
import type { Port } from '../../openstack/network/v2/ports.ts';
import { isNamespaceResource, namespaceResourceName, type NamespaceRef } from './names.ts';
import type { NamespaceNetworkSettings, NamespaceNetworkStatus } from './provision.ts';

/** Owners upstream deletes leftovers of: unbound (''), trunk subports, and kuryr's own. */
const LEFTOVER_OWNERS = new Set(['', 'trunk:subport', 'compute:kuryr']);

export interface TeardownOptions {
  /** Ports a KuryrPort still names: never deleted here. */
  referencedPorts: ReadonlySet<string>;
  /** Frees the port pools of a network (kuryr-pods); called before the network is deleted. */
  releasePools?: ((networkId: string, signal: AbortSignal) => Promise<void>) | undefined;
  signal: AbortSignal;
}

export type TeardownResult =
  | { kind: 'done'; deleted: string | undefined }
  | { kind: 'waiting'; message: string; deletedPorts: string[] };

const hasAll = (have: readonly string[] | undefined, want: readonly string[]) =>
  want.every((t) => (have ?? []).includes(t));

async function findNetwork(
  network: NetworkV2,
  ns: NamespaceRef,
  status: NamespaceNetworkStatus,
  settings: NamespaceNetworkSettings,
  signal: AbortSignal,
): Promise<Network | undefined> {
  if (status.netId) return network.networks.get(status.netId, { signal }).catch(ignoreNotFound);
  const found = await network.networks
    .list({ name: namespaceResourceName(ns), project_id: settings.projectId }, { signal })
    .all();
  return found.find((n) => isNamespaceResource(n.name, ns));
}

export async function teardownNamespaceNetwork(
  network: NetworkV2,
  ns: NamespaceRef,
  status: NamespaceNetworkStatus,
  settings: NamespaceNetworkSettings,
  opts: TeardownOptions,
): Promise<TeardownResult> {
  const { signal } = opts;
  const net = await findNetwork(network, ns, status, settings, signal);
  if (!net) return { kind: 'done', deleted: undefined };
  // A network recorded in the status is ours whatever its name; one found by name must carry our uid.
  if (!status.netId && !isNamespaceResource(net.name, ns)) return { kind: 'done', deleted: undefined };

  const routerId = status.routerId ?? settings.routerId;
  const subnets = new Set([...(status.subnetId ? [status.subnetId] : []), ...net.subnets]);
  for (const subnetId of subnets) {
    try {
      await network.routers.removeInterface(routerId, { subnet_id: subnetId }, { signal });
    } catch (err) {
      // Not attached (never was, or already detached), or the router is gone: nothing to undo.
      if (!isNotFound(err)) throw err;
    }
  }
  await opts.releasePools?.(net.id, signal);

  try {
    await network.networks.delete(net.id, { signal });
    return { kind: 'done', deleted: net.id };
  } catch (err) {
    if (isNotFound(err)) return { kind: 'done', deleted: undefined };
    if (!isConflict(err)) throw err;
  }
  const ports = await network.ports.list({ network_id: net.id }, { signal }).all();
  const leftovers = ports.filter(
    (p) =>
      LEFTOVER_OWNERS.has(p.device_owner) && hasAll(p.tags, settings.tags) && !opts.referencedPorts.has(p.id),
  );
  const deletedPorts: string[] = [];
  for (const port of leftovers) {
    await deleteLeftover(network, port, signal);
    deletedPorts.push(port.id);
  }
  const others = ports.length - leftovers.length;
  return {
    kind: 'waiting',
    message: `network ${net.id} still has ports: deleted ${leftovers.length} of ours left over, ${others} other(s) remain`,
    deletedPorts,
  };
}

/** A subport is taken off its trunk first (its device_id is the trunk's id); gone is fine. */
async function deleteLeftover(network: NetworkV2, port: Port, signal: AbortSignal): Promise<void> {
  if (port.device_owner === 'trunk:subport' && port.device_id) {
    await network.trunks
      .removeSubports(port.device_id, [{ port_id: port.id }], { signal })
      .catch(ignoreNotFound);
  }
  await network.ports.delete(port.id, { signal }).catch(ignoreNotFound);
}
